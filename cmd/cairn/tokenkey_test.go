package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// TestCatalogRotateTokenKey rotates the token key of a real server
// (newRouter on a real store) twice: each run prints the new key, a token
// issued before the first rotation works after it and is refused after
// the second. As a user other than root the command fails with the
// server's reason.
func TestCatalogRotateTokenKey(t *testing.T) {
	srv := startServer(t)
	ctx := context.Background()
	token := func() string {
		form := url.Values{"grant_type": {"client_credentials"}, "client_id": {"rootkey"}, "client_secret": {"rootsecret"}}
		code, body := call(t, "POST", srv.URL+"/iceberg/v1/oauth/tokens", []byte(form.Encode()), func(r *http.Request) {
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		})
		var tr struct {
			AccessToken string `json:"access_token"`
		}
		if code != 200 || json.Unmarshal(body, &tr) != nil {
			t.Fatalf("token: %d %s", code, body)
		}
		return tr.AccessToken
	}
	use := func(tok string) (int, string) {
		code, body := call(t, "GET", srv.URL+"/_cairn/admin/v1/table-buckets", nil, func(r *http.Request) {
			r.Header.Set("Authorization", "Bearer "+tok)
		})
		return code, string(body)
	}
	first := token()
	for i, want := range []string{
		`^token key 2 signs new tokens from now on \(created [0-9T:Z-]+\)\ntokens of key 1 stay valid until they expire`,
		`^token key 3 signs new tokens from now on \(created [0-9T:Z-]+\)\ntokens of key 2 stay valid until they expire`,
	} {
		var out bytes.Buffer
		if err := runCatalogRotateTokenKey(ctx, tokenKeyOptions{Endpoint: srv.URL + "/"}, deps{stdout: &out}); err != nil {
			t.Fatalf("rotation %d: %v", i+1, err)
		}
		if !regexp.MustCompile(want).MatchString(out.String()) {
			t.Errorf("rotation %d printed %q, want %s", i+1, out.String(), want)
		}
		code, body := use(first)
		if i == 0 && code != 200 {
			t.Errorf("the first token after one rotation: %d %s", code, body)
		}
		if i == 1 && (code != 401 || !strings.Contains(body, "get a new one")) {
			t.Errorf("the first token after two rotations: %d %s, want 401 saying to get a new token", code, body)
		}
	}

	t.Setenv("CAIRN_ROOT_USER", "someone")
	t.Setenv("CAIRN_ROOT_PASSWORD", "not-the-root")
	err := runCatalogRotateTokenKey(ctx, tokenKeyOptions{Endpoint: srv.URL}, deps{stdout: &bytes.Buffer{}})
	if err == nil || !strings.Contains(err.Error(), "InvalidAccessKeyId") && !strings.Contains(err.Error(), "NotAuthorized") {
		t.Errorf("rotation with unknown credentials: %v, want the server's refusal", err)
	}
}
