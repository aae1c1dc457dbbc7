package iceberg

import (
	"bytes"
	"fmt"
	"mime"
	"net/http"
	"net/url"
)

// The token endpoint's grants beyond client_credentials: RFC 8693 token
// exchange, which Iceberg's Java client uses to refresh its token. Before
// the token expires it sends the token as subject_token (and as its
// bearer); once it has expired, it sends it again with its client
// credentials as HTTP Basic auth. A client whose refresh is refused stops
// refreshing, and its requests fail an hour later.
const (
	grantClientCredentials = "client_credentials"
	grantTokenExchange     = "urn:ietf:params:oauth:grant-type:token-exchange"
	tokenTypeAccess        = "urn:ietf:params:oauth:token-type:access_token"
)

// getToken answers POST /v1/oauth/tokens: the client-credentials grant
// (client_id an access key and client_secret its secret, in the form or as
// HTTP Basic auth) and the token-exchange grant (a valid token of this
// server as subject_token, or client credentials). Errors use the OAuth2
// error JSON.
func (s *Server) getToken(req *request) (reply, error) {
	fail := func(status int, code, format string, args ...any) (reply, error) {
		return reply{status: status, body: oauthError{Error: code, Description: fmt.Sprintf(format, args...)}}, nil
	}
	if why := notForm(req.Header.Get("Content-Type"), req.body); why != "" {
		return fail(http.StatusBadRequest, "invalid_request", "the token endpoint takes a form-encoded body "+
			"(Content-Type: application/x-www-form-urlencoded, as RFC 6749 section 4.4 says), such as "+
			"grant_type=client_credentials&client_id=ACCESS_KEY&client_secret=SECRET; %s", why)
	}
	form, err := url.ParseQuery(string(req.body))
	if err != nil {
		return fail(http.StatusBadRequest, "invalid_request", "the body is not a valid form (%v); send it form-encoded: "+
			"grant_type=client_credentials&client_id=ACCESS_KEY&client_secret=SECRET", err)
	}
	gt := form.Get("grant_type")
	if gt != grantClientCredentials && gt != grantTokenExchange {
		return fail(http.StatusBadRequest, "unsupported_grant_type", "grant_type %q is not supported; use %s or %s", gt, grantClientCredentials, grantTokenExchange)
	}
	id, secret := form.Get("client_id"), form.Get("client_secret")
	if u, p, ok := basicAuth(req.Header.Get("Authorization")); ok && id == "" {
		id, secret = u, p
	}
	subject := form.Get("subject_token")
	if gt == grantTokenExchange {
		if subject == "" {
			return fail(http.StatusBadRequest, "invalid_request", "subject_token is required for %s", grantTokenExchange)
		}
		if tt := form.Get("subject_token_type"); tt != tokenTypeAccess {
			return fail(http.StatusBadRequest, "invalid_request", "subject_token_type %q is not supported; use %s", tt, tokenTypeAccess)
		}
	}
	var p Principal
	switch {
	case id != "" || gt == grantClientCredentials:
		if id == "" || secret == "" {
			return fail(http.StatusUnauthorized, "invalid_client", "client_id and client_secret (an access key and its secret) are required")
		}
		if s.opt.Authenticator == nil {
			return fail(http.StatusUnauthorized, "invalid_client", "client credentials are not configured")
		}
		if p, err = s.opt.Authenticator.Login(id, secret); err != nil {
			return fail(http.StatusUnauthorized, "invalid_client", "unknown client or bad secret")
		}
		// An exchange with credentials renews an expired token; a subject
		// token still valid must be the client's own.
		if gt == grantTokenExchange {
			if sp, err := s.tokens.verify(subject); err == nil && sp.AccessKey != p.AccessKey {
				return fail(http.StatusBadRequest, "invalid_request", "subject_token was issued to another client")
			}
		}
	default:
		if p, err = s.tokens.verify(subject); err != nil {
			return fail(http.StatusBadRequest, "invalid_request", "subject_token: %v; send the client credentials to renew an expired token", err)
		}
	}
	req.principal = p
	tok, ttl := s.tokens.issue(p)
	h := http.Header{}
	h.Set("Cache-Control", "no-store")
	return reply{status: http.StatusOK, header: h, body: tokenResponse{
		AccessToken: tok, TokenType: "bearer", ExpiresIn: int64(ttl.Seconds()),
		IssuedTokenType: tokenTypeAccess, Scope: form.Get("scope"),
	}}, nil
}

// notForm says why a token request is not form-encoded ("" when it is):
// its Content-Type is another one, or, without one, its body is JSON. A
// missing Content-Type with a form body is taken as a form.
func notForm(contentType string, body []byte) string {
	if contentType != "" {
		mt, _, err := mime.ParseMediaType(contentType)
		if err != nil {
			return fmt.Sprintf("the Content-Type %q does not parse", contentType)
		}
		if mt != "application/x-www-form-urlencoded" {
			return fmt.Sprintf("this request's Content-Type is %s", mt)
		}
		return ""
	}
	if b := bytes.TrimSpace(body); len(b) > 0 && (b[0] == '{' || b[0] == '[') {
		return "this request's body is JSON"
	}
	return ""
}
