package iam

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/cairnstore/cairn/frontends/s3/access"
)

// TestSessions: AssumeRole's credentials check out with their token
// until they expire, carry their policy, and survive a reopen of the
// directory (the key is stored); a token that was changed, is another
// key's, has expired or whose user is gone does not; bad requests are
// refused.
func TestSessions(t *testing.T) {
	ctx := context.Background()
	d, st := openTestDirectory(t, t.TempDir())
	if err := d.Add(ctx, User{AccessKey: "alice", SecretKey: "alicesecret", Policy: ReadWrite}); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	pol := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:GetObject","Resource":"arn:aws:s3:::b/in/*"}]}`
	s, err := d.AssumeRole("alice", time.Hour, pol, now)
	if err != nil {
		t.Fatal(err)
	}
	if !IsSessionKey(s.AccessKey) || s.Parent != "alice" || !s.Expiration.Equal(now.Add(time.Hour)) {
		t.Fatalf("session %+v", s)
	}
	if sk, ok := d.Secret(s.AccessKey); !ok || sk != s.SecretKey {
		t.Fatalf("Secret of the session key: %q %v, want the session's", sk, ok)
	}
	got, err := d.CheckSession(s.AccessKey, s.Token, now.Add(time.Minute))
	if err != nil || got.Parent != "alice" || got.Policy == nil {
		t.Fatalf("CheckSession: %+v %v", got, err)
	}
	allows := func(p *access.Policy, key string) bool {
		return p.Eval(&access.Request{Principal: "alice", Action: "s3:GetObject", Resource: "arn:aws:s3:::b/" + key}) == access.Allow
	}
	if !allows(got.Policy, "in/x") || allows(got.Policy, "out/x") {
		t.Fatal("the session's policy does not say what it said")
	}
	// The key is stored: another directory on the store checks the token.
	d2, err := OpenDirectory(ctx, st, "root", "rootsecret", zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d2.CheckSession(s.AccessKey, s.Token, now); err != nil {
		t.Fatalf("CheckSession after a reopen: %v", err)
	}
	other, err := d.AssumeRole("root", MinSessionDuration, "", now)
	if err != nil {
		t.Fatal(err)
	}
	enc, mac, _ := strings.Cut(s.Token, ".")
	for _, tc := range []struct {
		name, ak, token string
		at              time.Time
		want            error
	}{
		{"expired", s.AccessKey, s.Token, now.Add(time.Hour), ErrExpiredToken},
		{"another key's", other.AccessKey, s.Token, now, ErrInvalidToken},
		{"changed", s.AccessKey, enc + "x." + mac, now, ErrInvalidToken},
		{"no mac", s.AccessKey, enc, now, ErrInvalidToken},
		{"empty", s.AccessKey, "", now, ErrInvalidToken},
	} {
		if _, err := d.CheckSession(tc.ak, tc.token, tc.at); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	for _, tc := range []struct {
		name, parent string
		dur          time.Duration
		policy       string
		want         error
	}{
		{"too short", "alice", MinSessionDuration - time.Second, "", ErrInvalidUser},
		{"too long", "alice", MaxSessionDuration + time.Second, "", ErrInvalidUser},
		{"unknown user", "bob", time.Hour, "", ErrNoSuchUser},
		{"a session", s.AccessKey, time.Hour, "", ErrInvalidUser},
		{"bad policy", "alice", time.Hour, `{"Statement":[{"Effect":"Perhaps","Action":"s3:GetObject","Resource":"*"}]}`, ErrInvalidPolicy},
		{"large policy", "alice", time.Hour, strings.Repeat(" ", MaxSessionPolicy+1), ErrPolicyTooLarge},
	} {
		if _, err := d.AssumeRole(tc.parent, tc.dur, tc.policy, now); !errors.Is(err, tc.want) {
			t.Errorf("AssumeRole %s: %v, want %v", tc.name, err, tc.want)
		}
	}
	if err := d.Add(ctx, User{AccessKey: "ASIAAAAAAAAAAAAAAAAA", SecretKey: "longenough"}); !errors.Is(err, ErrInvalidUser) {
		t.Errorf("a user with a session-shaped key: %v", err)
	}
	if err := d.Remove(ctx, "alice"); err != nil {
		t.Fatal(err)
	}
	if _, err := d.CheckSession(s.AccessKey, s.Token, now); !errors.Is(err, ErrInvalidToken) {
		t.Fatalf("a session of a removed user: %v, want ErrInvalidToken", err)
	}
}

// FuzzCheckSession: any token a client sends is refused or accepted
// without a panic; only the directory's own tokens are accepted.
func FuzzCheckSession(f *testing.F) {
	d, _ := openTestDirectory(f, f.TempDir())
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	s, err := d.AssumeRole("root", time.Hour, "", now)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(s.AccessKey, s.Token)
	f.Add(s.AccessKey, "e30.AAAA")
	f.Add("ASIAAAAAAAAAAAAAAAAA", "..")
	f.Fuzz(func(t *testing.T, ak, token string) {
		got, err := d.CheckSession(ak, token, now)
		if err == nil && (token != s.Token || got.Parent != "root") {
			t.Fatalf("accepted a token the directory did not make: %q for %q", token, ak)
		}
	})
}
