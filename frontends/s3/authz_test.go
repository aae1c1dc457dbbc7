package s3

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/cairnstore/cairn/frontends/s3/iam"
	"github.com/cairnstore/cairn/frontends/s3/sigv4"
	"github.com/cairnstore/cairn/objstore"
	"github.com/cairnstore/cairn/objstore/storetest"
)

// testServer is a face over a real store with the root and two users.
func testServer(t testing.TB) (*Server, *objstore.Store) {
	t.Helper()
	return testServerWith(t, Options{})
}

// testServerWith is testServer with the face's options opt (its Users
// set here).
func testServerWith(t testing.TB, opt Options) (*Server, *objstore.Store) {
	t.Helper()
	ctx := context.Background()
	st := storetest.Open(t, objstore.Options{Dir: t.TempDir(), DriveCount: 1, Parity: -1, NoBackground: true})
	users, err := iam.OpenDirectory(ctx, st, "root", "rootsecret", zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"alice", "bob"} {
		if err := users.Add(ctx, iam.User{AccessKey: u, SecretKey: u + "-secret"}); err != nil {
			t.Fatal(err)
		}
	}
	opt.Users = users
	s, err := New(st, opt)
	if err != nil {
		t.Fatal(err)
	}
	return s, st
}

// call serves one request signed as who ("" unsigned) and returns the
// status and the error code.
func call(t testing.TB, s *Server, who, method, target string, body []byte, header map[string]string) (int, string) {
	t.Helper()
	r := httptest.NewRequest(method, "http://cairn.test"+target, bytes.NewReader(body))
	for k, v := range header {
		r.Header.Set(k, v)
	}
	if who != "" {
		signAs(t, r, who)
	}
	w := httptest.NewRecorder()
	s.ServeHTTP(w, r)
	code := ""
	if b := w.Body.String(); w.Code >= 300 && strings.Contains(b, "<Code>") {
		code = b[strings.Index(b, "<Code>")+6 : strings.Index(b, "</Code>")]
	}
	return w.Code, code
}

// TestAuthorizeThroughTheFace checks the evaluator is what serve asks,
// with the bucket documents the handlers store.
func TestAuthorizeThroughTheFace(t *testing.T) {
	s, _ := testServer(t)
	pol := `{"Statement":[{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::000000000000:user/bob"},"Action":"s3:GetObject","Resource":"arn:aws:s3:::abc/*"},
	  {"Effect":"Deny","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::abc/no/*"}]}`
	for i, tc := range []struct {
		who, method, target, body string
		header                    map[string]string
		status                    int
		code                      string
	}{
		{"alice", "PUT", "/abc", "", nil, 200, ""},
		{"alice", "PUT", "/abc/k", "x", nil, 200, ""},
		{"alice", "PUT", "/abc/no/k", "x", nil, 200, ""},
		{"bob", "GET", "/abc/k", "", nil, 403, "AccessDenied"},
		{"bob", "PUT", "/abc?policy", pol, nil, 403, "AccessDenied"},
		{"alice", "PUT", "/abc?policy", pol, nil, 204, ""},
		{"bob", "GET", "/abc/k", "", nil, 200, ""},
		{"bob", "HEAD", "/abc/k", "", nil, 200, ""},
		{"bob", "GET", "/abc/no/k", "", nil, 403, "AccessDenied"},
		{"alice", "GET", "/abc/no/k", "", nil, 403, "AccessDenied"},
		{"root", "GET", "/abc/no/k", "", nil, 200, ""},
		{"bob", "GET", "/abc?list-type=2", "", nil, 403, "AccessDenied"},
		{"bob", "PUT", "/abc/k?acl", "", map[string]string{"x-amz-acl": "public-read"}, 403, "AccessDenied"},
		{"alice", "GET", "/abc/absent", "", nil, 404, "NoSuchKey"},
		// As S3: a caller without s3:ListBucket does not learn the key is
		// absent, even when allowed GetObject.
		{"bob", "GET", "/abc/absent", "", nil, 403, "AccessDenied"},
		{"bob", "HEAD", "/abc/absent", "", nil, 403, ""},
		{"", "GET", "/abc/absent", "", nil, 403, "AccessDenied"},
		{"bob", "PUT", "/abc/k2", "x", nil, 403, "AccessDenied"},
		{"alice", "PUT", "/abc?acl", "", map[string]string{"x-amz-grant-write": "id=bob"}, 200, ""},
		{"bob", "PUT", "/abc/k2", "x", nil, 200, ""},
		{"alice", "GET", "/abc/k2", "", nil, 403, "AccessDenied"}, // bob's object: the object context
		{"bob", "PUT", "/abc/k2?acl", "", map[string]string{"x-amz-acl": "bucket-owner-read"}, 200, ""},
		{"alice", "GET", "/abc/k2", "", nil, 200, ""},
		{"alice", "GET", "/abc?policy", "", nil, 200, ""},
		{"alice", "DELETE", "/abc?policy", "", nil, 204, ""},
		{"alice", "GET", "/abc?policy", "", nil, 404, "NoSuchBucketPolicy"},
		{"alice", "PUT", "/abc?policy", `{"Statement":[]}`, nil, 400, "MalformedPolicy"},
		{"bob", "GET", "/", "", nil, 200, ""},
		{"alice", "GET", "/abc?policyStatus", "", nil, 200, ""},
		{"bob", "POST", "/abc?delete", "<Delete><Object><Key>k</Key></Object></Delete>", nil, 200, ""},
		{"alice", "GET", "/abc/k", "", nil, 404, "NoSuchKey"}, // bob's bucket WRITE grant deleted it
		{"alice", "PUT", "/abc?acl", "", map[string]string{"x-amz-acl": "private"}, 200, ""},
		{"alice", "PUT", "/abc/k", "x", nil, 200, ""},
		{"bob", "POST", "/abc?delete", "<Delete><Object><Key>k</Key></Object></Delete>", nil, 200, ""},
		{"alice", "GET", "/abc/k", "", nil, 200, ""}, // refused per key this time
		{"alice", "GET", "/abc", "", map[string]string{"x-amz-expected-bucket-owner": "bob"}, 403, "AccessDenied"},
	} {
		if st, code := call(t, s, tc.who, tc.method, tc.target, []byte(tc.body), tc.header); st != tc.status || code != tc.code {
			t.Errorf("%d: %s %s %s: %d %s, want %d %s", i, tc.who, tc.method, tc.target, st, code, tc.status, tc.code)
		}
	}
}

