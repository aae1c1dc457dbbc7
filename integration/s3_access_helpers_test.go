package integration

import (
	"encoding/json"
	"net/http"
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
