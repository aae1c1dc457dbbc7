package integration

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

func sdkErrors(t *testing.T, srv *server, c *s3.Client, bucket string) {
	sdkPut(t, c, bucket, "exists", []byte("x"))
	for _, tc := range []struct {
		name   string
		call   func() error
		code   string
		status int
	}{
		{"wrong secret", func() error {
			_, err := sdkClient(srv, s3User, "not-the-secret").ListObjectsV2(callCtx(t), &s3.ListObjectsV2Input{Bucket: &bucket})
			return err
		}, "SignatureDoesNotMatch", 403},
		{"wrong secret on put", func() error {
			_, err := sdkClient(srv, s3User, "not-the-secret").PutObject(callCtx(t), &s3.PutObjectInput{Bucket: &bucket, Key: aws.String("nope"), Body: strings.NewReader("x")})
			return err
		}, "SignatureDoesNotMatch", 403},
		{"unknown access key", func() error {
			_, err := sdkClient(srv, "AKIDUNKNOWN", s3Secret).GetObject(callCtx(t), &s3.GetObjectInput{Bucket: &bucket, Key: aws.String("exists")})
			return err
		}, "InvalidAccessKeyId", 403},
		{"anonymous", func() error {
			_, err := anonSDKClient(srv).GetObject(callCtx(t), &s3.GetObjectInput{Bucket: &bucket, Key: aws.String("exists")})
			return err
		}, "AccessDenied", 403},
		{"overlong key", func() error {
			_, err := c.PutObject(callCtx(t), &s3.PutObjectInput{Bucket: &bucket, Key: aws.String(strings.Repeat("k", 1025)), Body: strings.NewReader("x")})
			return err
		}, "KeyTooLongError", 400},
		{"no such bucket", func() error {
			_, err := c.GetObject(callCtx(t), &s3.GetObjectInput{Bucket: aws.String("sdk-absent-bucket"), Key: aws.String("k")})
			return err
		}, "NoSuchBucket", 404},
		{"no such key", func() error {
			_, err := c.GetObject(callCtx(t), &s3.GetObjectInput{Bucket: &bucket, Key: aws.String("absent")})
			return err
		}, "NoSuchKey", 404},
		{"bucket website", func() error {
			_, err := c.GetBucketWebsite(callCtx(t), &s3.GetBucketWebsiteInput{Bucket: &bucket})
			return err
		}, "NotImplemented", 501},
		{"invalid bucket name", func() error {
			_, err := c.CreateBucket(callCtx(t), &s3.CreateBucketInput{Bucket: aws.String("Not_A_Bucket")})
			return err
		}, "InvalidBucketName", 400},
	} {
		t.Run(tc.name, func(t *testing.T) { wantAPIError(t, tc.name, tc.call(), tc.code, tc.status) })
	}

	// Raw requests, where the SDK would refuse or hide the answer.
	oneK := strings.Repeat("k", 1024)
	for _, tc := range []struct {
		name, method, path string
		body               []byte
		sign               bool
		status             int
		code               string
	}{
		{"anonymous GET", http.MethodGet, "/" + bucket + "/exists", nil, false, 403, "AccessDenied"},
		{"anonymous list buckets", http.MethodGet, "/", nil, false, 403, "AccessDenied"},
		{"torrent subresource", http.MethodGet, "/" + bucket + "/exists?torrent", nil, true, 501, "NotImplemented"},
		{"malformed DeleteObjects", http.MethodPost, "/" + bucket + "?delete", []byte("<Delete><Object><Key>a</Key></Object"), true, 400, "MalformedXML"},
		{"DeleteObjects not XML", http.MethodPost, "/" + bucket + "?delete", []byte("this is not xml"), true, 400, "MalformedXML"},
		{"key of 1024 bytes", http.MethodPut, "/" + bucket + "/" + oneK, []byte("x"), true, 200, ""},
		{"key of 1025 bytes", http.MethodPut, "/" + bucket + "/" + oneK + "k", []byte("x"), true, 400, "KeyTooLongError"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := newRaw(t, tc.method, srv.url(tc.path), tc.body)
			if tc.sign {
				signRaw(t, req, tc.body, s3User, s3Secret, time.Now())
			}
			res := doRaw(t, req)
			if res.status != tc.status || res.code != tc.code {
				t.Fatalf("%s %s: %d %q, want %d %q\n%s", tc.method, tc.path, res.status, res.code, tc.status, tc.code, res.body)
			}
		})
	}
}

