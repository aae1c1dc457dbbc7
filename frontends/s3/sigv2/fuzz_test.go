package sigv2

import (
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

var fuzzNow = time.Date(2007, 3, 27, 19, 36, 42, 0, time.UTC)

func FuzzParseV2Header(f *testing.F) {
	for _, s := range []string{
		"AWS AKIAIOSFODNN7EXAMPLE:qgk2+6Sv9/oM7G3qLEjTH1a1l1g=",
		"AWS AKIAIOSFODNN7EXAMPLE:",
		"AWS :x",
		"AWS a:b:c",
		"AWS4-HMAC-SHA256 Credential=x",
		"AWS  x:%%",
		"",
	} {
		f.Add(s, "Tue, 27 Mar 2007 19:36:42 +0000")
	}
	v := newTestVerifier(fuzzNow)
	f.Fuzz(func(t *testing.T, h, date string) {
		ak, sig, err := parseHeader(h)
		if err == nil {
			if ak == "" || sig == "" || !strings.HasPrefix(h, "AWS "+ak+":") {
				t.Fatalf("accepted %q as %q, %q", h, ak, sig)
			}
		}
		r := httptest.NewRequest("GET", "http://awsexamplebucket1.s3.amazonaws.com/photos/puppy.jpg", nil)
		r.Header.Set("Authorization", h)
		r.Header.Set("Date", date)
		if _, err := v.Verify(r, "awsexamplebucket1"); err == nil && h != "AWS AKIAIOSFODNN7EXAMPLE:qgk2+6Sv9/oM7G3qLEjTH1a1l1g=" {
			// Only the documented signature (or another base64 of it) verifies.
			if _, sig, _ := parseHeader(h); b64ToStd(sig) != "qgk2+6Sv9/oM7G3qLEjTH1a1l1g=" {
				t.Fatalf("fuzzed Authorization %q with Date %q verified", h, date)
			}
		}
	})
}

func FuzzParseV2Query(f *testing.F) {
	f.Add("AWSAccessKeyId=AKIAIOSFODNN7EXAMPLE&Expires=1175139620&Signature=NpgCjnDzrM%2BWFzoENXmpNDUsSn8%3D")
	f.Add("AWSAccessKeyId=a&Signature=b&Expires=1")
	f.Add("Signature=&Expires=-1&AWSAccessKeyId=%zz")
	f.Add("AWSAccessKeyId=AKIAIOSFODNN7EXAMPLE&Expires=99999999999999999999&Signature=x&acl&x-amz-date=1")
	f.Add("&&=&Signature")
	v := newTestVerifier(time.Unix(1175139620, 0).Add(-time.Hour))
	const good = "NpgCjnDzrM+WFzoENXmpNDUsSn8="
	f.Fuzz(func(t *testing.T, rawQuery string) {
		r := httptest.NewRequest("GET", "http://johnsmith.s3.amazonaws.com/photos/puppy.jpg", nil)
		r.URL.RawQuery = rawQuery
		r.RequestURI = "/photos/puppy.jpg?" + rawQuery
		form := Detect(r)
		auth, err := v.Verify(r, "johnsmith")
		if form == NotV2 && err == nil {
			t.Fatalf("query %q is not V2 but verified", rawQuery)
		}
		if err != nil {
			return
		}
		q, _ := url.ParseQuery(rawQuery)
		if !auth.Presigned || auth.AccessKey != testAccessKey || q.Get("Expires") != "1175139620" ||
			b64ToStd(strings.ReplaceAll(q.Get("Signature"), " ", "+")) != good || subresources(rawQuery, ruleAWS) != "" && subresources(rawQuery, ruleBotocore) != "" {
			t.Fatalf("fuzzed query %q verified as %+v", rawQuery, auth)
		}
	})
}

// b64ToStd re-encodes base64 s canonically ("" when it is not base64).
func b64ToStd(s string) string {
	b, err := decodeStd(s)
	if err != nil {
		return ""
	}
	return b64(b)
}
