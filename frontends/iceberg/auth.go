package iceberg

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/cairnstore/cairn/catalog"
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

// AccessRequest is one question to a ResourceAuthorizer: may Principal
// perform Action, precisely the S3 Tables actions TablesActions, in
// Warehouse and on Table when the request names one.
type AccessRequest struct {
	Principal Principal
	Action    Action
	// TablesActions are the AWS S3 Tables actions the request performs
	// ("s3tables:GetTable"; tablesactions.go), which the resource
	// policies of table buckets and tables grant and deny; empty for the
	// routes no resource policy governs.
	TablesActions []string
	Warehouse     string
	// Table is the table the request names in its path (or, for
	// renameTable, its source; for GetTable by ARN, the table of that
	// ARN); nil when it names none.
	Table *catalog.Ident
}

// ResourceAuthorizer is an Authorizer that also honours the resource
// policies of table buckets and tables (cmd/ reads them from the catalog
// and evaluates them with the users' own policies). When the Options'
// Authorizer is one, the face asks AuthorizeRequest, not Authorize, for
// every request whose route checks an action, on both the Iceberg REST
// routes and the S3 Tables API; Authorize still answers the questions no
// one request on a table asks: which table buckets ListTableBuckets
// shows, and whether vended credentials and remote signing may write.
// An error is a failure to decide (the request fails with it), never a
// refusal.
type ResourceAuthorizer interface {
	Authorizer
	AuthorizeRequest(ctx context.Context, r AccessRequest) (bool, error)
}

// TokenKeyStore keeps the keys that sign bearer tokens (catalog.Service
// keeps them in the store, so tokens outlive a restart).
type TokenKeyStore interface {
	// TokenKeys returns the keys, creating the first one when there is none.
	TokenKeys(ctx context.Context) (catalog.TokenKeys, error)
	// RotateTokenKey makes a new current key and keeps the replaced one
	// as the previous one.
	RotateTokenKey(ctx context.Context) (catalog.TokenKeys, error)
}

// tokens issues and checks OAuth2 bearer tokens: base64url(claims) "."
// base64url(HMAC-SHA256(key, claims)), the claims naming the key (kid).
// The current key signs; the current and the previous key verify, so a
// token outlives one rotation until it expires. The keys come from the
// TokenKeyStore, loaded on first use, once keyRefresh has passed, and
// when a token names a key newer than the current one (another Server on
// the store rotated), but that last at most once per forcedReloadGap: the
// key id is read before the MAC can be checked, so anyone can send such a
// token. Without a store they are one random key per Server.
//
// Store reads run outside mu, one at a time (loads); their result
// replaces the cached keys only when it is not older than them, so a read
// that started before a rotation cannot undo it.
type tokens struct {
	store TokenKeyStore // nil: key is a random key of this Server
	ttl   time.Duration
	now   func() time.Time
	loads singleflight.Group // one store read at a time, shared by its callers

	mu       sync.Mutex // protects keys, loadedAt, forcedAt; never held across I/O
	keys     catalog.TokenKeys
	loadedAt time.Time // zero: not loaded
	forcedAt time.Time // the last reload a token naming a newer key forced
}

// keyRefresh is how long loaded keys are used before they are read again,
// so that a rotation made through another Server on the store takes
// effect here too within that time.
const keyRefresh = time.Minute

// forcedReloadGap is the least time between two reloads forced by tokens
// naming a key newer than the current one. Within it such a token is
// refused as invalid; its client gets a new token and goes on.
const forcedReloadGap = 5 * time.Second

type claims struct {
	Principal
	Key     int   `json:"kid,omitempty"`
	Expires int64 `json:"exp"`
}

func newTokens(store TokenKeyStore, ttl time.Duration, now func() time.Time) (*tokens, error) {
	t := &tokens{store: store, ttl: ttl, now: now}
	if store == nil {
		secret := make([]byte, 32)
		if _, err := rand.Read(secret); err != nil {
			return nil, fmt.Errorf("iceberg: token key: %w", err)
		}
		t.keys = catalog.TokenKeys{Current: catalog.TokenKey{ID: 1, Secret: secret}}
	}
	return t, nil
}

// current returns the keys, loading them from the store on first use or
// once keyRefresh has passed.
func (t *tokens) current(ctx context.Context) (catalog.TokenKeys, error) {
	t.mu.Lock()
	if t.store == nil || !t.loadedAt.IsZero() && t.now().Sub(t.loadedAt) < keyRefresh {
		k := t.keys
		t.mu.Unlock()
		return k, nil
	}
	t.mu.Unlock()
	return t.load(ctx)
}

// newer returns the keys read again from the store, for a token naming a
// key newer than the current one, or ok false when the last such read was
// less than forcedReloadGap ago (or there is no store to read).
func (t *tokens) newer(ctx context.Context) (k catalog.TokenKeys, ok bool, err error) {
	t.mu.Lock()
	now := t.now()
	if t.store == nil || !t.forcedAt.IsZero() && now.Sub(t.forcedAt) < forcedReloadGap {
		t.mu.Unlock()
		return catalog.TokenKeys{}, false, nil
	}
	t.forcedAt = now
	t.mu.Unlock()
	k, err = t.load(ctx)
	return k, err == nil, err
}

