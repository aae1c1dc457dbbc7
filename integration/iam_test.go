package integration

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairnstore/cairn/frontends/s3/sigv4"
)

// signedDo sends a SigV4-signed request as accessKey and returns the
// status and body.
func signedDo(t *testing.T, method, url, accessKey, secret string, body []byte) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if err := sigv4.Sign(req, accessKey, secret, "us-east-1", "s3", "", time.Now()); err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Timeout: 20 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(raw)
}

// TestUsersAndPolicies drives `cairn admin user` against a running server
// and checks what each user may do over S3.
func TestUsersAndPolicies(t *testing.T) {
	t.Setenv("CAIRN_ROOT_USER", "rootuser")
	t.Setenv("CAIRN_ROOT_PASSWORD", "rootsecret")
	srv := startServer(t, t.TempDir())
	srv.waitReady(20 * time.Second)
	ep := "--endpoint=" + srv.url("")

	policy := filepath.Join(t.TempDir(), "inbox.json")
	if err := os.WriteFile(policy, []byte(`{"Version":"2012-10-17","Statement":[
	  {"Effect":"Allow","Action":"s3:PutObject","Resource":"arn:aws:s3:::drop/in/*"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"admin", "user", "add", "reader", "--secret", "readersecret", "--policy", "readonly", ep}, 0, "added user reader"},
		{[]string{"admin", "user", "add", "inbox", "--secret", "inboxsecret", "--policy", "@" + policy, ep}, 0, "added user inbox"},
		{[]string{"admin", "user", "add", "reader", "--secret", "readersecret", ep}, 2, "UserAlreadyExists"},
		{[]string{"admin", "user", "add", "weak", "--secret", "short", ep}, 2, "secret key"},
		{[]string{"admin", "user", "add", "bad", "--secret", "longenough", "--policy", "superuser", ep}, 2, "MalformedPolicy"},
		{[]string{"admin", "user", "list", ep}, 0, "reader"},
	} {
		r := runCairn(t, 30*time.Second, tc.args...)
		if r.code != tc.code || !strings.Contains(r.stdout+r.stderr, tc.out) {
			t.Fatalf("cairn %s: exit %d, output %q %q; want exit %d with %q", strings.Join(tc.args, " "), r.code, r.stdout, r.stderr, tc.code, tc.out)
		}
	}

	u := func(path string) string { return srv.url(path) }
	for _, tc := range []struct {
		who, secret, method, path string
		want                      int
		code                      string
	}{
		{"rootuser", "rootsecret", "PUT", "/drop", 200, ""},
		{"reader", "readersecret", "PUT", "/drop/in/a", 403, "AccessDenied"},
		{"reader", "readersecret", "GET", "/drop?list-type=2", 200, ""},
		{"inbox", "inboxsecret", "PUT", "/drop/in/a", 200, ""},
		{"inbox", "inboxsecret", "PUT", "/drop/out/a", 403, "AccessDenied"},
		{"inbox", "inboxsecret", "GET", "/drop/in/a", 403, "AccessDenied"},
		{"reader", "readersecret", "GET", "/drop/in/a", 200, ""},
		{"reader", "readersecret", "GET", "/_cairn/admin/v1/users", 403, "AccessDenied"},
		{"reader", "wrongsecret", "GET", "/drop?list-type=2", 403, "SignatureDoesNotMatch"},
		{"rootuser", "rootsecret", "GET", "/.cairn-iam/users/reader.json", 403, "AccessDenied"},
	} {
		var body []byte
		if tc.method == "PUT" && strings.Count(tc.path, "/") > 1 {
			body = []byte("payload")
		}
		got, resp := signedDo(t, tc.method, u(tc.path), tc.who, tc.secret, body)
		if got != tc.want || !strings.Contains(resp, tc.code) {
			t.Errorf("%s %s %s: %d %s, want %d %s", tc.who, tc.method, tc.path, got, resp, tc.want, tc.code)
		}
	}

	if r := runCairn(t, 30*time.Second, "admin", "user", "remove", "reader", ep); r.code != 0 {
		t.Fatalf("remove: %d %s", r.code, r.stderr)
	}
	if got, resp := signedDo(t, "GET", u("/drop?list-type=2"), "reader", "readersecret", nil); got != 403 || !strings.Contains(resp, "InvalidAccessKeyId") {
		t.Fatalf("removed user: %d %s", got, resp)
	}
	// Users survive a restart.
	if code := srv.stop(10 * time.Second); code != 0 {
		t.Fatalf("stop: exit %d", code)
	}
	srv2 := startServer(t, srv.data)
	srv2.waitReady(20 * time.Second)
	if got, resp := signedDo(t, "GET", srv2.url("/drop/in/a"), "inbox", "inboxsecret", nil); got != 403 || !strings.Contains(resp, "AccessDenied") {
		t.Fatalf("inbox after restart: %d %s", got, resp)
	}
	if got, _ := signedDo(t, "PUT", srv2.url("/drop/in/b"), "inbox", "inboxsecret", []byte("x")); got != 200 {
		t.Fatalf("inbox put after restart: %d", got)
	}
}
