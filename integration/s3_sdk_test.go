package integration

import (
	"bytes"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// TestS3SDK drives one real cairn server with aws-sdk-go-v2 at its default
// settings (request checksums included). Each subtest uses its own bucket.
func TestS3SDK(t *testing.T) {
	srv := startS3Server(t)
	c := sdkClient(srv, s3User, s3Secret)
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, srv *server, c *s3.Client, bucket string)
	}{
		{"BucketObjectLifecycle", sdkLifecycle},
		{"Listing", sdkListing},
		{"Multipart", sdkMultipart},
		{"Copy", sdkCopy},
		{"ConditionalPut", sdkConditionalPut},
		{"RangeAndConditionalGet", sdkRangeGet},
		{"LargeRangeGet", sdkLargeRangeGet},
		{"Presigned", sdkPresigned},
		{"Versioning", sdkVersioning},
		{"DeleteObjects", sdkDeleteObjects},
		{"Errors", sdkErrors},
		{"Checksums", sdkChecksums},
		{"EdgeCases", sdkEdgeCases},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bucket := "sdk-" + strings.ToLower(tc.name)
			if _, err := c.CreateBucket(callCtx(t), &s3.CreateBucketInput{Bucket: &bucket}); err != nil {
				t.Fatalf("CreateBucket %s: %v", bucket, err)
			}
			tc.run(t, srv, c, bucket)
		})
	}
}

// sdkPut puts body at key and returns the output.
func sdkPut(t *testing.T, c *s3.Client, bucket, key string, body []byte) *s3.PutObjectOutput {
	t.Helper()
	out, err := c.PutObject(callCtx(t), &s3.PutObjectInput{Bucket: &bucket, Key: &key, Body: bytes.NewReader(body)})
	if err != nil {
		t.Fatalf("PutObject %s: %v", key, err)
	}
	return out
}

// sdkGet reads key (optionally one version) and returns its bytes.
func sdkGet(t *testing.T, c *s3.Client, bucket, key, version string) []byte {
	t.Helper()
	in := &s3.GetObjectInput{Bucket: &bucket, Key: &key}
	if version != "" {
		in.VersionId = &version
	}
	out, err := c.GetObject(callCtx(t), in)
	if err != nil {
		t.Fatalf("GetObject %s (version %q): %v", key, version, err)
	}
	defer func() { _ = out.Body.Close() }()
	b, err := io.ReadAll(out.Body)
	if err != nil {
		t.Fatalf("GetObject %s: read: %v", key, err)
	}
	return b
}

