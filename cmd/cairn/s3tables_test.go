package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

func TestS3TablesRequestMatch(t *testing.T) {
	const (
		s3tables = "AWS4-HMAC-SHA256 Credential=AKID/20260101/us-east-1/s3tables/aws4_request, SignedHeaders=host, Signature=00"
		s3       = "AWS4-HMAC-SHA256 Credential=AKID/20260101/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=00"
	)
	for _, tc := range []struct {
		name, target, auth string
		want               bool
	}{
		{"s3tables header", "/buckets", s3tables, true},
		{"s3tables ARN path", "/tables/arn%3Aaws%3As3tables%3Aus-east-1%3A000000000000%3Abucket%2Flake", s3tables, true},
		{"s3tables presigned", "/get-table?X-Amz-Credential=AKID%2F20260101%2Fus-east-1%2Fs3tables%2Faws4_request&X-Amz-Signature=00", "", true},
		{"access key with slashes", "/buckets", "AWS4-HMAC-SHA256 Credential=a/b/20260101/r/s3tables/aws4_request,SignedHeaders=host,Signature=0", true},
		{"s3 header", "/buckets", s3, false},
		{"s3 presigned", "/buckets/k?X-Amz-Credential=AKID%2F20260101%2Fus-east-1%2Fs3%2Faws4_request", "", false},
		{"unsigned", "/buckets", "", false},
		{"SigV2", "/buckets", "AWS AKID:c2ln", false},
		{"bearer", "/buckets", "Bearer tok", false},
		{"no terminator", "/buckets", "AWS4-HMAC-SHA256 Credential=AKID/20260101/us-east-1/s3tables/x, Signature=0", false},
		{"iceberg path", "/iceberg/v1/config", s3tables, false},
		{"iceberg alias path", "/_iceberg/v1/config", s3tables, false},
		{"admin path", "/_cairn/admin/v1/table-buckets", s3tables, false},
	} {
		r := httptest.NewRequest("GET", "http://cairn.test"+tc.target, nil)
		if tc.auth != "" {
			r.Header.Set("Authorization", tc.auth)
		}
		if got := s3tablesRequest(r, nil); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// FuzzSigningService: the service of any Authorization header is the
// fourth part of a credential scope ending in aws4_request, or "".
func FuzzSigningService(f *testing.F) {
	for _, s := range []string{"AWS4-HMAC-SHA256 Credential=AKID/20260101/us-east-1/s3tables/aws4_request, SignedHeaders=host",
		"Credential=////aws4_request", "Credential=", "AWS AKID:sig", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		r := httptest.NewRequest("GET", "http://cairn.test/", nil)
		r.Header["Authorization"] = []string{h}
		svc := signingService(r)
		if svc == "" {
			return
		}
		if !strings.Contains(h, "/"+svc+"/aws4_request") || strings.Contains(svc, "/") {
			t.Fatalf("%q: service %q", h, svc)
		}
	})
}

// TestS3TablesWiring: requests signed for s3tables reach the S3 Tables
// API (a table bucket created there is the Iceberg face's warehouse); the
// same path signed for s3 is the S3 bucket of that name.
func TestS3TablesWiring(t *testing.T) {
	srv := startServer(t)
	s3tables := func(r *http.Request, body string) { sdkSign(t, r, []byte(body), "s3tables", "rootsecret") }
	s3 := func(r *http.Request, body string) { signAs(t, r, []byte(body), "s3", "rootsecret", false) }
	for _, tc := range []struct {
		name, method, path, body string
		sign                     func(*http.Request, string)
		status                   int
		want                     string // in the body
	}{
		{"create table bucket", "PUT", "/buckets", `{"name":"lake"}`, s3tables, 200, `"arn":"arn:aws:s3tables:us-east-1:000000000000:bucket/lake"`},
		{"create namespace", "PUT", "/namespaces/" + url.QueryEscape("arn:aws:s3tables:us-east-1:000000000000:bucket/lake"), `{"namespace":["ns"]}`, s3tables, 200, `"namespace":["ns"]`},
		{"list table buckets", "GET", "/buckets", "", s3tables, 200, `"name":"lake"`},
		{"the warehouse on the Iceberg face", "GET", "/iceberg/v1/lake/namespaces", "", s3tables, 200, `"namespaces":[["ns"]]`},
		{"S3 bucket named buckets", "GET", "/buckets", "", s3, 404, "NoSuchBucket"},
		{"missing table", "GET", "/get-table?tableBucketARN=" + url.QueryEscape("arn:aws:s3tables:us-east-1:000000000000:bucket/lake") + "&namespace=ns&name=t", "", s3tables, 404, `"message":"no such table`},
		// The catalog checks a policy with the evaluator's parser too.
		{"policy the evaluator cannot read", "PUT", "/buckets/" + url.QueryEscape("arn:aws:s3tables:us-east-1:000000000000:bucket/lake") + "/policy",
			`{"resourcePolicy":"{\"Statement\":[{\"Effect\":\"Deny\",\"Principal\":\"*\",\"Action\":\"s3tables:*\",\"Resource\":\"*\",\"Condition\":{\"StringSortOf\":{\"a\":\"b\"}}}]}"}`,
			s3tables, 400, "StringSortOf"},
		{"policy", "PUT", "/buckets/" + url.QueryEscape("arn:aws:s3tables:us-east-1:000000000000:bucket/lake") + "/policy",
			`{"resourcePolicy":"{\"Statement\":[{\"Effect\":\"Allow\",\"Principal\":\"*\",\"Action\":\"s3tables:GetTable\",\"Resource\":\"*\"}]}"}`,
			s3tables, 200, ""},
		{"get policy", "GET", "/buckets/" + url.QueryEscape("arn:aws:s3tables:us-east-1:000000000000:bucket/lake") + "/policy", "", s3tables, 200, `s3tables:GetTable`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, out := call(t, tc.method, srv.URL+tc.path, []byte(tc.body), func(r *http.Request) { tc.sign(r, tc.body) })
			if status != tc.status || !strings.Contains(string(out), tc.want) {
				t.Fatalf("%d %s, want %d with %s", status, out, tc.status, tc.want)
			}
			if status >= 400 && strings.HasPrefix(string(out), "{") {
				var e struct{ Message string }
				if err := json.Unmarshal(out, &e); err != nil || e.Message == "" {
					t.Fatalf("error without a message: %s", out)
				}
			}
		})
	}
}
