package sigv4

import (
	"crypto/sha1" //nolint:gosec // SHA-1 is one of the S3 checksum algorithms, not used for security.
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"hash"
	"hash/crc32"
	"hash/crc64"
	"net/http"
	"strings"
)

// Checksum algorithms, lowercase as in the x-amz-checksum-<algo> header names.
const (
	ChecksumCRC32     = "crc32"
	ChecksumCRC32C    = "crc32c"
	ChecksumCRC64NVME = "crc64nvme"
	ChecksumSHA1      = "sha1"
	ChecksumSHA256    = "sha256"
)

// crc64NVMEPoly is the CRC-64/NVME polynomial 0xad93d23594c93659 in reversed
// (LSB-first) form, as hash/crc64.MakeTable expects.
const crc64NVMEPoly = 0x9a6c9329ac4bc9b5

// checksumHeaderPrefix starts every checksum value header. Some other headers
// share the prefix without carrying a value; see notChecksumValue.
const checksumHeaderPrefix = "x-amz-checksum-"

// notChecksumValue lists x-amz-checksum-* headers that are not checksum values.
var notChecksumValue = map[string]bool{
	"x-amz-checksum-algorithm": true, // CreateMultipartUpload
	"x-amz-checksum-type":      true, // FULL_OBJECT or COMPOSITE
	"x-amz-checksum-mode":      true, // GetObject / HeadObject
}

// NewChecksum returns a new hash for one of the S3 checksum algorithms
// ("crc32", "crc32c", "crc64nvme", "sha1", "sha256", case-insensitive). Its
// Sum is big-endian, as S3 transmits it; encode it with EncodeChecksum.
func NewChecksum(algo string) (hash.Hash, error) {
	switch strings.ToLower(algo) {
	case ChecksumCRC32:
		return crc32.NewIEEE(), nil
	case ChecksumCRC32C:
		return crc32.New(crc32.MakeTable(crc32.Castagnoli)), nil
	case ChecksumCRC64NVME:
		return crc64.New(crc64.MakeTable(crc64NVMEPoly)), nil
	case ChecksumSHA1:
		return sha1.New(), nil //nolint:gosec // See import.
	case ChecksumSHA256:
		return sha256.New(), nil
	}
	return nil, fmt.Errorf("%w: unknown checksum algorithm %q", ErrInvalidChecksum, truncate(algo, 40))
}

// checksumSize is the digest length of each algorithm in bytes.
func checksumSize(algo string) int {
	switch algo {
	case ChecksumCRC32, ChecksumCRC32C:
		return 4
	case ChecksumCRC64NVME:
		return 8
	case ChecksumSHA1:
		return 20
	case ChecksumSHA256:
		return 32
	}
	return 0
}

// EncodeChecksum renders a checksum digest the way S3 headers carry it
// (standard base64 with padding).
func EncodeChecksum(sum []byte) string { return base64.StdEncoding.EncodeToString(sum) }

// checksumAlgo returns the algorithm of an x-amz-checksum-<algo> header name
// (any case), or ok=false if name is not a checksum value header.
func checksumAlgo(name string) (algo string, ok bool) {
	name = strings.ToLower(name)
	if !strings.HasPrefix(name, checksumHeaderPrefix) || notChecksumValue[name] {
		return "", false
	}
	return strings.TrimPrefix(name, checksumHeaderPrefix), true
}

// validateChecksum checks that algo is known (ErrInvalidChecksum) and
// value is base64 of the right length. A value that is not cannot match
// the body's checksum: that is ErrChecksumMismatch, S3's BadDigest (ceph
// s3-tests test_object_checksum_sha256 sends "bad").
func validateChecksum(algo, value string) error {
	n := checksumSize(algo)
	if n == 0 {
		return fmt.Errorf("%w: unknown checksum algorithm %q", ErrInvalidChecksum, truncate(algo, 40))
	}
	raw, err := base64.StdEncoding.DecodeString(value)
	if err != nil || len(raw) != n {
		return fmt.Errorf("%w: x-amz-checksum-%s value %q is not base64 of %d bytes", ErrChecksumMismatch, algo, truncate(value, 80), n)
	}
	return nil
}

// isComposite reports whether value is a multipart object's composite
// checksum, "<base64 of algo's length>-<parts>": CompleteMultipartUpload
// carries one in its x-amz-checksum-<algo> header.
func isComposite(algo, value string) bool {
	i := strings.LastIndexByte(value, '-')
	if i < 0 || i == len(value)-1 || validateChecksum(algo, value[:i]) != nil {
		return false
	}
	for _, c := range value[i+1:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// declaredChecksum is the checksum a request declares for its payload.
type declaredChecksum struct {
	algo    string // "" if none
	value   string // base64; empty until the trailer arrives when inTrail
	inTrail bool   // announced by x-amz-trailer, value comes in the trailer
	// bad is set when the header's value is a composite checksum
	// (isComposite), no payload checksum: the body fails on its first
	// Read unless the face detaches the header first, as
	// CompleteMultipartUpload does. Any other malformed value fails the
	// request at once.
	bad error
}

// parseChecksumHeaders finds the checksum declared by h: at most one
// x-amz-checksum-<algo> header, or one announced by x-amz-trailer (trailers
// allowed only when the payload form carries them).
func parseChecksumHeaders(h http.Header, trailersAllowed bool) (declaredChecksum, error) {
	var d declaredChecksum
	for name, vs := range h {
		algo, ok := checksumAlgo(name)
		if !ok {
			continue
		}
		if d.algo != "" || len(vs) != 1 {
			return d, fmt.Errorf("%w: more than one x-amz-checksum-* header", ErrInvalidChecksum)
		}
		if checksumSize(algo) == 0 {
			return d, fmt.Errorf("%w: unknown checksum algorithm %q", ErrInvalidChecksum, truncate(algo, 40))
		}
		if err := validateChecksum(algo, vs[0]); err != nil {
			if !isComposite(algo, vs[0]) {
				return d, err
			}
			d.bad = err
		}
		d.algo, d.value = algo, vs[0]
	}
	announced := h.Values("X-Amz-Trailer")
	if len(announced) == 0 {
		return d, nil
	}
	if !trailersAllowed {
		return d, fmt.Errorf("%w: x-amz-trailer without a trailer payload form", ErrMalformedChunk)
	}
	for _, v := range announced {
		for _, name := range strings.Split(v, ",") {
			name = strings.ToLower(strings.TrimSpace(name))
			if name == "" {
				continue
			}
			algo, ok := checksumAlgo(name)
			if !ok {
				return d, fmt.Errorf("%w: x-amz-trailer announces %q", ErrInvalidChecksum, truncate(name, 60))
			}
			if checksumSize(algo) == 0 {
				return d, fmt.Errorf("%w: unknown checksum algorithm %q", ErrInvalidChecksum, truncate(algo, 40))
			}
			if d.algo != "" {
				return d, fmt.Errorf("%w: more than one checksum declared", ErrInvalidChecksum)
			}
			d.algo, d.inTrail = algo, true
		}
	}
	return d, nil
}
