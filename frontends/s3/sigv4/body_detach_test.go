package sigv4

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestDetachHeaderChecksum(t *testing.T) {
	cases := []struct {
		name, header, value string
		undetached          error // what reading the body gives without detaching
		// A value that is neither a checksum nor a composite one fails
		// at newBody (TestParseChecksumHeaders).
	}{
		{"crc of the object", "x-amz-checksum-crc32c", "1oY9pw==", ErrChecksumMismatch},
		// A composite checksum is no payload checksum at all: it must
		// not fail the request before the face detaches it.
		{"composite", "x-amz-checksum-sha256", "uWBwpe1dxI4Vw8Gf0X9ynOdw/SS6VBzfWm9giiv1sf4=-3", ErrChecksumMismatch},
	}
	newReq := func(h, v string) *Body {
		t.Helper()
		r, _ := http.NewRequest("POST", "http://h/b/k?uploadId=u", strings.NewReader("<CompleteMultipartUpload/>"))
		r.Header.Set(h, v)
		b, err := newBody(r, nil, PayloadUnsigned, nil, nil)
		if err != nil {
			t.Fatalf("newBody: %v", err)
		}
		return b
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := newReq(tc.header, tc.value)
			algo, v, ok := b.DetachHeaderChecksum()
			if !ok || "x-amz-checksum-"+algo != tc.header || v != tc.value {
				t.Fatalf("detach: %q %q %v", algo, v, ok)
			}
			if _, err := io.ReadAll(b); err != nil {
				t.Fatalf("body checked against the detached checksum: %v", err)
			}
			// Without detaching, the same request fails.
			_, err := io.ReadAll(newReq(tc.header, tc.value))
			wantErr(t, err, tc.undetached)
		})
	}
}