func sdkLifecycle(t *testing.T, srv *server, c *s3.Client, bucket string) {
	if _, err := c.HeadBucket(callCtx(t), &s3.HeadBucketInput{Bucket: &bucket}); err != nil {
		t.Fatalf("HeadBucket: %v", err)
	}
	// us-east-1 answers a re-create of one's own bucket 200.
	if _, err := c.CreateBucket(callCtx(t), &s3.CreateBucketInput{Bucket: &bucket}); err != nil {
		t.Fatalf("CreateBucket again: %v", err)
	}
	_, err := c.HeadBucket(callCtx(t), &s3.HeadBucketInput{Bucket: aws.String("sdk-no-such-bucket")})
	wantAPIError(t, "HeadBucket absent", err, "NotFound", 404)

	lb, err := c.ListBuckets(callCtx(t), &s3.ListBucketsInput{})
	if err != nil {
		t.Fatalf("ListBuckets: %v", err)
	}
	found := false
	for _, b := range lb.Buckets {
		found = found || aws.ToString(b.Name) == bucket
	}
	if !found {
		t.Fatalf("ListBuckets does not list %s", bucket)
	}

	body := []byte("hello, cairn")
	key := "dir/hello world+ünïcødé.txt"
	expires := time.Date(2031, 1, 2, 3, 4, 5, 0, time.UTC)
	put, err := c.PutObject(callCtx(t), &s3.PutObjectInput{
		Bucket: &bucket, Key: &key, Body: bytes.NewReader(body),
		ContentType:        aws.String("text/plain; charset=utf-8"),
		CacheControl:       aws.String("max-age=60"),
		ContentDisposition: aws.String(`attachment; filename="hello.txt"`),
		ContentLanguage:    aws.String("en-GB"),
		Expires:            &expires,
		Metadata:           map[string]string{"color": "blue", "Multi-Word": "a b c"},
	})
	if err != nil {
		t.Fatalf("PutObject: %v", err)
	}
	wantETag := `"` + md5hex(body) + `"`
	if aws.ToString(put.ETag) != wantETag {
		t.Fatalf("PutObject ETag %s, want %s", aws.ToString(put.ETag), wantETag)
	}

	head, err := c.HeadObject(callCtx(t), &s3.HeadObjectInput{Bucket: &bucket, Key: &key})
	if err != nil {
		t.Fatalf("HeadObject: %v", err)
	}
	get, err := c.GetObject(callCtx(t), &s3.GetObjectInput{Bucket: &bucket, Key: &key})
	if err != nil {
		t.Fatalf("GetObject: %v", err)
	}
	got, err := io.ReadAll(get.Body)
	_ = get.Body.Close()
	if err != nil || !bytes.Equal(got, body) {
		t.Fatalf("GetObject body %q (%v), want %q", got, err, body)
	}
	for _, o := range []struct {
		name                                    string
		length                                  *int64
		etag, ctype, cache, disp, lang, expires *string
		meta                                    map[string]string
	}{
		{"HeadObject", head.ContentLength, head.ETag, head.ContentType, head.CacheControl, head.ContentDisposition, head.ContentLanguage, head.ExpiresString, head.Metadata},
		{"GetObject", get.ContentLength, get.ETag, get.ContentType, get.CacheControl, get.ContentDisposition, get.ContentLanguage, get.ExpiresString, get.Metadata},
	} {
		if aws.ToInt64(o.length) != int64(len(body)) || aws.ToString(o.etag) != wantETag ||
			aws.ToString(o.ctype) != "text/plain; charset=utf-8" || aws.ToString(o.cache) != "max-age=60" ||
			aws.ToString(o.disp) != `attachment; filename="hello.txt"` || aws.ToString(o.lang) != "en-GB" ||
			aws.ToString(o.expires) != expires.Format(http.TimeFormat) {
			t.Errorf("%s headers: length %d etag %s type %q cache %q disposition %q language %q expires %q",
				o.name, aws.ToInt64(o.length), aws.ToString(o.etag), aws.ToString(o.ctype), aws.ToString(o.cache),
				aws.ToString(o.disp), aws.ToString(o.lang), aws.ToString(o.expires))
		}
		if o.meta["color"] != "blue" || o.meta["multi-word"] != "a b c" || len(o.meta) != 2 {
			t.Errorf("%s metadata %v, want color=blue multi-word=a b c", o.name, o.meta)
		}
	}

	for _, enc := range []types.EncodingType{"", types.EncodingTypeUrl} {
		lo, err := c.ListObjectsV2(callCtx(t), &s3.ListObjectsV2Input{Bucket: &bucket, Prefix: aws.String("dir/"), EncodingType: enc})
		if err != nil || len(lo.Contents) != 1 {
			t.Fatalf("ListObjectsV2 (encoding %q): %v, %d keys", enc, err, len(lo.Contents))
		}
		got := aws.ToString(lo.Contents[0].Key)
		if enc == types.EncodingTypeUrl {
			if got, err = url.QueryUnescape(got); err != nil {
				t.Fatalf("ListObjectsV2 url-encoded key %q: %v", aws.ToString(lo.Contents[0].Key), err)
			}
		}
		if got != key || aws.ToInt64(lo.Contents[0].Size) != int64(len(body)) || aws.ToString(lo.Contents[0].ETag) != wantETag {
			t.Errorf("ListObjectsV2 (encoding %q): key %q size %d etag %s", enc, got, aws.ToInt64(lo.Contents[0].Size), aws.ToString(lo.Contents[0].ETag))
		}
	}

	_, err = c.DeleteBucket(callCtx(t), &s3.DeleteBucketInput{Bucket: &bucket})
	wantAPIError(t, "DeleteBucket non-empty", err, "BucketNotEmpty", 409)

	if _, err := c.DeleteObject(callCtx(t), &s3.DeleteObjectInput{Bucket: &bucket, Key: &key}); err != nil {
		t.Fatalf("DeleteObject: %v", err)
	}
	if _, err := c.DeleteObject(callCtx(t), &s3.DeleteObjectInput{Bucket: &bucket, Key: &key}); err != nil {
		t.Fatalf("DeleteObject again (S3 answers 204): %v", err)
	}
	_, err = c.GetObject(callCtx(t), &s3.GetObjectInput{Bucket: &bucket, Key: &key})
	wantAPIError(t, "GetObject deleted", err, "NoSuchKey", 404)
	_, err = c.HeadObject(callCtx(t), &s3.HeadObjectInput{Bucket: &bucket, Key: &key})
	wantAPIError(t, "HeadObject deleted", err, "NotFound", 404)

	if _, err := c.DeleteBucket(callCtx(t), &s3.DeleteBucketInput{Bucket: &bucket}); err != nil {
		t.Fatalf("DeleteBucket: %v", err)
	}
	_, err = c.HeadBucket(callCtx(t), &s3.HeadBucketInput{Bucket: &bucket})
	wantAPIError(t, "HeadBucket deleted", err, "NotFound", 404)
	_, err = c.PutObject(callCtx(t), &s3.PutObjectInput{Bucket: &bucket, Key: aws.String("k"), Body: bytes.NewReader(body)})
	wantAPIError(t, "PutObject into deleted bucket", err, "NoSuchBucket", 404)
}
