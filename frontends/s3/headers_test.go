package s3

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/cairnstore/cairn/objstore"
)

func TestParseRange(t *testing.T) {
	for _, tc := range []struct {
		spec          string
		size          int64
		start, length int64
		ok            bool
		err           error
	}{
		{"bytes=0-9", 100, 0, 10, true, nil},
		{"bytes=90-", 100, 90, 10, true, nil},
		{"bytes=-10", 100, 90, 10, true, nil},
		{"bytes=-200", 100, 0, 100, true, nil},
		{"bytes=50-500", 100, 50, 50, true, nil},
		{"bytes=100-", 100, 0, 0, false, objstore.ErrInvalidRange},
		{"bytes=-0", 100, 0, 0, false, objstore.ErrInvalidRange},
		{"bytes=0-0", 0, 0, 0, false, objstore.ErrInvalidRange},
		{"bytes=9-3", 100, 0, 0, false, nil},     // malformed: whole object
		{"bytes=0-1,5-6", 100, 0, 0, false, nil}, // multiple ranges: whole object
		{"items=0-1", 100, 0, 0, false, nil},
		{"bytes=x-1", 100, 0, 0, false, nil},
	} {
		s, l, ok, err := parseRange(tc.spec, tc.size)
		if !errors.Is(err, tc.err) || ok != tc.ok || (ok && (s != tc.start || l != tc.length)) {
			t.Errorf("%q of %d: got %d+%d ok=%v err=%v", tc.spec, tc.size, s, l, ok, err)
		}
	}
}

func TestCopySource(t *testing.T) {
	for _, tc := range []struct {
		in                   string
		bucket, key, version string
		bad                  bool
	}{
		{"/b/k", "b", "k", "", false},
		{"b/dir/k%20x", "b", "dir/k x", "", false},
		{"/b/k?versionId=abc", "b", "k", "abc", false},
		{"/b", "", "", "", true},
		{"/b/k?foo=1", "", "", "", true},
		{"/b/%zz", "", "", "", true},
	} {
		b, k, v, err := copySource(tc.in)
		if (err != nil) != tc.bad || (!tc.bad && (b != tc.bucket || k != tc.key || v != tc.version)) {
			t.Errorf("%q: %q %q %q %v", tc.in, b, k, v, err)
		}
	}
}

func TestCheckConditions(t *testing.T) {
	mod := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	info := objstore.ObjectInfo{ETag: "abc", ModTime: mod}
	before, after := mod.Add(-time.Hour).Format(http.TimeFormat), mod.Add(time.Hour).Format(http.TimeFormat)
	for _, tc := range []struct {
		h    map[string]string
		want error
	}{
		{map[string]string{}, nil},
		{map[string]string{"If-Match": `"abc"`}, nil},
		{map[string]string{"If-Match": `"x"`}, objstore.ErrPreconditionFailed},
		{map[string]string{"If-None-Match": `"abc"`}, errNotModified},
		{map[string]string{"If-None-Match": `"x", "abc"`}, errNotModified},
		{map[string]string{"If-Modified-Since": after}, errNotModified},
		{map[string]string{"If-Modified-Since": before}, nil},
		{map[string]string{"If-Unmodified-Since": before}, objstore.ErrPreconditionFailed},
		// S3: If-Match true wins over If-Unmodified-Since false.
		{map[string]string{"If-Match": `"abc"`, "If-Unmodified-Since": before}, nil},
		// If-None-Match false wins over If-Modified-Since true... and 304.
		{map[string]string{"If-None-Match": `"x"`, "If-Modified-Since": after}, nil},
	} {
		r, _ := http.NewRequest(http.MethodGet, "http://h/b/k", nil)
		for k, v := range tc.h {
			r.Header.Set(k, v)
		}
		if err := checkConditions(r, info); !errors.Is(err, tc.want) {
			t.Errorf("%v: got %v, want %v", tc.h, err, tc.want)
		}
	}
}

func TestMetaValueEncoding(t *testing.T) {
	for _, tc := range []struct{ kept, sent string }{
		{"plain", "plain"},
		{"\x04mymeta", "=?UTF-8?Q?=04mymeta?="},
		{"bär", "=?UTF-8?Q?b=C3=A4r?="},
		{"tab\tok", "tab\tok"},
	} {
		if got := encodeMetaValue(tc.kept); got != tc.sent {
			t.Errorf("encode %q: %q, want %q", tc.kept, got, tc.sent)
		}
		if got := decodeMetaValue(tc.sent); got != tc.kept {
			t.Errorf("decode %q: %q, want %q", tc.sent, got, tc.kept)
		}
	}
	for _, raw := range []string{"=?bogus", "a =?UTF-8?X?zz?= b"} {
		if got := decodeMetaValue(raw); got != raw {
			t.Errorf("decode %q: %q, want it kept as sent", raw, got)
		}
	}
}

