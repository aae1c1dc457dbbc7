package iam

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/cairnstore/cairn/frontends/s3/access"
	"github.com/cairnstore/cairn/objstore"
)

// Bucket is the system bucket holding users/<access key>.json.
const Bucket = ".cairn-iam"

// Errors of the user directory.
var (
	ErrUserExists  = errors.New("iam: user exists")
	ErrNoSuchUser  = errors.New("iam: no such user")
	ErrInvalidUser = errors.New("iam: invalid user")
)

// User is a stored user. Policy is a canned policy name or a JSON policy
// document.
type User struct {
	AccessKey string `json:"access_key"`
	SecretKey string `json:"secret_key,omitempty"`
	Policy    string `json:"policy"`
	// Email, optional, names the user in ACL grants by email address
	// (AmazonCustomerByEmail, x-amz-grant-*: emailAddress=).
	Email   string    `json:"email,omitempty"`
	Created time.Time `json:"created"`
	// Inline are the user's inline policies by name (PutUserPolicy), each
	// the document as it was put; the user is allowed what Policy or any
	// of them allows (inline.go).
	Inline map[string]string `json:"inline_policies,omitempty"`
}

type entry struct {
	user   User
	policy Policy
	etag   string // of the record it was loaded from; empty when unknown
}

// Directory is the set of users, cached in memory and written through to
// the store. Safe for concurrent use.
type Directory struct {
	store            *objstore.Store
	root, rootSecret string
	sessionKey       []byte // signs session tokens and derives their secrets (session.go)

	log zerolog.Logger

	mu    sync.RWMutex // protects users
	users map[string]entry
}

// OpenDirectory loads the users from the store; log receives what goes
// wrong keeping them up to date (Follow).
func OpenDirectory(ctx context.Context, store *objstore.Store, rootUser, rootSecret string, log zerolog.Logger) (*Directory, error) {
	if err := store.EnsureSystemBucket(ctx, Bucket); err != nil {
		return nil, err
	}
	key, err := loadSessionKey(ctx, store)
	if err != nil {
		return nil, fmt.Errorf("session key: %w", err)
	}
	d := &Directory{store: store, root: rootUser, rootSecret: rootSecret, sessionKey: key, users: map[string]entry{}, log: log}
	if err := d.loadAll(ctx); err != nil {
		return nil, err
	}
	return d, nil
}

// loadAll replaces the users in memory with the store's.
func (d *Directory) loadAll(ctx context.Context) error {
	users := map[string]entry{}
	after := ""
	for {
		page, err := d.store.List(ctx, Bucket, objstore.ListOptions{Prefix: "users/", After: after})
		if err != nil {
			return err
		}
		for _, o := range page.Objects {
			u, etag, err := d.load(ctx, o.Key)
			if err != nil {
				return err
			}
			p, err := effective(u)
			if err != nil {
				return fmt.Errorf("user %s: %w", u.AccessKey, err)
			}
			users[u.AccessKey] = entry{u, p, etag}
		}
		if !page.IsTruncated {
			break
		}
		after = page.NextMarker
	}
	d.mu.Lock()
	d.users = users
	d.mu.Unlock()
	return nil
}

// load reads the user record of store key key, and its ETag.
func (d *Directory) load(ctx context.Context, key string) (User, string, error) {
	r, err := d.store.Open(ctx, Bucket, key, objstore.GetOptions{})
	if err != nil {
		return User{}, "", err
	}
	defer func() { _ = r.Close() }()
	raw, err := io.ReadAll(r)
	if err != nil {
		return User{}, "", err
	}
	var u User
	if err := json.Unmarshal(raw, &u); err != nil {
		return User{}, "", fmt.Errorf("%s: %w", key, err)
	}
	return u, r.Info().ETag, nil
}

func policyOf(s string) (Policy, error) {
	if p, ok := Canned(s); ok {
		return p, nil
	}
	return ParsePolicy([]byte(s))
}

// Secret returns the secret key of an access key: the root's, a user's,
// or a session's (which is valid only with its token: CheckSession).
func (d *Directory) Secret(accessKey string) (string, bool) {
	if accessKey == d.root {
		return d.rootSecret, true
	}
	d.mu.RLock()
	e, ok := d.users[accessKey]
	d.mu.RUnlock()
	if !ok && IsSessionKey(accessKey) {
		return d.sessionSecret(accessKey), true
	}
	if (!ok || d.store.Shared()) && d.check(accessKey, e.etag) { // changed elsewhere an instant ago (follow.go)
		d.mu.RLock()
		e, ok = d.users[accessKey]
		d.mu.RUnlock()
	}
	return e.user.SecretKey, ok
}

// IsRoot reports whether accessKey is the root user.
func (d *Directory) IsRoot(accessKey string) bool { return accessKey == d.root }

