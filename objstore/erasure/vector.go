package erasure

import (
	"context"
	"encoding/binary"
	"hash/crc32"
	"io"
)

// VectorReaderAt is a shard source that reads into several buffers with
// one call (preadv(2)). With one, a block whose data shards are all good
// is read straight into the caller's buffer: no staging buffer, no copy.
type VectorReaderAt interface {
	io.ReaderAt
	// ReadVAt fills bufs in order from off, as ReadAt fills one buffer.
	ReadVAt(bufs [][]byte, off int64) (int, error)
}

// readBlockDirect reads block b (l bytes) into dst from its data shards
// when every one is known good and vectored, checking each chunk's
// CRC32C. It says whether it did; on any trouble (a bad or missing shard,
// a checksum mismatch) it says no and the caller takes the general path,
// which finds, reports and works around the bad shards.
func (c *Codec) readBlockDirect(ctx context.Context, s *sources, b int64, dst []byte, l int) bool {
	vecs := make([]VectorReaderAt, c.k)
	for i := range c.k {
		v, ok := s.s[i].r.(VectorReaderAt)
		if !ok || s.knownBad(i) || s.checkHeader(i) != nil {
			return false
		}
		vecs[i] = v
	}
	ss := s.hdr.ShardSize(b)
	idx := make([]int, c.k)
	for i := range idx {
		idx[i] = i
	}
	good := make([]bool, c.k)
	forEach(idx, ss >= concurrentIOSize, func(i int) {
		lo, hi := min(i*ss, l), min((i+1)*ss, l)
		data := dst[lo:hi]
		var pad []byte
		if n := ss - (hi - lo); n > 0 {
			pad = make([]byte, n) // the zero padding of the last shards
		}
		var sum [checksumLen]byte
		n, err := vecs[i].ReadVAt([][]byte{sum[:], data, pad}, s.dataOffset(i, b))
		if err != nil && (err != io.EOF || n < checksumLen+ss) {
			return
		}
		crc := crc32.Update(crc32.Checksum(data, castagnoli), castagnoli, pad)
		good[i] = n == checksumLen+ss && binary.LittleEndian.Uint32(sum[:]) == crc
	})
	if ctx.Err() != nil {
		return false
	}
	for _, ok := range good {
		if !ok {
			return false
		}
	}
	return true
}
