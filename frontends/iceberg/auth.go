package iceberg

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Principal is who a request acts as.
type Principal struct {
	// AccessKey identifies the user (an S3 access key).
	AccessKey string `json:"sub"`
	// Root is set for the root user, who alone may use the table-bucket
	// admin endpoints.
	Root bool `json:"root,omitempty"`
}

// Authenticator checks the credentials of a request. Implementations live
// in cmd/ (SigV4 over the user directory); the face never sees secrets
// except through Login.
type Authenticator interface {
	// Authenticate verifies a SigV4-signed request. body is the whole
	// request body, already read (r.Body is a fresh reader over it); the
	// payload hash of a request without x-amz-content-sha256 comes from
	// it. service is the signing name the route expects by default ("s3"
	// on /iceberg, "s3tables" on /_iceberg); implementations accept both.
	// Errors should wrap ErrUnauthenticated; every error answers 401.
	Authenticate(r *http.Request, body []byte, service string) (Principal, error)
	// Login checks an access key and its secret (OAuth2 client
	// credentials). Errors answer 401 invalid_client.
	Login(accessKey, secret string) (Principal, error)
}

// Action is a catalog policy action.
type Action string

// The catalog policy actions, each on one warehouse.
const (
	// ActionRead: config, list and load namespaces, tables and views,
	// report metrics.
	ActionRead Action = "read"
	// ActionWrite: create, commit, rename, register and drop.
	ActionWrite Action = "write"
	// ActionAdmin: destructive administration of a warehouse; today the
	// purge of a table's files (dropTable with purgeRequested=true).
	ActionAdmin Action = "admin"
	// ActionMigrate: the catalog cutover's materialize and cancel, commit
	// recovery, backup and restore (admin:MigrateTableCatalog).
	ActionMigrate Action = "migrate"
)

// Authorizer decides whether a principal may perform action on warehouse.
type Authorizer interface {
	Authorize(p Principal, action Action, warehouse string) bool
}

// tokens issues and checks OAuth2 bearer tokens: base64url(claims) "."
// base64url(HMAC-SHA256(key, claims)). The key is per Server (random per
// process unless Options.TokenKey sets it), so tokens die with the process.
type tokens struct {
	key []byte
	ttl time.Duration
	now func() time.Time
}

type claims struct {
	Principal
	Expires int64 `json:"exp"`
}

func newTokens(key []byte, ttl time.Duration, now func() time.Time) (tokens, error) {
	if len(key) == 0 {
		key = make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			return tokens{}, fmt.Errorf("iceberg: token key: %w", err)
		}
	}
	return tokens{key: key, ttl: ttl, now: now}, nil
}

func (t tokens) mac(payload string) string {
	h := hmac.New(sha256.New, t.key)
	h.Write([]byte(payload))
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil))
}

// issue returns a token for p and its lifetime.
func (t tokens) issue(p Principal) (string, time.Duration) {
	raw, _ := json.Marshal(claims{Principal: p, Expires: t.now().Add(t.ttl).Unix()})
	payload := base64.RawURLEncoding.EncodeToString(raw)
	return payload + "." + t.mac(payload), t.ttl
}

var errBadToken = fmt.Errorf("%w: invalid bearer token", ErrUnauthenticated)

// verify checks a token's MAC and expiry.
func (t tokens) verify(tok string) (Principal, error) {
	payload, sig, ok := strings.Cut(tok, ".")
	if !ok || !hmac.Equal([]byte(sig), []byte(t.mac(payload))) {
		return Principal{}, errBadToken
	}
	raw, err := base64.RawURLEncoding.DecodeString(payload)
	if err != nil {
		return Principal{}, errBadToken
	}
	var c claims
	if err := json.Unmarshal(raw, &c); err != nil || c.AccessKey == "" {
		return Principal{}, errBadToken
	}
	if t.now().Unix() >= c.Expires {
		return Principal{}, fmt.Errorf("%w: bearer token expired", ErrUnauthenticated)
	}
	return c.Principal, nil
}

// authenticate finds the principal of req: a bearer token or SigV4.
func (s *Server) authenticate(req *request) (Principal, error) {
	h := req.Header.Get("Authorization")
	if tok, ok := cutPrefixFold(h, "Bearer "); ok {
		return s.tokens.verify(strings.TrimSpace(tok))
	}
	if h == "" && req.URL.Query().Get("X-Amz-Signature") == "" {
		return Principal{}, fmt.Errorf("%w: no credentials: sign the request (SigV4) or send a bearer token from /v1/oauth/tokens", ErrUnauthenticated)
	}
	if s.opt.Authenticator == nil {
		return Principal{}, fmt.Errorf("%w: SigV4 is not configured", ErrUnauthenticated)
	}
	p, err := s.opt.Authenticator.Authenticate(req.Request, req.body, req.service)
	if err != nil && !errors.Is(err, ErrUnauthenticated) {
		err = fmt.Errorf("%w: %w", ErrUnauthenticated, err)
	}
	return p, err
}

func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return "", false
}

// authorize checks action on the request's warehouse.
func (s *Server) authorize(req *request, action Action) error {
	if s.opt.Authorizer == nil || s.opt.Authorizer.Authorize(req.principal, action, req.warehouse) {
		return nil
	}
	return fmt.Errorf("%w: %s may not %s in warehouse %q", ErrForbidden, req.principal.AccessKey, action, req.warehouse)
}