func sdkEdgeCases(t *testing.T, srv *server, c *s3.Client, bucket string) {
	t.Run("empty object", func(t *testing.T) {
		put := sdkPut(t, c, bucket, "empty", nil)
		if aws.ToString(put.ETag) != `"d41d8cd98f00b204e9800998ecf8427e"` {
			t.Errorf("empty object ETag %s", aws.ToString(put.ETag))
		}
		if got := sdkGet(t, c, bucket, "empty", ""); len(got) != 0 {
			t.Errorf("empty object read back %d bytes", len(got))
		}
		_, err := c.GetObject(callCtx(t), &s3.GetObjectInput{Bucket: &bucket, Key: aws.String("empty"), Range: aws.String("bytes=0-")})
		wantAPIError(t, "GetObject range of an empty object", err, "InvalidRange", 416)
	})
	t.Run("keys that look like paths", func(t *testing.T) {
		for _, key := range []string{"a//b", "a/./b", "a/../b", "./x", "../y", "trailing/", " lead space", "percent%2Fslash"} {
			sdkPut(t, c, bucket, key, []byte(key))
			if got := string(sdkGet(t, c, bucket, key, "")); got != key {
				t.Errorf("key %q read back %q", key, got)
			}
		}
		lo, err := c.ListObjectsV2(callCtx(t), &s3.ListObjectsV2Input{Bucket: &bucket, Prefix: aws.String("a/")})
		if err != nil {
			t.Fatalf("ListObjectsV2: %v", err)
		}
		var keys []string
		for _, o := range lo.Contents {
			keys = append(keys, aws.ToString(o.Key))
		}
		if want := []string{"a/../b", "a/./b", "a//b"}; fmt.Sprint(keys) != fmt.Sprint(want) {
			t.Errorf("listed %q, want %q", keys, want)
		}
	})
	t.Run("Content-MD5 mismatch", func(t *testing.T) {
		_, err := c.PutObject(callCtx(t), &s3.PutObjectInput{Bucket: &bucket, Key: aws.String("md5"), Body: strings.NewReader("data"),
			ContentMD5: aws.String(base64.StdEncoding.EncodeToString(make([]byte, 16)))})
		wantAPIError(t, "PutObject with a wrong Content-MD5", err, "BadDigest", 400)
	})
	t.Run("HEAD of a missing key", func(t *testing.T) {
		req := newRaw(t, http.MethodHead, objectURL(srv, bucket, "missing"), nil)
		signRaw(t, req, nil, s3User, s3Secret, time.Now())
		res := doRaw(t, req)
		if res.status != 404 || len(res.body) != 0 {
			t.Errorf("HEAD missing: %d, %d body bytes", res.status, len(res.body))
		}
	})
	t.Run("ListMultipartUploads paging", func(t *testing.T) {
		want := map[string]bool{}
		for i := range 5 {
			k := fmt.Sprintf("up/%d", i)
			out, err := c.CreateMultipartUpload(callCtx(t), &s3.CreateMultipartUploadInput{Bucket: &bucket, Key: &k})
			if err != nil {
				t.Fatalf("CreateMultipartUpload: %v", err)
			}
			want[k+" "+aws.ToString(out.UploadId)] = true
		}
		got := map[string]bool{}
		in := &s3.ListMultipartUploadsInput{Bucket: &bucket, MaxUploads: aws.Int32(2)}
		for page := 0; ; page++ {
			out, err := c.ListMultipartUploads(callCtx(t), in)
			if err != nil {
				t.Fatalf("ListMultipartUploads: %v", err)
			}
			if len(out.Uploads) > 2 || page > 5 {
				t.Fatalf("page %d: %d uploads", page, len(out.Uploads))
			}
			for _, u := range out.Uploads {
				got[aws.ToString(u.Key)+" "+aws.ToString(u.UploadId)] = true
			}
			if !aws.ToBool(out.IsTruncated) {
				break
			}
			in.KeyMarker, in.UploadIdMarker = out.NextKeyMarker, out.NextUploadIdMarker
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("uploads %v, want %v", got, want)
		}
	})
}
