package s3

import (
	"encoding/base64"
	"mime"

	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/cairnstore/cairn/objstore"
)

// storedHeaders are the standard headers kept with an object and returned
// on GET and HEAD.
var storedHeaders = []string{"Cache-Control", "Content-Disposition", "Content-Encoding", "Content-Language", "Expires"}

// listHeader names the stored headers whose value is a comma-separated
// list (RFC 9110 5.3), so that repeating one joins its values.
var listHeader = map[string]bool{"Cache-Control": true, "Content-Encoding": true, "Content-Language": true}

// metaFromRequest collects the user metadata (x-amz-meta-*) and stored
// standard headers of a PUT, copy or multipart create.
func metaFromRequest(h http.Header) (map[string]string, error) {
	m := map[string]string{}
	size := 0
	for name, vals := range h {
		lower := strings.ToLower(name)
		if strings.HasPrefix(lower, "x-amz-meta-") {
			m[lower] = decodeMetaValue(strings.Join(vals, ","))
			size += len(lower) + len(m[lower])
		}
	}
	if size > 2048 {
		return nil, apiErr("MetadataTooLarge", 400, "Your metadata headers exceed the maximum allowed metadata size.")
	}
	for _, name := range storedHeaders {
		v := h.Get(name)
		if listHeader[name] {
			v = strings.Join(h.Values(name), ", ") // a list given twice is one list
		}
		if v != "" {
			m[name] = v
		}
	}
	// aws-chunked only describes how this request's body was sent; the
	// other codings are kept as sent, a list rejoined with ", " as HTTP
	// joins a header given twice.
	if ce, ok := m["Content-Encoding"]; ok && strings.Contains(strings.ToLower(ce), "aws-chunked") {
		var kept []string
		for _, e := range strings.Split(ce, ",") {
			if e = strings.TrimSpace(e); e != "" && !strings.EqualFold(e, "aws-chunked") {
				kept = append(kept, e)
			}
		}
		if len(kept) == 0 {
			delete(m, "Content-Encoding")
		} else {
			m["Content-Encoding"] = strings.Join(kept, ", ")
		}
	}
	return m, nil
}

// User metadata values that are not US-ASCII travel as RFC 2047 encoded
// words, as S3 documents: a value sent encoded is decoded before it is
// kept, and a kept value with other bytes is encoded when returned
// (=?UTF-8?Q?...?=, the form S3 returns), so that every client can carry
// it in a header.
func decodeMetaValue(v string) string {
	if !strings.Contains(v, "=?") {
		return v
	}
	var dec mime.WordDecoder
	out, err := dec.DecodeHeader(v)
	if err != nil {
		return v // not encoded words after all: kept as sent
	}
	return out
}

func encodeMetaValue(v string) string {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c >= 0x7f || (c < 0x20 && c != '\t') {
			// Go writes the encoding letter lowercase; S3 writes "Q".
			return strings.Replace(mime.QEncoding.Encode("UTF-8", v), "?q?", "?Q?", 1)
		}
	}
	return v
}

