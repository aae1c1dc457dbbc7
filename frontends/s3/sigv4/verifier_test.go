package sigv4

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

// result is what the test server saw for one request.
type result struct {
	auth      Auth
	data      []byte
	verifyErr error
	readErr   error
	algo, sum string
	size      int64
}

// startServer runs v.Verify behind a real net/http server, so requests go
// through the server-side parsing (Host, Content-Length, Expect …).
func startServer(t *testing.T, v *Verifier) (string, <-chan result) {
	t.Helper()
	ch := make(chan result, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var res result
		var b *Body
		res.auth, b, res.verifyErr = v.Verify(r)
		if res.verifyErr == nil {
			res.size = b.Size()
			res.data, res.readErr = io.ReadAll(b)
			res.algo, res.sum, _ = b.Checksum()
			b.Close()
		}
		ch <- res
		if res.verifyErr != nil || res.readErr != nil {
			w.WriteHeader(http.StatusForbidden)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL, ch
}

func do(t *testing.T, r *http.Request, ch <-chan result) result {
	t.Helper()
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	select {
	case res := <-ch:
		return res
	case <-time.After(10 * time.Second):
		t.Fatal("no result from server")
	}
	return result{}
}

func sha256Of(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func TestSignRoundTrip(t *testing.T) {
	now := time.Now().UTC().Truncate(time.Second)
	base, ch := startServer(t, newTestVerifier(now, "s3", "s3tables"))
	body := []byte("hello, cairn")
	cases := []struct {
		name, method, path, query, service, payload string
		body                                        []byte
		header                                      map[string]string
	}{
		{name: "get", method: "GET", path: "/bucket/key"},
		{name: "odd key", method: "GET", path: "/bucket/a%20b/c+d/%21%24%26%27%28%29%2A%2C%3B%3D%40/%E2%82%AC~_.-", service: "s3"},
		{name: "query", method: "GET", path: "/bucket", query: "list-type=2&prefix=a%2Fb%20c&delimiter=%2F&acl&max-keys=10"},
		{name: "put hex", method: "PUT", path: "/bucket/k", body: body, payload: sha256Of(body),
			header: map[string]string{"Content-Type": "text/plain", "X-Amz-Meta-A": "  two   spaces  "}},
		{name: "put unsigned", method: "PUT", path: "/bucket/k", body: body, payload: PayloadUnsigned},
		{name: "s3tables double encoded", method: "GET", path: "/v1/namespaces/a%1Fb/tables", service: "s3tables"},
		{name: "s3tables no content sha", method: "POST", path: "/v1/namespaces", body: []byte(`{"namespace":["a"]}`), service: "s3tables", payload: "-"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			service := tc.service
			if service == "" {
				service = "s3"
			}
			u := base + tc.path
			if tc.query != "" {
				u += "?" + tc.query
			}
			var rb io.Reader
			if tc.body != nil {
				rb = bytes.NewReader(tc.body)
			}
			r := mustRequest(t, tc.method, u, rb)
			for k, v := range tc.header {
				r.Header.Set(k, v)
			}
			payload := tc.payload
			if payload == "" && tc.body == nil {
				payload = emptySHA256
			}
			wantErr(t, Sign(r, testAccessKey, testSecretKey, "eu-west-1", service, payload, now), nil)
			if payload == "-" {
				r.Header.Del("X-Amz-Content-Sha256") // as SDKs signing non-S3 services send
				wantErr(t, signWithoutContentSHA(r, service, now), nil)
			}
			res := do(t, r, ch)
			wantErr(t, res.verifyErr, nil)
			wantErr(t, res.readErr, nil)
			if res.auth.Region != "eu-west-1" || res.auth.Service != service || !bytes.Equal(res.data, tc.body) {
				t.Fatalf("auth %+v data %q", res.auth, res.data)
			}
		})
	}
}

// signWithoutContentSHA re-signs r (whose X-Amz-Content-Sha256 was removed)
// over the SHA-256 of its body, as SigV4 signers for non-S3 services do.
func signWithoutContentSHA(r *http.Request, service string, now time.Time) error {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	sc := scope{date: now.Format(scopeDateFormat), region: "eu-west-1", service: service}
	sg := signer{key: sc.signingKey(testSecretKey), amzDate: formatAmzDate(now), scope: sc}
	r.Header.Del("Authorization")
	signed := headersToSign(r)
	q, err := canonicalQuery(r.URL.RawQuery, "")
	if err != nil {
		return err
	}
	sig := sg.sign(canonicalRequest(r.Method, canonicalURIs(r.URL, service, false)[0], q, canonicalHeaders(r, signed), signed, sha256Of(body)))
	r.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential="+testAccessKey+"/"+sc.String()+
		", SignedHeaders="+strings.Join(signed, ";")+", Signature="+hex.EncodeToString(sig))
	return nil
}

func TestPresignRoundTrip(t *testing.T) {
	now := time.Now().UTC().Truncate(time.Second)
	base, ch := startServer(t, newTestVerifier(now))
	for _, path := range []string{"/bucket/key", "/bucket/a%20b/%E2%82%AC", "/bucket/k?versionId=3&response-content-type=text%2Fplain"} {
		r := mustRequest(t, "GET", base+path, nil)
		u, err := Presign(r, testAccessKey, testSecretKey, "us-east-1", "s3", time.Hour, now)
		wantErr(t, err, nil)
		res := do(t, mustRequest(t, "GET", u, nil), ch)
		wantErr(t, res.verifyErr, nil)
		if !res.auth.Presigned || res.auth.Payload != PayloadUnsigned {
			t.Fatalf("auth %+v", res.auth)
		}
	}
}

func TestVerifyFailures(t *testing.T) {
	now := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)
	signed := func(mod func(r *http.Request), secret string, at time.Time) *http.Request {
		r := mustRequest(t, "GET", "http://cairn.local:9000/bucket/key?versionId=1", nil)
		r.Header.Set("X-Amz-Meta-Color", "blue")
		if err := Sign(r, testAccessKey, secret, "us-east-1", "s3", emptySHA256, at); err != nil {
			t.Fatal(err)
		}
		if mod != nil {
			mod(r)
		}
		return r
	}
	presigned := func(at time.Time, expires time.Duration, mod func(q url.Values)) *http.Request {
		r := mustRequest(t, "GET", "http://cairn.local:9000/bucket/key", nil)
		u, err := Presign(r, testAccessKey, testSecretKey, "us-east-1", "s3", expires, at)
		if err != nil {
			t.Fatal(err)
		}
		pr := mustRequest(t, "GET", u, nil)
		if mod != nil {
			q := pr.URL.Query()
			mod(q)
			pr.URL.RawQuery = q.Encode()
		}
		return pr
	}
	setAuth := func(v string) func(r *http.Request) {
		return func(r *http.Request) { r.Header.Set("Authorization", v) }
	}
	goodAuth := signed(nil, testSecretKey, now).Header.Get("Authorization")
	cred := testAccessKey + "/20240301/us-east-1/s3/aws4_request"
	sig := strings.Repeat("ab", 32)
	cases := []struct {
		name string
		r    *http.Request
		err  error
	}{
		{"ok", signed(nil, testSecretKey, now), nil},
		{"wrong secret", signed(nil, "other-secret", now), ErrSignatureMismatch},
		{"unknown key", signed(setAuth(strings.Replace(goodAuth, testAccessKey, "AKIDUNKNOWN", 1)), testSecretKey, now), ErrUnknownAccessKey},
		{"tampered header", signed(func(r *http.Request) { r.Header.Set("X-Amz-Meta-Color", "red") }, testSecretKey, now), ErrSignatureMismatch},
		{"tampered query", signed(func(r *http.Request) { r.URL.RawQuery = "versionId=2" }, testSecretKey, now), ErrSignatureMismatch},
		{"added query", signed(func(r *http.Request) { r.URL.RawQuery += "&acl" }, testSecretKey, now), ErrSignatureMismatch},
		{"tampered path", signed(func(r *http.Request) { r.URL.Path = "/bucket/other" }, testSecretKey, now), ErrSignatureMismatch},
		{"tampered host", signed(func(r *http.Request) { r.Host = "evil.local:9000" }, testSecretKey, now), ErrSignatureMismatch},
		{"tampered method", signed(func(r *http.Request) { r.Method = "DELETE" }, testSecretKey, now), ErrSignatureMismatch},
		{"tampered payload hash", signed(func(r *http.Request) { r.Header.Set("X-Amz-Content-Sha256", PayloadUnsigned) }, testSecretKey, now), ErrSignatureMismatch},
		{"skew past", signed(nil, testSecretKey, now.Add(-16*time.Minute)), ErrTimeSkewed},
		{"skew future", signed(nil, testSecretKey, now.Add(16*time.Minute)), ErrTimeSkewed},
		{"skew within", signed(nil, testSecretKey, now.Add(-14*time.Minute)), nil},
		{"no date", signed(func(r *http.Request) { r.Header.Del("X-Amz-Date") }, testSecretKey, now), ErrMalformedAuth},
		{"bad date", signed(func(r *http.Request) { r.Header.Set("X-Amz-Date", "2024-03-01") }, testSecretKey, now), ErrMalformedAuth},
		{"scope date mismatch", signed(func(r *http.Request) { r.Header.Set("X-Amz-Date", "20240302T000000Z") }, testSecretKey, now), ErrMalformedAuth},
		{"bad content sha", signed(func(r *http.Request) { r.Header.Set("X-Amz-Content-Sha256", "nope") }, testSecretKey, now), ErrMalformedAuth},
		{"ecdsa payload", signed(func(r *http.Request) {
			r.Header.Set("X-Amz-Content-Sha256", "STREAMING-AWS4-ECDSA-P256-SHA256-PAYLOAD")
		}, testSecretKey, now), ErrUnsupportedAlgorithm},
		{"no auth", mustRequest(t, "GET", "http://cairn.local/bucket/key", nil), ErrMissingAuth},
		{"sigv2 header", signed(setAuth("AWS "+testAccessKey+":frJIUN8DYpKDtOLCwo//yllqDzg="), testSecretKey, now), ErrUnsupportedAlgorithm},
		{"sigv2 query", mustRequest(t, "GET", "http://cairn.local/b/k?AWSAccessKeyId=AK&Expires=1&Signature=x", nil), ErrUnsupportedAlgorithm},
		{"sigv4a", signed(setAuth("AWS4-ECDSA-P256-SHA256 Credential="+cred+", SignedHeaders=host, Signature="+sig), testSecretKey, now), ErrUnsupportedAlgorithm},
		{"bearer", signed(setAuth("Bearer abc"), testSecretKey, now), ErrUnsupportedAlgorithm},
		{"empty fields", signed(setAuth("AWS4-HMAC-SHA256 "), testSecretKey, now), ErrMalformedAuth},
		{"no signature", signed(setAuth("AWS4-HMAC-SHA256 Credential="+cred+", SignedHeaders=host"), testSecretKey, now), ErrMalformedAuth},
		{"short signature", signed(setAuth("AWS4-HMAC-SHA256 Credential="+cred+", SignedHeaders=host, Signature=abcd"), testSecretKey, now), ErrMalformedAuth},
		{"non-hex signature", signed(setAuth("AWS4-HMAC-SHA256 Credential="+cred+", SignedHeaders=host, Signature="+strings.Repeat("zz", 32)), testSecretKey, now), ErrMalformedAuth},
		{"short credential", signed(setAuth("AWS4-HMAC-SHA256 Credential=AK/20240301/us-east-1/s3, SignedHeaders=host, Signature="+sig), testSecretKey, now), ErrMalformedAuth},
		{"bad terminator", signed(setAuth("AWS4-HMAC-SHA256 Credential=AK/20240301/us-east-1/s3/aws5_request, SignedHeaders=host, Signature="+sig), testSecretKey, now), ErrMalformedAuth},
		{"bad scope date", signed(setAuth("AWS4-HMAC-SHA256 Credential=AK/2024-3-1/us-east-1/s3/aws4_request, SignedHeaders=host, Signature="+sig), testSecretKey, now), ErrMalformedAuth},
		{"host not signed", signed(setAuth("AWS4-HMAC-SHA256 Credential="+cred+", SignedHeaders=x-amz-date, Signature="+sig), testSecretKey, now), ErrMalformedAuth},
		{"uppercase signed header", signed(setAuth("AWS4-HMAC-SHA256 Credential="+cred+", SignedHeaders=Host, Signature="+sig), testSecretKey, now), ErrMalformedAuth},
		{"repeated field", signed(setAuth("AWS4-HMAC-SHA256 Credential="+cred+", Credential="+cred+", SignedHeaders=host, Signature="+sig), testSecretKey, now), ErrMalformedAuth},
		{"unknown field", signed(setAuth("AWS4-HMAC-SHA256 Credential="+cred+", SignedHeaders=host, Signature="+sig+", Foo=bar"), testSecretKey, now), ErrMalformedAuth},
		{"wrong service", signed(setAuth(strings.Replace(goodAuth, "/s3/", "/iam/", 1)), testSecretKey, now), ErrMalformedAuth},
		{"two auth headers", signed(func(r *http.Request) { r.Header.Add("Authorization", goodAuth) }, testSecretKey, now), ErrMalformedAuth},
		{"header and presigned", signed(func(r *http.Request) { r.URL.RawQuery = "X-Amz-Algorithm=AWS4-HMAC-SHA256" }, testSecretKey, now), ErrMalformedAuth},

		{"presigned ok", presigned(now.Add(-time.Hour), 2*time.Hour, nil), nil},
		{"presigned expired", presigned(now.Add(-2*time.Hour), time.Hour, nil), ErrExpired},
		{"presigned future", presigned(now.Add(time.Hour), time.Hour, nil), ErrTimeSkewed},
		{"presigned expires > 7d", presigned(now, time.Hour, func(q url.Values) { q.Set("X-Amz-Expires", "604801") }), ErrExpiresRange},
		{"presigned expires 7d", presigned(now, 7*24*time.Hour, nil), nil},
		{"presigned expires zero", presigned(now, time.Hour, func(q url.Values) { q.Set("X-Amz-Expires", "0") }), ErrExpiresRange},
		{"presigned tampered expires", presigned(now, time.Hour, func(q url.Values) { q.Set("X-Amz-Expires", "7200") }), ErrSignatureMismatch},
		{"presigned tampered query", presigned(now, time.Hour, func(q url.Values) { q.Set("versionId", "x") }), ErrSignatureMismatch},
		{"presigned no signature", presigned(now, time.Hour, func(q url.Values) { q.Del("X-Amz-Signature") }), ErrMalformedAuth},
		{"presigned no date", presigned(now, time.Hour, func(q url.Values) { q.Del("X-Amz-Date") }), ErrMalformedAuth},
		{"presigned sigv4a", presigned(now, time.Hour, func(q url.Values) { q.Set("X-Amz-Algorithm", "AWS4-ECDSA-P256-SHA256") }), ErrUnsupportedAlgorithm},
		{"presigned unknown key", presigned(now, time.Hour, func(q url.Values) {
			q.Set("X-Amz-Credential", strings.Replace(q.Get("X-Amz-Credential"), testAccessKey, "NOPE", 1))
		}), ErrUnknownAccessKey},
		{"presigned streaming", presigned(now, time.Hour, func(q url.Values) { q.Set("X-Amz-Content-Sha256", PayloadStreamingSigned) }), ErrMalformedAuth},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := newTestVerifier(now).Verify(tc.r)
			wantErr(t, err, tc.err)
		})
	}
}

