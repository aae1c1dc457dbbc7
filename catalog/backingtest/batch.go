package backingtest

import (
	"context"
	"testing"

	"github.com/cairnstore/cairn/catalog"
)

// RunBatch checks the catalog.BatchBacking contract on fresh backings
// from newBacking: a batch whose conditions all hold lands whole, with a
// new version per record; one condition that fails (a stale version, a
// record that must not exist, one that is gone) leaves every record as
// it was, with the sentinel Put would give; a key twice and an invalid
// address are refused with neither sentinel.
func RunBatch(t *testing.T, newBacking func(t *testing.T) catalog.BatchBacking) {
	ctx := context.Background()
	b := newBacking(t)
	const wh = "wh"
	k := catalog.KindTable
	va, err := b.Put(ctx, wh, k, "a", []byte("a0"), "")
	check(t, "put a", err, nil)
	vb, err := b.Put(ctx, wh, k, "b", []byte("b0"), "")
	check(t, "put b", err, nil)
	vers, err := b.PutBatch(ctx, wh, []catalog.BatchPut{
		{Kind: k, Key: "a", Value: []byte("a1"), IfVersion: va},
		{Kind: k, Key: "b", Value: []byte("b1"), IfVersion: vb},
		{Kind: k, Key: "c", Value: []byte("c1"), IfVersion: ""},
		{Kind: catalog.KindNamespace, Key: "n", Value: []byte("n1"), IfVersion: catalog.AnyVersion},
	})
	check(t, "a batch whose conditions hold", err, nil)
	if len(vers) != 4 {
		t.Fatalf("a batch of 4 puts returned %d versions", len(vers))
	}
	want := map[string]string{"a": "a1", "b": "b1", "c": "c1"}
	cur := map[string]string{}
	for i, key := range []string{"a", "b", "c"} {
		r, err := b.Get(ctx, wh, k, key)
		check(t, "get "+key, err, nil)
		if string(r.Value) != want[key] || r.Version != vers[i] {
			t.Fatalf("after the batch %s = %q version %q, want %q version %q", key, r.Value, r.Version, want[key], vers[i])
		}
		if r.Version == va || r.Version == vb {
			t.Fatalf("the batch kept %s's old version", key)
		}
		cur[key] = r.Version
	}
	unchanged := func(what string) {
		t.Helper()
		for key, v := range want {
			r, err := b.Get(ctx, wh, k, key)
			check(t, what+": get "+key, err, nil)
			if string(r.Value) != v || r.Version != cur[key] {
				t.Fatalf("%s: %s = %q (version %q), want %q unchanged", what, key, r.Value, r.Version, v)
			}
		}
		if _, err := b.Get(ctx, wh, k, "gone"); err == nil {
			t.Fatalf("%s: a refused batch created a record", what)
		}
	}
	for _, tc := range []struct {
		name string
		puts []catalog.BatchPut
		want error
	}{
		{"stale version", []catalog.BatchPut{
			{Kind: k, Key: "a", Value: []byte("x"), IfVersion: cur["a"]},
			{Kind: k, Key: "b", Value: []byte("x"), IfVersion: vb},
		}, catalog.ErrConflict},
		{"must not exist", []catalog.BatchPut{
			{Kind: k, Key: "a", Value: []byte("x"), IfVersion: cur["a"]},
			{Kind: k, Key: "c", Value: []byte("x"), IfVersion: ""},
		}, catalog.ErrConflict},
		{"gone", []catalog.BatchPut{
			{Kind: k, Key: "a", Value: []byte("x"), IfVersion: cur["a"]},
			{Kind: k, Key: "gone", Value: []byte("x"), IfVersion: cur["b"]},
		}, catalog.ErrNotFound},
		{"a key twice", []catalog.BatchPut{
			{Kind: k, Key: "a", Value: []byte("x"), IfVersion: catalog.AnyVersion},
			{Kind: k, Key: "a", Value: []byte("y"), IfVersion: catalog.AnyVersion},
		}, errAny},
		{"invalid key", []catalog.BatchPut{
			{Kind: k, Key: "a", Value: []byte("x"), IfVersion: catalog.AnyVersion},
			{Kind: k, Key: "", Value: []byte("y"), IfVersion: catalog.AnyVersion},
		}, errAny},
	} {
		_, err := b.PutBatch(ctx, wh, tc.puts)
		check(t, tc.name, err, tc.want)
		unchanged("after the refused batch " + tc.name)
	}
}
