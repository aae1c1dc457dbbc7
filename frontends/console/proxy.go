package console

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

const (
	// upstreamHost is the Host of proxied calls: a name with no dot, so
	// the S3 face never reads a bucket out of it (path-style always).
	upstreamHost = "cairn-console"
	// unsignedPayload declares an S3 body the signature does not cover:
	// uploads stream through unbuffered.
	unsignedPayload = "UNSIGNED-PAYLOAD"
	// maxHashedBody bounds the JSON bodies of the catalog and admin APIs,
	// which are read whole to be hashed.
	maxHashedBody = 8 << 20
)

// PathParam is the query parameter of a console API call that carries
// the rest of the upstream path, escaped segment by segment: the browser
// sends /console/api/s3?cairn-path=%2Fphotos%2Fx%2F..%2Fvictim, never
// /console/api/s3/photos/x/../victim, whose dot segments its URL parser
// would resolve (to /console/api/s3/photos/victim) before the request
// leaves. In a query value "." and ".." are only bytes.
const PathParam = "cairn-path"

// target is one proxied API: the console path prefix and the upstream
// path prefix it maps to.
type target struct {
	from, to string
	// stream sends bodies as UNSIGNED-PAYLOAD instead of hashing them.
	stream bool
}

// targetOf returns the target whose console prefix the escaped path is
// (with or without a trailing "/"), and the path after it.
func targetOf(escaped string) (t target, rest string, ok bool) {
	for _, t := range [...]target{
		{from: Prefix + "/api/s3", to: "", stream: true},
		{from: Prefix + "/api/iceberg", to: "/iceberg"},
		{from: Prefix + "/api/admin", to: "/_cairn/admin/v1"},
	} {
		rest, ok := strings.CutPrefix(escaped, t.from)
		if ok && (rest == "" || rest[0] == '/') {
			return t, rest, true
		}
	}
	return target{}, "", false
}

// splitPathParam takes PathParam out of a raw query: it returns the
// parameter's value (the escaped path after the target's prefix; "" when
// absent) and the rest of the query exactly as it was sent (S3's
// subresources such as "uploads" have no "=" and must keep none).
func splitPathParam(rawQuery string) (rest, query string, err error) {
	if rawQuery == "" {
		return "", "", nil
	}
	var kept []string
	seen := false
	for _, piece := range strings.Split(rawQuery, "&") {
		name, value, _ := strings.Cut(piece, "=")
		n, err := url.QueryUnescape(name)
		if err != nil {
			return "", "", fmt.Errorf("query parameter %q: %w", name, err)
		}
		if n != PathParam {
			kept = append(kept, piece)
			continue
		}
		if seen {
			return "", "", fmt.Errorf("the %s query parameter is given more than once", PathParam)
		}
		seen = true
		if rest, err = url.QueryUnescape(value); err != nil {
			return "", "", fmt.Errorf("the %s query parameter: %w", PathParam, err)
		}
		if rest != "" && rest[0] != '/' {
			return "", "", fmt.Errorf("the %s query parameter %q must start with \"/\"", PathParam, rest)
		}
	}
	return rest, strings.Join(kept, "&"), nil
}

// forwardHeader reports whether a proxied call keeps the request header
// k: the ones below and all x-amz-* ones but those the signer sets.
// Cookies, Authorization, Origin and the console's own headers stay
// behind.
func forwardHeader(k string) bool {
	switch http.CanonicalHeaderKey(k) {
	case "Content-Type", "Content-Md5", "Content-Disposition", "Content-Encoding",
		"Content-Language", "Cache-Control", "Expires", "Range",
		"If-Match", "If-None-Match", "If-Modified-Since", "If-Unmodified-Since",
		"Idempotency-Key":
		return true
	}
	lk := strings.ToLower(k)
	return strings.HasPrefix(lk, "x-amz-") && lk != "x-amz-date" && lk != "x-amz-content-sha256" && lk != "x-amz-security-token"
}

