package integration

// CORS against a real `cairn serve`: Put/Get/DeleteBucketCors with the
// AWS SDK and boto3, preflight OPTIONS and the Access-Control-* headers of
// actual requests with plain net/http. The rules and the expected headers
// are those of ceph s3-tests' test_cors_origin_response and
// test_cors_header_option; the error codes are AWS's.

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

func TestS3CORS(t *testing.T) {
	s := startCLIServer(t)
	c := sdkClient(s.server, cliUser, cliSecret)
	ctx := callCtx(t)
	const bucket = "cors-rules"
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("bar"), Body: strings.NewReader("bar")}); err != nil {
		t.Fatal(err)
	}
	_, err := c.GetBucketCors(ctx, &s3.GetBucketCorsInput{Bucket: aws.String(bucket)})
	wantAPIError(t, "GetBucketCors before any", err, "NoSuchCORSConfiguration", 404)
	preflight := func(origin, method, headers string) rawResponse {
		req := newRaw(t, http.MethodOptions, objectURL(s.server, bucket, "bar"), nil)
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		if method != "" {
			req.Header.Set("Access-Control-Request-Method", method)
		}
		if headers != "" {
			req.Header.Set("Access-Control-Request-Headers", headers)
		}
		return doRaw(t, req)
	}
	if r := preflight("http://www.example1.com", "GET", ""); r.status != 403 || r.code != "AccessForbidden" {
		t.Fatalf("preflight without a configuration: %d %s, want 403 AccessForbidden", r.status, r.code)
	}

	rules := []types.CORSRule{
		{AllowedMethods: []string{"PUT", "DELETE"}, AllowedOrigins: []string{"http://www.example1.com"}, AllowedHeaders: []string{"*"}},
		{AllowedMethods: []string{"GET"}, AllowedOrigins: []string{"*"}, AllowedHeaders: []string{"x-amz-meta-header1"},
			ExposeHeaders: []string{"ETag", "x-amz-request-id"}, MaxAgeSeconds: aws.Int32(3000), ID: aws.String("any-origin-get")},
		{AllowedMethods: []string{"DELETE"}, AllowedOrigins: []string{"http://www.example2.com", "http://www.example3.com"}},
		{AllowedMethods: []string{"PUT"}, AllowedOrigins: []string{"http://www.example.com"}, AllowedHeaders: []string{"x-amz-meta-header2", "x-amz-meta-header3"}},
		{AllowedMethods: []string{"HEAD"}, AllowedOrigins: []string{"https://*.example.org"}},
	}
	if _, err := c.PutBucketCors(ctx, &s3.PutBucketCorsInput{Bucket: aws.String(bucket),
		CORSConfiguration: &types.CORSConfiguration{CORSRules: rules}}); err != nil {
		t.Fatalf("PutBucketCors: %v", err)
	}
	got, err := c.GetBucketCors(ctx, &s3.GetBucketCorsInput{Bucket: aws.String(bucket)})
	if err != nil {
		t.Fatalf("GetBucketCors: %v", err)
	}
	if len(got.CORSRules) != len(rules) || aws.ToString(got.CORSRules[1].ID) != "any-origin-get" ||
		aws.ToInt32(got.CORSRules[1].MaxAgeSeconds) != 3000 || strings.Join(got.CORSRules[2].AllowedOrigins, " ") != "http://www.example2.com http://www.example3.com" ||
		strings.Join(got.CORSRules[1].ExposeHeaders, " ") != "ETag x-amz-request-id" {
		t.Fatalf("GetBucketCors returned %+v", got.CORSRules)
	}

	t.Run("bad configurations", func(t *testing.T) {
		for _, tc := range []struct {
			name string
			rule types.CORSRule
			code string
		}{
			{"PATCH", types.CORSRule{AllowedMethods: []string{"PATCH"}, AllowedOrigins: []string{"*"}}, "InvalidRequest"},
			{"two wildcards", types.CORSRule{AllowedMethods: []string{"GET"}, AllowedOrigins: []string{"*.a.*"}}, "InvalidRequest"},
		} {
			_, err := c.PutBucketCors(ctx, &s3.PutBucketCorsInput{Bucket: aws.String(bucket),
				CORSConfiguration: &types.CORSConfiguration{CORSRules: []types.CORSRule{tc.rule}}})
			wantAPIError(t, "PutBucketCors "+tc.name, err, tc.code, 400)
		}
		many := make([]types.CORSRule, 101)
		for i := range many {
			many[i] = types.CORSRule{AllowedMethods: []string{"GET"}, AllowedOrigins: []string{"*"}}
		}
		_, err := c.PutBucketCors(ctx, &s3.PutBucketCorsInput{Bucket: aws.String(bucket),
			CORSConfiguration: &types.CORSConfiguration{CORSRules: many}})
		wantAPIError(t, "PutBucketCors with 101 rules", err, "MalformedXML", 400)
		// What the SDK would refuse to send, sent raw.
		for _, doc := range []string{
			"<CORSConfiguration><CORSRule>",
			"<CORSConfiguration><CORSRule><AllowedMethod>GET</AllowedMethod></CORSRule></CORSConfiguration>",
			"<CORSConfiguration></CORSConfiguration>",
		} {
			req := newRaw(t, http.MethodPut, s.url("/"+bucket+"?cors"), []byte(doc))
			signRaw(t, req, []byte(doc), cliUser, cliSecret, time.Now())
			if r := doRaw(t, req); r.status != 400 || r.code != "MalformedXML" {
				t.Fatalf("%s: %d %s, want 400 MalformedXML", doc, r.status, r.code)
			}
		}
		// The configuration in force is still the good one.
		if got, err := c.GetBucketCors(ctx, &s3.GetBucketCorsInput{Bucket: aws.String(bucket)}); err != nil || len(got.CORSRules) != len(rules) {
			t.Fatalf("after refused puts: %v %+v", err, got)
		}
	})

	t.Run("preflight", func(t *testing.T) {
		for _, tc := range []struct {
			origin, method, headers string
			status                  int
			code                    string
			allowOrigin, methods    string
			allowHeaders            string
		}{
			{"http://www.example1.com", "GET", "", 200, "", "*", "GET", ""},
			{"http://www.example1.com", "DELETE", "", 200, "", "http://www.example1.com", "PUT, DELETE", ""},
			{"http://www.example2.com", "DELETE", "", 200, "", "http://www.example2.com", "DELETE", ""},
			{"http://www.example2.com", "PUT", "", 403, "AccessForbidden", "", "", ""},
			{"http://not.exists", "GET", "", 200, "", "*", "GET", ""},
			{"http://not.exists", "PUT", "", 403, "AccessForbidden", "", "", ""},
			{"http://any.origin", "GET", "x-amz-meta-header1", 200, "", "*", "GET", "x-amz-meta-header1"},
			{"http://www.example.com", "PUT", "x-amz-meta-header1", 403, "AccessForbidden", "", "", ""},
			{"http://www.example.com", "PUT", "x-amz-meta-header2, x-amz-meta-header3", 200, "", "http://www.example.com", "PUT", "x-amz-meta-header2, x-amz-meta-header3"},
			{"http://www.example2.com", "DELETE", "x-amz-meta-header", 403, "AccessForbidden", "", "", ""},
			{"https://cdn.example.org", "HEAD", "", 200, "", "https://cdn.example.org", "HEAD", ""},
			{"http://cdn.example.org", "HEAD", "", 403, "AccessForbidden", "", "", ""},
			{"", "GET", "", 400, "BadRequest", "", "", ""},
			{"http://www.example1.com", "", "", 400, "BadRequest", "", "", ""},
		} {
			r := preflight(tc.origin, tc.method, tc.headers)
			name := tc.origin + " " + tc.method + " " + tc.headers
			if r.status != tc.status || r.code != tc.code {
				t.Errorf("%s: %d %s, want %d %s (%s)", name, r.status, r.code, tc.status, tc.code, r.body)
				continue
			}
			h := r.header
			if h.Get("Access-Control-Allow-Origin") != tc.allowOrigin || h.Get("Access-Control-Allow-Methods") != tc.methods ||
				h.Get("Access-Control-Allow-Headers") != tc.allowHeaders {
				t.Errorf("%s: Allow-Origin %q Allow-Methods %q Allow-Headers %q, want %q %q %q", name,
					h.Get("Access-Control-Allow-Origin"), h.Get("Access-Control-Allow-Methods"), h.Get("Access-Control-Allow-Headers"),
					tc.allowOrigin, tc.methods, tc.allowHeaders)
			}
			if tc.status == 200 {
				if cred := h.Get("Access-Control-Allow-Credentials"); (cred == "true") != (tc.allowOrigin != "*") {
					t.Errorf("%s: Allow-Credentials %q", name, cred)
				}
				if !strings.Contains(h.Get("Vary"), "Origin") {
					t.Errorf("%s: Vary %q", name, h.Get("Vary"))
				}
			}
		}
		r := preflight("http://any.origin", "GET", "")
		if r.header.Get("Access-Control-Max-Age") != "3000" || r.header.Get("Access-Control-Expose-Headers") != "ETag, x-amz-request-id" {
			t.Errorf("Max-Age %q Expose-Headers %q", r.header.Get("Access-Control-Max-Age"), r.header.Get("Access-Control-Expose-Headers"))
		}
		// The preflight of a presigned URL carries the GET's signature:
		// S3 ignores it (ceph's _test_cors_options_presigned_method).
		ps := presignRaw(t, newRaw(t, http.MethodGet, objectURL(s.server, bucket, "bar"), nil), cliUser, cliSecret, time.Now(), time.Hour)
		if r := doRaw(t, newRaw(t, http.MethodOptions, ps, nil)); r.status != 400 {
			t.Errorf("presigned preflight without Origin: %d %s", r.status, r.code)
		}
		req := newRaw(t, http.MethodOptions, ps, nil)
		req.Header.Set("Origin", "foo")
		req.Header.Set("Access-Control-Request-Method", "GET")
		if r := doRaw(t, req); r.status != 200 || r.header.Get("Access-Control-Allow-Origin") != "*" {
			t.Errorf("presigned preflight: %d %s %v", r.status, r.code, r.header)
		}
		req = newRaw(t, http.MethodOptions, s.url("/no-such-cors-bucket/k"), nil)
		req.Header.Set("Origin", "http://a.example")
		req.Header.Set("Access-Control-Request-Method", "GET")
		if r := doRaw(t, req); r.status != 404 || r.code != "NoSuchBucket" {
			t.Errorf("preflight of a missing bucket: %d %s", r.status, r.code)
		}
	})

	t.Run("actual requests", func(t *testing.T) {
		get := func(method, u, origin string, sign bool) rawResponse {
			req := newRaw(t, method, u, nil)
			if origin != "" {
				req.Header.Set("Origin", origin)
			}
			if sign {
				signRaw(t, req, nil, cliUser, cliSecret, time.Now())
			}
			return doRaw(t, req)
		}
		obj, missing := objectURL(s.server, bucket, "bar"), objectURL(s.server, bucket, "absent")
		for _, tc := range []struct {
			name, method, u, origin string
			sign                    bool
			status                  int
			allowOrigin, methods    string
		}{
			{"no origin", "GET", obj, "", true, 200, "", ""},
			{"any origin, signed", "GET", obj, "http://www.example1.com", true, 200, "http://www.example1.com", "GET"},
			{"any origin, error response", "GET", missing, "http://www.example3.com", true, 404, "http://www.example3.com", "GET"},
			{"any origin, anonymous error", "GET", obj, "http://not.exists", false, 403, "*", "GET"},
			{"named origin", "DELETE", missing, "http://www.example3.com", true, 204, "http://www.example3.com", "DELETE"},
			{"no rule for the method", "PUT", missing, "http://www.example3.com", true, 0, "", ""},
			{"no rule for the origin", "DELETE", missing, "http://not.exists", true, 204, "", ""},
		} {
			r := get(tc.method, tc.u, tc.origin, tc.sign)
			if tc.status != 0 && r.status != tc.status {
				t.Errorf("%s: status %d, want %d (%s)", tc.name, r.status, tc.status, r.body)
			}
			if ao, am := r.header.Get("Access-Control-Allow-Origin"), r.header.Get("Access-Control-Allow-Methods"); ao != tc.allowOrigin || am != tc.methods {
				t.Errorf("%s: Allow-Origin %q Allow-Methods %q, want %q %q", tc.name, ao, am, tc.allowOrigin, tc.methods)
			}
		}
		// A presigned GET, as a browser page would fetch it.
		ps := presignRaw(t, newRaw(t, http.MethodGet, obj, nil), cliUser, cliSecret, time.Now(), time.Hour)
		r := get("GET", ps, "http://www.example2.com", false)
		if r.status != 200 || string(r.body) != "bar" || r.header.Get("Access-Control-Allow-Origin") != "http://www.example2.com" ||
			r.header.Get("Access-Control-Allow-Credentials") != "true" || r.header.Get("Access-Control-Expose-Headers") != "ETag, x-amz-request-id" {
			t.Errorf("presigned GET: %d %q %v", r.status, r.body, r.header)
		}
	})

	if _, err := c.DeleteBucketCors(ctx, &s3.DeleteBucketCorsInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatalf("DeleteBucketCors: %v", err)
	}
	_, err = c.GetBucketCors(ctx, &s3.GetBucketCorsInput{Bucket: aws.String(bucket)})
	wantAPIError(t, "GetBucketCors after delete", err, "NoSuchCORSConfiguration", 404)
	if r := preflight("http://www.example1.com", "GET", ""); r.status != 403 || r.code != "AccessForbidden" {
		t.Fatalf("preflight after delete: %d %s", r.status, r.code)
	}
	alice := "cors-alice"
	browserAddUser(t, s.server, alice, "cors-alice-secret", "readonly")
	_, err = sdkClient(s.server, alice, "cors-alice-secret").PutBucketCors(ctx, &s3.PutBucketCorsInput{Bucket: aws.String(bucket),
		CORSConfiguration: &types.CORSConfiguration{CORSRules: rules}})
	wantAPIError(t, "PutBucketCors by a read-only user", err, "AccessDenied", 403)

	t.Run("boto3", func(t *testing.T) {
		py := cliPython(t)
		dir := t.TempDir()
		script := filepath.Join(dir, "cors.py")
		cliWrite(t, script, boto3CORSScript)
		r := cliRun(t, append(s.awsEnv(t), "CAIRN_ENDPOINT="+s.endpoint), dir, py, script)
		t.Logf("%s", r.stdout)
		if r.code != 0 || !strings.Contains(r.stdout, "\nPASS") {
			t.Fatalf("boto3 CORS: %s", r)
		}
	})
	browserFsck(t, s.server)
}

