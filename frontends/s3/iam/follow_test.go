package iam

import (
	"context"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/cairnstore/cairn/objstore/storetest"
)

// TestDirectoriesOfTwoNodes: two directories on one store, as the nodes
// of a cluster keep them: a user added through one signs at once through
// the other (the miss reads the store), and, with Follow, a policy put
// or a user removed through one reaches the other; without Follow the
// other keeps its stale copy (the control case: the test can fail).
func TestDirectoriesOfTwoNodes(t *testing.T) {
	ctx := t.Context()
	a, st := openTestDirectory(t, t.TempDir())
	b, err := OpenDirectory(ctx, st, "root", "rootsecret", zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	c, err := OpenDirectory(ctx, st, "root", "rootsecret", zerolog.Nop()) // does not follow
	if err != nil {
		t.Fatal(err)
	}
	b.Follow(ctx)
	if err := a.Add(ctx, User{AccessKey: "alice", SecretKey: "alicesecret", Policy: ReadOnly}); err != nil {
		t.Fatal(err)
	}
	for _, d := range []*Directory{b, c} {
		if s, ok := d.Secret("alice"); !ok || s != "alicesecret" {
			t.Fatalf("a user added on another node: secret %q, %v", s, ok)
		}
	}
	if _, ok := b.Secret("nobody"); ok {
		t.Fatal("an unknown access key was found")
	}
	doc := []byte(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:PutObject","Resource":"arn:aws:s3:::drop/*"}]}`)
	if err := a.PutUserPolicy(ctx, "alice", "drop", doc); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the policy put on a reaches b", func() bool {
		return b.Authorize("alice", "s3:PutObject", "arn:aws:s3:::drop/x")
	})
	if c.Authorize("alice", "s3:PutObject", "arn:aws:s3:::drop/x") {
		t.Fatal("a directory that does not follow saw the policy: the test cannot tell")
	}
	if err := a.Remove(ctx, "alice"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the removal on a reaches b", func() bool {
		_, ok := b.Secret("alice")
		return !ok
	})
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s", what)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// TestDirectoriesOfASharedStore: on a store other processes write to
// (Shared), a request signed right after a change made through another
// directory is judged by the change, without Follow.
func TestDirectoriesOfASharedStore(t *testing.T) {
	ctx := t.Context()
	opt := testStoreOptions(t.TempDir())
	opt.WriterID = 1
	st := storetest.Open(t, opt)
	if !st.Shared() {
		t.Fatal("a store with a writer id is not shared")
	}
	var dirs [2]*Directory
	for i := range dirs {
		d, err := OpenDirectory(ctx, st, "root", "rootsecret", zerolog.Nop())
		if err != nil {
			t.Fatal(err)
		}
		dirs[i] = d
	}
	a, b := dirs[0], dirs[1]
	if err := a.Add(ctx, User{AccessKey: "alice", SecretKey: "alicesecret", Policy: ReadOnly}); err != nil {
		t.Fatal(err)
	}
	if _, ok := b.Secret("alice"); !ok {
		t.Fatal("a user added through another directory is unknown")
	}
	doc := []byte(`{"Version":"2012-10-17","Statement":[{"Effect":"Deny","Action":"s3:GetObject","Resource":"arn:aws:s3:::*"}]}`)
	if err := a.PutUserPolicy(ctx, "alice", "deny", doc); err != nil {
		t.Fatal(err)
	}
	if _, ok := b.Secret("alice"); !ok {
		t.Fatal("alice unknown after her policy changed")
	}
	if b.Authorize("alice", "s3:GetObject", "arn:aws:s3:::bkt/x") {
		t.Fatal("a request after the Deny put elsewhere is allowed")
	}
	if err := a.Remove(ctx, "alice"); err != nil {
		t.Fatal(err)
	}
	if _, ok := b.Secret("alice"); ok {
		t.Fatal("a user removed through another directory still signs")
	}
}
