package postform

import (
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
	"time"
)

// AlgorithmV4 is the one SigV4 algorithm a form may name.
const AlgorithmV4 = "AWS4-HMAC-SHA256"

const amzDateFormat = "20060102T150405Z"

// Auth is who signed a form.
type Auth struct {
	// AccessKey is the signer's access key; "" for an anonymous form.
	AccessKey string
	// Version is 4 (x-amz-signature), 2 (signature) or 0 (anonymous).
	Version int
}

// Authenticate checks the form's signature over its policy field, with
// secret giving an access key's secret key. A form with no signature
// field at all is anonymous (Auth{}, nil): whether that may write is the
// caller's decision. A signed form must carry a policy.
func Authenticate(fields map[string]string, secret func(accessKey string) (string, bool)) (Auth, error) {
	_, v4 := fields["x-amz-algorithm"]
	_, hasCred := fields["x-amz-credential"]
	_, hasV4Sig := fields["x-amz-signature"]
	_, v2 := fields["awsaccesskeyid"]
	_, hasV2Sig := fields["signature"]
	policy, hasPolicy := fields["policy"]
	switch {
	case v4 || hasCred || hasV4Sig:
		if !hasPolicy {
			return Auth{}, fmt.Errorf("%w: Bucket POST must contain a field named 'policy'", ErrInvalidArgument)
		}
		return authV4(fields, policy, secret)
	case v2 || hasV2Sig:
		if !hasPolicy {
			return Auth{}, fmt.Errorf("%w: Bucket POST must contain a field named 'policy'", ErrInvalidArgument)
		}
		return authV2(fields, policy, secret)
	case hasPolicy:
		return Auth{}, fmt.Errorf("%w: Bucket POST must contain a field named 'AWSAccessKeyId'.  If it is specified, please check the order of the fields", ErrInvalidArgument)
	}
	return Auth{}, nil
}

func authV2(fields map[string]string, policy string, secret func(string) (string, bool)) (Auth, error) {
	ak, sig := fields["awsaccesskeyid"], fields["signature"]
	switch {
	case ak == "":
		return Auth{}, fmt.Errorf("%w: Bucket POST must contain a field named 'AWSAccessKeyId'.  If it is specified, please check the order of the fields", ErrInvalidArgument)
	case sig == "":
		return Auth{}, fmt.Errorf("%w: Bucket POST must contain a field named 'signature'", ErrInvalidArgument)
	}
	sk, ok := secret(ak)
	if !ok {
		return Auth{}, fmt.Errorf("%w: The AWS Access Key Id you provided does not exist in our records", ErrUnknownAccessKey)
	}
	if !hmac.Equal([]byte(SignV2(sk, policy)), []byte(sig)) {
		return Auth{}, fmt.Errorf("%w: The request signature we calculated does not match the signature you provided. Check your key and signing method", ErrSignatureMismatch)
	}
	return Auth{AccessKey: ak, Version: 2}, nil
}

// Credential is a parsed x-amz-credential: key/date/region/service/aws4_request.
type Credential struct {
	AccessKey, Date, Region, Service string
}

// ParseCredential parses an x-amz-credential field.
func ParseCredential(v string) (Credential, error) {
	parts := strings.Split(v, "/")
	n := len(parts)
	// The access key may itself hold '/': the scope is the last four.
	if n < 5 || parts[n-1] != "aws4_request" {
		return Credential{}, fmt.Errorf("%w: Invalid x-amz-credential %q: it must be <key>/<date>/<region>/s3/aws4_request", ErrInvalidArgument, clip(v))
	}
	c := Credential{AccessKey: strings.Join(parts[:n-4], "/"), Date: parts[n-4], Region: parts[n-3], Service: parts[n-2]}
	if _, err := time.Parse("20060102", c.Date); err != nil || c.AccessKey == "" || c.Region == "" {
		return Credential{}, fmt.Errorf("%w: Invalid x-amz-credential %q: it must be <key>/<date>/<region>/s3/aws4_request", ErrInvalidArgument, clip(v))
	}
	if c.Service != "s3" {
		return Credential{}, fmt.Errorf("%w: Invalid x-amz-credential %q: the service must be s3", ErrInvalidArgument, clip(v))
	}
	return c, nil
}

func authV4(fields map[string]string, policy string, secret func(string) (string, bool)) (Auth, error) {
	if a := fields["x-amz-algorithm"]; a != AlgorithmV4 {
		return Auth{}, fmt.Errorf("%w: Invalid x-amz-algorithm %q: only %s is supported", ErrInvalidArgument, clip(a), AlgorithmV4)
	}
	c, err := ParseCredential(fields["x-amz-credential"])
	if err != nil {
		return Auth{}, err
	}
	date := fields["x-amz-date"]
	if _, err := time.Parse(amzDateFormat, date); err != nil || !strings.HasPrefix(date, c.Date) {
		return Auth{}, fmt.Errorf("%w: Invalid x-amz-date %q: it must be yyyyMMddTHHmmssZ of the credential's day", ErrInvalidArgument, clip(date))
	}
	sig := strings.ToLower(fields["x-amz-signature"])
	if len(sig) != 64 {
		return Auth{}, fmt.Errorf("%w: Bucket POST must contain a field named 'x-amz-signature' of 64 hex digits", ErrInvalidArgument)
	}
	sk, ok := secret(c.AccessKey)
	if !ok {
		return Auth{}, fmt.Errorf("%w: The AWS Access Key Id you provided does not exist in our records", ErrUnknownAccessKey)
	}
	if !hmac.Equal([]byte(SignV4(sk, c, policy)), []byte(sig)) {
		return Auth{}, fmt.Errorf("%w: The request signature we calculated does not match the signature you provided. Check your key and signing method", ErrSignatureMismatch)
	}
	return Auth{AccessKey: c.AccessKey, Version: 4}, nil
}

// SignV4 is the SigV4 form signature: hex HMAC-SHA256 of the base64
// policy under the credential's signing key.
func SignV4(secret string, c Credential, policy string) string {
	k := hmacSHA256([]byte("AWS4"+secret), c.Date)
	k = hmacSHA256(k, c.Region)
	k = hmacSHA256(k, c.Service)
	k = hmacSHA256(k, "aws4_request")
	return hex.EncodeToString(hmacSHA256(k, policy))
}

// SignV2 is the SigV2 form signature: base64 HMAC-SHA1 of the base64
// policy under the secret key.
func SignV2(secret, policy string) string {
	m := hmac.New(sha1.New, []byte(secret))
	m.Write([]byte(policy))
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

func hmacSHA256(key []byte, data string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(data))
	return m.Sum(nil)
}
