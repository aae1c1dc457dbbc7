package integration

import (
	"bufio"
	"encoding/xml"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// TestS3RecreateOwnBucket: CreateBucket of a bucket one owns is 200 OK
// in us-east-1 with the bucket's ACL reset to the request's (S3's legacy
// behaviour there), and 409 BucketAlreadyOwnedByYou in any other region
// (cairn serve --region) with the ACL untouched; the objects are kept
// either way, and anyone else gets 409 BucketAlreadyExists.
func TestS3RecreateOwnBucket(t *testing.T) {
	for _, tc := range []struct {
		region   string
		args     []string
		location types.BucketLocationConstraint
		code     string // "" for 200
		aclAfter string // the bucket's grants after a plain re-create
	}{
		{"us-east-1", nil, "", "", "CanonicalUser/alice:FULL_CONTROL"},
		{"eu-west-1", []string{"--region", "eu-west-1"}, "eu-west-1", "BucketAlreadyOwnedByYou",
			"CanonicalUser/alice:FULL_CONTROL Group/AllUsers:READ"},
	} {
		t.Run(tc.region, func(t *testing.T) {
			t.Setenv("CAIRN_ROOT_USER", s3User)
			t.Setenv("CAIRN_ROOT_PASSWORD", s3Secret)
			s := startServer(t, t.TempDir(), tc.args...)
			s.waitReady(readyTimeout)
			inRegion := func(c *s3.Client) *s3.Client {
				return s3.New(c.Options(), func(o *s3.Options) { o.Region = tc.region })
			}
			alice := inRegion(addAccessUser(t, s, "alice", "", "readwrite").c)
			bob := inRegion(addAccessUser(t, s, "bob", "", "readwrite").c)
			ctx := callCtx(t)
			b := aws.String("recreated")
			var cfg *types.CreateBucketConfiguration
			if tc.location != "" {
				cfg = &types.CreateBucketConfiguration{LocationConstraint: tc.location}
			}
			if _, err := alice.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b, ACL: types.BucketCannedACLPublicRead, CreateBucketConfiguration: cfg}); err != nil {
				t.Fatal(err)
			}
			loc, err := alice.GetBucketLocation(ctx, &s3.GetBucketLocationInput{Bucket: b})
			if err != nil || loc.LocationConstraint != tc.location {
				t.Fatalf("location %q %v, want %q", loc.LocationConstraint, err, tc.location)
			}
			if _, err := alice.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("k"), Body: strings.NewReader("kept")}); err != nil {
				t.Fatal(err)
			}

			_, err = alice.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b, CreateBucketConfiguration: cfg})
			if tc.code == "" {
				if err != nil {
					t.Fatalf("re-create: %v, want 200", err)
				}
			} else {
				wantAPIError(t, "re-create", err, tc.code, 409)
			}
			acl, err := alice.GetBucketAcl(ctx, &s3.GetBucketAclInput{Bucket: b})
			if err != nil || grantsOf(acl.Grants) != tc.aclAfter {
				t.Fatalf("ACL after re-create: %s %v, want %s", grantsOf(acl.Grants), err, tc.aclAfter)
			}
			if got := sdkGet(t, alice, "recreated", "k", ""); string(got) != "kept" {
				t.Fatalf("object after re-create: %q", got)
			}

			_, err = alice.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b, ACL: types.BucketCannedACLAuthenticatedRead, CreateBucketConfiguration: cfg})
			want := "CanonicalUser/alice:FULL_CONTROL Group/AuthenticatedUsers:READ"
			if tc.code != "" {
				wantAPIError(t, "re-create with an ACL", err, tc.code, 409)
				want = tc.aclAfter
			} else if err != nil {
				t.Fatalf("re-create with an ACL: %v", err)
			}
			if acl, err = alice.GetBucketAcl(ctx, &s3.GetBucketAclInput{Bucket: b}); err != nil || grantsOf(acl.Grants) != want {
				t.Fatalf("ACL after re-create with an ACL: %s %v, want %s", grantsOf(acl.Grants), err, want)
			}

			_, err = bob.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b, CreateBucketConfiguration: cfg})
			wantAPIError(t, "another user re-creates it", err, "BucketAlreadyExists", 409)
			if acl, err = alice.GetBucketAcl(ctx, &s3.GetBucketAclInput{Bucket: b}); err != nil || grantsOf(acl.Grants) != want {
				t.Fatalf("ACL after another user's re-create: %s %v, want %s", grantsOf(acl.Grants), err, want)
			}
		})
	}
}

