package integration

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// TestS3LifecycleWorker: the background lifecycle worker applies the
// rules a client puts, with days shortened by --lifecycle-day: an
// abandoned multipart upload is aborted, an old object under an
// Expiration rule is deleted, and what no rule covers stays.
func TestS3LifecycleWorker(t *testing.T) {
	t.Setenv("CAIRN_ROOT_USER", s3User)
	t.Setenv("CAIRN_ROOT_PASSWORD", s3Secret)
	s := startServer(t, t.TempDir(), "--lifecycle-day", "1s", "--lifecycle-interval", "200ms")
	s.waitReady(readyTimeout)
	c := sdkClient(s, s3User, s3Secret)
	ctx := callCtx(t)
	const bucket = "lifecycle-worker"
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"tmp/old", "keep/old"} {
		if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader([]byte(key))}); err != nil {
			t.Fatal(err)
		}
	}
	up, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String("abandoned")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String(bucket), Key: aws.String("abandoned"),
		UploadId: up.UploadId, PartNumber: aws.Int32(1), Body: bytes.NewReader(bytes.Repeat([]byte("p"), 1024))}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutBucketLifecycleConfiguration(ctx, &s3.PutBucketLifecycleConfigurationInput{
		Bucket: aws.String(bucket),
		LifecycleConfiguration: &types.BucketLifecycleConfiguration{Rules: []types.LifecycleRule{
			{ID: aws.String("abort"), Status: types.ExpirationStatusEnabled, Filter: &types.LifecycleRuleFilter{Prefix: aws.String("")},
				AbortIncompleteMultipartUpload: &types.AbortIncompleteMultipartUpload{DaysAfterInitiation: aws.Int32(1)}},
			{ID: aws.String("expire-tmp"), Status: types.ExpirationStatusEnabled, Filter: &types.LifecycleRuleFilter{Prefix: aws.String("tmp/")},
				Expiration: &types.LifecycleExpiration{Days: aws.Int32(1)}},
		}},
	}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		ups, err := c.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: aws.String(bucket)})
		if err != nil {
			t.Fatal(err)
		}
		_, herr := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String("tmp/old")})
		var nf *types.NotFound
		done := len(ups.Uploads) == 0 && errors.As(herr, &nf)
		if done {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 15 s of 1 s lifecycle days: %d uploads left, tmp/old: %v", len(ups.Uploads), herr)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if _, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String("keep/old")}); err != nil {
		t.Errorf("keep/old, under no Expiration rule: %v", err)
	}
	_, err = c.ListParts(ctx, &s3.ListPartsInput{Bucket: aws.String(bucket), Key: aws.String("abandoned"), UploadId: up.UploadId})
	wantAPIError(t, fmt.Sprintf("ListParts of the aborted upload %s", aws.ToString(up.UploadId)), err, "NoSuchUpload", 404)
}