// api serves the proxied calls for a signed-in session.
func (s *Server) api(w http.ResponseWriter, r *http.Request) {
	if err := csrfOK(r); err != nil {
		writeError(w, http.StatusForbidden, "%v", err)
		return
	}
	sess, _ := s.current(r)
	if sess == nil {
		w.Header().Set("X-Cairn-Console-Session", "none")
		writeError(w, http.StatusUnauthorized, "not signed in (or the session expired): sign in again")
		return
	}
	t, inPath, ok := targetOf(r.URL.EscapedPath())
	if !ok {
		writeError(w, http.StatusNotFound, "no console API at %s (try %s/api/s3, /api/iceberg or /api/admin)", r.URL.Path, Prefix)
		return
	}
	if inPath != "" && inPath != "/" {
		// Whatever the path held was resolved by the browser first: a key
		// "x/../victim" would arrive here as "victim". Refuse it rather
		// than act on another object.
		writeError(w, http.StatusBadRequest, "the path after %s goes in the %s query parameter, not in the URL path (where the browser resolves . and .. segments): %s?%s=%s", t.from, PathParam, t.from, PathParam, url.QueryEscape(inPath))
		return
	}
	rest, query, err := splitPathParam(r.URL.RawQuery)
	if err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	up, err := s.upstream(r.Context(), r, t, rest, query)
	if err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	if err := s.sign(up, sess); err != nil {
		writeError(w, http.StatusInternalServerError, "signing the call: %v", err)
		return
	}
	h := w.Header()
	// An object holding HTML must not run script in this origin.
	h.Set("Content-Security-Policy", "sandbox; default-src 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	s.opt.Upstream.ServeHTTP(w, up)
}

// upstream builds the call of r to the face behind t: rest is the escaped
// path after t.from, re-encoded segment by segment the way SigV4 expects
// (dot segments kept as they are), and query the raw query to send.
func (s *Server) upstream(ctx context.Context, r *http.Request, t target, rest, query string) (*http.Request, error) {
	path, raw, err := canonicalPath(t.to + rest)
	if err != nil {
		return nil, err
	}
	u := &url.URL{Scheme: "http", Host: upstreamHost, Path: path, RawPath: raw, RawQuery: query}
	body := r.Body
	length := r.ContentLength
	var hash string
	switch {
	case r.ContentLength == 0 || r.Body == nil || r.Body == http.NoBody:
		body, length, hash = http.NoBody, 0, emptySHA256
	case t.stream:
		hash = unsignedPayload
	default:
		b, err := io.ReadAll(io.LimitReader(r.Body, maxHashedBody+1))
		if err != nil {
			return nil, fmt.Errorf("reading the request body: %w", err)
		}
		if len(b) > maxHashedBody {
			return nil, fmt.Errorf("the request body is larger than %d bytes", maxHashedBody)
		}
		sum := sha256.Sum256(b)
		body, length, hash = io.NopCloser(bytes.NewReader(b)), int64(len(b)), hex.EncodeToString(sum[:])
	}
	up, err := http.NewRequestWithContext(ctx, r.Method, u.String(), body)
	if err != nil {
		return nil, fmt.Errorf("building the call to %s: %w", path, err)
	}
	up.URL = u
	up.Host = upstreamHost
	up.ContentLength = length
	up.RemoteAddr = r.RemoteAddr // policies on aws:SourceIp see the browser
	up.Proto, up.ProtoMajor, up.ProtoMinor = r.Proto, r.ProtoMajor, r.ProtoMinor
	for k, v := range r.Header {
		if forwardHeader(k) {
			up.Header[k] = v
		}
	}
	up.Header.Set("X-Amz-Content-Sha256", hash)
	return up, nil
}

// emptySHA256 is the SHA-256 of no bytes.
const emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// canonicalPath decodes an escaped path segment by segment and encodes
// each again with every byte outside RFC 3986's unreserved set escaped
// (an escaped "/" inside a segment stays escaped), returning the decoded
// path and that encoding.
func canonicalPath(escaped string) (path, raw string, err error) {
	if escaped == "" {
		escaped = "/"
	}
	segs := strings.Split(escaped, "/")
	var p, e strings.Builder
	for i, seg := range segs {
		if i > 0 {
			p.WriteByte('/')
			e.WriteByte('/')
		}
		d, err := url.PathUnescape(seg)
		if err != nil {
			return "", "", fmt.Errorf("path segment %q: %w", seg, err)
		}
		p.WriteString(d)
		uriEncode(&e, d)
	}
	return p.String(), e.String(), nil
}

// uriEncode appends s with every byte outside the unreserved set
// percent-encoded (uppercase hex), as SigV4's canonical URI has it.
func uriEncode(b *strings.Builder, s string) {
	const hexUpper = "0123456789ABCDEF"
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~' {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hexUpper[c>>4])
		b.WriteByte(hexUpper[c&15])
	}
}

// sign signs up (whose X-Amz-Content-Sha256 is set) with the session's
// keys, service s3, the path used as it is already encoded.
func (s *Server) sign(up *http.Request, sess *session) error {
	signer := v4.NewSigner(func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true })
	creds := aws.Credentials{AccessKeyID: sess.accessKey, SecretAccessKey: sess.secretKey}
	return signer.SignHTTP(up.Context(), creds, up, up.Header.Get("X-Amz-Content-Sha256"), "s3", s.opt.Region, s.opt.Now())
}

// recorder keeps a probe's answer (a small one: ListBuckets, the users).
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
}

func (r *recorder) Write(p []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	if r.body.Len() < 1<<20 {
		r.body.Write(p[:min(len(p), 1<<20-r.body.Len())])
	}
	return len(p), nil
}

// probe makes one signed, bodiless call as sess and returns its status
// and (the start of) its body.
func (s *Server) probe(r *http.Request, sess *session, method, path string) (int, []byte, error) {
	u := &url.URL{Scheme: "http", Host: upstreamHost, Path: path}
	up, err := http.NewRequestWithContext(r.Context(), method, u.String(), http.NoBody)
	if err != nil {
		return 0, nil, fmt.Errorf("building the call to %s: %w", path, err)
	}
	up.Host = upstreamHost
	up.RemoteAddr = r.RemoteAddr
	up.Header.Set("X-Amz-Content-Sha256", emptySHA256)
	if err := s.sign(up, sess); err != nil {
		return 0, nil, fmt.Errorf("signing the call to %s: %w", path, err)
	}
	rec := &recorder{header: make(http.Header)}
	s.opt.Upstream.ServeHTTP(rec, up)
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	return rec.status, rec.body.Bytes(), nil
}