// Authorize reports whether accessKey may perform action on resource.
func (d *Directory) Authorize(accessKey, action, resource string) bool {
	if accessKey == d.root {
		return true
	}
	d.mu.RLock()
	defer d.mu.RUnlock()
	e, ok := d.users[accessKey]
	return ok && e.policy.Allowed(action, resource)
}

var accessKeyRe = regexp.MustCompile(`^[A-Za-z0-9._\-]{3,128}$`)

// UserPolicy is the compiled policy of a user; false for an unknown one
// (and for the root, who has no policy: it is allowed everything).
func (d *Directory) UserPolicy(accessKey string) (*access.Policy, bool) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	e, ok := d.users[accessKey]
	return e.policy.Compiled(), ok
}

// Root is the root user's access key.
func (d *Directory) Root() string { return d.root }

// Exists reports whether accessKey is the root or a user.
func (d *Directory) Exists(accessKey string) bool {
	if accessKey == d.root {
		return true
	}
	d.fresh(accessKey)
	d.mu.RLock()
	defer d.mu.RUnlock()
	_, ok := d.users[accessKey]
	return ok
}

// ByEmail returns the access key of the user with the email address
// (compared case-insensitively).
func (d *Directory) ByEmail(email string) (string, bool) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	for k, e := range d.users {
		if e.user.Email != "" && strings.EqualFold(e.user.Email, email) {
			return k, true
		}
	}
	return "", false
}

var emailRe = regexp.MustCompile(`^[^@\s]+@[^@\s]+$`)

// Add creates a user; ErrUserExists when the access key is taken.
func (d *Directory) Add(ctx context.Context, u User) error {
	if !accessKeyRe.MatchString(u.AccessKey) {
		return fmt.Errorf("%w: access key must be 3-128 letters, digits, '.', '_' or '-'", ErrInvalidUser)
	}
	if len(u.SecretKey) < 8 || len(u.SecretKey) > 128 {
		return fmt.Errorf("%w: secret key must be 8-128 characters", ErrInvalidUser)
	}
	if u.AccessKey == d.root {
		return fmt.Errorf("%w: %s is the root user", ErrUserExists, u.AccessKey)
	}
	if IsSessionKey(u.AccessKey) {
		return fmt.Errorf("%w: access keys of the form ASIA + 16 characters are temporary credentials'; choose another", ErrInvalidUser)
	}
	if u.Email != "" && (len(u.Email) > 254 || !emailRe.MatchString(u.Email)) {
		return fmt.Errorf("%w: email %q is not an email address", ErrInvalidUser, u.Email)
	}
	if u.Email != "" {
		if other, ok := d.ByEmail(u.Email); ok {
			return fmt.Errorf("%w: email %s is user %s's", ErrInvalidUser, u.Email, other)
		}
	}
	if u.Policy == "" {
		u.Policy = ReadWrite
	}
	p, err := effective(u)
	if err != nil {
		return err
	}
	u.Created = time.Now().UTC()
	raw, _ := json.Marshal(u)
	info, err := d.store.Put(ctx, Bucket, userKey(u.AccessKey), bytes.NewReader(raw), int64(len(raw)),
		objstore.PutOptions{ContentType: "application/json", IfNoneMatch: "*"})
	if errors.Is(err, objstore.ErrPreconditionFailed) {
		return fmt.Errorf("%w: %s", ErrUserExists, u.AccessKey)
	}
	if err != nil {
		return err
	}
	d.mu.Lock()
	d.users[u.AccessKey] = entry{u, p, info.ETag}
	d.mu.Unlock()
	return nil
}

// Remove deletes a user.
func (d *Directory) Remove(ctx context.Context, accessKey string) error {
	d.fresh(accessKey)
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.users[accessKey]; !ok {
		return fmt.Errorf("%w: %s", ErrNoSuchUser, accessKey)
	}
	if _, err := d.store.Delete(ctx, Bucket, "users/"+accessKey+".json", objstore.DeleteOptions{}); err != nil {
		return err
	}
	delete(d.users, accessKey)
	return nil
}

// List returns the users sorted by access key, without their secrets.
func (d *Directory) List() []User {
	if d.store.Shared() {
		ctx, cancel := context.WithTimeout(context.Background(), missTimeout)
		if err := d.loadAll(ctx); err != nil {
			d.log.Warn().Err(err).Msg("cannot reload the users; listing the copy in memory")
		}
		cancel()
	}
	d.mu.RLock()
	defer d.mu.RUnlock()
	out := make([]User, 0, len(d.users))
	for _, e := range d.users {
		u := e.user
		u.SecretKey = ""
		out = append(out, u)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].AccessKey < out[j].AccessKey })
	return out
}
