package integration

import (
	"encoding/json"
	"encoding/xml"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestCatalogTokenSurvivesRestart: an OAuth2 bearer token issued before a
// clean restart of cairn serve still works after it (the signing key is
// kept in the store), still works after one rotation of the key (POST
// /iceberg/v1/oauth/token-keys as root), and after a second rotation is
// refused with 401 and a message that says to get a new token.
func TestCatalogTokenSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("CAIRN_ROOT_USER", s3User)
	t.Setenv("CAIRN_ROOT_PASSWORD", s3Secret)
	srv := startServer(t, dir)
	srv.waitReady(readyTimeout)
	first := icebergToken(t, srv)
	use := func(what, tok string, want int) string {
		t.Helper()
		req := newRaw(t, http.MethodGet, srv.url("/_cairn/admin/v1/table-buckets"), nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		res := doRaw(t, req)
		if res.status != want {
			t.Fatalf("%s: %d %s, want %d", what, res.status, res.body, want)
		}
		return string(res.body)
	}
	use("the token before the restart", first, http.StatusOK)
	if code := srv.stop(stopTimeout); code != 0 {
		t.Fatalf("cairn serve exit %d after SIGTERM", code)
	}

	srv = startServer(t, dir)
	srv.waitReady(readyTimeout)
	use("the token issued before the restart", first, http.StatusOK)

	rotate := func(n int) {
		t.Helper()
		req := newRaw(t, http.MethodPost, srv.url("/iceberg/v1/oauth/token-keys"), nil)
		signRaw(t, req, nil, s3User, s3Secret, time.Now())
		res := doRaw(t, req)
		var keys struct {
			Current struct {
				ID int `json:"id"`
			} `json:"current"`
		}
		if res.status != http.StatusOK || json.Unmarshal(res.body, &keys) != nil || keys.Current.ID != n+1 {
			t.Fatalf("rotation %d: %d %s, want key %d current", n, res.status, res.body, n+1)
		}
	}
	rotate(1)
	use("the first token after one rotation", first, http.StatusOK)
	second := icebergToken(t, srv)
	rotate(2)
	body := use("the first token after two rotations", first, http.StatusUnauthorized)
	var e struct {
		Error struct {
			Message string `json:"message"`
			Type    string `json:"type"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(body), &e) != nil || e.Error.Type != "NotAuthorizedException" ||
		!strings.Contains(e.Error.Message, "get a new one from POST /v1/oauth/tokens") {
		t.Errorf("the first token after two rotations: %s, want NotAuthorizedException saying to get a new token", body)
	}
	use("a token of the previous key", second, http.StatusOK)
	use("a token of the current key", icebergToken(t, srv), http.StatusOK)
}

// TestErrorMessagesHideInternals asks both HTTP faces for what does not
// exist or is not allowed and checks that the answers say what was wrong
// and what to do, with none of the store's or the backing's internals.
func TestErrorMessagesHideInternals(t *testing.T) {
	t.Setenv("CAIRN_ROOT_USER", s3User)
	t.Setenv("CAIRN_ROOT_PASSWORD", s3Secret)
	srv := startServer(t, t.TempDir())
	srv.waitReady(readyTimeout)
	internal := []string{".cairn.sys", "record not found", "no such key:", "backing:"}
	tok := icebergToken(t, srv)

	req := newRaw(t, http.MethodGet, srv.url("/iceberg/v1/config?warehouse=nope"), nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	res := doRaw(t, req)
	var e struct {
		Error struct {
			Message string `json:"message"`
			Type    string `json:"type"`
		} `json:"error"`
	}
	if res.status != http.StatusNotFound || json.Unmarshal(res.body, &e) != nil || e.Error.Type != "NoSuchWarehouseException" ||
		!strings.Contains(e.Error.Message, "nope") || !strings.Contains(e.Error.Message, "cairn admin table-bucket create") {
		t.Errorf("config of an unknown warehouse: %d %s, want 404 NoSuchWarehouseException naming it and the fix", res.status, res.body)
	}
	for _, m := range internal {
		if strings.Contains(e.Error.Message, m) {
			t.Errorf("Iceberg message %q holds %q", e.Error.Message, m)
		}
	}
	// The access log line is written after the answer went out: wait
	// for it a little.
	logged := false
	for deadline := time.Now().Add(10 * time.Second); !logged && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		logged = strings.Contains(srv.stderr.String(), "record not found")
	}
	if !logged {
		t.Errorf("the server log lacks the error chain of the unknown warehouse")
	}

	req = newRaw(t, http.MethodPut, srv.url("/Bad_Bucket"), nil)
	signRaw(t, req, nil, s3User, s3Secret, time.Now())
	res = doRaw(t, req)
	var x struct {
		Code    string `xml:"Code"`
		Message string `xml:"Message"`
	}
	if res.status != http.StatusBadRequest || xml.Unmarshal(res.body, &x) != nil || x.Code != "InvalidBucketName" ||
		!strings.Contains(x.Message, "only lowercase letters, digits, dots and hyphens") {
		t.Errorf("PUT /Bad_Bucket: %d %s, want InvalidBucketName saying which rule", res.status, res.body)
	}
}
