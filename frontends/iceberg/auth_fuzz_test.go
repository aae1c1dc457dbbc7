package iceberg

import (
	"context"
	"crypto/hmac"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairnstore/cairn/catalog"
)

// fixedKeys is a TokenKeyStore whose keys never change; it counts reads.
type fixedKeys struct {
	keys  catalog.TokenKeys
	loads atomic.Int64
}

func (f *fixedKeys) TokenKeys(context.Context) (catalog.TokenKeys, error) {
	f.loads.Add(1)
	return f.keys, nil
}

func (f *fixedKeys) RotateTokenKey(context.Context) (catalog.TokenKeys, error) {
	return catalog.TokenKeys{}, errors.New("fixed keys do not rotate")
}

// FuzzVerifyToken: the bearer token parser never panics, fails only with
// ErrUnauthenticated, accepts only a token whose MAC one of the keys made
// over its claims, and however many tokens naming unknown newer keys
// arrive in one forcedReloadGap, reads the keys at most twice (the first
// load and one forced reload).
func FuzzVerifyToken(f *testing.F) {
	ctx := context.Background()
	now := time.Unix(1_800_000_000, 0)
	prev := catalog.TokenKey{ID: 6, Secret: []byte("previous-previous-previous-key!!")}
	store := &fixedKeys{keys: catalog.TokenKeys{
		Current:  catalog.TokenKey{ID: 7, Secret: []byte("current-current-current-current!")},
		Previous: &prev,
	}}
	tk, err := newTokens(store, time.Hour, func() time.Time { return now })
	if err != nil {
		f.Fatal(err)
	}
	valid, _, err := tk.issue(ctx, Principal{AccessKey: "alice", Root: true})
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{
		valid, forgedToken(8, now.Add(time.Hour)), forgedToken(7, now.Add(time.Hour)), forgedToken(5, now),
		valid + "x", strings.Replace(valid, ".", "..", 1), ".", "", "e30.", "bnVsbA.x",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, tok string) {
		p, err := tk.verify(ctx, tok)
		if n := store.loads.Load(); n > 2 {
			t.Fatalf("%d key reads in one forced-reload gap, want at most 2", n)
		}
		if err != nil {
			if !errors.Is(err, ErrUnauthenticated) {
				t.Fatalf("error without ErrUnauthenticated: %v", err)
			}
			return
		}
		payload, sig, _ := strings.Cut(tok, ".")
		if !hmac.Equal([]byte(sig), []byte(mac(store.keys.Current.Secret, payload))) &&
			!hmac.Equal([]byte(sig), []byte(mac(prev.Secret, payload))) {
			t.Fatalf("accepted %q, whose MAC no key made", tok)
		}
		if p.AccessKey == "" {
			t.Fatalf("accepted %q with no principal", tok)
		}
	})
}

// FuzzNotForm: the token endpoint's form check never panics, looks at
// the body only when there is no Content-Type, and refuses a
// Content-Type other than a form's.
func FuzzNotForm(f *testing.F) {
	for _, s := range [][2]string{
		{"application/x-www-form-urlencoded", "grant_type=client_credentials"},
		{"application/x-www-form-urlencoded; charset=utf-8", "{}"},
		{"application/json", `{"grant_type":"client_credentials"}`},
		{"", `  {"a":1}`}, {"", "[1]"}, {"", "a=b"}, {"", ""}, {"text/plain;;", ""}, {"a/b; c", ""},
	} {
		f.Add(s[0], []byte(s[1]))
	}
	f.Fuzz(func(t *testing.T, ct string, body []byte) {
		why := notForm(ct, body)
		if ct == "" {
			return
		}
		if other := notForm(ct, []byte("a=b")); other != why {
			t.Fatalf("Content-Type %q: the answer depends on the body: %q, %q", ct, why, other)
		}
		if why == "" && !strings.HasPrefix(strings.ToLower(strings.TrimSpace(ct)), "application/x-www-form-urlencoded") {
			t.Fatalf("Content-Type %q taken as a form", ct)
		}
	})
}
