package integration

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// boto3SigV2Script runs boto3 with signature_version "s3" (SigV2) against
// CAIRN_ENDPOINT: put/get/list/multipart/delete, a wrong secret, and two
// presigned GET URLs it prints for the Go side to fetch.
const boto3SigV2Script = `
import os, sys
import boto3, botocore
from botocore.config import Config
from botocore.exceptions import ClientError

ENDPOINT = os.environ["CAIRN_ENDPOINT"]
B = "boto3-sigv2"

def client(secret=None):
    kw = {}
    if secret is not None:
        kw = dict(aws_access_key_id=os.environ["AWS_ACCESS_KEY_ID"], aws_secret_access_key=secret)
    return boto3.client("s3", endpoint_url=ENDPOINT,
                        config=Config(signature_version="s3", s3={"addressing_style": "path"},
                                      retries={"max_attempts": 1}), **kw)

def check(cond, msg):
    if not cond:
        print("FAIL:", msg)
        sys.exit(1)
    print("ok:", msg)

s3 = client()
auths = []
s3.meta.events.register("before-send.s3", lambda request, **kw: auths.append(request.headers.get("Authorization", b"")))

s3.create_bucket(Bucket=B)
key = "dir/hello sigv2+€.txt"
s3.put_object(Bucket=B, Key=key, Body=b"hello sigv2", ContentType="text/plain", Metadata={"colour": "blue"})
got = s3.get_object(Bucket=B, Key=key)
check(got["Body"].read() == b"hello sigv2", "get_object returns the body")
check(got["ContentType"] == "text/plain" and got["Metadata"] == {"colour": "blue"}, "content type and metadata")
got = s3.get_object(Bucket=B, Key=key, ResponseContentType="application/x-test")
got["Body"].read()
check(got["ContentType"] == "application/x-test", "response-content-type override")
keys = [o["Key"] for o in s3.list_objects_v2(Bucket=B, Prefix="dir/")["Contents"]]
check(keys == [key], "list_objects_v2: %r" % keys)
up = s3.create_multipart_upload(Bucket=B, Key="mpu")["UploadId"]
etag = s3.upload_part(Bucket=B, Key="mpu", UploadId=up, PartNumber=1, Body=b"part one")["ETag"]
s3.complete_multipart_upload(Bucket=B, Key="mpu", UploadId=up,
                             MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": etag}]})
check(s3.get_object(Bucket=B, Key="mpu")["Body"].read() == b"part one", "multipart upload")
s3.delete_object(Bucket=B, Key="mpu")
try:
    s3.head_object(Bucket=B, Key="mpu")
    check(False, "head_object after delete fails")
except ClientError as e:
    check(e.response["ResponseMetadata"]["HTTPStatusCode"] == 404, "deleted object is 404")
v2 = [a for a in auths if a]
def s(a): return a.decode() if isinstance(a, bytes) else a
check(v2 and all(s(a).startswith("AWS ") and not s(a).startswith("AWS4-") for a in v2),
      "every request was signed with SigV2 (%d requests)" % len(v2))

try:
    client("not-the-secret").list_objects_v2(Bucket=B)
    check(False, "a wrong secret fails")
except ClientError as e:
    code, status = e.response["Error"]["Code"], e.response["ResponseMetadata"]["HTTPStatusCode"]
    check(code == "SignatureDoesNotMatch" and status == 403, "wrong secret: %s %d" % (code, status))

s3.put_object(Bucket=B, Key="presigned.txt", Body=b"presigned via boto3")
print("PRESIGNED", s3.generate_presigned_url("get_object", Params={"Bucket": B, "Key": "presigned.txt"}, ExpiresIn=300))
print("EXPIRING", s3.generate_presigned_url("get_object", Params={"Bucket": B, "Key": "presigned.txt"}, ExpiresIn=1))
print("boto3", boto3.__version__, "botocore", botocore.__version__)
print("PASS")
`

// boto3 signing with SigV2 (signature_version "s3"), and its presigned
// URLs fetched with Go's HTTP client, the short-lived one after it expired.
func TestS3SigV2Boto3(t *testing.T) {
	py := cliPython(t)
	s := startCLIServer(t)
	env := append(s.awsEnv(t), "CAIRN_ENDPOINT="+s.endpoint)
	r := cliRun(t, env, t.TempDir(), py, "-c", boto3SigV2Script)
	t.Logf("boto3:\n%s", r.stdout)
	if r.code != 0 || !strings.Contains(r.stdout, "\nPASS") {
		t.Fatalf("boto3 SigV2 script: %s\nserver log:\n%s", r, s.stderr.String())
	}
	presigned, expiring := outputLine(t, r.stdout, "PRESIGNED "), outputLine(t, r.stdout, "EXPIRING ")
	for _, u := range []string{presigned, expiring} {
		if !strings.Contains(u, "AWSAccessKeyId=") || !strings.Contains(u, "Signature=") {
			t.Fatalf("boto3 did not presign with SigV2: %s", u)
		}
	}
	res := doRaw(t, newRaw(t, "GET", presigned, nil))
	if res.status != 200 || string(res.body) != "presigned via boto3" {
		t.Fatalf("GET %s: %d %s", presigned, res.status, res.body)
	}
	waitPast(t, expiring)
	res = doRaw(t, newRaw(t, "GET", expiring, nil))
	if res.status != 403 || res.code != "AccessDenied" || !strings.Contains(string(res.body), "Request has expired") {
		t.Fatalf("GET of an expired URL %s: %d %q %s", expiring, res.status, res.code, res.body)
	}
}

