package integration

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestS3PostObjectCephStyle posts the forms of ceph s3-tests'
// test_post_object_* (the authenticated ones: the anonymous ones need a
// public-write bucket ACL) the way those tests do, with python-requests'
// files= encoding (every field a part with a file name), and checks the
// status each test asserts. The redirect case is checked without
// following it (ceph follows it to an anonymous bucket listing).
func TestS3PostObjectCephStyle(t *testing.T) {
	py := cliPython(t)
	s := startCLIServer(t)
	dir := t.TempDir()
	script := filepath.Join(dir, "ceph_post.py")
	cliWrite(t, script, cephPostScript)
	r := cliRun(t, append(s.awsEnv(t), "CAIRN_ENDPOINT="+s.endpoint), dir, py, script)
	t.Logf("%s", r.stdout)
	if r.code == 4 {
		t.Skipf("SKIP: %s", strings.TrimSpace(r.stdout))
	}
	if r.code != 0 || !strings.Contains(r.stdout, "\nPASS") {
		t.Fatalf("ceph-style POST: %s", r)
	}
	browserFsck(t, s.server)
}

const cephPostScript = `
import base64, datetime, hashlib, hmac, json, os, sys
from collections import OrderedDict
try:
    import requests
except ImportError:
    print("python3-requests is not installed")
    sys.exit(4)
import boto3
from botocore.config import Config

ENDPOINT = os.environ["CAIRN_ENDPOINT"]
AK, SK = os.environ["AWS_ACCESS_KEY_ID"], os.environ["AWS_SECRET_ACCESS_KEY"]
s3 = boto3.client("s3", endpoint_url=ENDPOINT, config=Config(signature_version="s3v4", s3={"addressing_style": "path"}))
failed = []
n = [0]

def bucket():
    n[0] += 1
    b = "ceph-post-%d" % n[0]
    s3.create_bucket(Bucket=b)
    return b

def exp(seconds=6000):
    return (datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")

def base(b, rng=(0, 1024)):
    return [{"bucket": b}, ["starts-with", "$key", "foo"], {"acl": "private"},
            ["starts-with", "$Content-Type", "text/plain"], ["content-length-range", rng[0], rng[1]]]

def sign(doc):
    policy = base64.b64encode(json.JSONEncoder().encode(doc).encode())
    return policy, base64.b64encode(hmac.new(SK.encode(), policy, hashlib.sha1).digest())

def form(policy, sig, key="foo.txt", ak=None, extra=(), file=("bar"), fields=None):
    p = OrderedDict([("key", key), ("AWSAccessKeyId", ak or AK), ("acl", "private"), ("signature", sig), ("policy", policy),
                     ("Content-Type", "text/plain")] + list(extra) + [("file", file)])
    if fields is not None:
        p = OrderedDict(fields + [("file", file)])
    return p

def case(name, want, payload, b, url=None, check=None):
    r = requests.post(url or ENDPOINT + "/" + b, files=payload, allow_redirects=False)
    ok = r.status_code == want and (check is None or check(r))
    print("%s: %s %d (want %d) %s" % ("ok" if ok else "FAIL", name, r.status_code, want, r.text[:200] if not ok else ""))
    if not ok:
        failed.append(name)

def body(b, k):
    return s3.get_object(Bucket=b, Key=k)["Body"].read().decode()

b = bucket()
p, sig = sign({"expiration": exp(), "conditions": base(b)})
case("authenticated_request", 204, form(p, sig), b, check=lambda r: body(b, "foo.txt") == "bar")
case("authenticated_request_bad_access_key", 403, form(p, sig, ak="foo"), b)
case("ignored_header", 204, form(p, sig, extra=[("x-ignore-foo", "bar")]), b)
case("invalid_signature", 403, form(p, sig[::-1]), b)
case("invalid_access_key", 403, form(p, sig, ak=AK[::-1]), b)
case("missing_signature", 400, OrderedDict([("key", "foo.txt"), ("AWSAccessKeyId", AK), ("acl", "private"), ("policy", p),
                                           ("Content-Type", "text/plain"), ("file", "bar")]), b)
case("no_key_specified", 400, OrderedDict([("AWSAccessKeyId", AK), ("acl", "private"), ("signature", sig), ("policy", p),
                                          ("Content-Type", "text/plain"), ("file", "bar")]), b)
case("set_key_from_filename", 204, form(p, sig, key="${filename}", file=("foo.txt", "bar")), b)
case("wrong_bucket", 403, form(p, sig, key="${filename}", file=("foo.txt", "bar"), extra=[("bucket", b)]), bucket())

nct = {"expiration": exp(), "conditions": [{"bucket": b}, ["starts-with", "$key", "foo"], {"acl": "private"}, ["content-length-range", 0, 1024]]}
p2, sig2 = sign(nct)
case("authenticated_no_content_type", 204, OrderedDict([("key", "foo.txt"), ("AWSAccessKeyId", AK), ("acl", "private"),
                                                       ("signature", sig2), ("policy", p2), ("file", "bar")]), b)

big = "foo" * 1024 * 1024
p3, sig3 = sign({"expiration": exp(), "conditions": base(b, (0, 5 * 1024 * 1024))})
case("upload_larger_than_chunk", 204, form(p3, sig3, file=big), b, check=lambda r: body(b, "foo.txt") == big)
p3, sig3 = sign({"expiration": exp(), "conditions": base(b, (4 << 20, 12 << 20))})
case("upload_size_rgw_chunk_size_bug", 204, form(p3, sig3, file="x" * ((4 << 20) + 200)), b)

ci = {"expiration": exp(), "conditions": [{"bUcKeT": b}, ["StArTs-WiTh", "$KeY", "foo"], {"AcL": "private"},
                                          ["StArTs-WiTh", "$CoNtEnT-TyPe", "text/plain"], ["content-length-range", 0, 1024]]}
p4, sig4 = sign(ci)
case("case_insensitive_condition_fields", 204, form(None, None, fields=[("kEy", "foo.txt"), ("AWSAccessKeyId", AK), ("aCl", "private"),
     ("signature", sig4), ("pOLICy", p4), ("Content-Type", "text/plain")]), b)

esc = base(b)
esc[1] = ["starts-with", "$key", "\\$foo"]
p5, sig5 = sign({"expiration": exp(), "conditions": esc})
case("escaped_field_values", 204, form(p5, sig5, key="\\$foo.txt"), b, check=lambda r: body(b, "\\$foo.txt") == "bar")

meta = base(b) + [["starts-with", "$x-amz-meta-foo", "bar"]]
p6, sig6 = sign({"expiration": exp(), "conditions": meta})
case("user_specified_header", 204, form(p6, sig6, extra=[("x-amz-meta-foo", "barclamp")]), b,
     check=lambda r: s3.get_object(Bucket=b, Key="foo.txt")["Metadata"]["foo"] == "barclamp")
case("request_missing_policy_specified_field", 403, form(p6, sig6), b)
p7, sig7 = sign({"expiration": exp(), "conditions": base(b) + [["eq", "$x-amz-meta-foo", ""]]})
case("invalid_request_field_value", 403, form(p7, sig7, extra=[("x-amz-meta-foo", "barclamp")]), b)
p8, sig8 = sign({"expiration": exp(), "conditions": base(b)[1:]})
case("missing_policy_condition", 403, form(p8, sig8), b)

for name, doc, want in [
    ("invalid_date_format", {"expiration": str(datetime.datetime.now(datetime.timezone.utc)), "conditions": base(b)}, 400),
    ("condition_is_case_sensitive", {"expiration": exp(), "CONDITIONS": base(b)}, 400),
    ("expires_is_case_sensitive", {"EXPIRATION": exp(), "conditions": base(b)}, 400),
    ("expired_policy", {"expiration": exp(-6000), "conditions": base(b)}, 403),
    ("missing_expires_condition", {"conditions": base(b)}, 400),
    ("missing_conditions_list", {"expiration": exp()}, 400),
    ("upload_size_limit_exceeded", {"expiration": exp(), "conditions": base(b, (0, 0))}, 400),
    ("upload_size_below_minimum", {"expiration": exp(), "conditions": base(b, (512, 1000))}, 400),
    ("missing_content_length_argument", {"expiration": exp(), "conditions": base(b)[:4] + [["content-length-range", 0]]}, 400),
    ("invalid_content_length_argument", {"expiration": exp(), "conditions": base(b, (-1, 0))}, 400),
    ("empty_conditions", {"expiration": exp(), "conditions": [{}]}, 400),
]:
    pp, ss = sign(doc)
    case(name, want, form(pp, ss), b)

red = ENDPOINT + "/" + b
p9, sig9 = sign({"expiration": exp(), "conditions": base(b) + [["eq", "$success_action_redirect", red]]})
def redirected(r):
    etag = s3.head_object(Bucket=b, Key="foo.txt")["ETag"].strip('"')
    return r.headers["Location"] == "%s?bucket=%s&key=%s&etag=%%22%s%%22" % (red, b, "foo.txt", etag)
case("success_redirect_action", 303, form(p9, sig9, extra=[("success_action_redirect", red)]), b, check=redirected)

tags = "<Tagging><TagSet><Tag><Key>0</Key><Value>0</Value></Tag><Tag><Key>1</Key><Value>1</Value></Tag></TagSet></Tagging>"
p10, sig10 = sign({"expiration": exp(), "conditions": base(b) + [["starts-with", "$tagging", ""]]})
case("tags_authenticated_request", 204, form(p10, sig10, extra=[("tagging", tags)]), b)

if failed:
    print("FAILED:", ", ".join(failed))
    sys.exit(1)
print("PASS")
`
