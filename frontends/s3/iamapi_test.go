package s3

import (
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/cairnstore/cairn/frontends/s3/sigv4"
)

// iamCallAs sends an IAM query-protocol call signed for service (""
// unsigned) and returns the status, the error code and the body.
func iamCallAs(t *testing.T, s *Server, who, service string, form url.Values) (int, string, string) {
	t.Helper()
	r := httptest.NewRequest("POST", "http://cairn.test/", strings.NewReader(form.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
	if who != "" {
		secret := who + "-secret"
		if who == "root" {
			secret = "rootsecret"
		}
		if err := sigv4.Sign(r, who, secret, "us-east-1", service, "", time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	w := httptest.NewRecorder()
	s.ServeHTTP(w, r)
	b := w.Body.String()
	code := ""
	if w.Code >= 300 && strings.Contains(b, "<Code>") {
		code = b[strings.Index(b, "<Code>")+6 : strings.Index(b, "</Code>")]
	}
	return w.Code, code, b
}

func TestIAMUserPolicyAPI(t *testing.T) {
	s, _ := testServer(t)
	denyGet := `{"Version":"2012-10-17","Statement":[{"Effect":"Deny","Action":"s3:GetObject","Resource":"arn:aws:s3:::acct/*"}]}`
	selfIAM := `{"Statement":{"Effect":"Allow","Action":["iam:*UserPolicy","iam:ListUserPolicies"],"Resource":"arn:aws:iam::000000000000:user/alice"}}`
	form := func(kv ...string) url.Values {
		v := url.Values{"Version": {"2010-05-08"}}
		for i := 0; i+1 < len(kv); i += 2 {
			v.Set(kv[i], kv[i+1])
		}
		return v
	}
	put := func(user, name, doc string) url.Values {
		return form("Action", "PutUserPolicy", "UserName", user, "PolicyName", name, "PolicyDocument", doc)
	}
	iamStep := func(i int, who, service string, f url.Values, status int, code, inBody string) {
		t.Helper()
		st, c, body := iamCallAs(t, s, who, service, f)
		if st != status || c != code || !strings.Contains(body, inBody) {
			t.Errorf("%d: %s %s: %d %s, want %d %s (%q in %s)", i, who, f.Get("Action"), st, c, status, code, inBody, body)
		}
	}
	s3Step := func(i int, who, method, target, body string, status int) {
		t.Helper()
		if st, code := call(t, s, who, method, target, []byte(body), nil); st != status {
			t.Errorf("%d: %s %s %s: %d %s, want %d", i, who, method, target, st, code, status)
		}
	}
	s3Step(0, "root", "PUT", "/acct", "", 200)
	s3Step(1, "root", "PUT", "/acct/k", "x", 200)
	s3Step(2, "alice", "GET", "/acct/k", "", 200)

	iamStep(10, "root", "iam", put("alice", "NoGet", denyGet), 200, "", "<PutUserPolicyResponse")
	s3Step(11, "alice", "GET", "/acct/k", "", 403)
	s3Step(12, "bob", "GET", "/acct/k", "", 200)
	iamStep(13, "root", "iam", form("Action", "ListUserPolicies", "UserName", "alice"), 200, "", "<member>NoGet</member>")
	iamStep(14, "root", "iam", form("Action", "GetUserPolicy", "UserName", "alice", "PolicyName", "NoGet"), 200, "",
		"<PolicyDocument>"+url.PathEscape(denyGet)+"</PolicyDocument>")
	iamStep(15, "root", "iam", form("Action", "DeleteUserPolicy", "UserName", "alice", "PolicyName", "NoGet"), 200, "", "<DeleteUserPolicyResponse")
	s3Step(16, "alice", "GET", "/acct/k", "", 200)
	iamStep(17, "root", "iam", form("Action", "ListUserPolicies", "UserName", "alice"), 200, "", "<PolicyNames></PolicyNames>")

	// A user may do only what its policy allows of the IAM actions.
	iamStep(20, "alice", "iam", put("alice", "All", `{"Statement":{"Effect":"Allow","Action":"*","Resource":"*"}}`), 403, "AccessDenied", "<ErrorResponse")
	iamStep(21, "root", "iam", put("alice", "SelfIAM", selfIAM), 200, "", "")
	iamStep(22, "alice", "iam", put("alice", "NoGet", denyGet), 200, "", "")
	s3Step(23, "alice", "GET", "/acct/k", "", 403)
	iamStep(24, "alice", "iam", put("bob", "NoGet", denyGet), 403, "AccessDenied", "")
	iamStep(25, "alice", "iam", form("Action", "ListUserPolicies", "UserName", "alice"), 200, "", "<member>NoGet</member><member>SelfIAM</member>")
	iamStep(26, "bob", "iam", form("Action", "GetUserPolicy", "UserName", "alice", "PolicyName", "NoGet"), 403, "AccessDenied", "")

	// Errors.
	iamStep(30, "root", "iam", form("Action", "GetUserPolicy", "UserName", "alice", "PolicyName", "Nope"), 404, "NoSuchEntity", "")
	iamStep(31, "root", "iam", form("Action", "DeleteUserPolicy", "UserName", "alice", "PolicyName", "Nope"), 404, "NoSuchEntity", "")
	iamStep(32, "root", "iam", put("carol", "P", denyGet), 404, "NoSuchEntity", "")
	iamStep(33, "root", "iam", put("root", "P", denyGet), 404, "NoSuchEntity", "")
	iamStep(34, "root", "iam", put("alice", "P", `{"Statement":[]}`), 400, "MalformedPolicyDocument", "")
	iamStep(35, "root", "iam", put("alice", "P", `{"Statement":{"Effect":"Allow","Principal":"*","Action":"s3:*","Resource":"*"}}`), 400, "MalformedPolicyDocument", "")
	iamStep(36, "root", "iam", put("alice", "bad name", denyGet), 400, "ValidationError", "")
	iamStep(37, "root", "iam", put("alice", "Big", `{"Statement":{"Effect":"Allow","Action":"s3:GetObject","Resource":"arn:aws:s3:::`+strings.Repeat("x", 2100)+`"}}`), 409, "LimitExceeded", "")
	iamStep(38, "root", "iam", form("Action", "CreateUser", "UserName", "dave"), 400, "InvalidAction", "")
	iamStep(39, "root", "iam", form("UserName", "dave"), 400, "MissingAction", "")
	iamStep(40, "root", "iam", form("Action", "ListUserPolicies"), 400, "ValidationError", "")
	iamStep(41, "root", "iam", form("Action", "GetUserPolicy", "UserName", "alice"), 400, "ValidationError", "")
	iamStep(42, "", "", form("Action", "ListUserPolicies", "UserName", "alice"), 403, "MissingAuthenticationToken", "")
	iamStep(43, "root", "s3", form("Action", "ListUserPolicies", "UserName", "alice"), 400, "InvalidClientTokenId", "")
	iamStep(44, "root", "iam", url.Values{"Version": {"2011-01-01"}, "Action": {"ListUserPolicies"}, "UserName": {"alice"}}, 400, "InvalidParameterValue", "")
	iamStep(45, "root", "iam", put("alice", "Huge", strings.Repeat(" ", 20<<10)+denyGet), 400, "ValidationError", "too large")

	// A signature for IAM does not sign S3 requests.
	r := httptest.NewRequest("GET", "http://cairn.test/acct/k", nil)
	if err := sigv4.Sign(r, "root", "rootsecret", "us-east-1", "iam", "", time.Now()); err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	s.ServeHTTP(w, r)
	if w.Code != 403 {
		t.Errorf("S3 GET signed for iam: %d", w.Code)
	}
}

func FuzzIAMQuery(f *testing.F) {
	s, _ := testServer(f)
	f.Add("Action=PutUserPolicy&UserName=alice&PolicyName=p&PolicyDocument=%7B%7D&Version=2010-05-08")
	f.Add("Action=GetUserPolicy&UserName=alice&PolicyName=p")
	f.Add("Action=ListUserPolicies&UserName=%ff%00")
	f.Add("%zz&&==")
	f.Fuzz(func(t *testing.T, body string) {
		r := httptest.NewRequest("POST", "http://cairn.test/", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if err := sigv4.Sign(r, "bob", "bob-secret", "us-east-1", "iam", "", time.Now()); err != nil {
			t.Fatal(err)
		}
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		if w.Code != 200 && !strings.Contains(w.Body.String(), "<ErrorResponse") {
			t.Fatalf("%q: %d without an IAM error: %s", body, w.Code, w.Body.String())
		}
	})
}
