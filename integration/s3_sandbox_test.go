package integration

import (
	"bytes"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// TestS3ObjectSandbox checks that object answers cannot act as pages of
// the server's origin (which the web console shares): every GET and HEAD
// of an object carries nosniff, and a type a browser renders as a
// scriptable document also carries "Content-Security-Policy: sandbox",
// whether the request is signed, presigned, or names the type through
// response-content-type.
func TestS3ObjectSandbox(t *testing.T) {
	srv := startS3Server(t)
	c := sdkClient(srv, s3User, s3Secret)
	bucket := "sandbox"
	if _, err := c.CreateBucket(callCtx(t), &s3.CreateBucketInput{Bucket: &bucket}); err != nil {
		t.Fatalf("CreateBucket: %v", err)
	}
	for key, ct := range map[string]string{
		"page.html": "text/html; charset=utf-8",
		"pic.svg":   "image/svg+xml",
		"note.txt":  "text/plain",
	} {
		body := []byte("<html><script>alert(1)</script></html>")
		if _, err := c.PutObject(callCtx(t), &s3.PutObjectInput{Bucket: &bucket, Key: aws.String(key),
			ContentType: aws.String(ct), Body: bytes.NewReader(body)}); err != nil {
			t.Fatalf("PutObject %s: %v", key, err)
		}
	}
	signed := func(method, key string, q url.Values) *http.Request {
		u := objectURL(srv, bucket, key)
		if len(q) > 0 {
			u += "?" + q.Encode()
		}
		req := newRaw(t, method, u, nil)
		signRaw(t, req, nil, s3User, s3Secret, time.Now())
		return req
	}
	presigned := func(method, key string, q url.Values) *http.Request {
		u := objectURL(srv, bucket, key)
		if len(q) > 0 {
			u += "?" + q.Encode()
		}
		return newRaw(t, method, presignRaw(t, newRaw(t, method, u, nil), s3User, s3Secret, time.Now(), 10*time.Minute), nil)
	}
	override := url.Values{"response-content-type": {"text/html"}}
	for _, tc := range []struct {
		name    string
		req     *http.Request
		ct      string
		sandbox bool
	}{
		{"GET html", signed(http.MethodGet, "page.html", nil), "text/html; charset=utf-8", true},
		{"HEAD html", signed(http.MethodHead, "page.html", nil), "text/html; charset=utf-8", true},
		{"GET svg", signed(http.MethodGet, "pic.svg", nil), "image/svg+xml", true},
		{"presigned GET html", presigned(http.MethodGet, "page.html", nil), "text/html; charset=utf-8", true},
		{"GET text", signed(http.MethodGet, "note.txt", nil), "text/plain", false},
		{"presigned GET text", presigned(http.MethodGet, "note.txt", nil), "text/plain", false},
		{"GET text as html", signed(http.MethodGet, "note.txt", override), "text/html", true},
		{"presigned GET text as html", presigned(http.MethodGet, "note.txt", override), "text/html", true},
		{"presigned GET html as text", presigned(http.MethodGet, "page.html",
			url.Values{"response-content-type": {"text/plain"}}), "text/plain", false},
	} {
		res := doRaw(t, tc.req)
		if res.status != http.StatusOK {
			t.Errorf("%s: status %d (%s), want 200", tc.name, res.status, res.code)
			continue
		}
		if got := res.header.Get("Content-Type"); got != tc.ct {
			t.Errorf("%s: Content-Type %q, want %q", tc.name, got, tc.ct)
		}
		if got := res.header.Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("%s: X-Content-Type-Options %q, want nosniff", tc.name, got)
		}
		want := ""
		if tc.sandbox {
			want = "sandbox"
		}
		if got := res.header.Get("Content-Security-Policy"); got != want {
			t.Errorf("%s: Content-Security-Policy %q, want %q", tc.name, got, want)
		}
	}
}