// browserFsck stops the server and fscks its data: the uploads refused
// half-way (a file outside its policy's range) must leave the store
// consistent.
func browserFsck(t *testing.T, s *server) {
	t.Helper()
	if s.cluster != nil {
		s.cluster.stopAll()
		s.cluster.fsck()
		return
	}
	if code := s.stop(stopTimeout); code != 0 {
		t.Fatalf("cairn serve exited %d after SIGTERM", code)
	}
	if r := runCairn(t, runTimeout, "admin", "fsck", "--data", s.data); r.code != 0 {
		t.Fatalf("fsck exited %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
}

// browserAddUser adds a user with the CLI (the root credentials come from
// the environment the server was started with).
func browserAddUser(t *testing.T, s *server, accessKey, secret, policy string) {
	t.Helper()
	args := []string{"admin", "user", "add", accessKey, "--secret", secret, "--policy", policy, "--endpoint=" + s.url("")}
	if r := runCairn(t, time.Minute, args...); r.code != 0 {
		t.Fatalf("cairn %s: exit %d\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
}

const boto3CORSScript = `
import os, sys
import boto3
from botocore.config import Config
from botocore.exceptions import ClientError

s3 = boto3.client("s3", endpoint_url=os.environ["CAIRN_ENDPOINT"],
                  config=Config(signature_version="s3v4", s3={"addressing_style": "path"}))

def check(cond, msg):
    if not cond:
        print("FAIL:", msg)
        sys.exit(1)
    print("ok:", msg)

def status(fn, **kw):
    try:
        fn(**kw)
    except ClientError as e:
        return e.response["ResponseMetadata"]["HTTPStatusCode"], e.response["Error"]["Code"]
    return 200, ""

b = "boto3-cors"
s3.create_bucket(Bucket=b)
check(status(s3.get_bucket_cors, Bucket=b) == (404, "NoSuchCORSConfiguration"), "no configuration yet")
cfg = {"CORSRules": [
    {"AllowedMethods": ["GET", "PUT"], "AllowedOrigins": ["*.get", "*.put"]},
    {"ID": "r2", "AllowedMethods": ["POST"], "AllowedOrigins": ["https://app.example"],
     "AllowedHeaders": ["*"], "ExposeHeaders": ["ETag"], "MaxAgeSeconds": 600},
]}
s3.put_bucket_cors(Bucket=b, CORSConfiguration=cfg)
got = s3.get_bucket_cors(Bucket=b)["CORSRules"]
check(got[0]["AllowedMethods"] == ["GET", "PUT"] and got[0]["AllowedOrigins"] == ["*.get", "*.put"], "first rule round-trips: %r" % got[0])
check(got[1]["ID"] == "r2" and got[1]["MaxAgeSeconds"] == 600 and got[1]["ExposeHeaders"] == ["ETag"], "second rule round-trips: %r" % got[1])
bad = {"CORSRules": [{"AllowedMethods": ["PATCH"], "AllowedOrigins": ["*"]}]}
check(status(s3.put_bucket_cors, Bucket=b, CORSConfiguration=bad) == (400, "InvalidRequest"), "PATCH is InvalidRequest")
s3.delete_bucket_cors(Bucket=b)
check(status(s3.get_bucket_cors, Bucket=b) == (404, "NoSuchCORSConfiguration"), "deleted")
print("PASS")
`
