package catalog

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/cairnstore/cairn/objstore"
)

// The keys that sign the Iceberg face's OAuth2 bearer tokens live in the
// store, so that a token outlives the process that issued it until it
// expires. They are one JSON object, TokenKeysObject in the system bucket
// TokenKeysBucket, changed only with conditional writes: created once
// (If-None-Match: *), rotated by compare-and-swap on its ETag, so that
// concurrent first starts agree on one key and concurrent rotations do not
// lose one. The object holds secrets: like the user directory
// (.cairn-iam), it is readable by whoever reads the data directory.
const (
	TokenKeysBucket = ".cairn-tokens"
	TokenKeysObject = "token-keys.json"
)

// TokenKey is one key signing bearer tokens.
type TokenKey struct {
	// ID names the key in the tokens it signs; each rotation's key has the
	// next ID.
	ID int `json:"id"`
	// Secret is the HMAC-SHA256 key (32 random bytes).
	Secret []byte `json:"secret"`
	// Created is when the key was made.
	Created time.Time `json:"created"`
}

// TokenKeys are the signing keys: Current signs new tokens; Previous, the
// key Current replaced (nil before the first rotation), still verifies
// the tokens it signed, which so stay valid until they expire. A token
// signed by a key older than Previous is refused.
type TokenKeys struct {
	Current  TokenKey  `json:"current"`
	Previous *TokenKey `json:"previous,omitempty"`
}

// TokenKeys returns the signing keys, creating the first one when the
// store has none.
func (s *Service) TokenKeys(ctx context.Context) (TokenKeys, error) {
	k, _, err := s.tokenKeys(ctx)
	return k, err
}

// RotateTokenKey makes a new current key; the current one becomes the
// previous one and the previous one is dropped (tokens it signed are
// refused from now on). It returns the new keys.
func (s *Service) RotateTokenKey(ctx context.Context) (TokenKeys, error) {
	for try := 0; ; try++ {
		old, etag, err := s.tokenKeys(ctx)
		if err != nil {
			return TokenKeys{}, err
		}
		next, err := newTokenKey(old.Current.ID+1, s.now())
		if err != nil {
			return TokenKeys{}, err
		}
		prev := old.Current
		k := TokenKeys{Current: next, Previous: &prev}
		err = s.putTokenKeys(ctx, k, objstore.PutOptions{IfMatch: etag})
		if err == nil {
			return k, nil
		}
		if !errors.Is(err, objstore.ErrPreconditionFailed) || try >= 8 {
			return TokenKeys{}, fmt.Errorf("catalog: rotate token key: %w", err)
		}
		// Another rotation won: rotate again on top of it.
	}
}

// tokenKeys reads the keys and their object's ETag, creating them first
// when absent.
func (s *Service) tokenKeys(ctx context.Context) (TokenKeys, string, error) {
	for try := 0; ; try++ {
		k, etag, err := s.readTokenKeys(ctx)
		if !errors.Is(err, objstore.ErrNoSuchKey) && !errors.Is(err, objstore.ErrNoSuchBucket) {
			return k, etag, err
		}
		if err := s.store.EnsureSystemBucket(ctx, TokenKeysBucket); err != nil {
			return TokenKeys{}, "", fmt.Errorf("catalog: token keys: %w", err)
		}
		first, err := newTokenKey(1, s.now())
		if err != nil {
			return TokenKeys{}, "", err
		}
		err = s.putTokenKeys(ctx, TokenKeys{Current: first}, objstore.PutOptions{IfNoneMatch: "*"})
		if err != nil && (!errors.Is(err, objstore.ErrPreconditionFailed) || try >= 8) {
			return TokenKeys{}, "", fmt.Errorf("catalog: create token keys: %w", err)
		}
		// Created, or another process created them first: read them.
	}
}

func (s *Service) readTokenKeys(ctx context.Context) (TokenKeys, string, error) {
	r, err := s.store.Open(ctx, TokenKeysBucket, TokenKeysObject, objstore.GetOptions{})
	if err != nil {
		return TokenKeys{}, "", err
	}
	defer func() { _ = r.Close() }()
	raw, err := io.ReadAll(io.LimitReader(r, 1<<20))
	if err != nil {
		return TokenKeys{}, "", fmt.Errorf("catalog: read token keys: %w", err)
	}
	k, err := parseTokenKeys(raw)
	if err != nil {
		return TokenKeys{}, "", err
	}
	return k, r.Info().ETag, nil
}

// parseTokenKeys decodes the token-key record and checks that it has a
// current key with an id and every key a secret of 32 bytes or more.
func parseTokenKeys(raw []byte) (TokenKeys, error) {
	var k TokenKeys
	if err := json.Unmarshal(raw, &k); err != nil {
		return TokenKeys{}, fmt.Errorf("catalog: token keys %s/%s: %w", TokenKeysBucket, TokenKeysObject, err)
	}
	if k.Current.ID < 1 || len(k.Current.Secret) < 32 || k.Previous != nil && len(k.Previous.Secret) < 32 {
		return TokenKeys{}, fmt.Errorf("catalog: token keys %s/%s: a key is missing or shorter than 32 bytes", TokenKeysBucket, TokenKeysObject)
	}
	return k, nil
}

func (s *Service) putTokenKeys(ctx context.Context, k TokenKeys, opt objstore.PutOptions) error {
	raw, err := json.Marshal(k)
	if err != nil {
		return err
	}
	opt.ContentType = "application/json"
	_, err = s.store.Put(ctx, TokenKeysBucket, TokenKeysObject, bytes.NewReader(raw), int64(len(raw)), opt)
	return err
}

func newTokenKey(id int, now time.Time) (TokenKey, error) {
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return TokenKey{}, fmt.Errorf("catalog: token key: %w", err)
	}
	return TokenKey{ID: id, Secret: secret, Created: now.UTC()}, nil
}
