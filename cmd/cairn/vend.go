package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/cairnstore/cairn/catalog"
	"github.com/cairnstore/cairn/frontends/iceberg"
	"github.com/cairnstore/cairn/frontends/s3/iam"
	"github.com/cairnstore/cairn/frontends/s3/sigv4"
)

// defaultVendTTL is how long vended credentials last by default.
const defaultVendTTL = time.Hour

// icebergVendor vends the Iceberg catalog's credentials: temporary
// credentials of the S3 face's user directory (iam.Directory.NewSession)
// for the calling user, whose session policy allows only the objects of
// the table's location (and listing under it), read-only or read-write.
type icebergVendor struct {
	users  *iam.Directory
	ttl    time.Duration
	region string
}

var (
	_ iceberg.Vendor        = (*icebergVendor)(nil)
	_ iceberg.RequestSigner = (*icebergVendor)(nil)
)

// signTTL is how long the credentials a remotely signed request is signed
// with last: a signature is used at once, but a large upload's parts are
// sent over minutes.
const signTTL = 15 * time.Minute

// SignRequest implements iceberg.RequestSigner: it signs the request
// with new temporary credentials of p limited to the location, and
// returns its headers with the signature and the session token.
func (v *icebergVendor) SignRequest(_ context.Context, p iceberg.Principal, bucket, prefix string, write bool, region, method string, u *url.URL, headers http.Header) (http.Header, error) {
	now := time.Now()
	s, err := v.scopedSession(p, bucket, prefix, write, signTTL, now)
	if err != nil {
		return nil, err
	}
	// The client's names as it sent them (the protocol's JSON keeps their
	// case), one canonical key each; Host is the URL's.
	h := http.Header{}
	for k, v := range headers {
		h[http.CanonicalHeaderKey(k)] = append(h[http.CanonicalHeaderKey(k)], v...)
	}
	for _, k := range []string{"Authorization", "X-Amz-Date", "X-Amz-Security-Token", "Host"} {
		h.Del(k)
	}
	h.Set("X-Amz-Security-Token", s.Token)
	if region == "" {
		region = v.region
	}
	r := &http.Request{Method: method, URL: u, Host: u.Host, Header: h}
	if err := sigv4.Sign(r, s.AccessKey, s.SecretKey, region, "s3", h.Get("X-Amz-Content-Sha256"), now); err != nil {
		return nil, fmt.Errorf("sign %s %s: %w", method, u, err)
	}
	return r.Header, nil
}

// VendCredentials implements iceberg.Vendor.
func (v *icebergVendor) VendCredentials(_ context.Context, p iceberg.Principal, bucket, prefix string, write bool) (map[string]string, error) {
	s, err := v.scopedSession(p, bucket, prefix, write, v.ttl, time.Now())
	if err != nil {
		return nil, err
	}
	cfg := map[string]string{
		"s3.access-key-id":               s.AccessKey,
		"s3.secret-access-key":           s.SecretKey,
		"s3.session-token":               s.Token,
		"s3.session-token-expires-at-ms": strconv.FormatInt(s.Expiration.UnixMilli(), 10),
		"s3.path-style-access":           "true",
		"client.region":                  v.region,
		"s3.remote-signing-enabled":      "false",
	}
	return cfg, nil
}

// scopedSession makes temporary credentials of p lasting ttl, limited to
// the objects of bucket under prefix (locationPolicy).
func (v *icebergVendor) scopedSession(p iceberg.Principal, bucket, prefix string, write bool, ttl time.Duration, now time.Time) (iam.Session, error) {
	if strings.ContainsAny(bucket+prefix, "*?$") {
		return iam.Session{}, fmt.Errorf("%w: the table's location s3://%s/%s holds a policy wildcard; credentials cannot be limited to it", catalog.ErrBadRequest, bucket, prefix)
	}
	policy, err := locationPolicy(bucket, prefix, write)
	if err != nil {
		return iam.Session{}, err
	}
	s, err := v.users.NewSession(p.AccessKey, ttl, policy, now)
	if err != nil {
		return iam.Session{}, fmt.Errorf("credentials for %s: %w", p.AccessKey, err)
	}
	return s, nil
}

// locationPolicy is the session policy of credentials for the objects of
// bucket under prefix: read them (and list under the prefix), and write
// and delete them when write.
func locationPolicy(bucket, prefix string, write bool) (string, error) {
	actions := []string{"s3:GetObject", "s3:GetObjectAttributes"}
	if write {
		actions = append(actions, "s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload", "s3:ListMultipartUploadParts")
	}
	type stmt struct {
		Effect    string                       `json:"Effect"`
		Action    any                          `json:"Action"`
		Resource  string                       `json:"Resource"`
		Condition map[string]map[string]string `json:"Condition,omitempty"`
	}
	doc := struct {
		Version   string `json:"Version"`
		Statement []stmt `json:"Statement"`
	}{"2012-10-17", []stmt{
		{Effect: "Allow", Action: actions, Resource: "arn:aws:s3:::" + bucket + "/" + prefix + "*"},
		{Effect: "Allow", Action: "s3:ListBucket", Resource: "arn:aws:s3:::" + bucket,
			Condition: map[string]map[string]string{"StringLike": {"s3:prefix": prefix + "*"}}},
		{Effect: "Allow", Action: []string{"s3:GetBucketLocation", "s3:ListBucketMultipartUploads"}, Resource: "arn:aws:s3:::" + bucket},
	}}
	raw, err := json.Marshal(doc)
	return string(raw), err
}
