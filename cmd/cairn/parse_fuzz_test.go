package main

import (
	"net"
	"strings"
	"testing"
)

// FuzzNormaliseEndpoint: any --endpoint or $CAIRN_ENDPOINT value is
// refused with an error or becomes an http(s) URL with a host, no
// trailing slash, no query, and normalises to itself.
func FuzzNormaliseEndpoint(f *testing.F) {
	for _, s := range []string{"127.0.0.1:9000", "http://127.0.0.1:9000/", "https://h:1", "[::1]:9000",
		"ftp://x", "http://", "h:0", "h:99999", "http://h:9000/?q", "http://h#f", "%zz", "http://u@h:1/p"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		u, err := normaliseEndpoint(v)
		if err != nil {
			return
		}
		if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
			t.Fatalf("normaliseEndpoint(%q) = %q: not an http(s) URL", v, u)
		}
		if strings.HasSuffix(u, "/") || strings.ContainsAny(u, "?#") {
			t.Fatalf("normaliseEndpoint(%q) = %q: trailing slash, query or fragment", v, u)
		}
		again, err := normaliseEndpoint(u)
		if err != nil || again != u {
			t.Fatalf("normaliseEndpoint(%q) = %q, then %q, %v: not stable", v, u, again, err)
		}
	})
}

// FuzzCheckAddress: an --address value checkAddress accepts is one
// net.Listen can parse (HOST:PORT with a port in range).
func FuzzCheckAddress(f *testing.F) {
	for _, s := range []string{"127.0.0.1:9000", ":9000", "[::1]:0", "localhost:65535", "h:65536", "h", "h:-1", "h:+1", "[::1:80"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, a string) {
		if checkAddress(a) != nil {
			return
		}
		if _, port, err := net.SplitHostPort(a); err != nil || port == "" {
			t.Fatalf("checkAddress(%q) accepted what SplitHostPort refuses: %v", a, err)
		}
	})
}
