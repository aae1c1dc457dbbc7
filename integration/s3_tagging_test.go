package integration

import (
	"bytes"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// Tagging against the real binary. The error codes are those of the ceph
// s3-tests (s3tests_boto3/functional/test_s3.py test_*tag*), which differ
// from AWS in one place: AWS answers more than 10 object tags with
// BadRequest, RGW and the ceph suite with InvalidTag; both are 400.

func tagSet(pairs ...string) []types.Tag {
	var out []types.Tag
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, types.Tag{Key: aws.String(pairs[i]), Value: aws.String(pairs[i+1])})
	}
	return out
}

func numberedTags(n, keyLen, valueLen int) []types.Tag {
	var out []types.Tag
	for i := 0; i < n; i++ {
		k := fmt.Sprintf("%03d", i) + strings.Repeat("k", max(keyLen-3, 0))
		out = append(out, types.Tag{Key: aws.String(k), Value: aws.String(strings.Repeat("v", valueLen))})
	}
	return out
}

func tagPairs(tags []types.Tag) []string {
	var out []string
	for _, t := range tags {
		out = append(out, aws.ToString(t.Key)+"="+aws.ToString(t.Value))
	}
	return out
}

func TestS3Tagging(t *testing.T) {
	s := startS3Server(t)
	c := sdkClient(s, s3User, s3Secret)
	ctx := callCtx(t)
	const b = "tagging"
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(b)}); err != nil {
		t.Fatal(err)
	}
	put := func(key, tagging string) *s3.PutObjectOutput {
		t.Helper()
		in := &s3.PutObjectInput{Bucket: aws.String(b), Key: aws.String(key), Body: bytes.NewReader([]byte(key))}
		if tagging != "" {
			in.Tagging = aws.String(tagging)
		}
		out, err := c.PutObject(ctx, in)
		if err != nil {
			t.Fatalf("put %s: %v", key, err)
		}
		return out
	}
	tagsOf := func(key, version string) []string {
		t.Helper()
		in := &s3.GetObjectTaggingInput{Bucket: aws.String(b), Key: aws.String(key)}
		if version != "" {
			in.VersionId = aws.String(version)
		}
		out, err := c.GetObjectTagging(ctx, in)
		if err != nil {
			t.Fatalf("get tagging %s: %v", key, err)
		}
		if version != "" && aws.ToString(out.VersionId) != version {
			t.Fatalf("get tagging %s: version %q, want %q", key, aws.ToString(out.VersionId), version)
		}
		return tagPairs(out.TagSet)
	}
	wantTags := func(what string, got []string, want ...string) {
		t.Helper()
		if len(got) != len(want) || (len(want) > 0 && !reflect.DeepEqual(got, want)) {
			t.Fatalf("%s: tags %q, want %q", what, got, want)
		}
	}

	// x-amz-tagging on PUT (ceph test_put_obj_with_tags: listed by key).
	put("hdr", "foo=bar&bar")
	wantTags("PUT with x-amz-tagging", tagsOf("hdr", ""), "bar=", "foo=bar")
	got, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(b), Key: aws.String("hdr")})
	if err != nil {
		t.Fatal(err)
	}
	_ = got.Body.Close()
	if aws.ToInt32(got.TagCount) != 2 {
		t.Fatalf("GET x-amz-tagging-count %d, want 2", aws.ToInt32(got.TagCount))
	}
	_, err = c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(b), Key: aws.String("dup"), Body: bytes.NewReader(nil), Tagging: aws.String("a=1&a=2")})
	wantAPIError(t, "PUT with a key twice in x-amz-tagging", err, "InvalidArgument", 400)

	// PutObjectTagging's limits.
	put("obj", "")
	wantTags("untagged", tagsOf("obj", ""))
	for _, tc := range []struct {
		name string
		tags []types.Tag
		code string
	}{
		{"10 tags of 128/256 characters", numberedTags(10, 128, 256), ""},
		{"11 tags", numberedTags(11, 3, 1), "InvalidTag"},
		{"key of 129", numberedTags(1, 129, 1), "InvalidTag"},
		{"value of 257", numberedTags(1, 3, 257), "InvalidTag"},
		{"duplicate key", tagSet("a", "1", "a", "2"), "InvalidTag"},
		{"aws: prefix", tagSet("aws:owner", "x"), "InvalidTag"},
		{"empty key", tagSet("", "x"), "InvalidTag"},
	} {
		_, err := c.PutObjectTagging(ctx, &s3.PutObjectTaggingInput{Bucket: aws.String(b), Key: aws.String("obj"),
			Tagging: &types.Tagging{TagSet: tc.tags}})
		if tc.code == "" {
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			wantTags(tc.name, tagsOf("obj", ""), tagPairs(tc.tags)...)
			continue
		}
		wantAPIError(t, tc.name, err, tc.code, 400)
	}
	// A refused tag set changed nothing; a new one replaces the old.
	if n := len(tagsOf("obj", "")); n != 10 {
		t.Fatalf("after refusals: %d tags, want the 10 set before", n)
	}
	if _, err := c.PutObjectTagging(ctx, &s3.PutObjectTaggingInput{Bucket: aws.String(b), Key: aws.String("obj"),
		Tagging: &types.Tagging{TagSet: tagSet("key3", "val3")}}); err != nil {
		t.Fatal(err)
	}
	wantTags("replaced", tagsOf("obj", ""), "key3=val3")
	if _, err := c.DeleteObjectTagging(ctx, &s3.DeleteObjectTaggingInput{Bucket: aws.String(b), Key: aws.String("obj")}); err != nil {
		t.Fatal(err)
	}
	wantTags("deleted", tagsOf("obj", ""))
	_, err = c.GetObjectTagging(ctx, &s3.GetObjectTaggingInput{Bucket: aws.String(b), Key: aws.String("absent")})
	wantAPIError(t, "GetObjectTagging of an absent key", err, "NoSuchKey", 404)

	// Copy: tags follow x-amz-tagging-directive.
	put("src", "s=1")
	src := b + "/src"
	if _, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String(b), Key: aws.String("copy"), CopySource: aws.String(src),
		Tagging: aws.String("ignored=1")}); err != nil {
		t.Fatal(err)
	}
	wantTags("copy (COPY by default)", tagsOf("copy", ""), "s=1")
	if _, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String(b), Key: aws.String("copy2"), CopySource: aws.String(src),
		TaggingDirective: types.TaggingDirectiveReplace, Tagging: aws.String("r=2")}); err != nil {
		t.Fatal(err)
	}
	wantTags("copy REPLACE", tagsOf("copy2", ""), "r=2")
	if _, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String(b), Key: aws.String("copy3"), CopySource: aws.String(src),
		TaggingDirective: types.TaggingDirectiveReplace}); err != nil {
		t.Fatal(err)
	}
	wantTags("copy REPLACE without tags", tagsOf("copy3", ""))
	_, err = c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String(b), Key: aws.String("copy4"), CopySource: aws.String(src),
		TaggingDirective: types.TaggingDirective("MERGE")})
	wantAPIError(t, "copy with an unknown tagging directive", err, "InvalidArgument", 400)

	// Multipart: the tags of CreateMultipartUpload go to the object.
	up, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(b), Key: aws.String("mpu"), Tagging: aws.String("m=1&n=2")})
	if err != nil {
		t.Fatal(err)
	}
	part, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String(b), Key: aws.String("mpu"), UploadId: up.UploadId,
		PartNumber: aws.Int32(1), Body: bytes.NewReader([]byte("part"))})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String(b), Key: aws.String("mpu"), UploadId: up.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{{PartNumber: aws.Int32(1), ETag: part.ETag}}}}); err != nil {
		t.Fatal(err)
	}
	wantTags("multipart", tagsOf("mpu", ""), "m=1", "n=2")

	// Versions keep their own tags.
	if _, err := c.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: aws.String(b),
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}}); err != nil {
		t.Fatal(err)
	}
	v1 := aws.ToString(put("ver", "v=1").VersionId)
	v2 := aws.ToString(put("ver", "v=2").VersionId)
	if _, err := c.PutObjectTagging(ctx, &s3.PutObjectTaggingInput{Bucket: aws.String(b), Key: aws.String("ver"), VersionId: aws.String(v1),
		Tagging: &types.Tagging{TagSet: tagSet("old", "yes")}}); err != nil {
		t.Fatal(err)
	}
	wantTags("version 1", tagsOf("ver", v1), "old=yes")
	wantTags("version 2", tagsOf("ver", v2), "v=2")
	wantTags("current", tagsOf("ver", ""), "v=2")

	// Bucket tagging.
	_, err = c.GetBucketTagging(ctx, &s3.GetBucketTaggingInput{Bucket: aws.String(b)})
	wantAPIError(t, "GetBucketTagging without tags", err, "NoSuchTagSet", 404)
	if _, err := c.PutBucketTagging(ctx, &s3.PutBucketTaggingInput{Bucket: aws.String(b),
		Tagging: &types.Tagging{TagSet: numberedTags(50, 3, 1)}}); err != nil {
		t.Fatal(err)
	}
	bt, err := c.GetBucketTagging(ctx, &s3.GetBucketTaggingInput{Bucket: aws.String(b)})
	if err != nil || len(bt.TagSet) != 50 {
		t.Fatalf("GetBucketTagging: %d tags, %v", len(bt.TagSet), err)
	}
	_, err = c.PutBucketTagging(ctx, &s3.PutBucketTaggingInput{Bucket: aws.String(b), Tagging: &types.Tagging{TagSet: numberedTags(51, 3, 1)}})
	wantAPIError(t, "PutBucketTagging of 51 tags", err, "InvalidTag", 400)
	if _, err := c.DeleteBucketTagging(ctx, &s3.DeleteBucketTaggingInput{Bucket: aws.String(b)}); err != nil {
		t.Fatal(err)
	}
	_, err = c.GetBucketTagging(ctx, &s3.GetBucketTaggingInput{Bucket: aws.String(b)})
	wantAPIError(t, "GetBucketTagging after delete", err, "NoSuchTagSet", 404)
}

