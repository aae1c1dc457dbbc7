package s3

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/cairnstore/cairn/frontends/s3/sigv4"
	"github.com/cairnstore/cairn/frontends/s3/sse"
	"github.com/cairnstore/cairn/objstore"
	"github.com/cairnstore/cairn/objstore/storetest"
)

// benchServer serves a fresh 4-drive store over loopback HTTP.
func benchServer(b *testing.B) string {
	st := storetest.Open(b, objstore.Options{Dir: b.TempDir(), DriveCount: 4, Parity: 2})
	keys, _ := sse.NewKeys(bytes.Repeat([]byte{7}, 32), []sse.NamedKey{{Name: "k", Key: bytes.Repeat([]byte{8}, 32)}})
	srv, err := New(st, Options{Secret: func(string) (string, bool) { return "secret", true }, SSE: keys})
	if err != nil {
		b.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	b.Cleanup(hs.Close)
	do(b, hs.URL, http.MethodPut, "/bench", nil, nil)
	return hs.URL
}

func do(b *testing.B, base, method, path string, body []byte, h http.Header) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, _ := http.NewRequest(method, base+path, rd)
	req.ContentLength = int64(len(body))
	for k, v := range h {
		req.Header[k] = v
	}
	if err := sigv4.Sign(req, "bench", "secret", "us-east-1", "s3", "", time.Now()); err != nil {
		b.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode >= 300 {
		b.Fatalf("%s %s: %s", method, path, resp.Status)
	}
}

// BenchmarkObjectSSE is a 64 MiB PUT and GET through the S3 face, plain
// and SSE-S3, one client: the cost encryption adds to a request.
func BenchmarkObjectSSE(b *testing.B) {
	data := make([]byte, 64<<20)
	_, _ = rand.Read(data)
	for _, mode := range []string{"plain", "sse-s3", "sse-kms"} {
		h := http.Header{}
		switch mode {
		case "sse-s3":
			h.Set(hdrSSE, "AES256")
		case "sse-kms":
			h.Set(hdrSSE, "aws:kms")
		}
		b.Run("put/"+mode, func(b *testing.B) {
			base := benchServer(b)
			b.SetBytes(int64(len(data)))
			i := 0
			for b.Loop() {
				do(b, base, http.MethodPut, fmt.Sprintf("/bench/k%d", i%4), data, h)
				i++
			}
		})
		b.Run("get/"+mode, func(b *testing.B) {
			base := benchServer(b)
			do(b, base, http.MethodPut, "/bench/k", data, h)
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				do(b, base, http.MethodGet, "/bench/k", nil, nil)
			}
		})
	}
}
