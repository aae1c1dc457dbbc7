package erasure

import "errors"

var (
	// ErrBadHeader means a shard header is unusable: wrong magic or version,
	// checksum mismatch, truncated, invalid geometry, or a header that does
	// not describe the expected object and shard.
	ErrBadHeader = errors.New("erasure: bad shard header")

	// ErrCorrupt means a shard block's stored CRC32C does not match its bytes.
	ErrCorrupt = errors.New("erasure: shard block checksum mismatch")

	// ErrReadQuorum means fewer than k shards were healthy for a block, so it
	// cannot be decoded.
	ErrReadQuorum = errors.New("erasure: fewer than k healthy shards")

	// ErrWriteQuorum means fewer than WriteQuorum(k, m) shard sinks remained
	// healthy during a write; the object must be considered not written.
	ErrWriteQuorum = errors.New("erasure: write quorum not reached")

	// ErrGeometry means invalid k, m or block size, or a header or shard list
	// that does not match the codec's geometry.
	ErrGeometry = errors.New("erasure: invalid k/m/block size")
)
