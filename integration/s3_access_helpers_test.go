package integration

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// accessUser is a user the access-control tests create.
type accessUser struct {
	name, secret string
	c            *s3.Client
}

// addAccessUser creates a user through the admin API (as the root) and
// returns its client.
func addAccessUser(t *testing.T, s *server, name, email, policy string) accessUser {
	t.Helper()
	secret := name + "-secret-key"
	body, _ := json.Marshal(map[string]string{"secret_key": secret, "policy": policy, "email": email})
	req := newRaw(t, http.MethodPut, s.url("/_cairn/admin/v1/users/"+name), body)
	signRaw(t, req, body, s3User, s3Secret, time.Now())
	if res := doRaw(t, req); res.status != http.StatusOK {
		t.Fatalf("add user %s: %d %s", name, res.status, res.body)
	}
	return accessUser{name, secret, sdkClient(s, name, secret)}
}

// anonDo sends an unsigned request.
func anonDo(t *testing.T, method, u string, body []byte) rawResponse {
	t.Helper()
	return doRaw(t, newRaw(t, method, u, body))
}

// skipUnlessAnonymous skips the test when the server's signature verifier
// refuses every unsigned request before authorization runs (the message
// of sigv4.ErrMissingAuth): anonymous access then cannot be tested.
func skipUnlessAnonymous(t *testing.T, s *server) {
	t.Helper()
	res := anonDo(t, http.MethodGet, s.url("/no-such-bucket-for-anon"), nil)
	if res.status == http.StatusForbidden && strings.Contains(string(res.body), "Anonymous access is not allowed") {
		t.Skip("SKIP: the verifier refuses unsigned requests (AccessDenied \"Anonymous access is not allowed\") before authorization")
	}
}

// signedRaw sends a request signed as who.
func signedRaw(t *testing.T, method, u string, body []byte, header map[string]string, who, secret string) rawResponse {
	t.Helper()
	req := newRaw(t, method, u, body)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	signRaw(t, req, body, who, secret, time.Now())
	return doRaw(t, req)
}

// boto3Accounts begins the boto3 scripts that act as several callers, as
// ceph's s3-tests do: client() makes one (unsigned for the anonymous
// caller; service "iam" for the IAM API), main and alt are the users
// MAIN_KEY and ALT_KEY, anon the anonymous caller; check fails the
// script, error returns a call's (status, code), 200 when it succeeds.
const boto3Accounts = `
import json, os, sys
import boto3, botocore
from botocore import UNSIGNED
from botocore.config import Config
from botocore.exceptions import ClientError

EP = os.environ["CAIRN_ENDPOINT"]
def client(key=None, secret=None, unsigned=False, service="s3"):
    cfg = Config(signature_version=UNSIGNED if unsigned else "s3v4" if service == "s3" else "v4", s3={"addressing_style": "path"}, retries={"max_attempts": 1})
    return boto3.client(service, endpoint_url=EP, region_name="us-east-1", aws_access_key_id=key or "x",
                        aws_secret_access_key=secret or "x", config=cfg)
main = client(os.environ["MAIN_KEY"], os.environ["MAIN_SECRET"])
alt = client(os.environ["ALT_KEY"], os.environ["ALT_SECRET"])
anon = client(unsigned=True)
ALT = os.environ["ALT_KEY"]

def check(cond, msg):
    if not cond:
        print("FAIL:", msg)
        sys.exit(1)
    print("ok:", msg)

def error(fn, **kw):
    try:
        fn(**kw)
    except ClientError as e:
        return e.response["ResponseMetadata"]["HTTPStatusCode"], e.response["Error"]["Code"]
    return 200, ""
`

// runAccountsBoto3 runs each step of a boto3 script written after
// boto3Accounts, main (key, secret) and alt its callers and the root
// ROOT_KEY. Exit 4 with UNSIGNED-REFUSED skips the step.
func runAccountsBoto3(t *testing.T, s *server, steps, mainKey, mainSecret string, alt accessUser, names []string) {
	t.Helper()
	py := cliPython(t)
	dir := t.TempDir()
	script := filepath.Join(dir, "steps.py")
	cliWrite(t, script, boto3Accounts+steps+boto3Main)
	env := append(cliBaseEnv(), "CAIRN_ENDPOINT="+s.url(""), "MAIN_KEY="+mainKey, "MAIN_SECRET="+mainSecret,
		"ALT_KEY="+alt.name, "ALT_SECRET="+alt.secret, "ROOT_KEY="+s3User, "ROOT_SECRET="+s3Secret,
		"AWS_EC2_METADATA_DISABLED=true", "AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null")
	for _, step := range names {
		t.Run(step, func(t *testing.T) {
			r := cliRun(t, env, dir, py, script, step)
			t.Logf("%s %s:\n%s%s", py, step, r.stdout, r.stderr)
			if r.code == 4 && strings.Contains(r.stdout, "UNSIGNED-REFUSED") {
				t.Skip("SKIP: the verifier refuses unsigned requests before authorization")
			}
			if r.code != 0 || !strings.Contains(r.stdout, "\nPASS") {
				t.Fatalf("boto3 step %s failed: %s", step, r)
			}
		})
	}
}
