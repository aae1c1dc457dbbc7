package objstore

import (
	"bytes"
	"sync"
)

// maxCachedBuckets bounds bucketCache; past it the cache starts over.
const maxCachedBuckets = 4096

// bucketCache keeps decoded bucket records by name with the raw bytes they
// were decoded from. HeadBucket compares the record it reads in its
// transaction with the cached bytes and decodes only when they differ, so
// the cache is never stale; it saves the JSON decoding of the faces'
// documents (a bucket with a 20-statement policy costs about 40 µs to
// decode, 2 µs without), which every authorized S3 request reads.
type bucketCache struct {
	mu sync.Mutex // protects m (leaf)
	m  map[string]cachedBucket
}

type cachedBucket struct {
	raw  []byte
	info BucketInfo
}

// get returns a copy of the cached record of name when raw is what it was
// decoded from.
func (c *bucketCache) get(name string, raw []byte) (BucketInfo, bool) {
	c.mu.Lock()
	e, ok := c.m[name]
	c.mu.Unlock()
	if !ok || !bytes.Equal(e.raw, raw) {
		return BucketInfo{}, false
	}
	return cloneBucketInfo(e.info), true
}

// put caches info as the decoding of raw (copied: raw is only valid in
// its transaction).
func (c *bucketCache) put(name string, raw []byte, info BucketInfo) {
	e := cachedBucket{raw: bytes.Clone(raw), info: cloneBucketInfo(info)}
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxCachedBuckets {
		c.m = map[string]cachedBucket{}
	}
	c.m[name] = e
	c.mu.Unlock()
}

// cloneBucketInfo copies the Config map, which callers may change; the
// documents' bytes are shared and read-only (BucketInfo.Config).
func cloneBucketInfo(b BucketInfo) BucketInfo {
	if b.Config != nil {
		cfg := make(map[string][]byte, len(b.Config))
		for k, v := range b.Config {
			cfg[k] = v
		}
		b.Config = cfg
	}
	return b
}
