package catalog

import "sync"

// metaCache keeps recently read metadata files. They are immutable (each
// commit writes a new file), so entries never go stale; the cache is only
// bounded in bytes, evicting in insertion order.
type metaCache struct {
	mu    sync.Mutex
	max   int
	size  int
	m     map[string][]byte
	order []string
}

func newMetaCache(maxBytes int) *metaCache {
	return &metaCache{max: maxBytes, m: map[string][]byte{}}
}

func (c *metaCache) get(loc string) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, ok := c.m[loc]
	return b, ok
}

func (c *metaCache) put(loc string, b []byte) {
	if len(b) > c.max/4 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[loc]; ok {
		return
	}
	c.m[loc] = b
	c.order = append(c.order, loc)
	c.size += len(b)
	for c.size > c.max && len(c.order) > 0 {
		old := c.order[0]
		c.order = c.order[1:]
		c.size -= len(c.m[old])
		delete(c.m, old)
	}
}

func (c *metaCache) drop(loc string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if b, ok := c.m[loc]; ok {
		c.size -= len(b)
		delete(c.m, loc)
	}
}
