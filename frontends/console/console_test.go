package console

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

func TestCanonicalPath(t *testing.T) {
	for _, tc := range []struct {
		in, path, raw string
		err           bool
	}{
		{in: "", path: "/", raw: "/"},
		{in: "/", path: "/", raw: "/"},
		{in: "/bucket/a%20b/c.txt", path: "/bucket/a b/c.txt", raw: "/bucket/a%20b/c.txt"},
		{in: "/bucket/a+b", path: "/bucket/a+b", raw: "/bucket/a%2Bb"},
		{in: "/bucket/%C3%BC", path: "/bucket/ü", raw: "/bucket/%C3%BC"},
		{in: "/bucket/ü", path: "/bucket/ü", raw: "/bucket/%C3%BC"},
		// An escaped "/" inside a segment (an Iceberg name) stays escaped.
		{in: "/iceberg/v1/w/namespaces/a%2Fb", path: "/iceberg/v1/w/namespaces/a/b", raw: "/iceberg/v1/w/namespaces/a%2Fb"},
		{in: "/iceberg/v1/w/namespaces/a%1Fb", path: "/iceberg/v1/w/namespaces/a\x1fb", raw: "/iceberg/v1/w/namespaces/a%1Fb"},
		{in: "/bucket//double", path: "/bucket//double", raw: "/bucket//double"},
		{in: "/bucket/%zz", err: true},
	} {
		path, raw, err := canonicalPath(tc.in)
		if tc.err {
			if err == nil {
				t.Errorf("canonicalPath(%q) = %q, %q; want an error", tc.in, path, raw)
			}
			continue
		}
		if err != nil || path != tc.path || raw != tc.raw {
			t.Errorf("canonicalPath(%q) = %q, %q, %v; want %q, %q", tc.in, path, raw, err, tc.path, tc.raw)
		}
	}
}

// FuzzCanonicalPath: any escaped path either fails or yields an encoding
// of exactly the decoded path, in unreserved bytes, '/' and %XX only, that
// url.URL accepts as the path's RawPath.
func FuzzCanonicalPath(f *testing.F) {
	for _, s := range []string{"/b/k", "/b/a%20b", "/w/a%2Fb", "%", "/%C3", "/a/../b", "/\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		path, raw, err := canonicalPath(in)
		if err != nil {
			return
		}
		back, err := url.PathUnescape(raw)
		if err != nil || back != path {
			t.Fatalf("canonicalPath(%q) = %q, %q: raw unescapes to %q, %v", in, path, raw, back, err)
		}
		for i := 0; i < len(raw); i++ {
			c := raw[i]
			if c == '%' || c == '/' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || strings.IndexByte("-._~", c) >= 0 {
				continue
			}
			t.Fatalf("canonicalPath(%q): raw %q holds %q", in, raw, c)
		}
		u := url.URL{Path: path, RawPath: raw}
		if got := u.EscapedPath(); got != raw && path != "" {
			// EscapedPath falls back to its own encoding only when RawPath
			// is not a valid encoding of Path.
			t.Fatalf("canonicalPath(%q): EscapedPath %q, want %q", in, got, raw)
		}
	})
}

func TestSessionsExpire(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tab := newSessions()
	id, err := tab.add(&session{accessKey: "a", expires: t0.Add(time.Hour)}, t0)
	if err != nil {
		t.Fatal(err)
	}
	other, err := tab.add(&session{accessKey: "b", expires: t0.Add(3 * time.Hour)}, t0)
	if err != nil {
		t.Fatal(err)
	}
	if id == other || len(id) != 43 {
		t.Fatalf("ids %q and %q: want two distinct 32-byte base64url ids", id, other)
	}
	for _, tc := range []struct {
		at   time.Duration
		id   string
		want string // access key, "" for none
	}{
		{0, id, "a"},
		{59 * time.Minute, id, "a"},
		{time.Hour, id, ""}, // expiry is exclusive
		{time.Hour, other, "b"},
		{2 * time.Hour, "nope", ""},
	} {
		s := tab.get(tc.id, t0.Add(tc.at))
		got := ""
		if s != nil {
			got = s.accessKey
		}
		if got != tc.want {
			t.Errorf("get(%q) at +%v = %q, want %q", tc.id, tc.at, got, tc.want)
		}
	}
	// An expired session is swept by the next sign-in.
	if _, err := tab.add(&session{accessKey: "c", expires: t0.Add(5 * time.Hour)}, t0.Add(4*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if n := tab.len(); n != 1 {
		t.Errorf("after a sign-in at +4h: %d sessions held, want 1", n)
	}
	tab.remove(other)
	if tab.get(other, t0) != nil {
		t.Errorf("a removed session is still there")
	}
}

func TestCSRF(t *testing.T) {
	for _, tc := range []struct {
		method, header, origin string
		ok                     bool
	}{
		{method: "GET", ok: true},
		{method: "HEAD", ok: true},
		{method: "PUT"},
		{method: "POST"},
		{method: "DELETE"},
		{method: "PUT", header: "1", ok: true},
		{method: "POST", header: "1", origin: "http://console.example:9000", ok: true},
		{method: "POST", header: "1", origin: "http://evil.example"},
		{method: "POST", header: "1", origin: "null"},
		{method: "POST", origin: "http://console.example:9000"},
	} {
		r, err := http.NewRequest(tc.method, "http://console.example:9000/console/api/s3/b", nil)
		if err != nil {
			t.Fatal(err)
		}
		if tc.header != "" {
			r.Header.Set(CSRFHeader, tc.header)
		}
		if tc.origin != "" {
			r.Header.Set("Origin", tc.origin)
		}
		if err := csrfOK(r); (err == nil) != tc.ok {
			t.Errorf("%s with header %q origin %q: %v, want ok=%v", tc.method, tc.header, tc.origin, err, tc.ok)
		}
	}
}
