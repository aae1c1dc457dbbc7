package console

import (
	"bytes"
	"crypto/tls"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
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
		method, header, origin, site string
		ok                           bool
	}{
		{method: "GET", ok: true},
		{method: "HEAD", ok: true},
		{method: "GET", site: "cross-site", ok: true},
		{method: "PUT"},
		{method: "POST"},
		{method: "DELETE"},
		{method: "OPTIONS"}, // a CORS preflight never carries the header
		{method: "PUT", header: "1", ok: true},
		{method: "POST", header: "1", origin: "http://console.example:9000", ok: true},
		{method: "POST", header: "1", origin: "https://console.example:9000", site: "same-origin", ok: true},
		{method: "POST", header: "1", origin: "http://evil.example"},
		{method: "POST", header: "1", origin: "ftp://console.example:9000"},
		// A sandboxed document (an object served with CSP sandbox) has an
		// opaque origin: Origin null, Sec-Fetch-Site cross-site.
		{method: "PUT", header: "1", origin: "null"},
		{method: "PUT", header: "1", origin: "null", site: "cross-site"},
		{method: "PUT", header: "1", site: "cross-site"},
		{method: "DELETE", header: "1", site: "same-site"},
		{method: "DELETE", header: "1", site: "none"},
		{method: "DELETE", header: "1", origin: "http://console.example:9000", site: "same-site"},
		{method: "DELETE", header: "1", site: "same-origin", ok: true},
		{method: "POST", origin: "http://console.example:9000"},
	} {
		r, err := http.NewRequest(tc.method, "http://console.example:9000/console/api/s3", nil)
		if err != nil {
			t.Fatal(err)
		}
		if tc.header != "" {
			r.Header.Set(CSRFHeader, tc.header)
		}
		if tc.origin != "" {
			r.Header.Set("Origin", tc.origin)
		}
		if tc.site != "" {
			r.Header.Set("Sec-Fetch-Site", tc.site)
		}
		if err := csrfOK(r); (err == nil) != tc.ok {
			t.Errorf("%s with header %q origin %q site %q: %v, want ok=%v", tc.method, tc.header, tc.origin, tc.site, err, tc.ok)
		}
	}
}

// seen is what the upstream handler received.
type seen struct {
	method, path, rawPath, query string
	header                       http.Header
}

// signedInServer is a console over an upstream that records each call
// and answers 200, with a session; it returns the session cookie.
func signedInServer(t *testing.T, opt Options) (*Server, *[]seen, *http.Cookie) {
	t.Helper()
	var calls []seen
	opt.Upstream = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls = append(calls, seen{r.Method, r.URL.Path, r.URL.RawPath, r.URL.RawQuery, r.Header.Clone()})
	})
	s, err := New(opt)
	if err != nil {
		t.Fatal(err)
	}
	id, err := s.sessions.add(&session{accessKey: "ak", secretKey: "sk", expires: s.opt.Now().Add(time.Hour)}, s.opt.Now())
	if err != nil {
		t.Fatal(err)
	}
	return s, &calls, &http.Cookie{Name: cookieName, Value: id}
}

