package integration

import (
	"crypto/sha256"
	"encoding/base64"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// TestS3PostObjectChecksum: a browser upload's x-amz-checksum-<algo>
// field, as AWS's POST Object form fields list it (ceph s3-tests
// test_post_object_upload_checksum): it needs no policy condition, the
// file is checked against it (BadDigest when it does not match, and
// nothing is stored) and it is kept as a PUT's checksum.
func TestS3PostObjectChecksum(t *testing.T) {
	s := startCLIServer(t)
	c := sdkClient(s.server, cliUser, cliSecret)
	ctx := callCtx(t)
	const bucket = "post-sums"
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatal(err)
	}
	u := s.url("/" + bucket)
	later := time.Now().Add(100 * time.Minute)
	conds := []any{map[string]string{"bucket": bucket}, []any{"starts-with", "$key", "foo"}, []any{"content-length-range", 0, 1 << 20}}
	file := postFile{"f.txt", "the file's content"}
	sum := sha256.Sum256([]byte(file.content))
	good := base64.StdEncoding.EncodeToString(sum[:])
	other := sha256.Sum256([]byte("another file"))
	wrong := base64.StdEncoding.EncodeToString(other[:])
	form := func(key string, policyConds []any, extra ...postField) []postField {
		return append(append([]postField{{"key", key}}, extra...), signV2Form(cliUser, cliSecret, postPolicy(t, later, policyConds...))...)
	}
	for _, tc := range []struct {
		name   string
		fields []postField
		status int
		code   string
		stored bool
	}{
		{"matching sha256", form("foo-good", conds, postField{"x-amz-checksum-sha256", good}), 204, "", true},
		{"named by a condition", form("foo-cond", append(conds, map[string]string{"x-amz-checksum-sha256": good}), postField{"x-amz-checksum-sha256", good}), 204, "", true},
		{"condition fails", form("foo-condfail", append(conds, map[string]string{"x-amz-checksum-sha256": wrong}), postField{"x-amz-checksum-sha256", good}), 403, "AccessDenied", false},
		{"wrong sha256", form("foo-wrong", conds, postField{"x-amz-checksum-sha256", wrong}), 400, "BadDigest", false},
		{"not base64", form("foo-malformed", conds, postField{"x-amz-checksum-sha256", "sailorjerry"}), 400, "BadDigest", false},
		{"unknown algorithm", form("foo-md5", conds, postField{"x-amz-checksum-md5", good}), 400, "InvalidRequest", false},
		{"two checksums", form("foo-two", conds, postField{"x-amz-checksum-sha256", good}, postField{"x-amz-checksum-crc32", "AAAAAA=="}), 400, "InvalidRequest", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := postForm(t, u, "", tc.fields, file)
			if r.status != tc.status || r.code != tc.code {
				t.Fatalf("status %d %s, want %d %s: %s", r.status, r.code, tc.status, tc.code, r.body)
			}
			key := tc.fields[0].value
			h, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), ChecksumMode: types.ChecksumModeEnabled})
			switch {
			case !tc.stored && httpStatus(err) != 404:
				t.Fatalf("HeadObject of a refused upload: %v", err)
			case tc.stored && (err != nil || aws.ToString(h.ChecksumSHA256) != good):
				t.Fatalf("HeadObject: %v, checksum %q, want %q", err, aws.ToString(h.ChecksumSHA256), good)
			}
		})
	}
}
