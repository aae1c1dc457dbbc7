package integration

import (
	"path/filepath"
	"strings"
	"testing"
)

// boto3SSEScript runs encryption at rest through boto3 (which computes
// the SSE-C key MD5 itself): SSE-C with ranges and errors, SSE-S3's ETag,
// SSE-KMS, multipart with SSE-C on each part, copies between kinds,
// listing sizes, ETags, write-only headers refused on reads,
// GetObjectAttributes of SSE-C, and POST uploads with encryption fields
// or the bucket default.
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

# ETags: SSE-C and SSE-KMS ones are opaque (32 hex digits, not the MD5),
# SSE-S3 parts' are their plaintext's MD5, as AWS.
for k in ("c", "kms"):
    e = s3.head_object(Bucket=b, Key=k, **(C1 if k == "c" else {}))["ETag"].strip('"')
    check(len(e) == 32 and all(ch in "0123456789abcdef" for ch in e) and e != hashlib.md5(data).hexdigest(), "%s ETag is opaque: %s" % (k, e))
up = s3.create_multipart_upload(Bucket=b, Key="mp-s3", ServerSideEncryption="AES256")
done = []
for i, p in enumerate(parts):
    r = s3.upload_part(Bucket=b, Key="mp-s3", UploadId=up["UploadId"], PartNumber=i + 1, Body=p)
    check(r["ETag"].strip('"') == hashlib.md5(p).hexdigest(), "SSE-S3 part %d ETag is its MD5" % (i + 1))
    done.append({"PartNumber": i + 1, "ETag": r["ETag"]})
r = s3.complete_multipart_upload(Bucket=b, Key="mp-s3", UploadId=up["UploadId"], MultipartUpload={"Parts": done})
want = hashlib.md5(b"".join(hashlib.md5(p).digest() for p in parts)).hexdigest() + "-2"
check(r["ETag"].strip('"') == want, "SSE-S3 multipart ETag as a plain one's: %s" % r["ETag"])
check(s3.get_object(Bucket=b, Key="mp-s3")["Body"].read() == whole, "SSE-S3 multipart get")

# The write-only encryption headers on a read: 400 InvalidArgument (AWS's
# GetObject: "you'll get an HTTP 400 Bad Request error"), whatever the
# object's encryption.
def injected(hdrs, fn):
    def add(request, **kw):
        for k, v in hdrs.items():
            request.headers[k] = v
    s3.meta.events.register("before-sign.s3", add)
    try:
        return fn()
    finally:
        s3.meta.events.unregister("before-sign.s3", add)
KMSH = {"x-amz-server-side-encryption": "aws:kms", "x-amz-server-side-encryption-aws-kms-key-id": "alpha"}
fails(400, "InvalidArgument", lambda: injected(KMSH, lambda: s3.get_object(Bucket=b, Key="kms")), "GET of SSE-KMS with SSE-KMS headers")
fails(400, None, lambda: injected(KMSH, lambda: s3.head_object(Bucket=b, Key="kms")), "HEAD of SSE-KMS with SSE-KMS headers")
fails(400, "InvalidArgument", lambda: injected(KMSH, lambda: s3.get_object(Bucket=b, Key="s3-to-plain")), "GET of a plain object with SSE-KMS headers")
fails(400, "InvalidArgument", lambda: injected({"x-amz-server-side-encryption": "AES256"}, lambda: s3.get_object(Bucket=b, Key="s3")), "GET of SSE-S3 with SSE-S3 header")
fails(400, "InvalidArgument", lambda: injected(KMSH, lambda: s3.get_object_attributes(Bucket=b, Key="kms", ObjectAttributes=["ObjectSize"])), "GetObjectAttributes with SSE-KMS headers")

# GetObjectAttributes of an SSE-C object needs its key, as GET and HEAD
# (botocore encodes the key and its MD5 only for the older operations).
import base64
def b64(x):
    return base64.b64encode(x).decode()
def encoded(k):
    return dict(SSECustomerAlgorithm="AES256", SSECustomerKey=b64(k), SSECustomerKeyMD5=b64(hashlib.md5(k).digest()))