// TestAPIPathParam: the upstream path comes from cairn-path, exactly
// (dot segments and all), the rest of the query goes on unchanged, and a
// path after the target's prefix is refused.
func TestAPIPathParam(t *testing.T) {
	for _, tc := range []struct {
		url                  string
		status               int
		path, rawPath, query string
	}{
		{url: "/console/api/s3", status: 200, path: "/"},
		{url: "/console/api/s3/", status: 200, path: "/"},
		{url: "/console/api/s3?cairn-path=%2Fphotos", status: 200, path: "/photos"},
		{url: "/console/api/s3?cairn-path=%2Fphotos%2Fx%2F..%2Fvictim", status: 200, path: "/photos/x/../victim"},
		{url: "/console/api/s3?cairn-path=%2Fphotos%2F..%2F..%2Fadmin%2Fv1%2Fusers%2Fbob", status: 200, path: "/photos/../../admin/v1/users/bob"},
		{url: "/console/api/s3?cairn-path=%2Fphotos%2F%252e%252E%2Fk", status: 200, path: "/photos/../k"},
		{url: "/console/api/s3?uploads&cairn-path=%2Fb%2Fa%2520b&x-id=1", status: 200, path: "/b/a b", rawPath: "/b/a%20b", query: "uploads&x-id=1"},
		{url: "/console/api/s3?cairn%2Dpath=%2Fb%2Fk&versionId=v%2B1", status: 200, path: "/b/k", query: "versionId=v%2B1"},
		{url: "/console/api/iceberg?cairn-path=%2Fv1%2Fw%2Fnamespaces%2F..%2Ftables%2F.", status: 200, path: "/iceberg/v1/w/namespaces/../tables/."},
		{url: "/console/api/iceberg?cairn-path=%2Fv1%2Fw%2Fnamespaces%2Fa%252Fb", status: 200, path: "/iceberg/v1/w/namespaces/a/b", rawPath: "/iceberg/v1/w/namespaces/a%2Fb"},
		{url: "/console/api/admin?cairn-path=%2Fusers%2F..", status: 200, path: "/_cairn/admin/v1/users/.."},
		// A key in the path: what the browser resolved, or a mix of both.
		{url: "/console/api/s3/photos/victim", status: 400},
		{url: "/console/api/s3/photos?cairn-path=%2Fx", status: 400},
		{url: "/console/api/admin/users/bob", status: 400},
		{url: "/console/api/iceberg/v1/config", status: 400},
		{url: "/console/api/s3?cairn-path=%2Fa&cairn-path=%2Fb", status: 400},
		{url: "/console/api/s3?cairn-path=a", status: 400},
		{url: "/console/api/s3?cairn-path=%2F%zz", status: 400},
		{url: "/console/api/s3?cairn-path=%2Fb%2F%25zz", status: 400},
		{url: "/console/api/s3x", status: 404},
		{url: "/console/api/other?cairn-path=%2Fb", status: 404},
	} {
		s, calls, cookie := signedInServer(t, Options{})
		r := httptest.NewRequest(http.MethodGet, "http://console.example:9000"+tc.url, nil)
		r.AddCookie(cookie)
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		if w.Code != tc.status {
			t.Errorf("GET %s: %d %s, want %d", tc.url, w.Code, w.Body.String(), tc.status)
			continue
		}
		if tc.status != 200 {
			if len(*calls) != 0 {
				t.Errorf("GET %s: refused %d but called upstream %+v", tc.url, w.Code, *calls)
			}
			if !strings.Contains(w.Body.String(), "message") {
				t.Errorf("GET %s: %d without the error JSON: %s", tc.url, w.Code, w.Body.String())
			}
			continue
		}
		if len(*calls) != 1 {
			t.Fatalf("GET %s: %d upstream calls, want 1", tc.url, len(*calls))
		}
		c := (*calls)[0]
		raw := tc.rawPath
		if raw == "" {
			raw = tc.path
		}
		// (The signer re-encodes the query canonically: "uploads" becomes
		// "uploads=", the same parameter.)
		gotQ, _ := url.ParseQuery(c.query)
		wantQ, _ := url.ParseQuery(tc.query)
		if c.path != tc.path || (c.rawPath != "" && c.rawPath != raw) || !maps.EqualFunc(gotQ, wantQ, slices.Equal) {
			t.Errorf("GET %s: upstream got path %q raw %q query %q; want %q, %q, %q", tc.url, c.path, c.rawPath, c.query, tc.path, raw, tc.query)
		}
		if c.header.Get("Authorization") == "" {
			t.Errorf("GET %s: the upstream call is not signed", tc.url)
		}
	}
}

// TestForwardHeader: what a proxied call keeps of the browser's headers.
func TestForwardHeader(t *testing.T) {
	for k, want := range map[string]bool{
		"Content-Type": true, "content-md5": true, "Range": true, "Idempotency-Key": true,
		"X-Amz-Meta-Colour": true, "x-amz-tagging": true,
		"X-Amz-Date": false, "X-Amz-Content-Sha256": false, "X-Amz-Security-Token": false,
		"Cookie": false, "Authorization": false, "Origin": false, CSRFHeader: false, "Host": false,
	} {
		if got := forwardHeader(k); got != want {
			t.Errorf("forwardHeader(%q) = %v, want %v", k, got, want)
		}
	}
}

