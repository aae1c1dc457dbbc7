package iam

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/cairnstore/cairn/objstore"
	"github.com/cairnstore/cairn/objstore/storetest"
)

func TestInlinePolicies(t *testing.T) {
	ctx := context.Background()
	st := storetest.Open(t, objstore.Options{Dir: t.TempDir(), DriveCount: 1, Parity: -1, NoBackground: true})
	d, err := OpenDirectory(ctx, st, "root", "rootsecret", zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Add(ctx, User{AccessKey: "alice", SecretKey: "alicesecret", Policy: ReadOnly}); err != nil {
		t.Fatal(err)
	}
	allowPut := `{"Statement":{"Effect":"Allow","Action":"s3:PutObject","Resource":"arn:aws:s3:::up/*"}}`
	denyGet := `{"Statement":{"Effect":"Deny","Action":"s3:GetObject","Resource":"arn:aws:s3:::secret/*"}}`
	for _, tc := range []struct {
		user, name, doc string
		want            error
	}{
		{"alice", "AllowPut", allowPut, nil},
		{"alice", "DenyGet", denyGet, nil},
		{"alice", "DenyGet", denyGet, nil}, // replaced
		{"bob", "P", allowPut, ErrNoSuchUser},
		{"root", "P", allowPut, ErrNoSuchUser},
		{"alice", "", allowPut, ErrInvalidName},
		{"alice", "a b", allowPut, ErrInvalidName},
		{"alice", strings.Repeat("n", 129), allowPut, ErrInvalidName},
		{"alice", "Bad", `{"Statement":[]}`, ErrInvalidPolicy},
		{"alice", "Big", `{"Statement":{"Effect":"Allow","Action":"s3:*","Resource":"arn:aws:s3:::` + strings.Repeat("b", MaxInlinePolicy) + `"}}`, ErrPolicyTooLarge},
	} {
		if err := d.PutUserPolicy(ctx, tc.user, tc.name, []byte(tc.doc)); !errors.Is(err, tc.want) {
			t.Errorf("put %s %q: %v, want %v", tc.user, tc.name, err, tc.want)
		}
	}
	check := func(d *Directory, names []string, put, getSecret, get bool) {
		t.Helper()
		got, err := d.ListUserPolicies("alice")
		if err != nil || !reflect.DeepEqual(got, names) {
			t.Errorf("list: %v %v, want %v", got, err, names)
		}
		for _, a := range []struct {
			action, res string
			want        bool
		}{{"s3:PutObject", "arn:aws:s3:::up/k", put}, {"s3:GetObject", "arn:aws:s3:::secret/k", getSecret}, {"s3:GetObject", "arn:aws:s3:::up/k", get}} {
			if got := d.Authorize("alice", a.action, a.res); got != a.want {
				t.Errorf("%s on %s: %v, want %v", a.action, a.res, got, a.want)
			}
		}
	}
	check(d, []string{"AllowPut", "DenyGet"}, true, false, true)
	if doc, err := d.GetUserPolicy("alice", "DenyGet"); err != nil || doc != denyGet {
		t.Errorf("get: %q %v", doc, err)
	}
	if _, err := d.GetUserPolicy("alice", "Nope"); !errors.Is(err, ErrNoSuchPolicy) {
		t.Errorf("get absent: %v", err)
	}
	// The inline policies are in the user's record: a reopened directory
	// has them.
	d2, err := OpenDirectory(ctx, st, "root", "rootsecret", zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	check(d2, []string{"AllowPut", "DenyGet"}, true, false, true)
	if err := d2.DeleteUserPolicy(ctx, "alice", "DenyGet"); err != nil {
		t.Fatal(err)
	}
	if err := d2.DeleteUserPolicy(ctx, "alice", "DenyGet"); !errors.Is(err, ErrNoSuchPolicy) {
		t.Errorf("delete again: %v", err)
	}
	check(d2, []string{"AllowPut"}, true, true, true)
	if err := d2.DeleteUserPolicy(ctx, "alice", "AllowPut"); err != nil {
		t.Fatal(err)
	}
	check(d2, []string{}, false, true, true)
	if _, err := d2.ListUserPolicies("bob"); !errors.Is(err, ErrNoSuchUser) {
		t.Errorf("list bob: %v", err)
	}
}