func FuzzMetaValue(f *testing.F) {
	f.Add("=?UTF-8?Q?b=C3=A4r?=")
	f.Add("\x04w")
	f.Fuzz(func(t *testing.T, v string) {
		enc := encodeMetaValue(decodeMetaValue(v))
		for i := 0; i < len(enc); i++ {
			if c := enc[i]; c >= 0x7f || (c < 0x20 && c != '\t') {
				t.Fatalf("encoded %q still has byte %#x", enc, c)
			}
		}
	})
}

// TestStoredContentEncoding: aws-chunked is dropped from Content-Encoding,
// the other codings are kept as sent, and a list header given twice is
// stored as one list joined with ", " (as HTTP joins it).
func TestStoredContentEncoding(t *testing.T) {
	for _, tc := range []struct {
		name  string
		sent  []string // Content-Encoding header lines
		want  string
		found bool
	}{
		{"one coding", []string{"gzip"}, "gzip", true},
		{"a list as sent", []string{"deflate, gzip"}, "deflate, gzip", true},
		{"a list without space as sent", []string{"deflate,gzip"}, "deflate,gzip", true},
		{"twice", []string{"deflate", "gzip"}, "deflate, gzip", true},
		{"aws-chunked last", []string{"gzip, aws-chunked"}, "gzip", true},
		{"aws-chunked first", []string{"aws-chunked, gzip"}, "gzip", true},
		{"aws-chunked among two", []string{"deflate,aws-chunked,gzip"}, "deflate, gzip", true},
		{"aws-chunked alone", []string{"aws-chunked"}, "", false},
		{"aws-chunked twice", []string{"aws-chunked, aws-chunked"}, "", false},
		{"aws-chunked on its own line", []string{"gzip", "AWS-Chunked"}, "gzip", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			for _, v := range tc.sent {
				h.Add("Content-Encoding", v)
			}
			m, err := metaFromRequest(h)
			if err != nil {
				t.Fatal(err)
			}
			got, found := m["Content-Encoding"]
			if got != tc.want || found != tc.found {
				t.Fatalf("Content-Encoding %q (%v), want %q (%v)", got, found, tc.want, tc.found)
			}
		})
	}
	h := http.Header{}
	h.Add("Cache-Control", "no-cache")
	h.Add("Cache-Control", "max-age=5")
	h.Set("Expires", "Wed, 21 Oct 2015 07:28:00 GMT")
	m, err := metaFromRequest(h)
	if err != nil {
		t.Fatal(err)
	}
	if m["Cache-Control"] != "no-cache, max-age=5" || m["Expires"] != "Wed, 21 Oct 2015 07:28:00 GMT" {
		t.Fatalf("Cache-Control %q, Expires %q", m["Cache-Control"], m["Expires"])
	}
}

func TestSandboxHeaders(t *testing.T) {
	for _, tc := range []struct {
		ct      string
		sandbox bool
	}{
		{"text/html", true},
		{"TEXT/HTML; charset=utf-8", true},
		{" text/html ", true},
		{"application/xhtml+xml", true},
		{"image/svg+xml", true},
		{"Image/SVG+XML;charset=x", true},
		{"text/xml", true},
		{"application/xml", true},
		{"application/rss+xml", true},
		{"application/vnd.foo+XML", true},
		{"", true},
		{"text/html garbage", true},
		{";charset=utf-8", true},
		{"text/plain", false},
		{"text/plain; charset=utf-8", false},
		{"binary/octet-stream", false},
		{"application/json", false},
		{"image/png", false},
		{"application/xml-dtd", false},
		{"text/htmlx", false},
	} {
		h := http.Header{"Content-Type": {tc.ct}}
		sandboxHeaders(h)
		if got := h.Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("%q: X-Content-Type-Options %q, want nosniff", tc.ct, got)
		}
		csp, want := h.Get("Content-Security-Policy"), ""
		if tc.sandbox {
			want = "sandbox"
		}
		if csp != want {
			t.Errorf("%q: Content-Security-Policy %q, want %q", tc.ct, csp, want)
		}
	}
	h := http.Header{}
	sandboxHeaders(h)
	if h.Get("Content-Security-Policy") != "sandbox" {
		t.Errorf("no Content-Type: Content-Security-Policy %q, want sandbox", h.Get("Content-Security-Policy"))
	}
	// A stricter policy set in front (the console's proxy) is kept.
	strict := "sandbox; default-src 'none'"
	h = http.Header{"Content-Type": {"text/html"}, "Content-Security-Policy": {strict}}
	sandboxHeaders(h)
	if got := h.Values("Content-Security-Policy"); len(got) != 2 || got[0] != strict || got[1] != "sandbox" {
		t.Errorf("with a policy set in front: Content-Security-Policy %q, want %q then sandbox", got, strict)
	}
}
