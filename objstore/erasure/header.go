package erasure

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"math/bits"
)

const (
	// FormatVersion is the shard file format version written by this package.
	FormatVersion = 1
	// MaxShards is the largest k+m.
	MaxShards = 256
	// MaxBlockSize is the largest block size accepted, bounding the memory a
	// (possibly corrupt) header can make a reader allocate.
	MaxBlockSize = 64 << 20
	// MaxNameLen is the longest bucket or key stored in a header.
	MaxNameLen = math.MaxUint16

	magic          = "CAIRNSHD"
	fixedHeaderLen = 46 // bytes before the bucket name
	checksumLen    = 4
	// headerPrefix is how much ReadHeader reads in its first ReadAt.
	headerPrefix = 512
)

// castagnoli is the CRC32C table; constant after initialisation.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Header is the self-describing header at the start of every shard file.
type Header struct {
	K, M, Index int
	BlockSize   int
	Size        int64 // object size in bytes
	DataID      DataID
	Bucket, Key string // recovery hint only
}

// checkGeometry validates k, m and the block size, wrapping ErrGeometry.
func checkGeometry(k, m, blockSize int) error {
	switch {
	case k < 1 || k > math.MaxUint8 || m < 0 || m > math.MaxUint8 || k+m > MaxShards:
		return fmt.Errorf("%w: k=%d m=%d (need k>=1, m>=0, k+m<=%d)", ErrGeometry, k, m, MaxShards)
	case blockSize < 64*k || blockSize > MaxBlockSize:
		return fmt.Errorf("%w: block size %d (need %d..%d for k=%d)", ErrGeometry, blockSize, 64*k, MaxBlockSize, k)
	}
	return nil
}

// validate checks every field. Geometry problems wrap ErrGeometry, the others
// ErrBadHeader.
func (h Header) validate() error {
	if err := checkGeometry(h.K, h.M, h.BlockSize); err != nil {
		return err
	}
	switch {
	case h.Index < 0 || h.Index >= h.K+h.M:
		return fmt.Errorf("%w: shard index %d out of range for k+m=%d", ErrBadHeader, h.Index, h.K+h.M)
	case len(h.Bucket) > MaxNameLen:
		return fmt.Errorf("%w: bucket name is %d bytes, limit %d", ErrBadHeader, len(h.Bucket), MaxNameLen)
	case len(h.Key) > MaxNameLen:
		return fmt.Errorf("%w: key is %d bytes, limit %d", ErrBadHeader, len(h.Key), MaxNameLen)
	case h.Size < 0:
		return fmt.Errorf("%w: negative object size %d", ErrBadHeader, h.Size)
	}
	if !h.sizeFits() {
		return fmt.Errorf("%w: object size %d overflows the shard file size", ErrBadHeader, h.Size)
	}
	return nil
}

// sizeFits reports whether ShardFileSize fits in an int64.
func (h Header) sizeFits() bool {
	bs := uint64(h.BlockSize)
	full, rem := uint64(h.Size)/bs, uint64(h.Size)%bs
	hi, total := bits.Mul64(full, uint64(checksumLen+h.fullShardSize()))
	if hi != 0 {
		return false
	}
	var carry uint64
	if rem > 0 {
		total, carry = bits.Add64(total, checksumLen+(rem+uint64(h.K)-1)/uint64(h.K), 0)
	}
	total, carry2 := bits.Add64(total, uint64(h.EncodedLen()), 0)
	return carry == 0 && carry2 == 0 && total <= math.MaxInt64
}

// EncodedLen is the length of the marshalled header, checksum included.
func (h Header) EncodedLen() int {
	return fixedHeaderLen + len(h.Bucket) + len(h.Key) + checksumLen
}

// MarshalBinary encodes the header. It fails, wrapping ErrGeometry or
// ErrBadHeader, if any field is out of range.
func (h Header) MarshalBinary() ([]byte, error) {
	if err := h.validate(); err != nil {
		return nil, err
	}
	b := make([]byte, fixedHeaderLen, h.EncodedLen())
	copy(b, magic)
	le := binary.LittleEndian
	le.PutUint16(b[8:], FormatVersion)
	b[10], b[11], b[12], b[13] = byte(h.K), byte(h.M), byte(h.Index), 0
	le.PutUint32(b[14:], uint32(h.BlockSize))
	le.PutUint64(b[18:], uint64(h.Size))
	copy(b[26:42], h.DataID[:])
	le.PutUint16(b[42:], uint16(len(h.Bucket)))
	le.PutUint16(b[44:], uint16(len(h.Key)))
	b = append(b, h.Bucket...)
	b = append(b, h.Key...)
	return le.AppendUint32(b, crc32.Checksum(b, castagnoli)), nil
}

// encodedLen checks the magic and version in a header prefix and returns the
// full header length it announces.
func encodedLen(b []byte) (int, error) {
	if len(b) < fixedHeaderLen {
		return 0, fmt.Errorf("%w: %d bytes, need at least %d", ErrBadHeader, len(b), fixedHeaderLen+checksumLen)
	}
	if string(b[:8]) != magic {
		return 0, fmt.Errorf("%w: bad magic %q", ErrBadHeader, b[:8])
	}
	if v := binary.LittleEndian.Uint16(b[8:]); v != FormatVersion {
		return 0, fmt.Errorf("%w: unsupported format version %d", ErrBadHeader, v)
	}
	bl := int(binary.LittleEndian.Uint16(b[42:]))
	kl := int(binary.LittleEndian.Uint16(b[44:]))
	return fixedHeaderLen + bl + kl + checksumLen, nil
}

