package sigv4

import (
	"encoding/hex"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// credential is what the Authorization header or the presigned query declares.
type credential struct {
	accessKey string
	scope     scope
	signed    []string // signed header names, as given
	signature []byte   // 32 bytes
}

// parseCredential parses "AKID/yyyymmdd/region/service/aws4_request".
func parseCredential(s string) (accessKey string, sc scope, err error) {
	parts := strings.Split(s, "/")
	if len(parts) < 5 {
		return "", scope{}, fmt.Errorf("%w: credential %q has %d parts, want 5", ErrMalformedAuth, s, len(parts))
	}
	n := len(parts)
	accessKey = strings.Join(parts[:n-4], "/")
	sc = scope{date: parts[n-4], region: parts[n-3], service: parts[n-2]}
	switch {
	case accessKey == "":
		return "", scope{}, fmt.Errorf("%w: credential has no access key", ErrMalformedAuth)
	case parts[n-1] != scopeTerminator:
		return "", scope{}, fmt.Errorf("%w: credential terminator %q, want %q", ErrMalformedAuth, parts[n-1], scopeTerminator)
	case sc.region == "" || sc.service == "":
		return "", scope{}, fmt.Errorf("%w: credential %q has an empty region or service", ErrMalformedAuth, s)
	}
	if _, err := time.Parse(scopeDateFormat, sc.date); err != nil || len(sc.date) != 8 {
		return "", scope{}, fmt.Errorf("%w: credential date %q", ErrMalformedAuth, sc.date)
	}
	return accessKey, sc, nil
}

// parseSignedHeaders parses "host;x-amz-date". Names must be lowercase,
// non-empty, unique, and include host.
func parseSignedHeaders(s string) ([]string, error) {
	if s == "" {
		return nil, fmt.Errorf("%w: empty SignedHeaders", ErrMalformedAuth)
	}
	names := strings.Split(s, ";")
	seen := make(map[string]bool, len(names))
	for _, n := range names {
		if n == "" || n != strings.ToLower(n) || strings.ContainsAny(n, " \t:,") {
			return nil, fmt.Errorf("%w: signed header name %q", ErrMalformedAuth, n)
		}
		if seen[n] {
			return nil, fmt.Errorf("%w: signed header %q repeated", ErrMalformedAuth, n)
		}
		seen[n] = true
	}
	if !seen["host"] {
		return nil, fmt.Errorf("%w: host is not a signed header", ErrMalformedAuth)
	}
	return names, nil
}

func parseSignature(s string) ([]byte, error) {
	sig, err := hex.DecodeString(s)
	if err != nil || len(sig) != 32 {
		return nil, fmt.Errorf("%w: signature %q is not 64 hex digits", ErrMalformedAuth, s)
	}
	return sig, nil
}

// parseAuthorization parses an Authorization header value of the form
// "AWS4-HMAC-SHA256 Credential=AKID/date/region/service/aws4_request,
// SignedHeaders=h1;h2, Signature=hex". It returns ErrUnsupportedAlgorithm for
// other schemes (SigV2 "AWS AKID:sig", SigV4a, anything else) and
// ErrMalformedAuth when the value cannot be parsed.
func parseAuthorization(h string) (credential, error) {
	algo, rest, _ := strings.Cut(strings.TrimSpace(h), " ")
	if algo != algorithmHMAC {
		return credential{}, fmt.Errorf("%w: authorization scheme %q", ErrUnsupportedAlgorithm, truncate(algo, 40))
	}
	var (
		cred                   credential
		gotCred, gotSH, gotSig bool
		credStr, shStr, sigStr string
	)
	for _, f := range strings.Split(rest, ",") {
		f = strings.TrimSpace(f)
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			return credential{}, fmt.Errorf("%w: authorization field %q", ErrMalformedAuth, truncate(f, 40))
		}
		var dup bool
		switch k {
		case "Credential":
			dup, gotCred, credStr = gotCred, true, v
		case "SignedHeaders":
			dup, gotSH, shStr = gotSH, true, v
		case "Signature":
			dup, gotSig, sigStr = gotSig, true, v
		default:
			return credential{}, fmt.Errorf("%w: unknown authorization field %q", ErrMalformedAuth, truncate(k, 40))
		}
		if dup {
			return credential{}, fmt.Errorf("%w: authorization field %q repeated", ErrMalformedAuth, k)
		}
	}
	if !gotCred || !gotSH || !gotSig {
		return credential{}, fmt.Errorf("%w: authorization needs Credential, SignedHeaders and Signature", ErrMalformedAuth)
	}
	var err error
	if cred.accessKey, cred.scope, err = parseCredential(credStr); err != nil {
		return credential{}, err
	}
	if cred.signed, err = parseSignedHeaders(shStr); err != nil {
		return credential{}, err
	}
	if cred.signature, err = parseSignature(sigStr); err != nil {
		return credential{}, err
	}
	return cred, nil
}

