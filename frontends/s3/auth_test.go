package s3

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/cairnstore/cairn/frontends/s3/sigv2"
	"github.com/cairnstore/cairn/frontends/s3/sigv4"
	"github.com/cairnstore/cairn/objstore"
	"github.com/cairnstore/cairn/objstore/storetest"
)

const (
	authTestKey    = "AKIAIOSFODNN7EXAMPLE"
	authTestSecret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
)

func authTestServer(t *testing.T, authorize func(accessKey, action, resource string) bool) *Server {
	t.Helper()
	st := storetest.Open(t, objstore.Options{Dir: t.TempDir(), DriveCount: 1, Parity: -1, NoBackground: true})
	s, err := New(st, Options{
		Secret:    func(ak string) (string, bool) { return authTestSecret, ak == authTestKey },
		Authorize: authorize, Domains: []string{"s3.local"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// received turns a client request into what the server sees.
func received(c *http.Request) *http.Request {
	r := httptest.NewRequest(c.Method, c.URL.String(), strings.NewReader("body"))
	r.Header = c.Header.Clone()
	r.Host = c.URL.Host
	return r
}

func TestAuthenticateForms(t *testing.T) {
	now := time.Now()
	allowAll := func(string, string, string) bool { return true }
	v2 := func(target, bucket string) *http.Request {
		c, _ := http.NewRequest("PUT", target, nil)
		if err := sigv2.Sign(c, authTestKey, authTestSecret, bucket, now); err != nil {
			t.Fatal(err)
		}
		return received(c)
	}
	v2q := func(target string, expires time.Time) *http.Request {
		c, _ := http.NewRequest("GET", target, nil)
		u, err := sigv2.Presign(c, authTestKey, authTestSecret, "", expires)
		if err != nil {
			t.Fatal(err)
		}
		return received(&http.Request{Method: "GET", URL: mustParse(t, u), Header: http.Header{}})
	}
	v4 := func() *http.Request {
		c, _ := http.NewRequest("GET", "http://h/b/k", nil)
		if err := sigv4.Sign(c, authTestKey, authTestSecret, "us-east-1", "s3", "", now); err != nil {
			t.Fatal(err)
		}
		return received(c)
	}
	for _, tc := range []struct {
		name      string
		r         *http.Request
		authorize func(string, string, string) bool
		routed    bool
		want      sigv4.Auth
		err       error
	}{
		{"sigv2 header", v2("http://h/b/k", ""), nil, true, sigv4.Auth{AccessKey: authTestKey, Version: 2, Payload: sigv4.PayloadUnsigned}, nil},
		{"sigv2 header virtual-hosted", v2("http://b.s3.local/k", "b"), nil, true, sigv4.Auth{AccessKey: authTestKey, Version: 2, Payload: sigv4.PayloadUnsigned}, nil},
		{"sigv2 virtual-hosted signed path-style", v2("http://b.s3.local/k", ""), nil, true, sigv4.Auth{}, sigv2.ErrSignatureMismatch},
		{"sigv2 presigned", v2q("http://h/b/k", now.Add(time.Hour)), nil, true, sigv4.Auth{AccessKey: authTestKey, Version: 2, Presigned: true, Payload: sigv4.PayloadUnsigned}, nil},
		{"sigv2 presigned expired", v2q("http://h/b/k", now.Add(-time.Second)), nil, true, sigv4.Auth{}, sigv2.ErrExpired},
		{"sigv4", v4(), nil, true, sigv4.Auth{AccessKey: authTestKey, Region: "us-east-1", Service: "s3", Version: 4, Payload: sigv4.PayloadUnsigned}, nil},
		{"anonymous", httptest.NewRequest("GET", "http://h/b/k", nil), allowAll, true, sigv4.Auth{Anonymous: true, Payload: sigv4.PayloadUnsigned}, nil},
		{"anonymous without Authorize", httptest.NewRequest("GET", "http://h/b/k", nil), nil, true, sigv4.Auth{}, sigv4.ErrMissingAuth},
		{"anonymous to an API not served", httptest.NewRequest("GET", "http://h/b?cors", nil), allowAll, false, sigv4.Auth{}, sigv4.ErrMissingAuth},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := authTestServer(t, tc.authorize)
			auth, body, err := s.authenticate(tc.r, tc.routed)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("error %v, want %v", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if auth != tc.want {
				t.Fatalf("auth %+v, want %+v", auth, tc.want)
			}
			if body == nil {
				t.Fatal("no body")
			}
		})
	}
}

// An anonymous request that authorization refuses is 403 AccessDenied, as
// AWS answers it.
func TestAnonymousRefused(t *testing.T) {
	s := authTestServer(t, func(ak, _, _ string) bool { return ak != "" })
	if err := s.store.CreateBucket(t.Context(), "bkt", objstore.BucketOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{"http://h/", "http://h/bkt", "http://h/bkt/k", "http://h/bkt?cors"} {
		w := httptest.NewRecorder()
		s.ServeHTTP(w, httptest.NewRequest("GET", target, nil))
		if w.Code != http.StatusForbidden || !strings.Contains(w.Body.String(), "<Code>AccessDenied</Code>") {
			t.Errorf("GET %s: %d %s", target, w.Code, w.Body.String())
		}
	}
}

func mustParse(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
