package sigv4

import (
	"encoding/hex"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// unsignedHeaders are request headers Sign and Presign never sign: proxies and
// transports add, drop or rewrite them.
var unsignedHeaders = map[string]bool{
	"authorization":     true,
	"user-agent":        true,
	"content-length":    true,
	"transfer-encoding": true,
	"connection":        true,
	"expect":            true,
	"accept-encoding":   true,
	"x-amzn-trace-id":   true,
}

// headersToSign returns host plus the lowercase names of r's headers that are
// not in unsignedHeaders, sorted.
func headersToSign(r *http.Request) []string {
	names := []string{"host"}
	for k := range r.Header {
		lk := strings.ToLower(k)
		if unsignedHeaders[lk] || lk == "host" {
			continue
		}
		names = append(names, lk)
	}
	sort.Strings(names)
	return slices.Compact(names)
}

func checkSignArgs(r *http.Request, accessKey, secret, region, service string) error {
	switch {
	case r == nil || r.URL == nil:
		return fmt.Errorf("%w: request has no URL", ErrMalformedAuth)
	case accessKey == "" || secret == "" || region == "" || service == "":
		return fmt.Errorf("%w: access key, secret, region and service are required", ErrMalformedAuth)
	case strings.Contains(region, "/") || strings.Contains(service, "/"):
		return fmt.Errorf("%w: region and service may not contain '/'", ErrMalformedAuth)
	}
	return nil
}

// Sign signs r in place with header authentication: it sets X-Amz-Date,
// X-Amz-Content-Sha256 (payloadHash, or UNSIGNED-PAYLOAD when empty) and
// Authorization. It signs host and every header already on r except
// unsignedHeaders; headers added after Sign are not covered. payloadHash may
// also be one of the STREAMING-* forms, for a caller that frames the body
// itself.
func Sign(r *http.Request, accessKey, secret, region, service string, payloadHash string, now time.Time) error {
	if err := checkSignArgs(r, accessKey, secret, region, service); err != nil {
		return err
	}
	if payloadHash == "" {
		payloadHash = PayloadUnsigned
	}
	if r.Header == nil {
		r.Header = make(http.Header)
	}
	r.Header.Del("Authorization")
	amzDate := formatAmzDate(now)
	r.Header.Set("X-Amz-Date", amzDate)
	r.Header.Set("X-Amz-Content-Sha256", payloadHash)
	query, err := canonicalQuery(r.URL.RawQuery, "")
	if err != nil {
		return err
	}
	sc := scope{date: now.UTC().Format(scopeDateFormat), region: region, service: service}
	sg := signer{key: sc.signingKey(secret), amzDate: amzDate, scope: sc}
	signed := headersToSign(r)
	uri := canonicalURIs(r.URL, service, false)[0]
	sig := sg.sign(canonicalRequest(r.Method, uri, query, canonicalHeaders(r, signed), signed, payloadHash))
	r.Header.Set("Authorization", algorithmHMAC+" Credential="+accessKey+"/"+sc.String()+
		", SignedHeaders="+strings.Join(signed, ";")+", Signature="+hex.EncodeToString(sig))
	return nil
}

// Presign returns a presigned URL for r, valid for expires (1 second to 7
// days) from now. It signs host and the headers already on r except
// unsignedHeaders; whoever uses the URL must send those headers unchanged.
// The payload is UNSIGNED-PAYLOAD. r is not modified.
func Presign(r *http.Request, accessKey, secret, region, service string, expires time.Duration, now time.Time) (string, error) {
	if err := checkSignArgs(r, accessKey, secret, region, service); err != nil {
		return "", err
	}
	if expires < time.Second || expires > DefaultMaxPresignExpiry {
		return "", fmt.Errorf("%w: expiry %v outside 1s..7d", ErrMalformedAuth, expires)
	}
	sc := scope{date: now.UTC().Format(scopeDateFormat), region: region, service: service}
	signed := headersToSign(r)
	q := r.URL.Query()
	for _, k := range []string{"X-Amz-Algorithm", "X-Amz-Credential", "X-Amz-Date", "X-Amz-Expires", "X-Amz-SignedHeaders", "X-Amz-Signature"} {
		q.Del(k)
	}
	amzDate := formatAmzDate(now)
	q.Set("X-Amz-Algorithm", algorithmHMAC)
	q.Set("X-Amz-Credential", accessKey+"/"+sc.String())
	q.Set("X-Amz-Date", amzDate)
	q.Set("X-Amz-Expires", strconv.FormatInt(int64(expires/time.Second), 10))
	q.Set("X-Amz-SignedHeaders", strings.Join(signed, ";"))
	query, err := canonicalQuery(q.Encode(), "")
	if err != nil {
		return "", err
	}
	sg := signer{key: sc.signingKey(secret), amzDate: amzDate, scope: sc}
	uri := canonicalURIs(r.URL, service, false)[0]
	sig := sg.sign(canonicalRequest(r.Method, uri, query, canonicalHeaders(r, signed), signed, PayloadUnsigned))
	u := *r.URL
	u.RawQuery = query + "&X-Amz-Signature=" + hex.EncodeToString(sig)
	if u.Host == "" {
		u.Host = r.Host
	}
	return u.String(), nil
}
