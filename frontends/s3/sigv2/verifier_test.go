package sigv2

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

func TestDetect(t *testing.T) {
	for _, tc := range []struct {
		name, target, authz string
		want                Form
	}{
		{"unsigned", "http://h/b/k", "", NotV2},
		{"unsigned with query", "http://h/b?list-type=2", "", NotV2},
		{"v2 header", "http://h/b/k", "AWS AK:c2ln", HeaderForm},
		{"v4 header", "http://h/b/k", "AWS4-HMAC-SHA256 Credential=x", NotV2},
		{"v2 query", "http://h/b/k?AWSAccessKeyId=AK&Expires=1&Signature=x", "", QueryForm},
		{"v2 query, signature only", "http://h/b/k?Signature=x", "", QueryForm},
		{"v4 query", "http://h/b/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature=x", "", NotV2},
		{"mixed query is v4's", "http://h/b/k?AWSAccessKeyId=AK&X-Amz-Credential=x", "", NotV2},
		{"v2 header and query", "http://h/b/k?AWSAccessKeyId=AK&Expires=1&Signature=x", "AWS AK:c2ln", HeaderForm},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := serverRequest("GET", tc.target, nil)
			if tc.authz != "" {
				r.Header.Set("Authorization", tc.authz)
			}
			if got := Detect(r); got != tc.want {
				t.Fatalf("Detect %v, want %v", got, tc.want)
			}
		})
	}
}

func TestSignRoundTrip(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name, method, target, bucket string
		header                       map[string]string
	}{
		{name: "get", method: "GET", target: "http://h/b/k"},
		{name: "put with headers", method: "PUT", target: "http://h/b/dir/a%20b.txt",
			header: map[string]string{"Content-Type": "text/plain", "Content-Md5": "1B2M2Y8AsgTpgAmY7PhCfg==", "X-Amz-Meta-Colour": "blue", "X-Amz-Acl": "private"}},
		{name: "sub-resources", method: "PUT", target: "http://h/b/k?partNumber=3&uploadId=abc%2Bdef"},
		{name: "virtual-hosted", method: "GET", target: "http://b.h/k%2Fslash?versionId=null", bucket: "b"},
		{name: "odd key", method: "GET", target: "http://h/b/%E2%82%AC/%2B%21%27%28%29%2A?response-content-type=text%2Fplain"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := http.NewRequest(tc.method, tc.target, nil)
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range tc.header {
				c.Header.Set(k, v)
			}
			if err := Sign(c, testAccessKey, testSecretKey, tc.bucket, now); err != nil {
				t.Fatal(err)
			}
			auth, err := newTestVerifier(now).Verify(asReceived(t, c), tc.bucket)
			wantErr(t, err, nil)
			if auth.AccessKey != testAccessKey || auth.Presigned {
				t.Fatalf("auth %+v", auth)
			}
			// Changing anything signed breaks the signature.
			tampered := asReceived(t, c)
			tampered.Header.Set("X-Amz-Meta-Extra", "x")
			_, err = newTestVerifier(now).Verify(tampered, tc.bucket)
			wantErr(t, err, ErrSignatureMismatch)

			u, err := Presign(c, testAccessKey, testSecretKey, tc.bucket, now.Add(time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			p := serverRequest(tc.method, u, nil)
			for k, v := range tc.header {
				p.Header.Set(k, v)
			}
			auth, err = newTestVerifier(now).Verify(p, tc.bucket)
			wantErr(t, err, nil)
			if auth.AccessKey != testAccessKey || !auth.Presigned {
				t.Fatalf("presigned auth %+v", auth)
			}
			_, err = newTestVerifier(now.Add(time.Hour+time.Second)).Verify(p, tc.bucket)
			wantErr(t, err, ErrExpired)
		})
	}
}

