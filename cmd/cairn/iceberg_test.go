package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsv4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/rs/zerolog"

	"github.com/cairnstore/cairn/frontends/s3/sigv4"
	"github.com/cairnstore/cairn/objstore"
	"github.com/cairnstore/cairn/objstore/storetest"
)

// startServer serves a fresh store through newRouter.
func startServer(t *testing.T) *httptest.Server {
	t.Helper()
	t.Setenv("CAIRN_ROOT_USER", "rootkey")
	t.Setenv("CAIRN_ROOT_PASSWORD", "rootsecret")
	t.Setenv("CAIRN_TABLE_CATALOG_BACKING", "")
	ctx := context.Background()
	st := storetest.Open(t, objstore.Options{Dir: t.TempDir(), DriveCount: 1, BlockSize: 64 << 10, NoBackground: true})
	t.Cleanup(func() { _ = st.Close() })
	parts, err := openCatalog(ctx, st, "http://127.0.0.1:9000", zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	h, err := newRouter(ctx, st, parts, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// sdkSign signs like the AWS SDK's plain v4 signer (the iceberg-go REST
// client's SigV4): no x-amz-content-sha256 header, the payload hash over
// the body.
func sdkSign(t *testing.T, r *http.Request, body []byte, service, secret string) {
	t.Helper()
	signAs(t, r, body, service, secret, service != "s3")
}

// signAs is sdkSign choosing whether the path is encoded a second time in
// the canonical request: generic SigV4 signers do it whatever the service
// (botocore's SigV4Auth, which PyIceberg's rest.sigv4-enabled uses with
// rest.signing-name s3); S3 signers do not.
func signAs(t *testing.T, r *http.Request, body []byte, service, secret string, escapePath bool) {
	t.Helper()
	s := awsv4.NewSigner(func(o *awsv4.SignerOptions) { o.DisableURIPathEscaping = !escapePath })
	creds := aws.Credentials{AccessKeyID: "rootkey", SecretAccessKey: secret}
	if err := s.SignHTTP(context.Background(), creds, r, sha256Hex(body), service, "us-east-1", time.Now()); err != nil {
		t.Fatal(err)
	}
}

// javaSign signs like Apache Iceberg's REST SigV4 signer (the AWS SDK for
// Java v2's Aws4Signer with checksum parameters, as Trino and Spark use
// it): x-amz-content-sha256 holds the body's SHA-256 in base64 and is
// signed as sent, the canonical request ends in the hex digest.
func javaSign(t *testing.T, r *http.Request, body []byte, secret string) {
	t.Helper()
	sum := sha256.Sum256(body)
	r.Header.Set("X-Amz-Content-Sha256", base64.StdEncoding.EncodeToString(sum[:]))
	creds := aws.Credentials{AccessKeyID: "rootkey", SecretAccessKey: secret}
	if err := awsv4.NewSigner().SignHTTP(context.Background(), creds, r, sha256Hex(body), "s3", "us-east-1", time.Now()); err != nil {
		t.Fatal(err)
	}
}

func call(t *testing.T, method, u string, body []byte, sign func(*http.Request)) (int, []byte) {
	t.Helper()
	r, err := http.NewRequest(method, u, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if sign != nil {
		sign(r)
	}
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}

func TestIcebergFaceWiring(t *testing.T) {
	srv := startServer(t)
	ctx := context.Background()

	// The CLI creates and lists table buckets through the admin API.
	var out bytes.Buffer
	d := deps{stdout: &out, stderr: io.Discard, log: zerolog.Nop()}
	if err := runTableBucket(ctx, tableBucketOptions{Action: "create", Name: "whouse", Endpoint: srv.URL}, d); err != nil {
		t.Fatalf("create: %v", err)
	}
	if err := runTableBucket(ctx, tableBucketOptions{Action: "list", Endpoint: srv.URL}, d); err != nil || !strings.Contains(out.String(), "\nwhouse ") {
		t.Fatalf("list: %v\n%s", err, out.String())
	}
	if err := runTableBucket(ctx, tableBucketOptions{Action: "create", Name: "whouse", Endpoint: srv.URL}, d); err == nil || !strings.Contains(err.Error(), "AlreadyExistsException") {
		t.Fatalf("second create: %v", err)
	}

	ns := []byte(`{"namespace":["sales"],"properties":{"owner":"me"}}`)
	for _, tc := range []struct {
		name, method, path string
		body               []byte
		sign               func(*http.Request)
		status             int
	}{
		{"sdk signer s3", "GET", "/iceberg/v1/config?warehouse=whouse", nil,
			func(r *http.Request) { sdkSign(t, r, nil, "s3", "rootsecret") }, 200},
		{"sdk signer s3tables on alias", "GET", "/_iceberg/v1/config?warehouse=whouse", nil,
			func(r *http.Request) { sdkSign(t, r, nil, "s3tables", "rootsecret") }, 200},
		{"sdk signer body hash", "POST", "/_iceberg/v1/whouse/namespaces", ns,
			func(r *http.Request) { sdkSign(t, r, ns, "s3tables", "rootsecret") }, 200},
		{"s3 on alias", "GET", "/_iceberg/v1/whouse/namespaces/sales", nil,
			func(r *http.Request) { sdkSign(t, r, nil, "s3", "rootsecret") }, 200},
		{"namespace with separator", "HEAD", "/iceberg/v1/whouse/namespaces/sales%1Fq1", nil,
			func(r *http.Request) { sdkSign(t, r, nil, "s3tables", "rootsecret") }, 404},
		{"generic signer s3, namespace with separator", "HEAD", "/iceberg/v1/whouse/namespaces/sales%1Fq1", nil,
			func(r *http.Request) { signAs(t, r, nil, "s3", "rootsecret", true) }, 404},
		{"generic signer s3, table with a space", "GET", "/iceberg/v1/whouse/namespaces/sales/tables/a%20b", nil,
			func(r *http.Request) { signAs(t, r, nil, "s3", "rootsecret", true) }, 404},
		{"s3 signer, namespace with separator", "HEAD", "/iceberg/v1/whouse/namespaces/sales%1Fq1", nil,
			func(r *http.Request) { signAs(t, r, nil, "s3", "rootsecret", false) }, 404},
		{"generic signer s3, bad secret", "HEAD", "/iceberg/v1/whouse/namespaces/sales%1Fq1", nil,
			func(r *http.Request) { signAs(t, r, nil, "s3", "wrong", true) }, 401},
		{"iceberg java signer", "POST", "/iceberg/v1/whouse/namespaces", []byte(`{"namespace":["ops"]}`),
			func(r *http.Request) { javaSign(t, r, []byte(`{"namespace":["ops"]}`), "rootsecret") }, 200},
		{"body not matching hash", "POST", "/iceberg/v1/whouse/namespaces", ns,
			func(r *http.Request) { sdkSign(t, r, []byte("{}"), "s3", "rootsecret") }, 401},
		{"bad secret", "GET", "/iceberg/v1/whouse/namespaces", nil,
			func(r *http.Request) { sdkSign(t, r, nil, "s3", "wrong") }, 401},
		{"cairn signer", "GET", "/iceberg/v1/whouse/namespaces", nil,
			func(r *http.Request) {
				_ = sigv4.Sign(r, "rootkey", "rootsecret", "us-east-1", "s3", sha256Hex(nil), time.Now())
			}, 200},
		{"unsigned", "GET", "/iceberg/v1/whouse/namespaces", nil, nil, 401},
		{"unknown warehouse", "GET", "/iceberg/v1/nope/namespaces", nil,
			func(r *http.Request) { sdkSign(t, r, nil, "s3", "rootsecret") }, 404},
	} {
		code, body := call(t, tc.method, srv.URL+tc.path, tc.body, tc.sign)
		if code != tc.status {
			t.Errorf("%s: %d %s, want %d", tc.name, code, body, tc.status)
		}
	}

	// OAuth2 client credentials, then the bearer token.
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {"rootkey"}, "client_secret": {"rootsecret"}}
	code, body := call(t, "POST", srv.URL+"/iceberg/v1/oauth/tokens", []byte(form.Encode()), func(r *http.Request) {
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	})
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if code != 200 || json.Unmarshal(body, &tok) != nil || tok.AccessToken == "" {
		t.Fatalf("token: %d %s", code, body)
	}
	code, body = call(t, "GET", srv.URL+"/iceberg/v1/whouse/namespaces", nil, func(r *http.Request) {
		r.Header.Set("Authorization", "Bearer "+tok.AccessToken)
	})
	if code != 200 || !strings.Contains(string(body), `["sales"]`) {
		t.Fatalf("bearer list: %d %s", code, body)
	}
	form.Set("client_secret", "nope")
	if code, _ := call(t, "POST", srv.URL+"/iceberg/v1/oauth/tokens", []byte(form.Encode()), nil); code != 401 {
		t.Fatalf("bad secret token: %d", code)
	}

	// S3 still serves everything else, and the catalog's metrics are registered.
	if code, _ := call(t, "GET", srv.URL+"/", nil, func(r *http.Request) {
		_ = sigv4.Sign(r, "rootkey", "rootsecret", "us-east-1", "s3", sha256Hex(nil), time.Now())
	}); code != 200 {
		t.Fatalf("S3 ListBuckets: %d", code)
	}
	// The base64 digest is the catalog's allowance for Iceberg's signer;
	// the S3 face keeps S3's rule (a hex digest or a payload form).
	obj := []byte("object body")
	if code, body := call(t, "PUT", srv.URL+"/whouse/k", obj, func(r *http.Request) { javaSign(t, r, obj, "rootsecret") }); code != 400 || !strings.Contains(string(body), "AuthorizationHeaderMalformed") {
		t.Fatalf("S3 PUT with a base64 x-amz-content-sha256: %d %s, want 400 AuthorizationHeaderMalformed", code, body)
	}
	if code, body := call(t, "GET", srv.URL+"/metrics", nil, nil); code != 200 || !strings.Contains(string(body), "cairn_iceberg_requests_total") {
		t.Fatalf("metrics: %d", code)
	}

	if err := runTableBucket(ctx, tableBucketOptions{Action: "delete", Name: "whouse", Endpoint: srv.URL}, d); err == nil {
		t.Fatal("deleting a table bucket holding a namespace succeeded")
	}
}

func TestParseTableBucket(t *testing.T) {
	for _, tc := range []struct {
		args []string
		ok   bool
	}{
		{[]string{"create", "wh"}, true},
		{[]string{"create", "wh", "--endpoint", "http://h:1"}, true},
		{[]string{"list"}, true},
		{[]string{"delete", "wh"}, true},
		{[]string{"create"}, false},
		{[]string{"create", "--endpoint", "x"}, false},
		{[]string{"drop", "wh"}, false},
		{[]string{}, false},
		{[]string{"list", "extra"}, false},
	} {
		_, err := parseArgs(append([]string{"admin", "table-bucket"}, tc.args...))
		if (err == nil) != tc.ok {
			t.Errorf("%v: %v", tc.args, err)
		}
	}
}

func TestS3Endpoint(t *testing.T) {
	t.Setenv("CAIRN_S3_ENDPOINT", "")
	for in, want := range map[string]string{
		"127.0.0.1:9000": "http://127.0.0.1:9000", "0.0.0.0:9000": "http://127.0.0.1:9000",
		":9000": "http://127.0.0.1:9000", "host:1": "http://host:1", "[::]:9000": "http://127.0.0.1:9000",
	} {
		if got := s3Endpoint(in); got != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
	t.Setenv("CAIRN_S3_ENDPOINT", "https://s3.example/")
	if got := s3Endpoint(":1"); got != "https://s3.example" {
		t.Errorf("env: %s", got)
	}
}
