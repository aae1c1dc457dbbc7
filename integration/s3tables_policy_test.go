package integration

import (
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// s3tablesPolicyScript drives the resource policy operations of the AWS
// S3 Tables API with boto3's s3tables client, one step per run (its
// first argument), as root (the AWS_* credentials) and as a user without
// rights on the table bucket (CAIRN_USER_KEY and CAIRN_USER_SECRET). It
// exits 0 and prints PASS when every check holds.
const s3tablesPolicyScript = `
import json, os, sys
import boto3, botocore
from botocore.config import Config

ENDPOINT = os.environ["CAIRN_ENDPOINT"]
cfg = Config(retries={"max_attempts": 1})
root = boto3.client("s3tables", endpoint_url=ENDPOINT, region_name="us-east-1", config=cfg)
user = boto3.client("s3tables", endpoint_url=ENDPOINT, region_name="us-east-1", config=cfg,
                    aws_access_key_id=os.environ["CAIRN_USER_KEY"], aws_secret_access_key=os.environ["CAIRN_USER_SECRET"])
ARN = "arn:aws:s3tables:us-east-1:000000000000:bucket/pol-lake"
USER_ARN = "arn:aws:iam::000000000000:user/" + os.environ["CAIRN_USER_KEY"]
TABLE = dict(tableBucketARN=ARN, namespace="hr", name="staff")
READ = ["s3tables:GetTableBucket", "s3tables:ListNamespaces", "s3tables:GetNamespace", "s3tables:ListTables",
        "s3tables:GetTable", "s3tables:GetTableMetadataLocation", "s3tables:GetTableData"]

def check(cond, msg):
    if not cond:
        print("FAIL:", msg)
        sys.exit(1)
    print("ok:", msg)

def error_code(call, **kw):
    try:
        call(**kw)
    except botocore.exceptions.ClientError as e:
        return e.response["Error"]["Code"], e.response["ResponseMetadata"]["HTTPStatusCode"]
    return None, 200

def refused(call, what, **kw):
    code, status = error_code(call, **kw)
    check(code == "ForbiddenException" and status == 403, "%s is refused: %s %d" % (what, code, status))

def allowed(call, what, **kw):
    code, status = error_code(call, **kw)
    check(code is None, "%s is allowed: %s %d" % (what, code, status))

def policy(*statements):
    return json.dumps({"Version": "2012-10-17", "Statement": list(statements)})

def step_setup():
    root.create_table_bucket(name="pol-lake")
    root.create_namespace(tableBucketARN=ARN, namespace=["hr"])
    t = root.create_table(format="ICEBERG", **TABLE)
    code, status = error_code(root.get_table_bucket_policy, tableBucketARN=ARN)
    check(code == "NotFoundException" and status == 404, "a table bucket without a policy: %s %d" % (code, status))
    code, _ = error_code(root.get_table_policy, **TABLE)
    check(code == "NotFoundException", "a table without a policy: %s" % code)
    print("TABLE_ARN", t["tableARN"])

def step_refused():
    refused(user.get_table, "get_table without rights", **TABLE)
    refused(user.list_tables, "list_tables without rights", tableBucketARN=ARN)
    refused(user.get_table_bucket_policy, "get_table_bucket_policy without rights", tableBucketARN=ARN)
    refused(user.put_table_bucket_policy, "put_table_bucket_policy without rights", tableBucketARN=ARN,
            resourcePolicy=policy({"Effect": "Allow", "Principal": "*", "Action": "s3tables:*", "Resource": "*"}))

def step_allow():
    doc = policy({"Sid": "ReadLake", "Effect": "Allow", "Principal": {"AWS": USER_ARN}, "Action": READ,
                  "Resource": [ARN, ARN + "/table/*"]})
    root.put_table_bucket_policy(tableBucketARN=ARN, resourcePolicy=doc)
    got = root.get_table_bucket_policy(tableBucketARN=ARN)["resourcePolicy"]
    check(json.loads(got) == json.loads(doc), "get_table_bucket_policy answers the policy put")
    for bad, why in [("{", "not JSON"),
                     (policy({"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject", "Resource": ARN}), "an s3: action"),
                     (policy({"Effect": "Allow", "Principal": "*", "Action": "s3tables:GetTable",
                              "Resource": "arn:aws:s3tables:us-east-1:000000000000:bucket/other"}), "another bucket's ARN"),
                     (policy({"Effect": "Allow", "Action": "s3tables:GetTable", "Resource": ARN}), "no Principal"),
                     (policy({"Effect": "Allow", "Principal": "*", "Action": "s3tables:GetTable", "Resource": ARN, "Sid": "x" * 20480}), "over 20 KB")]:
        code, status = error_code(root.put_table_bucket_policy, tableBucketARN=ARN, resourcePolicy=bad)
        check(code == "BadRequestException" and status == 400, "a malformed policy (%s) is refused: %s %d" % (why, code, status))
    check(json.loads(root.get_table_bucket_policy(tableBucketARN=ARN)["resourcePolicy"]) == json.loads(doc),
          "the refused puts left the policy as it was")
    allowed(user.get_table, "get_table by the table bucket policy", **TABLE)
    allowed(user.get_table_metadata_location, "get_table_metadata_location by the table bucket policy", **TABLE)
    tables = user.list_tables(tableBucketARN=ARN)["tables"]
    check([t["name"] for t in tables] == ["staff"], "list_tables by the table bucket policy: %r" % tables)
    refused(user.create_namespace, "create_namespace, which the policy does not grant", tableBucketARN=ARN, namespace=["x"])
    refused(user.get_table_bucket_policy, "get_table_bucket_policy, which the policy does not grant", tableBucketARN=ARN)

def step_deny():
    doc = policy({"Sid": "NoStaff", "Effect": "Deny", "Principal": {"AWS": USER_ARN},
                  "Action": ["s3tables:GetTable", "s3tables:GetTableMetadataLocation", "s3tables:GetTableData"],
                  "Resource": os.environ["TABLE_ARN"]})
    root.put_table_policy(resourcePolicy=doc, **TABLE)
    check(json.loads(root.get_table_policy(**TABLE)["resourcePolicy"]) == json.loads(doc), "get_table_policy answers the policy put")
    refused(user.get_table, "get_table denied by the table policy", **TABLE)
    allowed(user.list_tables, "list_tables, which the table policy does not deny", tableBucketARN=ARN)

def step_deny_bucket():
    root.delete_table_policy(**TABLE)
    code, _ = error_code(root.get_table_policy, **TABLE)
    check(code == "NotFoundException", "delete_table_policy: %s" % code)
    allowed(user.get_table, "get_table once the table policy is gone", **TABLE)
    doc = policy({"Sid": "ReadLake", "Effect": "Allow", "Principal": {"AWS": USER_ARN}, "Action": READ,
                  "Resource": [ARN, ARN + "/table/*"]},
                 {"Sid": "NotHR", "Effect": "Deny", "Principal": "*", "Action": "s3tables:*", "Resource": ARN + "/table/*",
                  "Condition": {"StringEquals": {"s3tables:namespace": "hr"}}})
    root.put_table_bucket_policy(tableBucketARN=ARN, resourcePolicy=doc)
    refused(user.get_table, "get_table denied by a Deny statement of the table bucket policy", **TABLE)
    allowed(user.list_tables, "list_tables, on the table bucket, which the Deny does not name", tableBucketARN=ARN)

def step_cleanup():
    root.delete_table_bucket_policy(tableBucketARN=ARN)
    code, _ = error_code(root.get_table_bucket_policy, tableBucketARN=ARN)
    check(code == "NotFoundException", "delete_table_bucket_policy: %s" % code)
    refused(user.list_tables, "list_tables once the policy is gone", tableBucketARN=ARN)
    root.delete_table(**TABLE)
    root.delete_namespace(tableBucketARN=ARN, namespace="hr")
    root.delete_table_bucket(tableBucketARN=ARN)

print("boto3", boto3.__version__, "botocore", botocore.__version__)
globals()["step_" + sys.argv[1]]()
print("PASS")
`

// TestS3TablesPolicyBoto3: a user whose own policy grants nothing on a
// table bucket is refused its tables over S3 Tables and the Iceberg REST
// face; a table bucket policy naming the user lets it read them on both
// faces (SigV4 and a bearer token), and no more; a table policy denying
// the user one table refuses that table on both faces, as does a Deny
// statement of the table bucket policy; malformed policies are refused
// and every policy reads back, and once deleted is gone.
func TestS3TablesPolicyBoto3(t *testing.T) {
	py := s3tablesPython(t)
	s := startCLIServer(t)
	const userKey, userSecret = "tabby", "tabby-secret-key"
	dir := t.TempDir()
	pol := filepath.Join(dir, "tabby.json")
	if err := os.WriteFile(pol, []byte(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:*","Resource":["arn:aws:s3:::elsewhere","arn:aws:s3:::elsewhere/*"]}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	browserAddUser(t, s.server, userKey, userSecret, "@"+pol)
	script := filepath.Join(dir, "s3tables_policy.py")
	cliWrite(t, script, s3tablesPolicyScript)
	env := append(s.awsEnv(t), "CAIRN_ENDPOINT="+s.endpoint, "CAIRN_USER_KEY="+userKey, "CAIRN_USER_SECRET="+userSecret)
	run := func(step string) string {
		t.Helper()
		r := cliRun(t, env, dir, py, script, step)
		t.Logf("%s %s:\n%s%s", py, step, r.stdout, r.stderr)
		if r.code != 0 || !strings.Contains(r.stdout, "\nPASS") {
			t.Fatalf("boto3 s3tables step %s failed: %s", step, r)
		}
		return r.stdout
	}

	// The user loads the table over the Iceberg REST face, signed with
	// SigV4 and with a bearer token of its client credentials.
	user := cfCred{userKey, userSecret}
	const load = "/iceberg/v1/pol-lake/namespaces/hr/tables/staff"
	icebergLoad := func(want int, why string) {
		t.Helper()
		if r := cfCall(t, s.server, user, "GET", load, ""); r.status != want {
			t.Fatalf("Iceberg REST load signed with SigV4 %s: %s, want %d", why, r, want)
		}
		req := newRaw(t, http.MethodGet, s.url(load), nil)
		req.Header.Set("Authorization", "Bearer "+userToken(t, s.server, userKey, userSecret))
		if r := doRaw(t, req); r.status != want {
			t.Fatalf("Iceberg REST load with a bearer token %s: %d %s, want %d", why, r.status, r.body, want)
		}
	}

	out := run("setup")
	tableARN := ""
	for _, l := range strings.Split(out, "\n") {
		if a, ok := strings.CutPrefix(l, "TABLE_ARN "); ok {
			tableARN = a
		}
	}
	if tableARN == "" {
		t.Fatalf("no TABLE_ARN in:\n%s", out)
	}
	env = append(env, "TABLE_ARN="+tableARN)

	run("refused")
	icebergLoad(http.StatusForbidden, "without rights")

	run("allow")
	icebergLoad(http.StatusOK, "allowed by the table bucket policy")
	if r := cfCall(t, s.server, user, "POST", "/iceberg/v1/pol-lake/namespaces", `{"namespace":["x"]}`); r.status != http.StatusForbidden {
		t.Fatalf("a namespace created over the Iceberg REST face, which the policy does not grant: %s", r)
	}

	run("deny")
	icebergLoad(http.StatusForbidden, "denied by the table policy")
	if r := cfCall(t, s.server, user, "GET", "/iceberg/v1/pol-lake/namespaces/hr/tables", ""); r.status != http.StatusOK {
		t.Fatalf("tables listed over the Iceberg REST face, which the table policy does not deny: %s", r)
	}

	run("deny_bucket")
	icebergLoad(http.StatusForbidden, "denied by a Deny statement of the table bucket policy")

	run("cleanup")
}

// userToken gets an OAuth2 bearer token for an access key and its secret.
func userToken(t *testing.T, s *server, key, secret string) string {
	t.Helper()
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {key}, "client_secret": {secret}, "scope": {"catalog"}}
	req := newRaw(t, http.MethodPost, s.url("/iceberg/v1/oauth/tokens"), []byte(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res := doRaw(t, req)
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if res.status != http.StatusOK || json.Unmarshal(res.body, &tok) != nil || tok.AccessToken == "" {
		t.Fatalf("POST /iceberg/v1/oauth/tokens as %s: %d %s", key, res.status, res.body)
	}
	return tok.AccessToken
}
