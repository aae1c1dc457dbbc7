package sigv4

import (
	"encoding/binary"
	"fmt"
	"strings"
)

// reversedPoly gives the LSB-first polynomial and width of each CRC
// algorithm; the hashes have no full-object combination.
func reversedPoly(algo string) (poly uint64, width int, ok bool) {
	switch strings.ToLower(algo) {
	case ChecksumCRC32:
		return 0xedb88320, 32, true
	case ChecksumCRC32C:
		return 0x82f63b78, 32, true
	case ChecksumCRC64NVME:
		return crc64NVMEPoly, 64, true
	}
	return 0, 0, false
}

// IsCRC reports whether algo's checksums of consecutive byte runs combine
// into the checksum of their concatenation (CombineChecksums).
func IsCRC(algo string) bool {
	_, _, ok := reversedPoly(algo)
	return ok
}

// CombineChecksums returns the checksum of A followed by B from the
// checksum of A, the checksum of B and B's length: the full-object
// checksum of a multipart object from its parts'. Sums are big-endian, as
// NewChecksum's Sum gives them. Only CRC algorithms combine.
//
// It is zlib's crc32_combine, for any reflected CRC whose initial value
// and final xor are equal (all of S3's): appending len2 zero bytes is a
// linear map on the register, applied by repeated squaring.
func CombineChecksums(algo string, sumA, sumB []byte, lenB int64) ([]byte, error) {
	poly, width, ok := reversedPoly(algo)
	if !ok {
		return nil, fmt.Errorf("%w: %s checksums do not combine", ErrInvalidChecksum, algo)
	}
	if len(sumA) != width/8 || len(sumB) != width/8 {
		return nil, fmt.Errorf("%w: a %s checksum is %d bytes", ErrInvalidChecksum, algo, width/8)
	}
	a, b := beUint(sumA), beUint(sumB)
	out := make([]byte, width/8)
	putBEUint(out, crcCombine(poly, width, a, b, lenB))
	return out, nil
}

func beUint(b []byte) uint64 {
	if len(b) == 4 {
		return uint64(binary.BigEndian.Uint32(b))
	}
	return binary.BigEndian.Uint64(b)
}

func putBEUint(b []byte, v uint64) {
	if len(b) == 4 {
		binary.BigEndian.PutUint32(b, uint32(v))
		return
	}
	binary.BigEndian.PutUint64(b, v)
}

func gf2Times(mat []uint64, vec uint64) uint64 {
	var sum uint64
	for i := 0; vec != 0; i, vec = i+1, vec>>1 {
		if vec&1 != 0 {
			sum ^= mat[i]
		}
	}
	return sum
}

func gf2Square(square, mat []uint64) {
	for n := range mat {
		square[n] = gf2Times(mat, mat[n])
	}
}

func crcCombine(poly uint64, width int, crc1, crc2 uint64, len2 int64) uint64 {
	if len2 <= 0 {
		return crc1
	}
	even := make([]uint64, width) // operator for 2^k zero bits, even k
	odd := make([]uint64, width)  // and odd k
	odd[0] = poly                 // one zero bit
	row := uint64(1)
	for n := 1; n < width; n++ {
		odd[n] = row
		row <<= 1
	}
	gf2Square(even, odd) // two zero bits
	gf2Square(odd, even) // four zero bits
	for {
		gf2Square(even, odd) // the first pass: one zero byte
		if len2&1 != 0 {
			crc1 = gf2Times(even, crc1)
		}
		if len2 >>= 1; len2 == 0 {
			break
		}
		gf2Square(odd, even)
		if len2&1 != 0 {
			crc1 = gf2Times(odd, crc1)
		}
		if len2 >>= 1; len2 == 0 {
			break
		}
	}
	return crc1 ^ crc2
}
