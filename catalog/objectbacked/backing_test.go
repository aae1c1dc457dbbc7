package objectbacked_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/cairnstore/cairn/catalog"
	"github.com/cairnstore/cairn/catalog/objectbacked"
	"github.com/cairnstore/cairn/objstore"
	"github.com/cairnstore/cairn/objstore/storetest"
)

func newBacking(t *testing.T) *objectbacked.Backing {
	t.Helper()
	ctx := context.Background()
	st := storetest.Open(t, objstore.Options{Dir: t.TempDir(), DriveCount: 1, BlockSize: 64 << 10, NoBackground: true})
	t.Cleanup(func() { _ = st.Close() })
	b, err := objectbacked.New(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestConditions(t *testing.T) {
	b := newBacking(t)
	ctx := context.Background()
	k := catalog.KindTable
	steps := []struct {
		name string
		run  func() error
		want error
	}{
		{"get absent", func() error { _, err := b.Get(ctx, "w", k, "a"); return err }, catalog.ErrNotFound},
		{"put with version on absent", func() error { _, err := b.Put(ctx, "w", k, "a", []byte("x"), "abc"); return err }, catalog.ErrNotFound},
		{"create", func() error { _, err := b.Put(ctx, "w", k, "a", []byte("x"), ""); return err }, nil},
		{"create again", func() error { _, err := b.Put(ctx, "w", k, "a", []byte("x"), ""); return err }, catalog.ErrConflict},
		{"stale version", func() error { _, err := b.Put(ctx, "w", k, "a", []byte("y"), "0123"); return err }, catalog.ErrConflict},
		{"delete stale", func() error { return b.Delete(ctx, "w", k, "a", "0123") }, catalog.ErrConflict},
		{"nul key", func() error { _, err := b.Put(ctx, "w", k, "a\x00", []byte("x"), ""); return err }, nil},
	}
	for _, s := range steps {
		err := s.run()
		if s.name == "nul key" {
			if err == nil {
				t.Errorf("%s: accepted", s.name)
			}
			continue
		}
		if (s.want == nil) != (err == nil) || (s.want != nil && !errors.Is(err, s.want)) {
			t.Errorf("%s: %v, want %v", s.name, err, s.want)
		}
	}
	r, err := b.Get(ctx, "w", k, "a")
	if err != nil || string(r.Value) != "x" {
		t.Fatalf("get: %v %q", err, r.Value)
	}
	// Equal values still get a new version (no ABA).
	v2, err := b.Put(ctx, "w", k, "a", []byte("x"), r.Version)
	if err != nil || v2 == r.Version {
		t.Fatalf("rewrite: %v %q %q", err, v2, r.Version)
	}
	if _, err := b.Put(ctx, "w", k, "a", []byte("z"), r.Version); !errors.Is(err, catalog.ErrConflict) {
		t.Fatalf("old version after rewrite: %v", err)
	}
	if err := b.Delete(ctx, "w", k, "a", v2); err != nil {
		t.Fatal(err)
	}
	if err := b.Delete(ctx, "w", k, "a", catalog.AnyVersion); err != nil {
		t.Fatalf("unconditional delete of absent: %v", err)
	}
}

func TestListPaging(t *testing.T) {
	b := newBacking(t)
	ctx := context.Background()
	for i := range 25 {
		if _, err := b.Put(ctx, "w", catalog.KindNamespace, fmt.Sprintf("k%02d", i), []byte{byte(i)}, ""); err != nil {
			t.Fatal(err)
		}
	}
	// Another warehouse and kind stay apart.
	if _, err := b.Put(ctx, "w2", catalog.KindNamespace, "k00", nil, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Put(ctx, "", catalog.KindWarehouse, "w", nil, ""); err != nil {
		t.Fatal(err)
	}
	var got []string
	after := ""
	for {
		recs, more, err := b.List(ctx, "w", catalog.KindNamespace, catalog.ListOptions{After: after, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if r.Version == "" || len(r.Value) != 1 {
				t.Fatalf("record %+v", r)
			}
			got = append(got, r.Key)
		}
		if !more {
			break
		}
		after = recs[len(recs)-1].Key
	}
	if len(got) != 25 || got[0] != "k00" || got[24] != "k24" {
		t.Fatalf("listed %v", got)
	}
	recs, _, err := b.List(ctx, "w", catalog.KindNamespace, catalog.ListOptions{Prefix: "k1", KeysOnly: true})
	if err != nil || len(recs) != 10 || recs[0].Version != "" {
		t.Fatalf("prefix list: %v %v", recs, err)
	}
	ws, _, err := b.List(ctx, "", catalog.KindWarehouse, catalog.ListOptions{})
	if err != nil || len(ws) != 1 || ws[0].Key != "w" {
		t.Fatalf("warehouses: %v %v", ws, err)
	}
}
