package sigv2

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

func checkSignArgs(r *http.Request, accessKey, secret string) error {
	switch {
	case r == nil || r.URL == nil:
		return fmt.Errorf("%w: request has no URL", ErrMalformedAuth)
	case accessKey == "" || secret == "":
		return fmt.Errorf("%w: access key and secret are required", ErrMalformedAuth)
	}
	return nil
}

// clientStringToSign is the StringToSign a client writes: the wire path,
// AWS's sub-resource list, the Date line as given.
func clientStringToSign(r *http.Request, bucket, rawQuery, date, contentMD5, contentType string) string {
	resource := resourcePaths(r, bucket)[0] + subresources(rawQuery, ruleAWS)
	return stringToSign(r.Method, contentMD5, contentType, date, amzHeaders(r.Header, nil, ""), resource)
}

// Sign signs r in place with the header form: it sets Date to now and
// Authorization to "AWS accessKey:signature". bucket is the bucket of a
// virtual-hosted-style request, empty for path-style. Content-MD5,
// Content-Type and every x-amz-* header already on r are signed; headers
// added after Sign are not covered.
func Sign(r *http.Request, accessKey, secret, bucket string, now time.Time) error {
	if err := checkSignArgs(r, accessKey, secret); err != nil {
		return err
	}
	if r.Header == nil {
		r.Header = make(http.Header)
	}
	r.Header.Del("Authorization")
	r.Header.Set("Date", now.UTC().Format(http.TimeFormat))
	sts := clientStringToSign(r, bucket, r.URL.RawQuery, r.Header.Get("Date"), r.Header.Get("Content-Md5"), r.Header.Get("Content-Type"))
	r.Header.Set("Authorization", "AWS "+accessKey+":"+base64.StdEncoding.EncodeToString(sign(secret, sts)))
	return nil
}

// Presign returns a presigned URL for r that is valid until expires (whole
// seconds). bucket is as for Sign. The Content-MD5, Content-Type and
// x-amz-* headers on r are signed: whoever uses the URL must send them
// unchanged. r is not modified.
func Presign(r *http.Request, accessKey, secret, bucket string, expires time.Time) (string, error) {
	if err := checkSignArgs(r, accessKey, secret); err != nil {
		return "", err
	}
	if expires.Unix() < 0 {
		return "", fmt.Errorf("%w: expiry before 1970", ErrMalformedQuery)
	}
	raw := queryWithout(r.URL.RawQuery, "AWSAccessKeyId", "Expires", "Signature")
	exp := strconv.FormatInt(expires.Unix(), 10)
	sts := clientStringToSign(r, bucket, raw, exp, r.Header.Get("Content-Md5"), r.Header.Get("Content-Type"))
	if raw != "" {
		raw += "&"
	}
	u := *r.URL
	u.RawQuery = raw + "AWSAccessKeyId=" + url.QueryEscape(accessKey) + "&Expires=" + exp +
		"&Signature=" + url.QueryEscape(base64.StdEncoding.EncodeToString(sign(secret, sts)))
	if u.Host == "" {
		u.Host = r.Host
	}
	return u.String(), nil
}