// policy20 is a 20-statement bucket policy granting anonymous reads, as
// must-show 5 measures.
func policy20(bucket string) string {
	var st []string
	for i := 0; i < 19; i++ {
		st = append(st, fmt.Sprintf(`{"Sid":"s%d","Effect":"Allow","Principal":{"AWS":"arn:aws:iam::000000000000:user/u%d"},"Action":["s3:PutObject","s3:Get*"],"Resource":"arn:aws:s3:::%s/p%d/*","Condition":{"IpAddress":{"aws:SourceIp":"10.%d.0.0/16"}}}`, i, i, bucket, i, i))
	}
	st = append(st, fmt.Sprintf(`{"Sid":"anon","Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::%s/*"}`, bucket))
	return `{"Version":"2012-10-17","Statement":[` + strings.Join(st, ",") + `]}`
}

// BenchmarkFace4KiB serves 4 KiB GETs and PUTs by the root (no
// evaluation) and by a user on a bucket with policy20 (full evaluation).
func BenchmarkFace4KiB(b *testing.B) {
	s, _ := testServer(b)
	for _, bkt := range []string{"plain", "pol"} {
		if st, code := call(b, s, "root", "PUT", "/"+bkt, nil, nil); st != 200 {
			b.Fatal(st, code)
		}
	}
	if st, code := call(b, s, "root", "PUT", "/pol?policy", []byte(policy20("pol")), nil); st != 204 {
		b.Fatal(st, code)
	}
	data := bytes.Repeat([]byte("x"), 4096)
	for _, bkt := range []string{"plain", "pol"} {
		if st, _ := call(b, s, "root", "PUT", "/"+bkt+"/k", data, nil); st != 200 {
			b.Fatal(st)
		}
	}
	for _, tc := range []struct{ name, who, bucket string }{
		{"root-plain", "root", "plain"},
		{"user-policy20", "alice", "pol"},
	} {
		b.Run("GET/"+tc.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if st, _ := call(b, s, tc.who, "GET", "/"+tc.bucket+"/k", nil, nil); st != 200 {
					b.Fatal(st)
				}
			}
		})
		b.Run("PUT/"+tc.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if st, _ := call(b, s, tc.who, "PUT", "/"+tc.bucket+"/k", data, nil); st != 200 {
					b.Fatal(st)
				}
			}
		})
	}
}

// BenchmarkHeadBucketPolicy20 is the bucket record read authorization
// adds per request, without and with a 20-statement policy in it.
func BenchmarkHeadBucketPolicy20(b *testing.B) {
	s, st := testServer(b)
	for _, bkt := range []string{"plain", "pol"} {
		if code, _ := call(b, s, "root", "PUT", "/"+bkt, nil, nil); code != 200 {
			b.Fatal(code)
		}
	}
	if code, _ := call(b, s, "root", "PUT", "/pol?policy", []byte(policy20("pol")), nil); code != 204 {
		b.Fatal(code)
	}
	ctx := context.Background()
	for _, bkt := range []string{"plain", "pol"} {
		b.Run(bkt, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := st.HeadBucket(ctx, bkt); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// signAs signs r as who, one of testServer's callers.
func signAs(t testing.TB, r *http.Request, who string) {
	t.Helper()
	secret := who + "-secret"
	if who == "root" {
		secret = "rootsecret"
	}
	if err := sigv4.Sign(r, who, secret, "us-east-1", "s3", "", time.Now()); err != nil {
		t.Fatal(err)
	}
}
