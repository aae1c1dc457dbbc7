package s3

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/cairnstore/cairn/frontends/s3/cors"
	"github.com/cairnstore/cairn/frontends/s3/postform"
)

// Every sentinel of the cors and postform parsers maps to its S3 code,
// with the message the error itself words.
func TestFormErrorsCoverSentinels(t *testing.T) {
	known := map[string]map[string]error{
		"cors": {"ErrMalformed": cors.ErrMalformed, "ErrInvalid": cors.ErrInvalid},
		"postform": {
			"ErrNotMultipart": postform.ErrNotMultipart, "ErrMalformed": postform.ErrMalformed,
			"ErrFieldsTooLarge": postform.ErrFieldsTooLarge, "ErrInvalidArgument": postform.ErrInvalidArgument,
			"ErrInvalidPolicy": postform.ErrInvalidPolicy, "ErrPolicyDenied": postform.ErrPolicyDenied,
			"ErrUnknownAccessKey": postform.ErrUnknownAccessKey, "ErrSignatureMismatch": postform.ErrSignatureMismatch,
		},
	}
	for dir, sentinels := range known {
		for _, name := range sentinelNames(t, dir) {
			err, ok := sentinels[name]
			if !ok {
				t.Errorf("%s: %s is new: list it in this test and map it in errors.go", dir, name)
				continue
			}
			api := toAPIError(fmt.Errorf("wrapped: %w: what S3 says", err))
			if api.Code == "InternalError" || api.Message != "what S3 says" {
				t.Errorf("%s.%s maps to %+v", dir, name, api)
			}
		}
	}
	if api := toAPIError(fmt.Errorf("%w: Invalid according to Policy: Policy expired.", postform.ErrPolicyDenied)); api.Code != "AccessDenied" ||
		api.Status != 403 || api.Message != "Invalid according to Policy: Policy expired." {
		t.Fatalf("policy denial maps to %+v", api)
	}
}

// corsHeaders must cost nothing for a request without Origin: it may not
// read the bucket (this server has no store, so reading would panic).
func TestCORSHeadersWithoutOriginReadNothing(t *testing.T) {
	s := &Server{}
	for _, method := range []string{http.MethodGet, http.MethodPut, http.MethodOptions} {
		r := httptest.NewRequest(method, "/bucket/key", nil)
		req := &request{Request: r, bucket: "bucket", key: "key"}
		s.corsHeaders(nil, req) // a nil recorder: setting a header would panic too
		if req.bucketInfo != nil {
			t.Fatalf("%s without Origin read the bucket", method)
		}
	}
	// With an Origin but no bucket, or on the preflight route, neither.
	for _, target := range []string{"/", "/bucket/key"} {
		r := httptest.NewRequest(http.MethodOptions, target, nil)
		r.Header.Set("Origin", "http://a.example")
		req := &request{Request: r}
		req.bucket, req.key = s.resolve(r)
		s.corsHeaders(nil, req)
	}
}

func BenchmarkCORSHeadersWithoutOrigin(b *testing.B) {
	s := &Server{}
	r := httptest.NewRequest(http.MethodGet, "/bucket/key", nil)
	r.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=x")
	req := &request{Request: r, bucket: "bucket", key: "key"}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		s.corsHeaders(nil, req)
	}
}

func TestSigned(t *testing.T) {
	for target, want := range map[string]bool{
		"/b/k": false, "/b/k?X-Amz-Signature=abc&X-Amz-Credential=x": true, "/b/k?Signature=x&AWSAccessKeyId=y": true, "/b/k?prefix=a": false,
	} {
		if got := signed(httptest.NewRequest(http.MethodGet, target, nil)); got != want {
			t.Errorf("signed(%s) = %v", target, got)
		}
	}
	r := httptest.NewRequest(http.MethodGet, "/b/k", nil)
	r.Header.Set("Authorization", "AWS4-HMAC-SHA256 x")
	if !signed(r) {
		t.Error("header-signed request not signed")
	}
}
