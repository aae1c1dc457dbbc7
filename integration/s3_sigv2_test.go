package integration

import (
	"bytes"
	"crypto/hmac"
	"crypto/md5"
	"crypto/sha1"
	"encoding/base64"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/cairnstore/cairn/frontends/s3/sigv2"
)

// Signature Version 2 against cairn serve, signed by Cairn's Go signer
// (frontends/s3/sigv2.Sign and Presign): header and presigned forms,
// path-style and virtual-hosted, sub-resources, and the error codes AWS
// answers for each way a V2 request can be wrong.
func TestS3SigV2(t *testing.T) {
	srv := startS3Server(t)
	const bucket = "sigv2-raw"
	if _, err := sdkClient(srv, s3User, s3Secret).CreateBucket(callCtx(t), &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatalf("CreateBucket: %v", err)
	}
	v2 := func(method, u string, body []byte, header map[string]string, secret string, at time.Time) *http.Request {
		t.Helper()
		req := newRaw(t, method, u, body)
		for k, v := range header {
			req.Header.Set(k, v)
		}
		vhost := ""
		if b, ok := strings.CutSuffix(req.Host, ".localhost:"+serverPort(t, srv)); ok {
			vhost = b
		}
		if err := sigv2.Sign(req, s3User, secret, vhost, at); err != nil {
			t.Fatal(err)
		}
		return req
	}
	want := func(t *testing.T, what string, res rawResponse, status int, code string) {
		t.Helper()
		if res.status != status || res.code != code {
			t.Fatalf("%s: %d %q, want %d %q\n%s", what, res.status, res.code, status, code, res.body)
		}
	}
	data := []byte("signed with signature version 2")
	sum := md5.Sum(data)
	md5b64 := base64.StdEncoding.EncodeToString(sum[:])
	key := "dir/a b+c€.txt"

	t.Run("header form", func(t *testing.T) {
		now := time.Now()
		res := doRaw(t, v2("PUT", objectURL(srv, bucket, key), data,
			map[string]string{"Content-Md5": md5b64, "Content-Type": "text/plain", "X-Amz-Meta-Colour": "blue"}, s3Secret, now))
		want(t, "PUT", res, 200, "")
		res = doRaw(t, v2("GET", objectURL(srv, bucket, key), nil, nil, s3Secret, now))
		want(t, "GET", res, 200, "")
		if !bytes.Equal(res.body, data) || res.header.Get("Content-Type") != "text/plain" || res.header.Get("X-Amz-Meta-Colour") != "blue" {
			t.Fatalf("GET: %q, headers %v", res.body, res.header)
		}
		res = doRaw(t, v2("GET", objectURL(srv, bucket, key)+"?response-content-type=application%2Fx-test", nil, nil, s3Secret, now))
		want(t, "GET with response-content-type", res, 200, "")
		if res.header.Get("Content-Type") != "application/x-test" {
			t.Fatalf("response-content-type override: %q", res.header.Get("Content-Type"))
		}
		res = doRaw(t, v2("GET", srv.url("/"+bucket+"?list-type=2&prefix=dir%2F"), nil, nil, s3Secret, now))
		want(t, "ListObjectsV2", res, 200, "")
		if !strings.Contains(string(res.body), "<Key>dir/a b+c€.txt</Key>") {
			t.Fatalf("listing lacks the key: %s", res.body)
		}
		// Multipart: uploads, partNumber and uploadId are sub-resources.
		res = doRaw(t, v2("POST", objectURL(srv, bucket, "mpu")+"?uploads", nil, nil, s3Secret, now))
		want(t, "CreateMultipartUpload", res, 200, "")
		uploadID := between(string(res.body), "<UploadId>", "</UploadId>")
		res = doRaw(t, v2("PUT", objectURL(srv, bucket, "mpu")+"?partNumber=1&uploadId="+url.QueryEscape(uploadID), data, nil, s3Secret, now))
		want(t, "UploadPart", res, 200, "")
		complete := []byte("<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>" + res.header.Get("ETag") + "</ETag></Part></CompleteMultipartUpload>")
		res = doRaw(t, v2("POST", objectURL(srv, bucket, "mpu")+"?uploadId="+url.QueryEscape(uploadID), complete, nil, s3Secret, now))
		want(t, "CompleteMultipartUpload", res, 200, "")
		res = doRaw(t, v2("DELETE", objectURL(srv, bucket, "mpu"), nil, nil, s3Secret, now))
		want(t, "DELETE", res, 204, "")
		// x-amz-date instead of Date, as AWS documents it: Date line empty.
		req := newRaw(t, "GET", objectURL(srv, bucket, key), nil)
		amzDate := time.Now().UTC().Format(http.TimeFormat)
		req.Header.Set("X-Amz-Date", amzDate)
		req.Header.Set("Authorization", "AWS "+s3User+":"+hmacSHA1(s3Secret, "GET\n\n\n\nx-amz-date:"+amzDate+"\n/"+bucket+"/dir/a%20b%2Bc%E2%82%AC.txt"))
		want(t, "GET signed with x-amz-date", doRaw(t, req), 200, "")
	})

	t.Run("virtual-hosted", func(t *testing.T) {
		u := "http://" + bucket + ".localhost:" + serverPort(t, srv) + "/" + url.PathEscape("vhost.txt")
		put := v2("PUT", u, data, nil, s3Secret, time.Now())
		put.URL.Host = srv.addr // connect to the server, keep the virtual host
		want(t, "virtual-hosted PUT", doRaw(t, put), 200, "")
		get := newRaw(t, "GET", objectURL(srv, bucket, "vhost.txt"), nil)
		if err := sigv2.Sign(get, s3User, s3Secret, "", time.Now()); err != nil {
			t.Fatal(err)
		}
		if res := doRaw(t, get); res.status != 200 || !bytes.Equal(res.body, data) {
			t.Fatalf("path-style GET of the virtual-hosted PUT: %d %s", res.status, res.body)
		}
	})

	t.Run("presigned", func(t *testing.T) {
		put := newRaw(t, "PUT", objectURL(srv, bucket, "presigned.txt"), nil)
		u, err := sigv2.Presign(put, s3User, s3Secret, "", time.Now().Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		want(t, "presigned PUT", doRaw(t, newRaw(t, "PUT", u, data)), 200, "")
		get := newRaw(t, "GET", objectURL(srv, bucket, "presigned.txt"), nil)
		u, err = sigv2.Presign(get, s3User, s3Secret, "", time.Now().Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if res := doRaw(t, newRaw(t, "GET", u, nil)); res.status != 200 || !bytes.Equal(res.body, data) {
			t.Fatalf("presigned GET: %d %s", res.status, res.body)
		}
	})

	t.Run("errors", func(t *testing.T) {
		now := time.Now()
		obj := objectURL(srv, bucket, key)
		presigned := func(expires time.Time, mod func(q url.Values)) *http.Request {
			u, err := sigv2.Presign(newRaw(t, "GET", obj, nil), s3User, s3Secret, "", expires)
			if err != nil {
				t.Fatal(err)
			}
			pu, _ := url.Parse(u)
			if mod != nil {
				q := pu.Query()
				mod(q)
				pu.RawQuery = q.Encode()
			}
			return newRaw(t, "GET", pu.String(), nil)
		}
		withAuth := func(v string) *http.Request {
			req := v2("GET", obj, nil, nil, s3Secret, now)
			req.Header.Set("Authorization", v)
			return req
		}
		for _, tc := range []struct {
			name    string
			req     *http.Request
			status  int
			code    string
			message string
		}{
			{"wrong secret", v2("GET", obj, nil, nil, "not-the-secret", now), 403, "SignatureDoesNotMatch", ""},
			{"wrong secret on put", v2("PUT", obj, data, nil, "not-the-secret", now), 403, "SignatureDoesNotMatch", ""},
			{"unknown access key", withAuth("AWS AKIDUNKNOWN:" + hmacSHA1(s3Secret, "x")), 403, "InvalidAccessKeyId", ""},
			{"malformed header", withAuth("AWS " + s3User), 400, "InvalidArgument", ""},
			{"clock skew", v2("GET", obj, nil, nil, s3Secret, now.Add(-20*time.Minute)), 403, "RequestTimeTooSkewed", ""},
			{"no date", func() *http.Request {
				req := v2("GET", obj, nil, nil, s3Secret, now)
				req.Header.Del("Date")
				return req
			}(), 403, "AccessDenied", "Date"},
			{"bad Content-MD5", v2("PUT", obj, data, map[string]string{"Content-Md5": base64.StdEncoding.EncodeToString(make([]byte, 16))}, s3Secret, now), 400, "BadDigest", ""},
			{"presigned expired", presigned(now.Add(-time.Minute), nil), 403, "AccessDenied", "Request has expired"},
			{"presigned without Expires", presigned(now.Add(time.Hour), func(q url.Values) { q.Del("Expires") }), 403, "AccessDenied", ""},
			{"presigned tampered", presigned(now.Add(time.Hour), func(q url.Values) { q.Set("versionId", "null") }), 403, "SignatureDoesNotMatch", ""},
			{"anonymous GET", newRaw(t, "GET", obj, nil), 403, "AccessDenied", ""},
			{"anonymous PUT", newRaw(t, "PUT", obj, data), 403, "AccessDenied", ""},
			{"anonymous list", newRaw(t, "GET", srv.url("/"+bucket), nil), 403, "AccessDenied", ""},
			{"anonymous list buckets", newRaw(t, "GET", srv.url("/"), nil), 403, "AccessDenied", ""},
			{"anonymous admin API", newRaw(t, "GET", srv.url("/_cairn/admin/v1/users"), nil), 403, "AccessDenied", ""},
			{"anonymous API not served", newRaw(t, "GET", srv.url("/"+bucket+"?cors"), nil), 403, "AccessDenied", ""},
			{"sigv2 admin API as root", v2("GET", srv.url("/_cairn/admin/v1/users"), nil, nil, s3Secret, now), 200, "", ""},
		} {
			t.Run(tc.name, func(t *testing.T) {
				res := doRaw(t, tc.req)
				want(t, tc.name, res, tc.status, tc.code)
				if !strings.Contains(string(res.body), tc.message) {
					t.Fatalf("%s: message lacks %q: %s", tc.name, tc.message, res.body)
				}
			})
		}
		// Nothing above changed the object.
		res := doRaw(t, v2("GET", obj, nil, nil, s3Secret, time.Now()))
		if res.status != 200 || !bytes.Equal(res.body, data) {
			t.Fatalf("object after the refused requests: %d %q", res.status, res.body)
		}
	})
}

// serverPort is the port the server listens on.
func serverPort(t *testing.T, s *server) string {
	t.Helper()
	_, port, err := net.SplitHostPort(s.addr)
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// hmacSHA1 is a V2 signature: base64 of HMAC-SHA1 of sts keyed by secret.
func hmacSHA1(secret, sts string) string {
	m := hmac.New(sha1.New, []byte(secret))
	m.Write([]byte(sts))
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// between returns the text of s between the first open and the next close.
func between(s, open, close string) string {
	_, rest, _ := strings.Cut(s, open)
	v, _, _ := strings.Cut(rest, close)
	return v
}

// waitPast sleeps until the clock is past the Expires of a V2 presigned URL
// (the server reads the same clock).
func waitPast(t *testing.T, presigned string) {
	t.Helper()
	u, err := url.Parse(presigned)
	if err != nil {
		t.Fatal(err)
	}
	exp, err := strconv.ParseInt(u.Query().Get("Expires"), 10, 64)
	if err != nil {
		t.Fatalf("presigned URL %s: Expires: %v", presigned, err)
	}
	time.Sleep(time.Until(time.Unix(exp+1, 0)))
}
