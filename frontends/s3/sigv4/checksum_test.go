package sigv4

import (
	"encoding/hex"
	"net/http"
	"testing"
)

func TestNewChecksumVectors(t *testing.T) {
	// Check values of the CRC catalogue for "123456789", and the FIPS digests.
	cases := []struct{ algo, want string }{
		{"crc32", "cbf43926"},
		{"CRC32C", "e3069283"},
		{"crc64nvme", "ae8b14860a799888"},
		{"sha1", "f7c3bc1d808e04732adf679965ccc34ca7ae3441"},
		{"sha256", "15e2b0d3c33891ebb0f1ef609ec419420c20e320ce94c65fbc8c3312448eb225"},
	}
	for _, tc := range cases {
		t.Run(tc.algo, func(t *testing.T) {
			h, err := NewChecksum(tc.algo)
			wantErr(t, err, nil)
			h.Write([]byte("123456789"))
			if got := hex.EncodeToString(h.Sum(nil)); got != tc.want {
				t.Fatalf("%s = %s, want %s", tc.algo, got, tc.want)
			}
		})
	}
	for _, algo := range []string{"md5", "crc64", "", "sha512"} {
		_, err := NewChecksum(algo)
		wantErr(t, err, ErrInvalidChecksum)
	}
	if got := EncodeChecksum([]byte{0xb0, 0xe3, 0xbc, 0xfd}); got != "sOO8/Q==" {
		t.Fatalf("EncodeChecksum = %s", got)
	}
}

func TestParseChecksumHeaders(t *testing.T) {
	crc := checksumOf(t, "crc32", []byte("x"))
	cases := []struct {
		name    string
		headers map[string][]string
		trailer bool
		want    declaredChecksum
		err     error
	}{
		{"none", nil, false, declaredChecksum{}, nil},
		{"header", map[string][]string{"X-Amz-Checksum-Crc32": {crc}}, false, declaredChecksum{algo: "crc32", value: crc}, nil},
		{"not values", map[string][]string{"X-Amz-Checksum-Type": {"FULL_OBJECT"}, "X-Amz-Checksum-Algorithm": {"CRC32"}}, false, declaredChecksum{}, nil},
		{"trailer", map[string][]string{"X-Amz-Trailer": {"x-amz-checksum-crc64nvme"}}, true, declaredChecksum{algo: "crc64nvme", inTrail: true}, nil},
		{"trailer not allowed", map[string][]string{"X-Amz-Trailer": {"x-amz-checksum-crc32"}}, false, declaredChecksum{}, ErrMalformedChunk},
		{"unknown header algo", map[string][]string{"X-Amz-Checksum-Md5": {"AAAAAAAAAAAAAAAAAAAAAA=="}}, false, declaredChecksum{}, ErrInvalidChecksum},
		{"unknown trailer algo", map[string][]string{"X-Amz-Trailer": {"x-amz-checksum-foo"}}, true, declaredChecksum{}, ErrInvalidChecksum},
		{"non-checksum trailer", map[string][]string{"X-Amz-Trailer": {"x-amz-meta-a"}}, true, declaredChecksum{}, ErrInvalidChecksum},
		{"bad base64", map[string][]string{"X-Amz-Checksum-Crc32": {"!!!"}}, false, declaredChecksum{}, ErrChecksumMismatch},
		{"wrong length", map[string][]string{"X-Amz-Checksum-Sha256": {crc}}, false, declaredChecksum{}, ErrChecksumMismatch},
		{"composite", map[string][]string{"X-Amz-Checksum-Crc32": {crc + "-3"}}, false, declaredChecksum{algo: "crc32", value: crc + "-3"}, ErrChecksumMismatch},
		{"composite no count", map[string][]string{"X-Amz-Checksum-Crc32": {crc + "-"}}, false, declaredChecksum{}, ErrChecksumMismatch},
		{"composite bad count", map[string][]string{"X-Amz-Checksum-Crc32": {crc + "-3a"}}, false, declaredChecksum{}, ErrChecksumMismatch},
		{"two headers", map[string][]string{"X-Amz-Checksum-Crc32": {crc}, "X-Amz-Checksum-Crc32c": {crc}}, false, declaredChecksum{}, ErrInvalidChecksum},
		{"header and trailer", map[string][]string{"X-Amz-Checksum-Crc32": {crc}, "X-Amz-Trailer": {"x-amz-checksum-crc32c"}}, true, declaredChecksum{}, ErrInvalidChecksum},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseChecksumHeaders(http.Header(tc.headers), tc.trailer)
			if err == nil {
				// A malformed value is kept, its error left for the body.
				err, got.bad = got.bad, nil
			}
			wantErr(t, err, tc.err)
			if (tc.err == nil || tc.want.algo != "") && got != tc.want {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}