// TestSecureCookie: the cookie is Secure over TLS, or always with
// Options.SecureCookie (TLS ends at a proxy).
func TestSecureCookie(t *testing.T) {
	for _, tc := range []struct {
		secure, tls, want bool
	}{
		{false, false, false}, {false, true, true}, {true, false, true}, {true, true, true},
	} {
		s, err := New(Options{Upstream: http.NotFoundHandler(), SecureCookie: tc.secure})
		if err != nil {
			t.Fatal(err)
		}
		r := httptest.NewRequest(http.MethodPost, "http://console.example/console/api/session", nil)
		if tc.tls {
			r.TLS = &tls.ConnectionState{}
		}
		if c := s.cookie(r, "id", 60); c.Secure != tc.want {
			t.Errorf("SecureCookie %v, TLS %v: Secure %v, want %v", tc.secure, tc.tls, c.Secure, tc.want)
		}
	}
}

// FuzzSplitPathParam: any raw query either fails or splits into the
// parameter's value (starting with "/" when set) and the other pieces,
// in their order, none of them the parameter.
func FuzzSplitPathParam(f *testing.F) {
	for _, s := range []string{"", "cairn-path=%2Fb%2Fk", "uploads&cairn-path=%2Fb&x=1", "cairn%2Dpath=%2F", "cairn-path=a", "cairn-path=%2F&cairn-path=%2F", "%zz", "a=%zz&cairn-path=%2F..", "&&", "cairn-path"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		rest, query, err := splitPathParam(raw)
		if err != nil {
			return
		}
		if rest != "" && rest[0] != '/' {
			t.Fatalf("splitPathParam(%q): rest %q does not start with /", raw, rest)
		}
		if query != "" {
			for _, piece := range strings.Split(query, "&") {
				name, _, _ := strings.Cut(piece, "=")
				if n, _ := url.QueryUnescape(name); n == PathParam {
					t.Fatalf("splitPathParam(%q): query %q still holds %s", raw, query, PathParam)
				}
				if !strings.Contains("&"+raw+"&", "&"+piece+"&") {
					t.Fatalf("splitPathParam(%q): query piece %q was not sent", raw, piece)
				}
			}
		}
		if len(query) > len(raw) {
			t.Fatalf("splitPathParam(%q): query %q is longer than the input", raw, query)
		}
	})
}

// FuzzParseSignIn: any body either fails with a message or yields both
// keys, non-empty, as JSON decoding gives them.
func FuzzParseSignIn(f *testing.F) {
	for _, s := range []string{`{"access_key":"a","secret_key":"b"}`, `{"access_key":""}`, `[]`, `{`, `null`, `{"access_key":"a","secret_key":"b"} trailing`, "\x00"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		in, err := parseSignIn(bytes.NewReader(body))
		if err != nil {
			if err.Error() == "" {
				t.Fatalf("parseSignIn(%q): an empty error", body)
			}
			return
		}
		if in.AccessKey == "" || in.SecretKey == "" {
			t.Fatalf("parseSignIn(%q) = %+v: a key is empty", body, in)
		}
	})
}

// FuzzS3Message: any body gives a message or "", never a panic; an S3
// error document gives its Message.
func FuzzS3Message(f *testing.F) {
	for _, s := range []string{"<Error><Code>AccessDenied</Code><Message>no</Message></Error>", "", "<", "<Error><Message>a</Message><Message>b</Message></Error>", "{}"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		_ = s3Message(body)
		msg := strings.ToValidUTF8(string(body), "")
		if strings.ContainsAny(msg, "<>&\r") {
			return
		}
		doc := "<Error><Code>X</Code><Message>" + msg + "</Message></Error>"
		if got := s3Message([]byte(doc)); got != msg && strings.TrimSpace(msg) == msg && validXMLText(msg) {
			t.Fatalf("s3Message(%q) = %q, want %q", doc, got, msg)
		}
	})
}

// validXMLText reports whether s holds only characters XML allows.
func validXMLText(s string) bool {
	for _, r := range s {
		switch {
		case r == 0x09, r == 0x0A, r == 0x0D, 0x20 <= r && r <= 0xD7FF, 0xE000 <= r && r <= 0xFFFD, 0x10000 <= r && r <= 0x10FFFF:
		default:
			return false
		}
	}
	return true
}