fails(400, "InvalidRequest", lambda: s3.get_object_attributes(Bucket=b, Key="c", ObjectAttributes=["ObjectSize"]), "attributes of SSE-C without the key")
fails(403, "AccessDenied", lambda: s3.get_object_attributes(Bucket=b, Key="c", ObjectAttributes=["ObjectSize"], **encoded(K2)), "attributes of SSE-C with another key")
a = s3.get_object_attributes(Bucket=b, Key="c", ObjectAttributes=["ObjectSize", "ETag"], **encoded(K1))
check(a["ObjectSize"] == len(data), "attributes of SSE-C with its key")
a = s3.get_object_attributes(Bucket=b, Key="kms", ObjectAttributes=["ObjectSize"])
check(a["ObjectSize"] == len(data), "attributes of SSE-KMS")

# POST uploads: SSE-C, SSE-S3 and SSE-KMS fields, and the bucket default.
import urllib3
http = urllib3.PoolManager()
def post(bucket, key, body, fields):
    conds = [{k: v} for k, v in fields.items()]
    p = s3.generate_presigned_post(Bucket=bucket, Key=key, Fields=dict(fields), Conditions=conds)
    form = list(p["fields"].items()) + [("file", ("f.bin", body))]
    return http.request("POST", p["url"], fields=form)
ssec_fields = {"x-amz-server-side-encryption-customer-algorithm": "AES256",
               "x-amz-server-side-encryption-customer-key": b64(K1),
               "x-amz-server-side-encryption-customer-key-md5": b64(hashlib.md5(K1).digest())}
r = post(b, "post-c", data, ssec_fields)
check(r.status == 204 and r.headers.get("x-amz-server-side-encryption-customer-algorithm") == "AES256", "POST with SSE-C fields: %d %r" % (r.status, dict(r.headers)))
check(s3.get_object(Bucket=b, Key="post-c", **C1)["Body"].read() == data, "POST SSE-C get with the key")
fails(400, "InvalidRequest", lambda: s3.get_object(Bucket=b, Key="post-c"), "POST SSE-C get without the key")
r = post(b, "post-s3", data, {"x-amz-server-side-encryption": "AES256"})
h = s3.head_object(Bucket=b, Key="post-s3")
check(r.status == 204 and h["ServerSideEncryption"] == "AES256" and h["ETag"].strip('"') == hashlib.md5(data).hexdigest() and h["ContentLength"] == len(data), "POST with SSE-S3 field: %r" % h)
r = post(b, "post-kms", data, {"x-amz-server-side-encryption": "aws:kms", "x-amz-server-side-encryption-aws-kms-key-id": "beta"})
h = s3.head_object(Bucket=b, Key="post-kms")
check(r.status == 204 and h["ServerSideEncryption"] == "aws:kms" and h["SSEKMSKeyId"] == "beta", "POST with SSE-KMS fields: %r" % h)
check(s3.get_object(Bucket=b, Key="post-kms")["Body"].read() == data, "POST SSE-KMS get")
r = post(b, "post-bad", data, {"x-amz-server-side-encryption": "AES512"})
check(r.status == 400 and b"InvalidArgument" in r.data, "POST with a bad SSE field: %d" % r.status)
bd = "boto3-sse-default"
s3.create_bucket(Bucket=bd)
s3.put_bucket_encryption(Bucket=bd, ServerSideEncryptionConfiguration={"Rules": [{"ApplyServerSideEncryptionByDefault": {"SSEAlgorithm": "aws:kms", "KMSMasterKeyID": "alpha"}}]})
for n in (0, 1, 65536, 65537, 300000):
    body = os.urandom(n)
    r = post(bd, "post-%d" % n, body, {})
    h = s3.head_object(Bucket=bd, Key="post-%d" % n)
    check(r.status == 204 and h["ServerSideEncryption"] == "aws:kms" and h["ContentLength"] == n, "POST of %d bytes gets the bucket default: %r" % (n, h.get("ServerSideEncryption")))
    check(s3.get_object(Bucket=bd, Key="post-%d" % n)["Body"].read() == body, "POST of %d bytes reads back" % n)
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
