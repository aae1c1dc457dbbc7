package integration

import (
	"path/filepath"
	"strings"
	"testing"
)

// boto3SSEScript runs encryption at rest through boto3 (which computes
// the SSE-C key MD5 itself): SSE-C with ranges and errors, SSE-S3's ETag,
// SSE-KMS, multipart with SSE-C on each part, copies between kinds, and
// listing sizes.
const boto3SSEScript = `
import hashlib, os, sys
import boto3
from botocore.config import Config
from botocore.exceptions import ClientError

s3 = boto3.client("s3", endpoint_url=os.environ["CAIRN_ENDPOINT"],
                  config=Config(signature_version="s3v4", s3={"addressing_style": "path"}))

def check(cond, msg):
    if not cond:
        print("FAIL:", msg)
        sys.exit(1)
    print("ok:", msg)

def fails(status, code, fn, msg):
    try:
        fn()
    except ClientError as e:
        got = (e.response["ResponseMetadata"]["HTTPStatusCode"], e.response["Error"]["Code"])
        check(got[0] == status and (code is None or got[1] == code), "%s: %r" % (msg, got))
        return
    check(False, msg + ": no error")

b = "boto3-sse"
s3.create_bucket(Bucket=b)
K1, K2 = b"1" * 32, b"2" * 32
C1 = dict(SSECustomerAlgorithm="AES256", SSECustomerKey=K1)
C2 = dict(SSECustomerAlgorithm="AES256", SSECustomerKey=K2)
data = os.urandom(200 * 1024 + 3)

r = s3.put_object(Bucket=b, Key="c", Body=data, **C1)
check(r["SSECustomerAlgorithm"] == "AES256" and "SSECustomerKeyMD5" in r, "SSE-C put headers")
check(s3.get_object(Bucket=b, Key="c", **C1)["Body"].read() == data, "SSE-C get")
g = s3.get_object(Bucket=b, Key="c", Range="bytes=65000-70000", **C1)
check(g["Body"].read() == data[65000:70001] and g["ContentRange"] == "bytes 65000-70000/%d" % len(data), "SSE-C range get")
check(s3.head_object(Bucket=b, Key="c", **C1)["ContentLength"] == len(data), "SSE-C head size")
fails(400, None, lambda: s3.head_object(Bucket=b, Key="c"), "SSE-C head without the key")
fails(400, "InvalidRequest", lambda: s3.get_object(Bucket=b, Key="c"), "SSE-C get without the key")
fails(403, "AccessDenied", lambda: s3.get_object(Bucket=b, Key="c", **C2), "SSE-C get with another key")

r = s3.put_object(Bucket=b, Key="s3", Body=data, ServerSideEncryption="AES256")
check(r["ServerSideEncryption"] == "AES256" and r["ETag"].strip('"') == hashlib.md5(data).hexdigest(), "SSE-S3 put: ETag is the MD5")
check(s3.get_object(Bucket=b, Key="s3")["Body"].read() == data, "SSE-S3 get")
r = s3.put_object(Bucket=b, Key="kms", Body=data, ServerSideEncryption="aws:kms", SSEKMSKeyId="alpha")
check(r["ServerSideEncryption"] == "aws:kms" and r["SSEKMSKeyId"] == "alpha", "SSE-KMS put headers")
check(s3.get_object(Bucket=b, Key="kms")["Body"].read() == data, "SSE-KMS get")
fails(400, "KMS.NotFoundException", lambda: s3.put_object(Bucket=b, Key="x", Body=b"x", ServerSideEncryption="aws:kms", SSEKMSKeyId="nope"), "unknown KMS key")

parts = [os.urandom(5 * 1024 * 1024), os.urandom(1024 * 1024 + 9)]
up = s3.create_multipart_upload(Bucket=b, Key="mp", **C1)
fails(400, "InvalidRequest", lambda: s3.upload_part(Bucket=b, Key="mp", UploadId=up["UploadId"], PartNumber=1, Body=parts[0]), "part without the key")
done = []
for i, p in enumerate(parts):
    r = s3.upload_part(Bucket=b, Key="mp", UploadId=up["UploadId"], PartNumber=i + 1, Body=p, **C1)
    done.append({"PartNumber": i + 1, "ETag": r["ETag"]})
lp = s3.list_parts(Bucket=b, Key="mp", UploadId=up["UploadId"])
check([p["Size"] for p in lp["Parts"]] == [len(p) for p in parts], "list_parts sizes are the plaintext's")
s3.complete_multipart_upload(Bucket=b, Key="mp", UploadId=up["UploadId"], MultipartUpload={"Parts": done})
whole = parts[0] + parts[1]
check(s3.get_object(Bucket=b, Key="mp", **C1)["Body"].read() == whole, "SSE-C multipart get")
check(s3.get_object(Bucket=b, Key="mp", PartNumber=2, **C1)["Body"].read() == parts[1], "SSE-C multipart partNumber get")

s3.copy_object(Bucket=b, Key="c-to-s3", CopySource={"Bucket": b, "Key": "c"}, ServerSideEncryption="AES256",
               CopySourceSSECustomerAlgorithm="AES256", CopySourceSSECustomerKey=K1)
check(s3.get_object(Bucket=b, Key="c-to-s3")["Body"].read() == data, "copy SSE-C -> SSE-S3")
s3.copy_object(Bucket=b, Key="kms-to-c", CopySource={"Bucket": b, "Key": "kms"}, **C2)
check(s3.get_object(Bucket=b, Key="kms-to-c", **C2)["Body"].read() == data, "copy SSE-KMS -> SSE-C")
s3.copy_object(Bucket=b, Key="s3-to-plain", CopySource={"Bucket": b, "Key": "s3"})
h = s3.head_object(Bucket=b, Key="s3-to-plain")
check("ServerSideEncryption" not in h and h["ContentLength"] == len(data), "copy SSE-S3 -> plain")

sizes = {o["Key"]: o["Size"] for o in s3.list_objects_v2(Bucket=b)["Contents"]}
check(sizes["c"] == len(data) and sizes["mp"] == len(whole) and sizes["kms"] == len(data), "list sizes are the plaintext's: %r" % sizes)
print("PASS")
`

func TestS3SSEBoto3(t *testing.T) {
	py := cliPython(t)
	srv := startSSEServer(t, t.TempDir(), sseMasterA)
	dir := t.TempDir()
	script := filepath.Join(dir, "sse.py")
	cliWrite(t, script, boto3SSEScript)
	cs := &cliServer{server: srv, endpoint: srv.url(""), dir: t.TempDir()}
	env := append(cs.awsEnv(t), "CAIRN_ENDPOINT="+cs.endpoint, "AWS_ACCESS_KEY_ID="+s3User, "AWS_SECRET_ACCESS_KEY="+s3Secret)
	r := cliRun(t, env, dir, py, script)
	t.Logf("%s:\n%s%s", py, r.stdout, r.stderr)
	if r.code != 0 || !strings.Contains(r.stdout, "\nPASS") {
		t.Fatalf("boto3 SSE script failed: %s", r)
	}
}