// tagLockBoto3 runs the steps of a boto3 script (its helpers first) on a
// fresh server, each as a subtest; a step passes when it prints PASS.
func tagLockBoto3(t *testing.T, name, script string, steps []string) {
	t.Helper()
	py := cliPython(t)
	s := startCLIServer(t)
	dir := t.TempDir()
	path := filepath.Join(dir, name+".py")
	cliWrite(t, path, boto3Prelude+script+boto3Main)
	env := append(s.awsEnv(t), "CAIRN_ENDPOINT="+s.endpoint)
	for _, step := range steps {
		t.Run(step, func(t *testing.T) {
			r := cliRun(t, env, dir, py, path, step)
			if r.code != 0 || !strings.Contains(r.stdout, "\nPASS") {
				t.Fatalf("boto3 step %s failed: %s", step, r)
			}
		})
	}
}

const boto3Prelude = `
import datetime, os, sys, uuid
import boto3, botocore
from botocore.config import Config
from botocore.exceptions import ClientError

s3 = boto3.client("s3", endpoint_url=os.environ["CAIRN_ENDPOINT"],
                  config=Config(signature_version="s3v4", s3={"addressing_style": "path"}))
UTC = datetime.timezone.utc

def check(cond, msg):
    if not cond:
        print("FAIL:", msg)
        sys.exit(1)
    print("ok:", msg)

def expect_error(msg, status, code, fn, *args, **kwargs):
    try:
        fn(*args, **kwargs)
    except ClientError as e:
        got = (e.response["ResponseMetadata"]["HTTPStatusCode"], e.response["Error"]["Code"])
        check(got == (status, code), "%s: %r, want %r" % (msg, got, (status, code)))
        return
    check(False, "%s: no error, want %d %s" % (msg, status, code))

def new_bucket(lock=False):
    b = "b-" + uuid.uuid4().hex[:16]
    if lock:
        s3.create_bucket(Bucket=b, ObjectLockEnabledForBucket=True)
    else:
        s3.create_bucket(Bucket=b)
    return b

def simple_tagset(n):
    return {"TagSet": [{"Key": str(i), "Value": str(i)} for i in range(n)]}
`

