package sigv4

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Wire constants of SigV4.
const (
	algorithmHMAC   = "AWS4-HMAC-SHA256"
	amzDateFormat   = "20060102T150405Z"
	scopeDateFormat = "20060102"
	scopeTerminator = "aws4_request"

	// Payload forms carried by x-amz-content-sha256.
	PayloadUnsigned               = "UNSIGNED-PAYLOAD"
	PayloadStreamingSigned        = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD"
	PayloadStreamingSignedTrail   = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER"
	PayloadStreamingUnsignedTrail = "STREAMING-UNSIGNED-PAYLOAD-TRAILER"

	emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
)

// uriEncode appends s to b with every byte outside the RFC 3986 unreserved
// set percent-encoded (uppercase hex). When keepSlash is set, '/' is kept.
func uriEncode(b *strings.Builder, s string, keepSlash bool) {
	const hexUpper = "0123456789ABCDEF"
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isUnreserved(c) || (keepSlash && c == '/') {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hexUpper[c>>4])
		b.WriteByte(hexUpper[c&15])
	}
}

func isUnreserved(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

func encodePath(p string) string {
	if p == "" {
		return "/"
	}
	var b strings.Builder
	b.Grow(len(p) + 8)
	uriEncode(&b, p, true)
	return b.String()
}

// canonicalURIs returns the canonical URI candidates for u and service, most
// likely first (see the package comment). eitherEncoding adds, for the
// service "s3", the path encoded twice (Verifier.EitherPathEncoding).
func canonicalURIs(u *url.URL, service string, eitherEncoding bool) []string {
	escaped := u.EscapedPath()
	if escaped == "" {
		escaped = "/"
	}
	single := encodePath(u.Path)
	double := encodePath(escaped)
	if service == "s3" {
		uris := []string{single}
		if escaped != single {
			uris = append(uris, escaped)
		}
		if eitherEncoding && double != single {
			uris = append(uris, double)
		}
		return uris
	}
	if single != double {
		return []string{double, single}
	}
	return []string{double}
}

// canonicalQuery decodes rawQuery and re-encodes it canonically, sorted by
// key then value, leaving out the key skip when it is not empty.
func canonicalQuery(rawQuery, skip string) (string, error) {
	type kv struct{ k, v string }
	var params []kv
	for rawQuery != "" {
		var part string
		part, rawQuery, _ = strings.Cut(rawQuery, "&")
		if part == "" {
			continue
		}
		k, v, _ := strings.Cut(part, "=")
		dk, err := url.QueryUnescape(k)
		if err != nil {
			return "", fmt.Errorf("%w: query key %q: %v", ErrMalformedAuth, k, err)
		}
		dv, err := url.QueryUnescape(v)
		if err != nil {
			return "", fmt.Errorf("%w: query value of %q: %v", ErrMalformedAuth, k, err)
		}
		if skip != "" && dk == skip {
			continue
		}
		var eb strings.Builder
		uriEncode(&eb, dk, false)
		ek := eb.String()
		eb.Reset()
		uriEncode(&eb, dv, false)
		params = append(params, kv{ek, eb.String()})
	}
	sort.Slice(params, func(i, j int) bool {
		if params[i].k != params[j].k {
			return params[i].k < params[j].k
		}
		return params[i].v < params[j].v
	})
	var b strings.Builder
	for i, p := range params {
		if i > 0 {
			b.WriteByte('&')
		}
		b.WriteString(p.k)
		b.WriteByte('=')
		b.WriteString(p.v)
	}
	return b.String(), nil
}

// trimAll trims s and collapses every inner run of spaces to one space.
func trimAll(s string) string {
	s = strings.TrimSpace(s)
	if !strings.Contains(s, "  ") {
		return s
	}
	var b strings.Builder
	space := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == ' ' {
			if space {
				continue
			}
			space = true
		} else {
			space = false
		}
		b.WriteByte(c)
	}
	return b.String()
}

// headerValues returns the values the client signed for the lowercase header
// name, looking where net/http moves some headers on the server side.
func headerValues(r *http.Request, name string) []string {
	switch name {
	case "host":
		if r.Host != "" {
			return []string{r.Host}
		}
		return []string{r.URL.Host}
	}
	if vs := r.Header.Values(name); len(vs) > 0 {
		return vs
	}
	switch name {
	case "content-length":
		if r.ContentLength >= 0 {
			return []string{strconv.FormatInt(r.ContentLength, 10)}
		}
	case "transfer-encoding":
		if len(r.TransferEncoding) > 0 {
			return []string{strings.Join(r.TransferEncoding, ",")}
		}
	case "expect":
		// net/http answers Expect: 100-continue itself; some clients sign it.
		return []string{"100-continue"}
	}
	return nil
}

// canonicalHeaders renders the canonical header block for the signed names.
func canonicalHeaders(r *http.Request, signed []string) string {
	var b strings.Builder
	for _, name := range signed {
		b.WriteString(name)
		b.WriteByte(':')
		for i, v := range headerValues(r, name) {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(trimAll(v))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func canonicalRequest(method, uri, query, headers string, signed []string, payload string) string {
	return method + "\n" + uri + "\n" + query + "\n" + headers + "\n" +
		strings.Join(signed, ";") + "\n" + payload
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func hmacSHA256(key []byte, data string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(data))
	return m.Sum(nil)
}

// scope is the credential scope of one signature: what the signing key and
// every string to sign derive from.
type scope struct {
	date    string // yyyymmdd
	region  string
	service string
}

func (s scope) String() string {
	return s.date + "/" + s.region + "/" + s.service + "/" + scopeTerminator
}

func (s scope) signingKey(secret string) []byte {
	k := hmacSHA256([]byte("AWS4"+secret), s.date)
	k = hmacSHA256(k, s.region)
	k = hmacSHA256(k, s.service)
	return hmacSHA256(k, scopeTerminator)
}

// signer computes the signatures of one request and of its chunks.
type signer struct {
	key     []byte
	amzDate string
	scope   scope
}

func (s signer) sign(canonicalReq string) []byte {
	sts := algorithmHMAC + "\n" + s.amzDate + "\n" + s.scope.String() + "\n" + sha256Hex(canonicalReq)
	return hmacSHA256(s.key, sts)
}

func (s signer) signChunk(prev []byte, chunkSHA256 []byte) []byte {
	sts := "AWS4-HMAC-SHA256-PAYLOAD\n" + s.amzDate + "\n" + s.scope.String() + "\n" +
		hex.EncodeToString(prev) + "\n" + emptySHA256 + "\n" + hex.EncodeToString(chunkSHA256)
	return hmacSHA256(s.key, sts)
}

func (s signer) signTrailer(prev []byte, canonicalTrailer string) []byte {
	sts := "AWS4-HMAC-SHA256-TRAILER\n" + s.amzDate + "\n" + s.scope.String() + "\n" +
		hex.EncodeToString(prev) + "\n" + sha256Hex(canonicalTrailer)
	return hmacSHA256(s.key, sts)
}

func formatAmzDate(t time.Time) string { return t.UTC().Format(amzDateFormat) }
