package sigv4

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestDetachHeaderChecksum(t *testing.T) {
	r, _ := http.NewRequest("POST", "http://h/b/k?uploadId=u", strings.NewReader("<CompleteMultipartUpload/>"))
	r.Header.Set("x-amz-checksum-crc32c", "1oY9pw==") // the object's, not the body's
	b, err := newBody(r, nil, PayloadUnsigned, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	algo, v, ok := b.DetachHeaderChecksum()
	if !ok || algo != "crc32c" || v != "1oY9pw==" {
		t.Fatalf("detach: %q %q %v", algo, v, ok)
	}
	if _, err := io.ReadAll(b); err != nil {
		t.Fatalf("body checked against the detached checksum: %v", err)
	}
	// Without detaching, the same request fails at EOF.
	r2, _ := http.NewRequest("POST", "http://h/b/k?uploadId=u", strings.NewReader("<CompleteMultipartUpload/>"))
	r2.Header.Set("x-amz-checksum-crc32c", "1oY9pw==")
	b2, _ := newBody(r2, nil, PayloadUnsigned, nil, nil)
	if _, err := io.ReadAll(b2); err == nil {
		t.Fatal("mismatching header checksum not detected")
	}
}