// presigned is what a presigned URL's query declares beyond the credential.
type presigned struct {
	credential
	date    time.Time
	amzDate string
	expires time.Duration
	payload string // X-Amz-Content-Sha256 from the query, or UNSIGNED-PAYLOAD
}

// parsePresigned parses the X-Amz-* parameters of a presigned URL. maxExpiry
// bounds X-Amz-Expires.
func parsePresigned(q url.Values, maxExpiry time.Duration) (presigned, error) {
	var p presigned
	get := func(k string) (string, error) {
		vs := q[k]
		switch {
		case len(vs) == 0 || vs[0] == "":
			return "", fmt.Errorf("%w: missing query parameter %s", ErrMalformedAuth, k)
		case len(vs) > 1:
			return "", fmt.Errorf("%w: query parameter %s repeated", ErrMalformedAuth, k)
		}
		return vs[0], nil
	}
	algo, err := get("X-Amz-Algorithm")
	if err != nil {
		return p, err
	}
	if algo != algorithmHMAC {
		return p, fmt.Errorf("%w: X-Amz-Algorithm %q", ErrUnsupportedAlgorithm, truncate(algo, 40))
	}
	vals := make(map[string]string, 5)
	for _, k := range []string{"X-Amz-Credential", "X-Amz-Date", "X-Amz-Expires", "X-Amz-SignedHeaders", "X-Amz-Signature"} {
		if vals[k], err = get(k); err != nil {
			return p, err
		}
	}
	if p.accessKey, p.scope, err = parseCredential(vals["X-Amz-Credential"]); err != nil {
		return p, err
	}
	if p.signed, err = parseSignedHeaders(vals["X-Amz-SignedHeaders"]); err != nil {
		return p, err
	}
	if p.signature, err = parseSignature(vals["X-Amz-Signature"]); err != nil {
		return p, err
	}
	p.amzDate = vals["X-Amz-Date"]
	if p.date, err = time.Parse(amzDateFormat, p.amzDate); err != nil {
		return p, fmt.Errorf("%w: X-Amz-Date %q", ErrMalformedAuth, truncate(p.amzDate, 40))
	}
	secs, err := strconv.ParseInt(vals["X-Amz-Expires"], 10, 64)
	if err != nil || secs < 1 {
		return p, fmt.Errorf("%w: X-Amz-Expires %q is not a positive integer", ErrExpiresRange, truncate(vals["X-Amz-Expires"], 40))
	}
	if secs > int64(maxExpiry/time.Second) {
		return p, fmt.Errorf("%w: X-Amz-Expires %d exceeds %d seconds", ErrExpiresRange, secs, int64(maxExpiry/time.Second))
	}
	p.expires = time.Duration(secs) * time.Second
	p.payload = PayloadUnsigned
	if vs := q["X-Amz-Content-Sha256"]; len(vs) > 0 {
		p.payload = vs[0]
	}
	return p, nil
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
