package iam

import (
	"context"
	"errors"
	"testing"

	"github.com/rs/zerolog"

	"github.com/cairnstore/cairn/objstore"
	"github.com/cairnstore/cairn/objstore/storetest"
)

// testStoreOptions are the options of the tests' store in dir.
func testStoreOptions(dir string) objstore.Options {
	return objstore.Options{Dir: dir, DriveCount: 1, Parity: -1, NoBackground: true}
}

// openTestDirectory opens a store in dir and the user directory on it,
// with root "root" (secret "rootsecret").
func openTestDirectory(tb testing.TB, dir string) (*Directory, *objstore.Store) {
	tb.Helper()
	st := storetest.Open(tb, testStoreOptions(dir))
	d, err := OpenDirectory(context.Background(), st, "root", "rootsecret", zerolog.Nop())
	if err != nil {
		tb.Fatal(err)
	}
	return d, st
}

func TestDirectory(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	d, st := openTestDirectory(t, dir)
	for _, tc := range []struct {
		u    User
		want error
	}{
		{User{AccessKey: "reader", SecretKey: "readersecret", Policy: ReadOnly, Email: "Reader@Example.com"}, nil},
		{User{AccessKey: "bademail", SecretKey: "longenough", Email: "not an address"}, ErrInvalidUser},
		{User{AccessKey: "sameemail", SecretKey: "longenough", Email: "reader@example.com"}, ErrInvalidUser},
		{User{AccessKey: "writer", SecretKey: "writersecret", Policy: `{"Statement":[{"Effect":"Allow","Action":"s3:PutObject","Resource":"arn:aws:s3:::in/*"}]}`}, nil},
		{User{AccessKey: "reader", SecretKey: "another1", Policy: ReadOnly}, ErrUserExists},
		{User{AccessKey: "root", SecretKey: "rootsecret2"}, ErrUserExists},
		{User{AccessKey: "x", SecretKey: "longenough"}, ErrInvalidUser},
		{User{AccessKey: "short", SecretKey: "1234"}, ErrInvalidUser},
		{User{AccessKey: "badpol", SecretKey: "longenough", Policy: "admin"}, ErrInvalidPolicy},
	} {
		if err := d.Add(ctx, tc.u); !errors.Is(err, tc.want) {
			t.Errorf("add %s: %v, want %v", tc.u.AccessKey, err, tc.want)
		}
	}
	if k, ok := d.ByEmail("reader@EXAMPLE.com"); !ok || k != "reader" {
		t.Errorf("ByEmail: %q %v", k, ok)
	}
	if _, ok := d.ByEmail("nobody@example.com"); ok {
		t.Error("ByEmail found an unknown address")
	}
	if !d.Exists("root") || !d.Exists("writer") || d.Exists("nobody") {
		t.Error("Exists is wrong")
	}
	if p, ok := d.UserPolicy("writer"); !ok || p == nil || len(p.Statements) != 1 {
		t.Errorf("UserPolicy(writer): %v %v", p, ok)
	}
	if s, ok := d.Secret("reader"); !ok || s != "readersecret" {
		t.Fatalf("secret of reader: %q %v", s, ok)
	}
	for _, tc := range []struct {
		ak, action, res string
		want            bool
	}{
		{"root", "s3:DeleteBucket", "arn:aws:s3:::b", true},
		{"reader", "s3:GetObject", "arn:aws:s3:::b/k", true},
		{"reader", "s3:PutObject", "arn:aws:s3:::b/k", false},
		{"writer", "s3:PutObject", "arn:aws:s3:::in/k", true},
		{"writer", "s3:PutObject", "arn:aws:s3:::out/k", false},
		{"nobody", "s3:GetObject", "arn:aws:s3:::b/k", false},
	} {
		if got := d.Authorize(tc.ak, tc.action, tc.res); got != tc.want {
			t.Errorf("%s %s %s: %v", tc.ak, tc.action, tc.res, got)
		}
	}
	// Users survive a restart; system buckets stay out of ListBuckets.
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	d, st = openTestDirectory(t, dir)
	defer func() { _ = st.Close() }()
	if l := d.List(); len(l) != 2 || l[0].AccessKey != "reader" || l[0].SecretKey != "" {
		t.Fatalf("list after restart: %+v", l)
	}
	if bs, _ := st.ListBuckets(ctx); len(bs) != 0 {
		t.Fatalf("system bucket listed: %+v", bs)
	}
	if err := d.Remove(ctx, "reader"); err != nil {
		t.Fatal(err)
	}
	if err := d.Remove(ctx, "reader"); !errors.Is(err, ErrNoSuchUser) {
		t.Fatalf("second remove: %v", err)
	}
	if _, ok := d.Secret("reader"); ok {
		t.Fatal("removed user still has a secret")
	}
}