// Must-show 2 of issue 17: aws s3 presign from aws-cli v1 with no
// configuration (credentials and endpoint only) gives a URL curl can GET,
// and an expired one gets 403. aws-cli v1 presigns with SigV2's query form
// by default; the test checks it did.
func TestS3SigV2AwsCLIv1Presign(t *testing.T) {
	aws1 := awsCLIv1(t)
	curl := cliFind(t, "curl", "curl")
	s := startCLIServer(t)
	c := sdkClient(s.server, cliUser, cliSecret)
	const bucket = "awscli-v1-presign"
	if _, err := c.CreateBucket(callCtx(t), &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatalf("CreateBucket: %v", err)
	}
	objects := map[string]string{"plain.txt": "plain", "dir/with space+plus €.txt": "awkward name"}
	for k, v := range objects {
		if _, err := c.PutObject(callCtx(t), &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(k), Body: strings.NewReader(v)}); err != nil {
			t.Fatalf("PutObject %s: %v", k, err)
		}
	}
	// Nothing but the credentials: no region, no config or credentials
	// file (not even ~/.aws), no signature version.
	dir := t.TempDir()
	env := append(cliBaseEnv(),
		"AWS_ACCESS_KEY_ID="+cliUser,
		"AWS_SECRET_ACCESS_KEY="+cliSecret,
		"AWS_CONFIG_FILE="+filepath.Join(dir, "no-config"),
		"AWS_SHARED_CREDENTIALS_FILE="+filepath.Join(dir, "no-credentials"),
		"AWS_EC2_METADATA_DISABLED=true",
	)
	presign := func(key string, extra ...string) string {
		t.Helper()
		args := append([]string{"--endpoint-url", s.endpoint, "s3", "presign", "s3://" + bucket + "/" + key}, extra...)
		u := strings.TrimSpace(cliMust(t, env, dir, aws1, args...).stdout)
		if !strings.Contains(u, "AWSAccessKeyId=") || !strings.Contains(u, "Expires=") || !strings.Contains(u, "Signature=") {
			t.Fatalf("aws-cli v1 did not presign with SigV2's query form: %s", u)
		}
		return u
	}
	get := func(u string) (int, string) {
		t.Helper()
		out := filepath.Join(dir, "body")
		r := cliMust(t, env, dir, curl, "-sS", "-o", out, "-w", "%{http_code}", u)
		body, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		code := 0
		for _, ch := range strings.TrimSpace(r.stdout) {
			code = code*10 + int(ch-'0')
		}
		return code, string(body)
	}
	for k, v := range objects {
		u := presign(k)
		if code, body := get(u); code != 200 || body != v {
			t.Fatalf("curl %s: %d %q, want 200 %q\nserver log:\n%s", u, code, body, v, s.stderr.String())
		}
	}
	u := presign("plain.txt", "--expires-in", "1")
	waitPast(t, u)
	if code, body := get(u); code != 403 || !strings.Contains(body, "<Code>AccessDenied</Code>") || !strings.Contains(body, "Request has expired") {
		t.Fatalf("curl of an expired URL %s: %d %s", u, code, body)
	}
}

// awsCLIv1 returns an aws-cli v1 (aws --version says aws-cli/1.x) from
// PATH or the usual places, or skips the test. Debian's /usr/bin/aws may
// be v2, which presigns with SigV4; pip's awscli package is v1.
func awsCLIv1(t *testing.T) string {
	t.Helper()
	var cands, tried []string
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		cands = append(cands, filepath.Join(d, "aws"))
	}
	cands = append(cands, "/usr/bin/aws", "/usr/local/bin/aws")
	seen := map[string]bool{}
	for _, p := range cands {
		if seen[p] || !cliExecutable(p) {
			continue
		}
		seen[p] = true
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		var out bytes.Buffer
		cmd := exec.CommandContext(ctx, p, "--version")
		cmd.Env, cmd.Stdout, cmd.Stderr = cliBaseEnv(), &out, &out
		err := cmd.Run()
		cancel()
		v := strings.TrimSpace(out.String())
		if err == nil && strings.HasPrefix(v, "aws-cli/1.") {
			t.Logf("using %s: %s", p, v)
			return p
		}
		tried = append(tried, p+" ("+v+")")
	}
	t.Skipf("SKIP: no aws-cli v1 found (tried %q): pip install awscli (v1) to run this test", tried)
	return ""
}

// outputLine returns the rest of the first line of out starting with prefix.
func outputLine(t *testing.T, out, prefix string) string {
	t.Helper()
	for line := range strings.SplitSeq(out, "\n") {
		if v, ok := strings.CutPrefix(line, prefix); ok {
			return strings.TrimSpace(v)
		}
	}
	t.Fatalf("no %q line in:\n%s", prefix, out)
	return ""
}
