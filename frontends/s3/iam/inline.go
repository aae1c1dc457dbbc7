package iam

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"

	"github.com/cairnstore/cairn/frontends/s3/access"
	"github.com/cairnstore/cairn/objstore"
)

// Inline policies: a user may have named policies besides its own
// (User.Policy), as an IAM user has inline policies (PutUserPolicy). They
// are kept in the user's record (User.Inline, name -> document as sent)
// and the user is allowed what any of them, or its own policy, allows; a
// Deny in any of them denies.

// MaxInlinePolicy is the size limit of one inline policy document (IAM's
// limit for a user's inline policies is 2,048 characters).
const MaxInlinePolicy = 2048

// Errors of inline policies.
var (
	ErrNoSuchPolicy   = errors.New("iam: no such user policy")
	ErrInvalidName    = errors.New("iam: invalid policy name")
	ErrPolicyTooLarge = errors.New("iam: policy document too large")
)

// policyNameRe is IAM's pattern for policy names.
var policyNameRe = regexp.MustCompile(`^[\w+=,.@-]{1,128}$`)

// effective is a user's policy with its inline policies: one policy of
// all their statements (a Deny anywhere denies, an Allow anywhere allows).
func effective(u User) (Policy, error) {
	p, err := policyOf(u.Policy)
	if err != nil || len(u.Inline) == 0 {
		return p, err
	}
	merged := &access.Policy{Version: p.p.Version, Statements: append([]access.Statement(nil), p.p.Statements...)}
	for _, name := range sortedNames(u.Inline) {
		q, err := ParsePolicy([]byte(u.Inline[name]))
		if err != nil {
			return Policy{}, fmt.Errorf("inline policy %s: %w", name, err)
		}
		merged.Statements = append(merged.Statements, q.p.Statements...)
	}
	return Policy{merged}, nil
}

func sortedNames(m map[string]string) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// PutUserPolicy adds or replaces the user's inline policy name.
func (d *Directory) PutUserPolicy(ctx context.Context, user, name string, doc []byte) error {
	if !policyNameRe.MatchString(name) {
		return fmt.Errorf("%w: %q: 1 to 128 letters, digits or +=,.@_-", ErrInvalidName, name)
	}
	if len(doc) > MaxInlinePolicy {
		return fmt.Errorf("%w: %d bytes, the limit is %d", ErrPolicyTooLarge, len(doc), MaxInlinePolicy)
	}
	if _, err := ParsePolicy(doc); err != nil {
		return err
	}
	return d.update(ctx, user, func(u *User) error {
		if u.Inline == nil {
			u.Inline = map[string]string{}
		}
		u.Inline[name] = string(doc)
		return nil
	})
}

// DeleteUserPolicy removes the user's inline policy name.
func (d *Directory) DeleteUserPolicy(ctx context.Context, user, name string) error {
	return d.update(ctx, user, func(u *User) error {
		if _, ok := u.Inline[name]; !ok {
			return fmt.Errorf("%w: %s of %s", ErrNoSuchPolicy, name, user)
		}
		delete(u.Inline, name)
		if len(u.Inline) == 0 {
			u.Inline = nil
		}
		return nil
	})
}

// GetUserPolicy returns the user's inline policy name as it was put.
func (d *Directory) GetUserPolicy(user, name string) (string, error) {
	d.fresh(user)
	d.mu.RLock()
	defer d.mu.RUnlock()
	e, ok := d.users[user]
	if !ok {
		return "", fmt.Errorf("%w: %s", ErrNoSuchUser, user)
	}
	doc, ok := e.user.Inline[name]
	if !ok {
		return "", fmt.Errorf("%w: %s of %s", ErrNoSuchPolicy, name, user)
	}
	return doc, nil
}

// ListUserPolicies returns the names of the user's inline policies,
// sorted.
func (d *Directory) ListUserPolicies(user string) ([]string, error) {
	d.fresh(user)
	d.mu.RLock()
	defer d.mu.RUnlock()
	e, ok := d.users[user]
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrNoSuchUser, user)
	}
	return sortedNames(e.user.Inline), nil
}

// update changes a user's record with fn and writes it through. The
// directory's lock is held across the store write, so that updates of one
// user apply in order (lock order: Directory.mu, then the store's).
func (d *Directory) update(ctx context.Context, user string, fn func(*User) error) error {
	d.fresh(user) // not a stale copy's change over another node's
	d.mu.Lock()
	defer d.mu.Unlock()
	e, ok := d.users[user]
	if !ok {
		return fmt.Errorf("%w: %s", ErrNoSuchUser, user)
	}
	u := e.user
	u.Inline = make(map[string]string, len(e.user.Inline))
	for k, v := range e.user.Inline {
		u.Inline[k] = v
	}
	if err := fn(&u); err != nil {
		return err
	}
	if len(u.Inline) == 0 {
		u.Inline = nil
	}
	p, err := effective(u)
	if err != nil {
		return err
	}
	raw, err := json.Marshal(u)
	if err != nil {
		return err
	}
	info, err := d.store.Put(ctx, Bucket, userKey(u.AccessKey), bytes.NewReader(raw), int64(len(raw)),
		objstore.PutOptions{ContentType: "application/json"})
	if err != nil {
		return fmt.Errorf("iam: write user %s: %w", user, err)
	}
	d.users[user] = entry{u, p, info.ETag}
	return nil
}
