package iceberg

import (
	"bytes"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"
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
			if sp, err := s.tokens.verify(req.Context(), subject); err == nil && sp.AccessKey != p.AccessKey {
				return fail(http.StatusBadRequest, "invalid_request", "subject_token was issued to another client")
			}
		}
	default:
		if p, err = s.tokens.verify(req.Context(), subject); err != nil {
			return fail(http.StatusBadRequest, "invalid_request", "subject_token: %s; send the client credentials to renew an expired token",
				strings.TrimPrefix(err.Error(), ErrUnauthenticated.Error()+": "))
		}
	}
	req.principal = p
	tok, ttl, err := s.tokens.issue(req.Context(), p)
	if err != nil {
		s.opt.Logger.Error().Str("rid", req.id).Err(err).Msg("iceberg: issuing a token")
		return fail(http.StatusInternalServerError, "server_error", "the server could not sign a token; the server log has the details under request id %s", req.id)
	}
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

// TokenKeysPath is the route, after the base URI, that rotates the token
// signing key: POST (root only, signed or with a bearer token) makes a
// new current key, keeps the one it replaces as the previous key (tokens
// it signed stay valid until they expire) and drops the key before it
// (tokens it signed are refused from then on). The answer names the keys,
// never their secrets: {"current":{"id","created"},"previous":{...}}.
// `cairn admin catalog rotate-token-key` calls it.
const TokenKeysPath = "/v1/oauth/token-keys"

// tokenKeyInfo is a key as the rotation answers it: no secret.
type tokenKeyInfo struct {
	ID      int       `json:"id"`
	Created time.Time `json:"created"`
}

// tokenKeysResponse answers a rotation.
type tokenKeysResponse struct {
	Current  tokenKeyInfo  `json:"current"`
	Previous *tokenKeyInfo `json:"previous,omitempty"`
}

func (s *Server) rotateTokenKey(req *request) (reply, error) {
	if !req.principal.Root {
		return reply{}, fmt.Errorf("%w: rotating the token key is for the root user only", ErrForbidden)
	}
	k, err := s.tokens.rotate(req.Context())
	if err != nil {
		return reply{}, err
	}
	res := tokenKeysResponse{Current: tokenKeyInfo{k.Current.ID, k.Current.Created}}
	if k.Previous != nil {
		res.Previous = &tokenKeyInfo{k.Previous.ID, k.Previous.Created}
	}
	s.opt.Logger.Info().Str("rid", req.id).Int("key", k.Current.ID).Msg("iceberg: token key rotated")
	return reply{status: http.StatusOK, body: res}, nil
}