// ParseHeader decodes the header at the start of b (trailing bytes are
// ignored) and returns it with its encoded length. Any problem, including a
// truncated b, is reported wrapping ErrBadHeader. It never panics.
func ParseHeader(b []byte) (Header, int, error) {
	n, err := encodedLen(b)
	if err != nil {
		return Header{}, 0, err
	}
	if len(b) < n {
		return Header{}, 0, fmt.Errorf("%w: truncated: %d of %d bytes", ErrBadHeader, len(b), n)
	}
	le := binary.LittleEndian
	if got, want := crc32.Checksum(b[:n-checksumLen], castagnoli), le.Uint32(b[n-checksumLen:]); got != want {
		return Header{}, 0, fmt.Errorf("%w: checksum %08x, stored %08x", ErrBadHeader, got, want)
	}
	if b[13] != 0 {
		return Header{}, 0, fmt.Errorf("%w: reserved byte is %d", ErrBadHeader, b[13])
	}
	size := le.Uint64(b[18:])
	if size > math.MaxInt64 {
		return Header{}, 0, fmt.Errorf("%w: object size %d too large", ErrBadHeader, size)
	}
	bl := int(le.Uint16(b[42:]))
	h := Header{
		K:         int(b[10]),
		M:         int(b[11]),
		Index:     int(b[12]),
		BlockSize: int(le.Uint32(b[14:])),
		Size:      int64(size),
		Bucket:    string(b[fixedHeaderLen : fixedHeaderLen+bl]),
		Key:       string(b[fixedHeaderLen+bl : n-checksumLen]),
	}
	copy(h.DataID[:], b[26:42])
	if err := h.validate(); err != nil {
		if !errors.Is(err, ErrBadHeader) {
			err = fmt.Errorf("%w: %w", ErrBadHeader, err)
		}
		return Header{}, 0, err
	}
	return h, n, nil
}

// ReadHeader reads and parses the header at offset 0 of r. A short or
// malformed header wraps ErrBadHeader; other read errors are returned
// wrapped as they are.
func ReadHeader(r io.ReaderAt) (Header, int, error) {
	buf := make([]byte, headerPrefix)
	n, err := r.ReadAt(buf, 0)
	if n < fixedHeaderLen && err != nil && !errors.Is(err, io.EOF) {
		return Header{}, 0, fmt.Errorf("erasure: read header: %w", err)
	}
	total, perr := encodedLen(buf[:n])
	if perr != nil {
		return Header{}, 0, perr
	}
	if total > n {
		buf = append(buf[:n], make([]byte, total-n)...)
		m, err := r.ReadAt(buf[n:], int64(n))
		if m < total-n {
			if err != nil && !errors.Is(err, io.EOF) {
				return Header{}, 0, fmt.Errorf("erasure: read header: %w", err)
			}
			return Header{}, 0, fmt.Errorf("%w: truncated: %d of %d bytes", ErrBadHeader, n+m, total)
		}
	}
	return ParseHeader(buf[:total])
}

// sameObject reports whether o describes the same object and geometry as h
// (index, bucket and key aside).
func (h Header) sameObject(o Header) bool {
	return h.K == o.K && h.M == o.M && h.BlockSize == o.BlockSize &&
		h.Size == o.Size && h.DataID == o.DataID
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// fullShardSize is the shard size of a full block.
func (h Header) fullShardSize() int {
	if h.K <= 0 {
		return 0
	}
	return ceilDiv(h.BlockSize, h.K)
}

// BlockCount is the number of blocks: ceil(Size/BlockSize).
func (h Header) BlockCount() int64 {
	if h.BlockSize <= 0 || h.Size <= 0 {
		return 0
	}
	bs := int64(h.BlockSize)
	n := h.Size / bs
	if h.Size%bs != 0 {
		n++
	}
	return n
}

// BlockLen is the number of object bytes in block b (0 if b is out of range).
func (h Header) BlockLen(b int64) int {
	if b < 0 || b >= h.BlockCount() {
		return 0
	}
	return int(min(int64(h.BlockSize), h.Size-b*int64(h.BlockSize)))
}

// ShardSize is the size of each shard of block b: ceil(BlockLen(b)/K).
func (h Header) ShardSize(b int64) int {
	if h.K <= 0 {
		return 0
	}
	return ceilDiv(h.BlockLen(b), h.K)
}

// blockRel is the offset of block b's chunk relative to the end of the
// header; b is clamped to [0, BlockCount], so blockRel(BlockCount()) is the
// total length of the chunks.
func (h Header) blockRel(b int64) int64 {
	n := h.BlockCount()
	b = max(0, min(b, n))
	stride := int64(checksumLen + h.fullShardSize())
	if b == n && n > 0 && h.Size%int64(h.BlockSize) != 0 {
		return (b-1)*stride + int64(checksumLen+h.ShardSize(b-1))
	}
	return b * stride
}

// BlockOffset is the offset in the shard file of block b's checksum. For
// b >= BlockCount it is the end of the file.
func (h Header) BlockOffset(b int64) int64 {
	return int64(h.EncodedLen()) + h.blockRel(b)
}

// ShardFileSize is the expected size of a complete shard file.
func (h Header) ShardFileSize() int64 { return h.BlockOffset(h.BlockCount()) }