// writeObjectHeaders sets the headers describing an object version. whole
// says the response carries the whole object: a stored checksum covers
// the whole object and clients check any checksum header against the bytes
// they get, so S3 sends none with a part of it.
func writeObjectHeaders(w http.ResponseWriter, r *http.Request, info objstore.ObjectInfo, whole bool) {
	h := w.Header()
	ct := info.ContentType
	if ct == "" {
		ct = "binary/octet-stream"
	}
	h.Set("Content-Type", ct)
	h.Set("ETag", quote(info.ETag))
	h.Set("Last-Modified", info.ModTime.UTC().Format(http.TimeFormat))
	h.Set("Accept-Ranges", "bytes")
	var q url.Values
	if r.URL.RawQuery != "" {
		q = r.URL.Query()
	}
	if info.VersionID != "" && info.VersionID != objstore.NullVersion {
		h.Set("x-amz-version-id", info.VersionID)
	} else if info.VersionID == objstore.NullVersion && q.Get("versionId") != "" {
		h.Set("x-amz-version-id", objstore.NullVersion)
	}
	checksums := whole && strings.EqualFold(r.Header.Get("x-amz-checksum-mode"), "ENABLED")
	for k, v := range info.Meta {
		switch {
		case strings.HasPrefix(k, "x-amz-checksum-"):
			if checksums {
				h.Set(k, v)
				h.Set("x-amz-checksum-type", checksumType(info))
			}
		case strings.HasPrefix(k, "x-amz-meta-"):
			// Lowercase, as S3 sends them: botocore takes the name
			// after the prefix as the metadata key, case and all.
			h[k] = []string{encodeMetaValue(v)}
		default:
			h.Set(k, v)
		}
	}
	if len(q) == 0 {
		return
	}
	if info.PartsCount > 0 && q.Get("partNumber") != "" {
		h.Set("x-amz-mp-parts-count", strconv.Itoa(info.PartsCount))
	}
	for _, o := range responseOverrides {
		if v := q.Get(o.param); v != "" {
			h.Set(o.header, v)
		}
	}
}

// responseOverrides are the GET parameters that override a response
// header.
var responseOverrides = [...]struct{ param, header string }{
	{"response-content-type", "Content-Type"}, {"response-content-language", "Content-Language"},
	{"response-expires", "Expires"}, {"response-cache-control", "Cache-Control"},
	{"response-content-disposition", "Content-Disposition"}, {"response-content-encoding", "Content-Encoding"},
}

// sandboxHeaders adds the headers that keep an object from acting as a
// page of the server's origin, on the final Content-Type (stored or
// overridden by response-content-type). The web console shares the S3
// port, so a stored HTML or SVG document with script could otherwise use
// a signed-in console session. nosniff goes on every object, so a browser
// never guesses a scriptable type; "sandbox" (without allow-scripts) goes
// on the types a browser renders as a document that can run script: the
// page gets an opaque origin and runs no script. AWS sends neither: a
// deliberate difference (docs/s3-compatibility.md).
//
// The policy is added, not set: a caller in front (the console's proxy)
// may have set a stricter one, and a browser enforces every policy sent.
func sandboxHeaders(h http.Header) {
	h.Set("X-Content-Type-Options", "nosniff")
	if scriptable(h.Get("Content-Type")) {
		h.Add("Content-Security-Policy", "sandbox")
	}
}

// scriptable says whether a browser may render a body of Content-Type ct
// as a document that can run script: HTML, XHTML, SVG, any XML (XSLT and
// XHTML namespaces run script), and a missing or unparsable type, which a
// browser may sniff.
func scriptable(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil || mt == "" {
		return true
	}
	switch mt {
	case "text/html", "application/xhtml+xml", "image/svg+xml", "text/xml", "application/xml":
		return true
	}
	return strings.HasSuffix(mt, "+xml")
}

func quote(etag string) string { return `"` + etag + `"` }

// checkConditions applies If-Match, If-None-Match, If-Modified-Since and
// If-Unmodified-Since to a GET or HEAD, with S3's precedence.
func checkConditions(r *http.Request, info objstore.ObjectInfo) error {
	h := r.Header
	mod := info.ModTime.Truncate(time.Second)
	im, inm := h.Get("If-Match"), h.Get("If-None-Match")
	if im != "" {
		if !etagMatches(im, info.ETag) {
			return objstore.ErrPreconditionFailed
		}
	} else if t, ok := httpTime(h.Get("If-Unmodified-Since")); ok && mod.After(t) {
		return objstore.ErrPreconditionFailed
	}
	if inm != "" {
		if etagMatches(inm, info.ETag) {
			return errNotModified
		}
	} else if t, ok := httpTime(h.Get("If-Modified-Since")); ok && !mod.After(t) {
		return errNotModified
	}
	return nil
}

