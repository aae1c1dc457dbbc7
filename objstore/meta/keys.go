package meta

import (
	"bytes"
	"encoding/binary"
)

// Sep separates the parts of composite keys.
const Sep = 0x00

// BucketPrefix is "<bucket>\0", the prefix of a bucket's keys in objects,
// versions and uploads.
func BucketPrefix(bucket string) []byte {
	b := make([]byte, 0, len(bucket)+1)
	b = append(b, bucket...)
	return append(b, Sep)
}

// ObjectKey is the objects key of bucket/key.
func ObjectKey(bucket, key string) []byte {
	b := make([]byte, 0, len(bucket)+len(key)+1)
	b = append(b, bucket...)
	b = append(b, Sep)
	return append(b, key...)
}

// SplitObjectKey returns the object key part of an objects key.
func SplitObjectKey(k []byte) (bucket, key string, ok bool) {
	i := bytes.IndexByte(k, Sep)
	if i < 0 {
		return "", "", false
	}
	return string(k[:i]), string(k[i+1:]), true
}

// VersionPrefix is "<bucket>\0<key>\0", the prefix of a key's versions.
func VersionPrefix(bucket, key string) []byte {
	return append(ObjectKey(bucket, key), Sep)
}

// VersionKey is the versions key of one version.
func VersionKey(bucket, key string, seq uint64) []byte {
	b := VersionPrefix(bucket, key)
	return binary.BigEndian.AppendUint64(b, ^seq)
}

// SplitVersionKey parses a versions key.
func SplitVersionKey(k []byte) (bucket, key string, seq uint64, ok bool) {
	if len(k) < 10 || k[len(k)-9] != Sep {
		return "", "", 0, false
	}
	bucket, key, ok = SplitObjectKey(k[:len(k)-9])
	return bucket, key, ^binary.BigEndian.Uint64(k[len(k)-8:]), ok
}

// UploadKey is the uploads key of an upload.
func UploadKey(bucket, key, uploadID string) []byte {
	b := ObjectKey(bucket, key)
	b = append(b, Sep)
	return append(b, uploadID...)
}

// PartPrefix is "<upload id>\0".
func PartPrefix(uploadID string) []byte {
	return append([]byte(uploadID), Sep)
}

// PartKey is the parts key of part n of an upload.
func PartKey(uploadID string, n int) []byte {
	return binary.BigEndian.AppendUint32(PartPrefix(uploadID), uint32(n))
}

// DataKey is the data/garbage key of a data id.
func DataKey(id [16]byte) []byte {
	k := make([]byte, 16)
	copy(k, id[:])
	return k
}

// ChunkKey is the chunks key of a chunk id: 8 bytes, big-endian.
func ChunkKey(id uint64) []byte {
	return binary.BigEndian.AppendUint64(make([]byte, 0, 8), id)
}

// SplitChunkKey parses a chunks key.
func SplitChunkKey(k []byte) (uint64, bool) {
	if len(k) != 8 {
		return 0, false
	}
	return binary.BigEndian.Uint64(k), true
}

// HasPrefix reports whether k starts with p (for cursor loops).
func HasPrefix(k, p []byte) bool { return k != nil && bytes.HasPrefix(k, p) }

// PackKey is the packs key of a segment.
func PackKey(seg uint64) []byte { return binary.BigEndian.AppendUint64(nil, seg) }

// PackDataKey is the packdata key of data id in segment seg.
func PackDataKey(seg uint64, id [16]byte) []byte {
	return append(PackKey(seg), id[:]...)
}

// ParsePackKey is the inverse of PackKey.
func ParsePackKey(k []byte) (uint64, bool) {
	if len(k) != 8 {
		return 0, false
	}
	return binary.BigEndian.Uint64(k), true
}

// Lease kinds: what a lease keeps from the cleaner.
const (
	LeaseData    = 'd' // a data object's shards
	LeaseSegment = 's' // a pack segment file
)

// LeaseKey is the leases key of what holder keeps: kind LeaseData with a
// 16-byte data id, or LeaseSegment with an 8-byte segment number.
func LeaseKey(holder string, kind byte, id []byte) []byte {
	b := make([]byte, 0, len(holder)+2+len(id))
	b = append(b, holder...)
	b = append(b, Sep, kind)
	return append(b, id...)
}

// SplitLeaseKey parses a leases key.
func SplitLeaseKey(k []byte) (holder string, kind byte, id []byte, ok bool) {
	i := bytes.IndexByte(k, Sep)
	if i < 0 || len(k) < i+2 {
		return "", 0, nil, false
	}
	kind, id = k[i+1], k[i+2:]
	switch {
	case kind == LeaseData && len(id) == 16, kind == LeaseSegment && len(id) == 8:
		return string(k[:i]), kind, id, true
	}
	return "", 0, nil, false
}