const boto3Main = `
print("boto3", boto3.__version__, "botocore", botocore.__version__)
globals()["step_" + sys.argv[1]]()
print("PASS")
`

// TestS3TaggingBoto3 replays the ceph s3-tests' tagging cases with boto3.
func TestS3TaggingBoto3(t *testing.T) {
	tagLockBoto3(t, "tagging", boto3TaggingSteps, []string{"object_tags", "limits", "put_with_tags", "bucket_tags"})
}

const boto3TaggingSteps = `
def keyed_bucket(key):
    b = new_bucket()
    s3.put_object(Bucket=b, Key=key, Body=b"data")
    return b

def step_object_tags():
    b = keyed_bucket("k")
    ts = simple_tagset(2)
    r = s3.put_object_tagging(Bucket=b, Key="k", Tagging=ts)
    check(r["ResponseMetadata"]["HTTPStatusCode"] == 200, "put_object_tagging 200")
    check(s3.get_object_tagging(Bucket=b, Key="k")["TagSet"] == ts["TagSet"], "get_object_tagging returns the set")
    h = s3.head_object(Bucket=b, Key="k")
    check(h["ResponseMetadata"]["HTTPHeaders"].get("x-amz-tagging-count") == "2", "HEAD x-amz-tagging-count")
    mod = {"TagSet": [{"Key": "key3", "Value": "val3"}]}
    s3.put_object_tagging(Bucket=b, Key="k", Tagging=mod)
    check(s3.get_object_tagging(Bucket=b, Key="k")["TagSet"] == mod["TagSet"], "a new set replaces the old")
    r = s3.delete_object_tagging(Bucket=b, Key="k")
    check(r["ResponseMetadata"]["HTTPStatusCode"] == 204, "delete_object_tagging 204")
    check(len(s3.get_object_tagging(Bucket=b, Key="k")["TagSet"]) == 0, "no tags after delete")
    h = s3.head_object(Bucket=b, Key="k")
    check("x-amz-tagging-count" not in h["ResponseMetadata"]["HTTPHeaders"], "no x-amz-tagging-count without tags")

def step_limits():
    b = keyed_bucket("k")
    s3.put_object_tagging(Bucket=b, Key="k", Tagging=simple_tagset(10))
    check(len(s3.get_object_tagging(Bucket=b, Key="k")["TagSet"]) == 10, "10 tags")
    expect_error("11 tags", 400, "InvalidTag", s3.put_object_tagging, Bucket=b, Key="k", Tagging=simple_tagset(11))
    big = {"TagSet": [{"Key": ("%03d" % i) + "k" * 125, "Value": "v" * 256} for i in range(10)]}
    s3.put_object_tagging(Bucket=b, Key="k", Tagging=big)
    got = s3.get_object_tagging(Bucket=b, Key="k")["TagSet"]
    check(all(t in big["TagSet"] for t in got) and len(got) == 10, "keys of 128 and values of 256")
    expect_error("key of 129", 400, "InvalidTag", s3.put_object_tagging, Bucket=b, Key="k",
                 Tagging={"TagSet": [{"Key": "k" * 129, "Value": "v"}]})
    expect_error("value of 257", 400, "InvalidTag", s3.put_object_tagging, Bucket=b, Key="k",
                 Tagging={"TagSet": [{"Key": "k", "Value": "v" * 257}]})
    expect_error("aws: prefix", 400, "InvalidTag", s3.put_object_tagging, Bucket=b, Key="k",
                 Tagging={"TagSet": [{"Key": "aws:x", "Value": "v"}]})
    check(len(s3.get_object_tagging(Bucket=b, Key="k")["TagSet"]) == 10, "refusals changed nothing")

def step_put_with_tags():
    b = new_bucket()
    s3.put_object(Bucket=b, Key="t", Body=b"A" * 100, Tagging="foo=bar&bar")
    check(s3.get_object(Bucket=b, Key="t")["Body"].read() == b"A" * 100, "body")
    got = s3.get_object_tagging(Bucket=b, Key="t")["TagSet"]
    check(got == [{"Key": "bar", "Value": ""}, {"Key": "foo", "Value": "bar"}], "tags of x-amz-tagging: %r" % got)

def step_bucket_tags():
    b = new_bucket()
    expect_error("no bucket tags", 404, "NoSuchTagSet", s3.get_bucket_tagging, Bucket=b)
    s3.put_bucket_tagging(Bucket=b, Tagging={"TagSet": [{"Key": "Hello", "Value": "World"}]})
    got = s3.get_bucket_tagging(Bucket=b)["TagSet"]
    check(got == [{"Key": "Hello", "Value": "World"}], "bucket tags: %r" % got)
    s3.delete_bucket_tagging(Bucket=b)
    expect_error("bucket tags deleted", 404, "NoSuchTagSet", s3.get_bucket_tagging, Bucket=b)
`
