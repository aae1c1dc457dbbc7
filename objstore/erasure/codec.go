package erasure

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"sync"

	"github.com/klauspost/reedsolomon"
)

// concurrentIOSize is the shard size from which the shards of one block are
// read or written concurrently rather than one after the other.
const concurrentIOSize = 64 << 10

// Codec encodes and decodes objects with one k+m geometry and block size.
// It is safe for concurrent use.
type Codec struct {
	k, m      int
	blockSize int
	shardSize int // shard size of a full block
	stride    int // checksumLen + shardSize: one chunk slot in a block buffer

	enc  reedsolomon.Encoder // nil when m == 0
	bufs sync.Pool           // *[]byte of (k+m)*stride bytes
}

// NewCodec returns a codec for k data and m parity shards per block of
// blockSize bytes. It requires 1 <= k, 0 <= m, k+m <= 256 and
// 64*k <= blockSize <= MaxBlockSize, and fails wrapping ErrGeometry otherwise.
func NewCodec(k, m, blockSize int) (*Codec, error) {
	if err := checkGeometry(k, m, blockSize); err != nil {
		return nil, err
	}
	c := &Codec{k: k, m: m, blockSize: blockSize, shardSize: ceilDiv(blockSize, k)}
	c.stride = checksumLen + c.shardSize
	if m > 0 {
		enc, err := reedsolomon.New(k, m, reedsolomon.WithMaxGoroutines(1))
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrGeometry, err)
		}
		c.enc = enc
	}
	size := (k + m) * c.stride
	c.bufs.New = func() any {
		b := make([]byte, size)
		return &b
	}
	return c, nil
}

// K returns the number of data shards.
func (c *Codec) K() int { return c.k }

// M returns the number of parity shards.
func (c *Codec) M() int { return c.m }

// BlockSize returns the block size in bytes.
func (c *Codec) BlockSize() int { return c.blockSize }

func (c *Codec) getBuf() *[]byte  { return c.bufs.Get().(*[]byte) }
func (c *Codec) bufLen() int      { return (c.k + c.m) * c.stride }
func (c *Codec) putBuf(b *[]byte) { c.bufs.Put(b) }

// chunk returns shard i's slot (checksum then ss shard bytes) in a block
// buffer; its capacity ends with the slot.
func (c *Codec) chunk(buf []byte, i, ss int) []byte {
	off := i * c.stride
	return buf[off : off+checksumLen+ss : off+checksumLen+ss]
}

// checkArgs validates a caller's header and shard list against the codec.
func (c *Codec) checkArgs(hdr Header, shards int) error {
	if hdr.K != c.k || hdr.M != c.m || hdr.BlockSize != c.blockSize {
		return fmt.Errorf("%w: header is %d+%d/%d, codec is %d+%d/%d",
			ErrGeometry, hdr.K, hdr.M, hdr.BlockSize, c.k, c.m, c.blockSize)
	}
	h := hdr
	h.Index = 0 // the caller's index is irrelevant
	if err := h.validate(); err != nil {
		return err
	}
	if shards != c.k+c.m {
		return fmt.Errorf("%w: %d shards given, want %d", ErrGeometry, shards, c.k+c.m)
	}
	return nil
}

// sealChunk stores the CRC32C of chunk's shard bytes in its first 4 bytes.
func sealChunk(chunk []byte) {
	binary.LittleEndian.PutUint32(chunk, crc32.Checksum(chunk[checksumLen:], castagnoli))
}

// chunkOK reports whether chunk's stored checksum matches its shard bytes.
func chunkOK(chunk []byte) bool {
	return binary.LittleEndian.Uint32(chunk) == crc32.Checksum(chunk[checksumLen:], castagnoli)
}

// forEach calls fn for every index, concurrently if asked, and returns when
// all calls have.
func forEach(idx []int, concurrent bool, fn func(i int)) {
	if !concurrent || len(idx) < 2 {
		for _, i := range idx {
			fn(i)
		}
		return
	}
	var wg sync.WaitGroup
	for _, i := range idx[1:] {
		wg.Go(func() { fn(i) })
	}
	fn(idx[0])
	wg.Wait()
}