func TestHexPayloadMismatch(t *testing.T) {
	now := time.Now().UTC().Truncate(time.Second)
	base, ch := startServer(t, newTestVerifier(now))
	body := []byte("the real body")
	cases := []struct {
		name    string
		payload string
		send    []byte
		err     error
	}{
		{"match", sha256Of(body), body, nil},
		{"mismatch", sha256Of([]byte("another body")), body, ErrContentSHA256Mismatch},
		{"empty body, non-empty hash", sha256Of(body), []byte{}, ErrContentSHA256Mismatch},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := mustRequest(t, "PUT", base+"/b/k", bytes.NewReader(tc.send))
			wantErr(t, Sign(r, testAccessKey, testSecretKey, "us-east-1", "s3", tc.payload, now), nil)
			res := do(t, r, ch)
			wantErr(t, res.verifyErr, nil)
			wantErr(t, res.readErr, tc.err)
			if res.size != int64(len(tc.send)) {
				t.Fatalf("size %d", res.size)
			}
		})
	}
}

// TestEitherPathEncoding: for the service s3, a signature over the path
// encoded twice (what generic SigV4 signers such as botocore's SigV4Auth
// compute whatever the signing name) verifies only when the Verifier sets
// EitherPathEncoding; the once-encoded form verifies either way.
func TestEitherPathEncoding(t *testing.T) {
	now := time.Now().UTC().Truncate(time.Second)
	cases := []struct {
		name   string
		path   string
		twice  bool // sign over the path as sent, encoded a second time
		either bool // Verifier.EitherPathEncoding
		err    error
	}{
		{name: "separator, twice, either", path: "/iceberg/v1/w/namespaces/a%1Fb", twice: true, either: true},
		{name: "separator, twice, strict", path: "/iceberg/v1/w/namespaces/a%1Fb", twice: true, err: ErrSignatureMismatch},
		{name: "separator, once, either", path: "/iceberg/v1/w/namespaces/a%1Fb", either: true},
		{name: "separator, once, strict", path: "/iceberg/v1/w/namespaces/a%1Fb"},
		{name: "space, twice, either", path: "/iceberg/v1/w/namespaces/n/tables/a%20b", twice: true, either: true},
		{name: "space, twice, strict", path: "/iceberg/v1/w/namespaces/n/tables/a%20b", twice: true, err: ErrSignatureMismatch},
		{name: "plain path, twice, strict", path: "/iceberg/v1/config", twice: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := newTestVerifier(now, "s3")
			v.EitherPathEncoding = tc.either
			base, ch := startServer(t, v)
			r := mustRequest(t, "GET", base+tc.path, nil)
			uriService := "s3"
			if tc.twice {
				uriService = "s3tables" // whose canonical URI is the path encoded twice
			}
			signWithURIOf(t, r, uriService, now)
			wantErr(t, do(t, r, ch).verifyErr, tc.err)
		})
	}
}

// signWithURIOf signs r for the service s3 with the canonical URI the
// service uriService would use.
func signWithURIOf(t *testing.T, r *http.Request, uriService string, now time.Time) {
	t.Helper()
	sc := scope{date: now.Format(scopeDateFormat), region: "us-east-1", service: "s3"}
	sg := signer{key: sc.signingKey(testSecretKey), amzDate: formatAmzDate(now), scope: sc}
	r.Header.Set("X-Amz-Date", formatAmzDate(now))
	r.Header.Set("X-Amz-Content-Sha256", emptySHA256)
	signed := headersToSign(r)
	q, err := canonicalQuery(r.URL.RawQuery, "")
	if err != nil {
		t.Fatal(err)
	}
	sig := sg.sign(canonicalRequest(r.Method, canonicalURIs(r.URL, uriService, false)[0], q, canonicalHeaders(r, signed), signed, emptySHA256))
	r.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential="+testAccessKey+"/"+sc.String()+
		", SignedHeaders="+strings.Join(signed, ";")+", Signature="+hex.EncodeToString(sig))
}