// TestS3InvalidURI: a key whose percent-escapes are not UTF-8 is 400
// InvalidURI ("Couldn't parse the specified URI."), as S3 answers; a key
// that is UTF-8, control characters and all, is an ordinary missing key.
func TestS3InvalidURI(t *testing.T) {
	s := startS3Server(t)
	c := sdkClient(s, s3User, s3Secret)
	ctx := callCtx(t)
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("uri")}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, key, code string
		status          int
	}{
		{"not UTF-8", "\xae\x8a-", "InvalidURI", 400},
		{"UTF-8 with a C1 control", "\u00ae\u008a-", "NoSuchKey", 404},
	} {
		_, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("uri"), Key: aws.String(tc.key)})
		wantAPIError(t, tc.name, err, tc.code, tc.status)
	}
	res := signedRaw(t, http.MethodPut, s.url("/uri/%FF"), []byte("x"), nil, s3User, s3Secret)
	var e struct{ Message string }
	if res.status != 400 || res.code != "InvalidURI" || xml.Unmarshal(res.body, &e) != nil || e.Message != "Couldn't parse the specified URI." {
		t.Fatalf("PUT /uri/%%FF: %d %s", res.status, res.body)
	}
}

// TestS3ExpectContinueAnswered: a PUT with "Expect: 100-continue" that
// the server refuses gets its answer without sending the body (the
// client waits for it); one it accepts gets "100 Continue", then its
// answer once the body is sent (ceph s3-tests test_100_continue).
func TestS3ExpectContinueAnswered(t *testing.T) {
	s := startS3Server(t)
	skipUnlessAnonymous(t, s)
	c := sdkClient(s, s3User, s3Secret)
	ctx := callCtx(t)
	for _, b := range []string{"continue-private", "continue-public"} {
		if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(b)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: aws.String("continue-public"), ACL: types.BucketCannedACLPublicReadWrite}); err != nil {
		t.Fatal(err)
	}
	body := strings.Repeat("b", 123)
	for _, tc := range []struct {
		path    string
		interim string // the status line before the body is sent; "" for none
		final   string
	}{
		{"/continue-private/obj", "", "HTTP/1.1 403 Forbidden"},
		{"/no-such-bucket-continue/obj", "", "HTTP/1.1 404 Not Found"},
		{"/continue-public/obj", "HTTP/1.1 100 Continue", "HTTP/1.1 200 OK"},
	} {
		conn, err := net.Dial("tcp", s.addr)
		if err != nil {
			t.Fatal(err)
		}
		// A guard, not a measurement: before the fix the answer never came.
		_ = conn.SetDeadline(time.Now().Add(s3CallTimeout))
		fmt.Fprintf(conn, "PUT %s HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\nExpect: 100-continue\r\n\r\n", tc.path, s.addr, len(body))
		r := bufio.NewReader(conn)
		status := func() string {
			line, err := r.ReadString('\n')
			if err != nil {
				t.Fatalf("%s: no answer before the body: %v", tc.path, err)
			}
			for { // the rest of the head
				h, err := r.ReadString('\n')
				if err != nil || h == "\r\n" {
					break
				}
			}
			return strings.TrimSpace(line)
		}
		got := status()
		if tc.interim != "" {
			if got != tc.interim {
				t.Fatalf("%s: %q, want %q", tc.path, got, tc.interim)
			}
			fmt.Fprint(conn, body)
			got = status()
		}
		if got != tc.final {
			t.Fatalf("%s: %q, want %q", tc.path, got, tc.final)
		}
		_ = conn.Close()
	}
	if got := sdkGet(t, c, "continue-public", "obj", ""); string(got) != body {
		t.Fatalf("the object sent after 100 Continue: %q", got)
	}
}
