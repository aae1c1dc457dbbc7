package iceberg

import (
	"encoding/base64"
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestOAuthTokenExchange: the token endpoint renews tokens with the RFC
// 8693 token-exchange grant, as Iceberg's Java client asks before its
// token expires (the token as subject_token and bearer) and after (with
// its client credentials as Basic auth). Without it a Spark session on the
// OAuth2 catalog stops refreshing and fails once its first token expires.
func TestOAuthTokenExchange(t *testing.T) {
	e := newEnv(t)
	e.must(200, "POST", "/iceberg/v1/wh/namespaces", `{"namespace":["a"]}`)
	token := func(form url.Values, hdr ...string) (int, tokenResponse, oauthError) {
		t.Helper()
		w := e.do("", "POST", "/iceberg/v1/oauth/tokens", form.Encode(), append([]string{"Content-Type", "application/x-www-form-urlencoded"}, hdr...)...)
		var tr tokenResponse
		var oe oauthError
		_ = json.Unmarshal(w.Body.Bytes(), &tr)
		_ = json.Unmarshal(w.Body.Bytes(), &oe)
		return w.Code, tr, oe
	}
	exchange := func(subject, subjectType string) url.Values {
		return url.Values{"grant_type": {grantTokenExchange}, "subject_token": {subject}, "subject_token_type": {subjectType}, "scope": {"catalog"}}
	}
	basic := func(id, secret string) string {
		return "Basic " + base64.StdEncoding.EncodeToString([]byte(id+":"+secret))
	}
	write := func(tok, ns string) int {
		return e.do("", "POST", "/iceberg/v1/wh/namespaces", `{"namespace":["`+ns+`"]}`, "Authorization", "Bearer "+tok).Code
	}
	read := func(tok string) int {
		return e.do("", "GET", "/iceberg/v1/wh/namespaces/a", "", "Authorization", "Bearer "+tok).Code
	}

	code, first, _ := token(url.Values{"grant_type": {"client_credentials"}, "client_id": {"writer1"}, "client_secret": {"secret-writer1"}})
	if code != 200 {
		t.Fatalf("client credentials: %d", code)
	}
	// Before it expires: the token itself buys a new one, for the same
	// principal (a writer), valid an hour from now.
	e.now = e.now.Add(50 * time.Minute)
	code, renewed, _ := token(exchange(first.AccessToken, tokenTypeAccess), "Authorization", "Bearer "+first.AccessToken)
	if code != 200 || renewed.AccessToken == "" || renewed.ExpiresIn != 3600 || renewed.IssuedTokenType != tokenTypeAccess || renewed.Scope != "catalog" {
		t.Fatalf("exchange of a valid token: %d %+v", code, renewed)
	}
	e.now = e.now.Add(30 * time.Minute)
	if c := read(first.AccessToken); c != 401 {
		t.Fatalf("the first token after its hour: %d, want 401", c)
	}
	if c := write(renewed.AccessToken, "w1"); c != 200 {
		t.Fatalf("write with the renewed token: %d", c)
	}

	// After it expires: the expired token with the client's credentials.
	e.now = e.now.Add(2 * time.Hour)
	code, _, oe := token(exchange(renewed.AccessToken, tokenTypeAccess))
	if code != 400 || oe.Error != "invalid_request" {
		t.Fatalf("exchange of an expired token without credentials: %d %+v, want 400 invalid_request", code, oe)
	}
	code, again, _ := token(exchange(renewed.AccessToken, tokenTypeAccess), "Authorization", basic("writer1", "secret-writer1"))
	if code != 200 || write(again.AccessToken, "w2") != 200 {
		t.Fatalf("exchange of an expired token with credentials: %d %+v", code, again)
	}

	// A reader's token renews as a reader.
	_, rt, _ := token(url.Values{"grant_type": {"client_credentials"}}, "Authorization", basic("reader1", "secret-reader1"))
	code, rr, _ := token(exchange(rt.AccessToken, tokenTypeAccess))
	if code != 200 || read(rr.AccessToken) != 200 || write(rr.AccessToken, "r1") != 403 {
		t.Fatalf("a reader's renewed token: %d, read %d, write %d; want 200, 200, 403", code, read(rr.AccessToken), write(rr.AccessToken, "r1"))
	}

	for _, tc := range []struct {
		name   string
		form   url.Values
		hdr    []string
		status int
		code   string
	}{
		{"no subject token", exchange("", tokenTypeAccess), nil, 400, "invalid_request"},
		{"another token type", exchange(again.AccessToken, "urn:ietf:params:oauth:token-type:id_token"), nil, 400, "invalid_request"},
		{"tampered token", exchange(again.AccessToken+"x", tokenTypeAccess), nil, 400, "invalid_request"},
		{"another client's token", exchange(again.AccessToken, tokenTypeAccess), []string{"Authorization", basic("reader1", "secret-reader1")}, 400, "invalid_request"},
		{"bad credentials", exchange(again.AccessToken, tokenTypeAccess), []string{"Authorization", basic("writer1", "wrong")}, 401, "invalid_client"},
	} {
		if code, _, oe := token(tc.form, tc.hdr...); code != tc.status || oe.Error != tc.code || oe.Description == "" {
			t.Errorf("%s: %d %+v, want %d %s", tc.name, code, oe, tc.status, tc.code)
		}
	}
}

// TestTokenEndpointWantsAForm sends the token endpoint bodies that are
// not form-encoded and checks the RFC 6749 error JSON: invalid_request
// with a description that names the form encoding and shows one.
func TestTokenEndpointWantsAForm(t *testing.T) {
	e := newEnv(t)
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {"writer1"}, "client_secret": {"secret-writer1"}}.Encode()
	for _, tc := range []struct {
		name, contentType, body string
		status                  int
		code, says              string
	}{
		{"json", "application/json", `{"grant_type":"client_credentials","client_id":"writer1","client_secret":"secret-writer1"}`, 400, "invalid_request", "application/json"},
		{"json without content type", "", `{"grant_type":"client_credentials"}`, 400, "invalid_request", "body is JSON"},
		{"text", "text/plain", form, 400, "invalid_request", "text/plain"},
		{"bad content type", "multipart/form-data; boundary=", form, 400, "invalid_request", "multipart/form-data"},
		{"form", "application/x-www-form-urlencoded; charset=utf-8", form, 200, "", ""},
		{"form without content type", "", form, 200, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var hdr []string
			if tc.contentType != "" {
				hdr = []string{"Content-Type", tc.contentType}
			}
			w := e.do("", "POST", "/iceberg/v1/oauth/tokens", tc.body, hdr...)
			if w.Code != tc.status {
				t.Fatalf("%d %s, want %d", w.Code, w.Body, tc.status)
			}
			if tc.status == 200 {
				return
			}
			var oe map[string]string
			if err := json.Unmarshal(w.Body.Bytes(), &oe); err != nil || len(oe) != 2 {
				t.Fatalf("not the OAuth error JSON: %s", w.Body)
			}
			d := oe["error_description"]
			if oe["error"] != tc.code || !strings.Contains(d, "application/x-www-form-urlencoded") ||
				!strings.Contains(d, "grant_type=client_credentials&client_id=") || !strings.Contains(d, tc.says) {
				t.Errorf("error %q %q: want %s naming the form encoding and %q", oe["error"], d, tc.code, tc.says)
			}
		})
	}
}
