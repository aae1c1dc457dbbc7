package s3load

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// A fake endpoint that checks the requests are signed and answers them.
func TestRun(t *testing.T) {
	var puts, gets, unsigned atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256 ") {
			unsigned.Add(1)
		}
		switch r.Method {
		case http.MethodPut:
			_, _ = io.Copy(io.Discard, r.Body)
			puts.Add(1)
		case http.MethodGet:
			gets.Add(1)
			_, _ = w.Write(make([]byte, 4096))
		}
	}))
	defer srv.Close()
	for _, op := range []string{"put", "get"} {
		res, err := Run(context.Background(), Options{Endpoint: srv.URL, AccessKey: "ak", SecretKey: "sk", Bucket: "b",
			Op: op, Size: 4096, Clients: 4, Duration: 200 * time.Millisecond, Keys: 8})
		if err != nil {
			t.Fatal(err)
		}
		if res.Ops == 0 || res.Errors != 0 || res.OpsPerS <= 0 || res.P99 < res.P50 {
			t.Fatalf("%s: %+v", op, res)
		}
		if !strings.Contains(res.String(), op+" 4KiB x4") {
			t.Fatalf("summary %q", res.String())
		}
	}
	if unsigned.Load() != 0 || gets.Load() == 0 || puts.Load() < 8 {
		t.Fatalf("puts %d gets %d unsigned %d", puts.Load(), gets.Load(), unsigned.Load())
	}
	if _, err := Run(context.Background(), Options{Endpoint: srv.URL, Op: "delete", Size: 1, Clients: 1, Duration: time.Second}); err == nil {
		t.Fatal("unknown op accepted")
	}
}

// Anonymous runs send nothing signed and try no CreateBucket.
func TestRunAnonymous(t *testing.T) {
	var signed, bucketPuts, objects atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" || r.Header.Get("X-Amz-Date") != "" {
			signed.Add(1)
		}
		if strings.Count(strings.Trim(r.URL.Path, "/"), "/") == 0 {
			bucketPuts.Add(1)
		} else {
			objects.Add(1)
		}
		_, _ = io.Copy(io.Discard, r.Body)
	}))
	defer srv.Close()
	res, err := Run(context.Background(), Options{Endpoint: srv.URL, Anonymous: true, Bucket: "b",
		Op: "get", Size: 16, Clients: 2, Duration: 100 * time.Millisecond, Keys: 4})
	if err != nil || res.Errors != 0 {
		t.Fatalf("%+v, %v", res, err)
	}
	if signed.Load() != 0 || bucketPuts.Load() != 0 || objects.Load() < 5 {
		t.Fatalf("signed %d, bucket requests %d, object requests %d", signed.Load(), bucketPuts.Load(), objects.Load())
	}
}

// The encryption headers go with the object requests: SSE-C's with PUTs
// and GETs, the write-only SSE-S3/SSE-KMS ones with PUTs only (S3
// refuses them on a GET).
func TestRunSSEHeaders(t *testing.T) {
	var bad atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/b" || r.URL.Path == "/b/" {
			return // the bucket
		}
		hasKMS := r.Header.Get("X-Amz-Server-Side-Encryption") != ""
		hasC := r.Header.Get("X-Amz-Server-Side-Encryption-Customer-Key") != ""
		switch r.Method {
		case http.MethodPut:
			_, _ = io.Copy(io.Discard, r.Body)
			if !hasKMS || !hasC {
				bad.Add(1)
			}
		case http.MethodGet:
			if hasKMS || !hasC {
				bad.Add(1)
			}
			_, _ = w.Write(make([]byte, 16))
		}
	}))
	defer srv.Close()
	h := http.Header{}
	h.Set("x-amz-server-side-encryption", "aws:kms")
	h.Set("x-amz-server-side-encryption-customer-key", "k") // both only to see each kind's fate
	for _, op := range []string{"put", "get"} {
		res, err := Run(context.Background(), Options{Endpoint: srv.URL, AccessKey: "ak", SecretKey: "sk", Bucket: "b",
			Op: op, Size: 16, Clients: 1, Duration: 100 * time.Millisecond, Keys: 2, Headers: h})
		if err != nil || res.Ops == 0 {
			t.Fatalf("%s: %+v %v", op, res, err)
		}
	}
	if bad.Load() != 0 {
		t.Fatalf("%d requests with the wrong encryption headers", bad.Load())
	}
}

// A get run writes only the keys that do not already hold an object of
// its size and encryption (HEAD tells), so runs one after another read
// what the first one wrote.
func TestRunGetKeepsKeys(t *testing.T) {
	const size = 16
	tests := []struct {
		name     string
		length   string // HEAD's Content-Length
		sse      string // HEAD's x-amz-server-side-encryption
		asked    string // the run's x-amz-server-side-encryption
		wantPuts bool
	}{
		{"held, plain", "16", "", "", false},
		{"held, SSE-S3", "16", "AES256", "AES256", false},
		{"another size", "15", "", "", true},
		{"plain where SSE-S3 is asked", "16", "", "AES256", true},
		{"SSE-S3 where plain is asked", "16", "AES256", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var puts atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch {
				case r.URL.Path == "/b" || r.URL.Path == "/b/":
				case r.Method == http.MethodHead:
					if r.Header.Get("X-Amz-Server-Side-Encryption") != "" {
						w.WriteHeader(http.StatusBadRequest) // write-only, as S3
						return
					}
					w.Header().Set("Content-Length", tt.length)
					if tt.sse != "" {
						w.Header().Set("X-Amz-Server-Side-Encryption", tt.sse)
					}
				case r.Method == http.MethodPut:
					_, _ = io.Copy(io.Discard, r.Body)
					puts.Add(1)
				default:
					_, _ = w.Write(make([]byte, size))
				}
			}))
			defer srv.Close()
			h := http.Header{}
			if tt.asked != "" {
				h.Set("x-amz-server-side-encryption", tt.asked)
			}
			res, err := Run(context.Background(), Options{Endpoint: srv.URL, AccessKey: "ak", SecretKey: "sk", Bucket: "b",
				Op: "get", Size: size, Clients: 1, Duration: 50 * time.Millisecond, Keys: 3, Headers: h})
			if err != nil || res.Errors != 0 {
				t.Fatalf("%+v %v", res, err) // the reads are not what this test counts: a slow machine may fit none in
			}
			if got := puts.Load(); (got == 3) != tt.wantPuts || (got != 0 && got != 3) {
				t.Fatalf("%d PUTs of 3 keys, want them written %v", got, tt.wantPuts)
			}
		})
	}
}
