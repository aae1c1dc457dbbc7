package iceberg

import (
	"encoding/base64"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"strings"
)

// getConfig answers GET /v1/config?warehouse=W: the catalog's defaults
// and overrides, with prefix W, the endpoints this face serves and the
// idempotency-key lifetime.
func (s *Server) getConfig(req *request) (reply, error) {
	if req.warehouse == "" {
		return reply{}, badRequest("the warehouse query parameter is required: the name of a table bucket (cairn admin table-bucket create NAME)")
	}
	defaults, overrides, err := s.opt.Catalog.Config(req.Context(), req.warehouse)
	if err != nil {
		return reply{}, err
	}
	out := catalogConfig{
		Defaults:            maps.Clone(defaults),
		Overrides:           maps.Clone(overrides),
		Endpoints:           s.endpoints,
		IdempotencyLifetime: s.opt.IdempotencyLifetime,
	}
	if out.Defaults == nil {
		out.Defaults = map[string]string{}
	}
	if out.Overrides == nil {
		out.Overrides = map[string]string{}
	}
	out.Overrides["prefix"] = req.warehouse
	if s.opt.NamespaceSeparator != UnitSeparator {
		out.Overrides["namespace-separator"] = url.PathEscape(s.opt.NamespaceSeparator)
	}
	return reply{status: http.StatusOK, body: out}, nil
}

// getToken answers POST /v1/oauth/tokens, the OAuth2 client-credentials
// grant: client_id is an access key and client_secret its secret, in the
// form or as HTTP Basic auth. Errors use the OAuth2 error JSON.
func (s *Server) getToken(req *request) (reply, error) {
	fail := func(status int, code, format string, args ...any) (reply, error) {
		return reply{status: status, body: oauthError{Error: code, Description: fmt.Sprintf(format, args...)}}, nil
	}
	form, err := url.ParseQuery(string(req.body))
	if err != nil {
		return fail(http.StatusBadRequest, "invalid_request", "the body is not a form: %v", err)
	}
	if gt := form.Get("grant_type"); gt != "client_credentials" {
		return fail(http.StatusBadRequest, "unsupported_grant_type", "grant_type %q is not supported; use client_credentials", gt)
	}
	id, secret := form.Get("client_id"), form.Get("client_secret")
	if u, p, ok := basicAuth(req.Header.Get("Authorization")); ok && id == "" {
		id, secret = u, p
	}
	if id == "" || secret == "" {
		return fail(http.StatusUnauthorized, "invalid_client", "client_id and client_secret (an access key and its secret) are required")
	}
	if s.opt.Authenticator == nil {
		return fail(http.StatusUnauthorized, "invalid_client", "client credentials are not configured")
	}
	p, err := s.opt.Authenticator.Login(id, secret)
	if err != nil {
		return fail(http.StatusUnauthorized, "invalid_client", "unknown client or bad secret")
	}
	req.principal = p
	tok, ttl := s.tokens.issue(p)
	h := http.Header{}
	h.Set("Cache-Control", "no-store")
	return reply{status: http.StatusOK, header: h, body: tokenResponse{
		AccessToken: tok, TokenType: "bearer", ExpiresIn: int64(ttl.Seconds()),
		IssuedTokenType: "urn:ietf:params:oauth:token-type:access_token", Scope: form.Get("scope"),
	}}, nil
}

// basicAuth decodes "Basic base64(id:secret)"; the parts are
// form-urlencoded per RFC 6749 section 2.3.1.
func basicAuth(h string) (id, secret string, ok bool) {
	enc, ok := cutPrefixFold(h, "Basic ")
	if !ok {
		return "", "", false
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(enc))
	if err != nil {
		return "", "", false
	}
	id, secret, ok = strings.Cut(string(raw), ":")
	if !ok {
		return "", "", false
	}
	if u, err := url.QueryUnescape(id); err == nil {
		id = u
	}
	if p, err := url.QueryUnescape(secret); err == nil {
		secret = p
	}
	return id, secret, true
}