// load reads the keys from the store, joining a read already under way,
// and caches them.
func (t *tokens) load(ctx context.Context) (catalog.TokenKeys, error) {
	v, err, _ := t.loads.Do("keys", func() (any, error) {
		return t.store.TokenKeys(ctx)
	})
	if err != nil {
		return catalog.TokenKeys{}, fmt.Errorf("iceberg: loading the token keys: %w", err)
	}
	return t.swap(v.(catalog.TokenKeys)), nil
}

// swap caches k unless the cached keys are newer (a rotation finished
// while k was being read) and returns the keys now cached.
func (t *tokens) swap(k catalog.TokenKeys) catalog.TokenKeys {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.loadedAt.IsZero() || k.Current.ID >= t.keys.Current.ID {
		t.keys = k
	}
	t.loadedAt = t.now()
	return t.keys
}

// rotate makes a new current key in the store.
func (t *tokens) rotate(ctx context.Context) (catalog.TokenKeys, error) {
	if t.store == nil {
		return catalog.TokenKeys{}, apiErr(http.StatusNotImplemented, "UnsupportedOperationException",
			"this server keeps no token keys in its store, so it has none to rotate")
	}
	k, err := t.store.RotateTokenKey(ctx)
	if err != nil {
		return catalog.TokenKeys{}, err
	}
	t.swap(k)
	return k, nil
}

func mac(key []byte, payload string) string {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(payload))
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil))
}

// issue returns a token for p, signed by the current key, and its
// lifetime.
func (t *tokens) issue(ctx context.Context, p Principal) (string, time.Duration, error) {
	k, err := t.current(ctx)
	if err != nil {
		return "", 0, err
	}
	raw, _ := json.Marshal(claims{Principal: p, Key: k.Current.ID, Expires: t.now().Add(t.ttl).Unix()})
	payload := base64.RawURLEncoding.EncodeToString(raw)
	return payload + "." + mac(k.Current.Secret, payload), t.ttl, nil
}

var (
	errBadToken = fmt.Errorf("%w: invalid bearer token: get a new one from POST /v1/oauth/tokens with your client credentials",
		ErrUnauthenticated)
	errRotatedToken = fmt.Errorf("%w: the bearer token was signed by a key that has since been rotated out: "+
		"get a new one from POST /v1/oauth/tokens with your client credentials", ErrUnauthenticated)
	errExpiredToken = fmt.Errorf("%w: bearer token expired: get a new one from POST /v1/oauth/tokens with your client credentials",
		ErrUnauthenticated)
)

// verify checks a token's MAC, by the key it names, and its expiry.
func (t *tokens) verify(ctx context.Context, tok string) (Principal, error) {
	payload, sig, ok := strings.Cut(tok, ".")
	if !ok {
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
	// The key id is read before the MAC is checked only to pick the key.
	k, err := t.current(ctx)
	if err != nil {
		return Principal{}, err
	}
	if c.Key > k.Current.ID {
		nk, ok, err := t.newer(ctx)
		if err != nil {
			return Principal{}, err
		}
		if !ok {
			return Principal{}, errBadToken
		}
		k = nk
	}
	var key []byte
	switch {
	case c.Key == k.Current.ID:
		key = k.Current.Secret
	case k.Previous != nil && c.Key == k.Previous.ID:
		key = k.Previous.Secret
	case c.Key < k.Current.ID && c.Key > 0:
		return Principal{}, errRotatedToken
	default:
		return Principal{}, errBadToken
	}
	if !hmac.Equal([]byte(sig), []byte(mac(key, payload))) {
		return Principal{}, errBadToken
	}
	if t.now().Unix() >= c.Expires {
		return Principal{}, errExpiredToken
	}
	return c.Principal, nil
}

// authenticate finds the principal of req: a bearer token or SigV4.
func (s *Server) authenticate(req *request) (Principal, error) {
	h := req.Header.Get("Authorization")
	if tok, ok := cutPrefixFold(h, "Bearer "); ok {
		return s.tokens.verify(req.Context(), strings.TrimSpace(tok))
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

// authorize checks action on the request's warehouse, and on its table
// (req.table) with a ResourceAuthorizer. The S3 Tables actions are the
// route's (req.tablesActions) when action is the route's own, else
// those of the action alone (coarseTablesActions).
func (s *Server) authorize(req *request, action Action) error {
	a := s.opt.Authorizer
	if a == nil {
		return nil
	}
	var allowed bool
	if ra, ok := a.(ResourceAuthorizer); ok {
		actions := req.tablesActions
		if req.route == nil || action != req.route.action {
			actions = coarseTablesActions(action)
		}
		var err error
		allowed, err = ra.AuthorizeRequest(req.Context(), AccessRequest{Principal: req.principal, Action: action,
			TablesActions: actions, Warehouse: req.warehouse, Table: req.table})
		if err != nil {
			return fmt.Errorf("authorizing %s: %w", req.op, err)
		}
	} else {
		allowed = a.Authorize(req.principal, action, req.warehouse)
	}
	if allowed {
		return nil
	}
	on := ""
	if req.table != nil {
		on = " on table " + req.table.String()
	}
	return fmt.Errorf("%w: %s may not %s in warehouse %q%s: neither the user's policy nor a resource policy of the table bucket or table allows it, or one denies it",
		ErrForbidden, req.principal.AccessKey, action, req.warehouse, on)
}
