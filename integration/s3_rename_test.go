package integration

import (
	"bytes"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// TestS3RenameObject drives RenameObject (the S3 Express API) through the
// SDK: content, ETag and metadata move, the source is gone, the
// conditions hold, and keys ending in a slash are refused.
func TestS3RenameObject(t *testing.T) {
	srv := startS3Server(t)
	c := sdkClient(srv, s3User, s3Secret)
	bucket := "rename"
	if _, err := c.CreateBucket(callCtx(t), &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatal(err)
	}
	body := randomBytes(7, 300<<10)
	put := sdkPut(t, c, bucket, "stage/part-0", body)
	sdkPut(t, c, bucket, "taken", []byte("occupied"))
	rename := func(src, dst string, f func(*s3.RenameObjectInput)) error {
		in := &s3.RenameObjectInput{Bucket: aws.String(bucket), Key: aws.String(dst), RenameSource: aws.String(bucket + "/" + src)}
		if f != nil {
			f(in)
		}
		_, err := c.RenameObject(callCtx(t), in)
		return err
	}
	for _, tc := range []struct {
		name, src, dst string
		f              func(*s3.RenameObjectInput)
		code           string
		status         int
	}{
		{"onto an existing key with If-None-Match *", "stage/part-0", "taken",
			func(in *s3.RenameObjectInput) { in.DestinationIfNoneMatch = aws.String("*") }, "PreconditionFailed", 412},
		{"source ETag mismatch", "stage/part-0", "final/part-0",
			func(in *s3.RenameObjectInput) { in.SourceIfMatch = aws.String(`"0123"`) }, "PreconditionFailed", 412},
		{"missing source", "stage/nothing", "final/nothing", nil, "NoSuchKey", 404},
		{"key ending in a slash", "stage/part-0", "final/", nil, "InvalidRequest", 400},
	} {
		err := rename(tc.src, tc.dst, tc.f)
		wantAPIError(t, tc.name, err, tc.code, tc.status)
	}
	if err := rename("stage/part-0", "final/part-0", func(in *s3.RenameObjectInput) {
		in.SourceIfMatch = put.ETag
		in.DestinationIfNoneMatch = aws.String("*")
	}); err != nil {
		t.Fatalf("rename: %v", err)
	}
	if got := sdkGet(t, c, bucket, "final/part-0", ""); !bytes.Equal(got, body) {
		t.Fatal("renamed content differs")
	}
	h, err := c.HeadObject(callCtx(t), &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String("final/part-0")})
	if err != nil || aws.ToString(h.ETag) != aws.ToString(put.ETag) {
		t.Fatalf("head renamed: %v %v", h, err)
	}
	_, err = c.HeadObject(callCtx(t), &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String("stage/part-0")})
	wantAPIError(t, "source after rename", err, "NotFound", 404)
}