func TestVerifyErrors(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	signed := func(mod func(r *http.Request)) *http.Request {
		c, _ := http.NewRequest("GET", "http://h/b/k?acl", nil)
		if err := Sign(c, testAccessKey, testSecretKey, "", now); err != nil {
			t.Fatal(err)
		}
		r := asReceived(t, c)
		if mod != nil {
			mod(r)
		}
		return r
	}
	presigned := func(expires time.Time, mod func(q url.Values)) *http.Request {
		c, _ := http.NewRequest("GET", "http://h/b/k", nil)
		u, err := Presign(c, testAccessKey, testSecretKey, "", expires)
		if err != nil {
			t.Fatal(err)
		}
		if mod != nil {
			pu, _ := url.Parse(u)
			q := pu.Query()
			mod(q)
			pu.RawQuery = q.Encode()
			u = pu.String()
		}
		return serverRequest("GET", u, nil)
	}
	setAuth := func(v string) func(r *http.Request) {
		return func(r *http.Request) { r.Header.Set("Authorization", v) }
	}
	for _, tc := range []struct {
		name string
		r    *http.Request
		want error
	}{
		{"ok", signed(nil), nil},
		{"x-amz-date instead of Date", signed(func(r *http.Request) {
			// x-amz-date signed among the amz headers, Date line empty.
			r.Header.Del("Date")
			r.Header.Set("X-Amz-Date", now.Format(http.TimeFormat))
			sts := "GET\n\n\n\nx-amz-date:" + now.Format(http.TimeFormat) + "\n/b/k?acl"
			r.Header.Set("Authorization", "AWS "+testAccessKey+":"+b64(sign(testSecretKey, sts)))
		}), nil},
		{"no colon", signed(setAuth("AWS " + testAccessKey)), ErrMalformedAuth},
		{"empty key", signed(setAuth("AWS :c2ln")), ErrMalformedAuth},
		{"empty signature", signed(setAuth("AWS " + testAccessKey + ":")), ErrMalformedAuth},
		{"space in key", signed(setAuth("AWS a b:c2ln")), ErrMalformedAuth},
		{"header and query", signed(func(r *http.Request) { r.URL.RawQuery += "&AWSAccessKeyId=x&Signature=y&Expires=1" }), ErrMalformedAuth},
		{"no date", signed(func(r *http.Request) { r.Header.Del("Date") }), ErrMissingDate},
		{"bad date", signed(func(r *http.Request) { r.Header.Set("Date", "yesterday") }), ErrMissingDate},
		{"bad x-amz-date wins", signed(func(r *http.Request) { r.Header.Set("X-Amz-Date", "soon") }), ErrMissingDate},
		{"unknown key", signed(setAuth("AWS AKIDUNKNOWN:c2ln")), ErrUnknownAccessKey},
		{"not base64", signed(setAuth("AWS " + testAccessKey + ":%%%")), ErrSignatureMismatch},
		{"short signature", signed(setAuth("AWS " + testAccessKey + ":c2ln")), ErrSignatureMismatch},
		{"tampered sub-resource", signed(func(r *http.Request) { r.URL.RawQuery = "policy" }), ErrSignatureMismatch},
		{"tampered method", signed(func(r *http.Request) { r.Method = "DELETE" }), ErrSignatureMismatch},
		{"skewed", signed(func(r *http.Request) { r.Header.Set("Date", now.Add(-16*time.Minute).Format(http.TimeFormat)) }), ErrTimeSkewed},
		{"skewed future", signed(func(r *http.Request) { r.Header.Set("Date", now.Add(16*time.Minute).Format(http.TimeFormat)) }), ErrTimeSkewed},
		{"presigned ok", presigned(now.Add(time.Minute), nil), nil},
		{"presigned expired", presigned(now.Add(-time.Second), nil), ErrExpired},
		{"presigned no expires", presigned(now.Add(time.Minute), func(q url.Values) { q.Del("Expires") }), ErrMalformedQuery},
		{"presigned no key", presigned(now.Add(time.Minute), func(q url.Values) { q.Del("AWSAccessKeyId") }), ErrMalformedQuery},
		{"presigned no signature", presigned(now.Add(time.Minute), func(q url.Values) { q.Del("Signature") }), ErrMalformedQuery},
		{"presigned two signatures", presigned(now.Add(time.Minute), func(q url.Values) { q.Add("Signature", "x") }), ErrMalformedQuery},
		{"presigned bad expires", presigned(now.Add(time.Minute), func(q url.Values) { q.Set("Expires", "tomorrow") }), ErrMalformedQuery},
		{"presigned negative expires", presigned(now.Add(time.Minute), func(q url.Values) { q.Set("Expires", "-1") }), ErrMalformedQuery},
		{"presigned extended", presigned(now.Add(time.Minute), func(q url.Values) { q.Set("Expires", "99999999999") }), ErrSignatureMismatch},
		{"presigned unknown key", presigned(now.Add(time.Minute), func(q url.Values) { q.Set("AWSAccessKeyId", "nobody") }), ErrUnknownAccessKey},
		{"presigned tampered", presigned(now.Add(time.Minute), func(q url.Values) { q.Set("versionId", "1") }), ErrSignatureMismatch},
		{"presigned signed header missing", func() *http.Request {
			c, _ := http.NewRequest("GET", "http://h/b/k", nil)
			c.Header.Set("X-Amz-Meta-A", "1")
			u, _ := Presign(c, testAccessKey, testSecretKey, "", now.Add(time.Minute))
			return serverRequest("GET", u, nil)
		}(), ErrSignatureMismatch},
		{"presigned amz value in the query", func() *http.Request {
			// botocore moves signed x-amz-* and content-type headers into the query.
			exp := now.Add(time.Minute).Unix()
			sts := "GET\n\ntext/plain\n" + itoa(exp) + "\nx-amz-security-token:tok\n/b/k"
			q := url.Values{"AWSAccessKeyId": {testAccessKey}, "Expires": {itoa(exp)}, "Signature": {b64(sign(testSecretKey, sts))},
				"x-amz-security-token": {"tok"}, "content-type": {"text/plain"}}
			return serverRequest("GET", "http://h/b/k?"+q.Encode(), nil)
		}(), nil},
		{"presigned unescaped plus", func() *http.Request {
			exp := now.Add(time.Minute).Unix()
			for i := 0; ; i++ {
				key := "k" + itoa(int64(i))
				sig := b64(sign(testSecretKey, "GET\n\n\n"+itoa(exp)+"\n/b/"+key))
				if strings.Contains(sig, "+") {
					return serverRequest("GET", "http://h/b/"+key+"?AWSAccessKeyId="+testAccessKey+"&Expires="+itoa(exp)+"&Signature="+sig, nil)
				}
			}
		}(), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := newTestVerifier(now).Verify(tc.r, "")
			wantErr(t, err, tc.want)
		})
	}
}

func TestVerifyNotV2(t *testing.T) {
	_, err := newTestVerifier(time.Now()).Verify(serverRequest("GET", "http://h/b/k", nil), "")
	wantErr(t, err, ErrMalformedAuth)
}
