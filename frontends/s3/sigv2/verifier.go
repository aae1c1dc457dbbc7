package sigv2

import (
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// DefaultMaxSkew is the Verifier's MaxSkew when left zero: AWS's 15 minutes.
const DefaultMaxSkew = 15 * time.Minute

// Verifier checks SigV2 requests. Its fields are configuration only: set
// them before use and do not change them while Verify runs. A Verifier is
// safe for concurrent use.
type Verifier struct {
	// Secret returns the secret key of accessKey, ok=false if unknown.
	Secret func(accessKey string) (secret string, ok bool)
	// MaxSkew bounds the distance between the request time (x-amz-date,
	// else Date) and now for the header form. Zero means DefaultMaxSkew.
	MaxSkew time.Duration
	// Now returns the current time. Nil means time.Now.
	Now func() time.Time
}

// Auth is what a verified request proved.
type Auth struct {
	AccessKey string
	Presigned bool // the query form
}

// Form is how a request is signed, as far as this package is concerned.
type Form int

// The forms Detect tells apart.
const (
	// NotV2: not signed with SigV2 (SigV4, or not signed at all).
	NotV2 Form = iota
	// HeaderForm: "Authorization: AWS AccessKeyId:Signature".
	HeaderForm
	// QueryForm: a presigned URL with AWSAccessKeyId, Expires and Signature.
	QueryForm
)

// Detect tells whether r is signed with SigV2, and in which form. A
// request with both a V2 header and a V2 query is HeaderForm (Verify then
// refuses it); a query that also has X-Amz-Algorithm, X-Amz-Credential or
// X-Amz-Signature is SigV4's to judge.
func Detect(r *http.Request) Form {
	if r == nil || r.URL == nil {
		return NotV2
	}
	if authz := r.Header.Values("Authorization"); len(authz) > 0 {
		if len(authz) == 1 && strings.HasPrefix(authz[0], "AWS ") {
			return HeaderForm
		}
		return NotV2
	}
	if r.URL.RawQuery == "" {
		return NotV2
	}
	q := r.URL.Query()
	if (q.Has("AWSAccessKeyId") || q.Has("Signature")) &&
		!q.Has("X-Amz-Algorithm") && !q.Has("X-Amz-Credential") && !q.Has("X-Amz-Signature") {
		return QueryForm
	}
	return NotV2
}

func (v *Verifier) now() time.Time {
	if v.Now != nil {
		return v.Now()
	}
	return time.Now()
}

func (v *Verifier) maxSkew() time.Duration {
	if v.MaxSkew > 0 {
		return v.MaxSkew
	}
	return DefaultMaxSkew
}

func (v *Verifier) secret(accessKey string) (string, error) {
	if v.Secret != nil {
		if s, ok := v.Secret(accessKey); ok {
			return s, nil
		}
	}
	return "", fmt.Errorf("%w: %q", ErrUnknownAccessKey, truncate(accessKey, 128))
}

// Verify checks the SigV2 signature of r, header or query form (see
// Detect), and its time: clock skew for the header form, expiry for the
// query form. bucket is the bucket of a virtual-hosted-style request,
// empty for path-style (the CanonicalizedResource starts with "/" +
// bucket then). Verify does not touch the body. Every error wraps one of
// the package's sentinels.
func (v *Verifier) Verify(r *http.Request, bucket string) (Auth, error) {
	switch Detect(r) {
	case HeaderForm:
		return v.verifyHeader(r, bucket)
	case QueryForm:
		return v.verifyQuery(r, bucket)
	}
	return Auth{}, fmt.Errorf("%w: the request is not signed with Signature Version 2", ErrMalformedAuth)
}

// parseHeader splits "AWS AccessKeyId:Signature".
func parseHeader(h string) (accessKey, signature string, err error) {
	rest, ok := strings.CutPrefix(h, "AWS ")
	if ok {
		accessKey, signature, ok = strings.Cut(rest, ":")
	}
	if !ok || accessKey == "" || signature == "" || strings.ContainsAny(accessKey, " \t") {
		return "", "", fmt.Errorf("%w: %q, expected \"AWS AccessKeyId:Signature\"", ErrMalformedAuth, truncate(h, 80))
	}
	return accessKey, signature, nil
}

// parseDate reads an HTTP date (RFC 1123, RFC 850, asctime, RFC 1123 with a
// numeric zone) or an ISO 8601 basic time as x-amz-date may carry.
func parseDate(s string) (time.Time, bool) {
	if t, err := http.ParseTime(s); err == nil {
		return t, true
	}
	for _, layout := range []string{time.RFC1123Z, time.RFC1123, "20060102T150405Z"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// dateForm is one way the Date line and the amz headers may be written.
type dateForm struct{ date, amz string }

// headerForms are the Date line and amz header candidates of the header
// form: Date as sent with x-amz-date among the amz headers; with
// x-amz-date, also an empty Date line (AWS's rule when both are sent) and
// x-amz-date on the Date line instead of among the amz headers (AWS's
// DELETE example).
func headerForms(h http.Header) []dateForm {
	date, amzDate := h.Get("Date"), h.Get("X-Amz-Date")
	forms := []dateForm{{date, amzHeaders(h, nil, "")}}
	if amzDate != "" {
		if date != "" {
			forms = append(forms, dateForm{"", forms[0].amz})
		}
		forms = append(forms, dateForm{amzDate, amzHeaders(h, nil, "x-amz-date")})
	}
	return forms
}

func (v *Verifier) verifyHeader(r *http.Request, bucket string) (Auth, error) {
	accessKey, signature, err := parseHeader(r.Header.Get("Authorization"))
	if err != nil {
		return Auth{}, err
	}
	if q := r.URL.Query(); q.Has("AWSAccessKeyId") || q.Has("Signature") || q.Has("X-Amz-Signature") {
		return Auth{}, fmt.Errorf("%w: only one auth mechanism allowed, found an Authorization header and a presigned query", ErrMalformedAuth)
	}
	date, amzDate := r.Header.Get("Date"), r.Header.Get("X-Amz-Date")
	stamp := date
	if amzDate != "" {
		stamp = amzDate
	}
	t, ok := parseDate(stamp)
	if !ok {
		return Auth{}, fmt.Errorf("%w: Date %q, x-amz-date %q", ErrMissingDate, truncate(date, 40), truncate(amzDate, 40))
	}
	secret, err := v.secret(accessKey)
	if err != nil {
		return Auth{}, err
	}
	now := v.now()
	if d := now.Sub(t); d > v.maxSkew() || d < -v.maxSkew() {
		return Auth{}, fmt.Errorf("%w: request time %s, server time %s", ErrTimeSkewed, t.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339))
	}
	if err := match(r, bucket, r.Header.Get("Content-Md5"), r.Header.Get("Content-Type"), headerForms(r.Header), secret, signature); err != nil {
		return Auth{}, fmt.Errorf("%w: access key %q", err, truncate(accessKey, 128))
	}
	return Auth{AccessKey: accessKey}, nil
}

func (v *Verifier) verifyQuery(r *http.Request, bucket string) (Auth, error) {
	q := r.URL.Query()
	for _, k := range []string{"AWSAccessKeyId", "Signature", "Expires"} {
		if len(q[k]) != 1 || q.Get(k) == "" {
			return Auth{}, fmt.Errorf("%w: query-string authentication requires the Signature, Expires and AWSAccessKeyId parameters (each once)", ErrMalformedQuery)
		}
	}
	accessKey, expiresStr := q.Get("AWSAccessKeyId"), q.Get("Expires")
	// '+' in an unescaped signature decodes to ' ', which base64 never has.
	signature := strings.ReplaceAll(q.Get("Signature"), " ", "+")
	expires, err := strconv.ParseInt(expiresStr, 10, 64)
	if err != nil || expires < 0 {
		return Auth{}, fmt.Errorf("%w: invalid Expires %q (should be seconds since the epoch)", ErrMalformedQuery, truncate(expiresStr, 40))
	}
	secret, err := v.secret(accessKey)
	if err != nil {
		return Auth{}, err
	}
	if now := v.now(); now.Unix() > expires {
		return Auth{}, fmt.Errorf("%w: at %s", ErrExpired, time.Unix(expires, 0).UTC().Format(time.RFC3339))
	}
	header := func(name string) string {
		if s := r.Header.Get(name); s != "" {
			return s
		}
		return q.Get(strings.ToLower(name))
	}
	forms := []dateForm{{expiresStr, amzHeaders(r.Header, q, "")}}
	if err := match(r, bucket, header("Content-Md5"), header("Content-Type"), forms, secret, signature); err != nil {
		return Auth{}, fmt.Errorf("%w: access key %q", err, truncate(accessKey, 128))
	}
	return Auth{AccessKey: accessKey, Presigned: true}, nil
}

// candidates returns the distinct StringToSign candidates of r (see the
// package documentation), the one clients most often send first.
func candidates(r *http.Request, bucket, contentMD5, contentType string, forms []dateForm) []string {
	var resources []string
	for _, path := range resourcePaths(r, bucket) {
		for _, rule := range []resourceRule{ruleAWS, ruleBotocore} {
			resources = append(resources, path+subresources(r.URL.RawQuery, rule))
		}
	}
	resources = append(resources, botocoreStaticQuery(wirePath(r), r.URL.RawQuery)...)
	var out []string
	for _, resource := range resources {
		for _, f := range forms {
			sts := stringToSign(r.Method, contentMD5, contentType, f.date, f.amz, resource)
			if !slices.Contains(out, sts) {
				out = append(out, sts)
			}
		}
	}
	return out
}

// botocoreStaticQuery returns the resources botocore 1.28 to 1.30 (Debian
// 12's python3-botocore among them) sign for operations whose request URI
// has a fixed query, such as "/{Bucket}?list-type=2" or "/{Bucket}?acl":
// the path as sent, "?" and that fixed query (the first one or two
// parameters, as sent), then the sub-resources again ("/b?acl?acl"). The
// fixed query is at most two parameters ("?select&select-type=2").
func botocoreStaticQuery(path, rawQuery string) []string {
	if rawQuery == "" {
		return nil
	}
	sub := subresources(rawQuery, ruleBotocore)
	parts := strings.SplitN(rawQuery, "&", 3)
	out := []string{path + "?" + parts[0] + sub}
	if len(parts) > 1 {
		out = append(out, path+"?"+parts[0]+"&"+parts[1]+sub)
	}
	return out
}

// match compares signature, in constant time, with the HMAC-SHA1 of every
// StringToSign candidate of r.
func match(r *http.Request, bucket, contentMD5, contentType string, forms []dateForm, secret, signature string) error {
	given, err := base64.StdEncoding.DecodeString(signature)
	if err != nil || len(given) != sha1.Size {
		return fmt.Errorf("%w: the signature is not base64 of an HMAC-SHA1", ErrSignatureMismatch)
	}
	for _, sts := range candidates(r, bucket, contentMD5, contentType, forms) {
		if hmac.Equal(sign(secret, sts), given) {
			return nil
		}
	}
	return ErrSignatureMismatch
}

// sign is the V2 signature of sts: HMAC-SHA1 keyed by the secret.
func sign(secret, sts string) []byte {
	m := hmac.New(sha1.New, []byte(secret))
	m.Write([]byte(sts))
	return m.Sum(nil)
}

// truncate bounds a client-supplied string quoted in an error.
func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// queryWithout returns the raw query of u without the named parameters,
// in the order and encoding they had.
func queryWithout(rawQuery string, names ...string) string {
	var keep []string
	for part := range strings.SplitSeq(rawQuery, "&") {
		if part == "" {
			continue
		}
		k, _, _ := strings.Cut(part, "=")
		if slices.Contains(names, unescape(k)) {
			continue
		}
		keep = append(keep, part)
	}
	return strings.Join(keep, "&")
}