// etagMatches reports whether an If-Match / If-None-Match list names etag.
func etagMatches(list, etag string) bool {
	for _, e := range strings.Split(list, ",") {
		e = strings.Trim(strings.TrimPrefix(strings.TrimSpace(e), "W/"), `"`)
		if e == "*" || e == etag {
			return true
		}
	}
	return false
}

func httpTime(v string) (time.Time, bool) {
	if v == "" {
		return time.Time{}, false
	}
	t, err := http.ParseTime(v)
	return t, err == nil
}

// parseRange parses a single "bytes=" range against size. ok=false means
// no (or an ignorable, malformed) range: serve the whole object.
func parseRange(v string, size int64) (start, length int64, ok bool, err error) {
	spec, found := strings.CutPrefix(v, "bytes=")
	if !found || strings.Contains(spec, ",") {
		return 0, 0, false, nil
	}
	a, b, found := strings.Cut(strings.TrimSpace(spec), "-")
	if !found {
		return 0, 0, false, nil
	}
	switch a {
	case "":
		n, perr := strconv.ParseInt(b, 10, 64)
		if perr != nil || n < 0 {
			return 0, 0, false, nil
		}
		if n == 0 {
			return 0, 0, false, objstore.ErrInvalidRange
		}
		n = min(n, size)
		return size - n, n, true, nil
	default:
		s, perr := strconv.ParseInt(a, 10, 64)
		if perr != nil || s < 0 {
			return 0, 0, false, nil
		}
		e := size - 1
		if b != "" {
			if e, perr = strconv.ParseInt(b, 10, 64); perr != nil || e < s {
				return 0, 0, false, nil
			}
		}
		if s >= size {
			return 0, 0, false, objstore.ErrInvalidRange
		}
		e = min(e, size-1)
		return s, e - s + 1, true, nil
	}
}

// contentMD5 decodes a Content-MD5 header (nil when absent).
func contentMD5(h http.Header) ([]byte, error) {
	v := h.Get("Content-MD5")
	if v == "" {
		return nil, nil
	}
	b, err := base64.StdEncoding.DecodeString(v)
	if err != nil || len(b) != 16 {
		return nil, errInvalidDigest
	}
	return b, nil
}

// copySource parses x-amz-copy-source ("/bucket/key?versionId=v" or
// "bucket/key", URL-encoded).
func copySource(v string) (bucket, key, version string, err error) {
	v, _ = strings.CutPrefix(v, "/")
	path, query, _ := strings.Cut(v, "?")
	path, perr := urlUnescape(path)
	if perr != nil {
		return "", "", "", apiErr("InvalidArgument", 400, "Copy Source must mention the source bucket and key: sourcebucket/sourcekey.")
	}
	bucket, key, found := strings.Cut(path, "/")
	if !found || bucket == "" || key == "" {
		return "", "", "", apiErr("InvalidArgument", 400, "Copy Source must mention the source bucket and key: sourcebucket/sourcekey.")
	}
	if query != "" {
		vid, ok := strings.CutPrefix(query, "versionId=")
		if !ok {
			return "", "", "", apiErr("InvalidArgument", 400, "Unsupported copy source parameter %q.", query)
		}
		version = vid
	}
	return bucket, key, version, nil
}

// sourceRange parses x-amz-copy-source-range ("bytes=a-b", both required).
func sourceRange(v string) (start, length int64, err error) {
	spec, ok := strings.CutPrefix(v, "bytes=")
	a, b, found := strings.Cut(spec, "-")
	s, e1 := strconv.ParseInt(a, 10, 64)
	e, e2 := strconv.ParseInt(b, 10, 64)
	if !ok || !found || e1 != nil || e2 != nil || s < 0 || e < s {
		return 0, 0, apiErr("InvalidArgument", 400, "The x-amz-copy-source-range value must be of the form bytes=first-last where first and last are the zero-based offsets of the first and last bytes to copy")
	}
	return s, e - s + 1, nil
}

func fmtInt(n int64) string { return strconv.FormatInt(n, 10) }
