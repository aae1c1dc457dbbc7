package strong

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"testing"

	"github.com/cairnstore/cairn/catalog"
)

// recs builds a kind's records from key/value pairs.
func recs(kv ...string) []catalog.Record {
	var out []catalog.Record
	for i := 0; i+1 < len(kv); i += 2 {
		out = append(out, catalog.Record{Key: kv[i], Value: []byte(kv[i+1]), Version: "ignored." + kv[i]})
	}
	return out
}

// sameContent reports whether two states hold the same keys and values
// (versions ignored, empty kinds equal to absent ones).
func sameContent(a, b map[catalog.Kind][]catalog.Record) bool {
	return Fingerprint("", nil, a) == Fingerprint("", nil, b)
}

// flip damages wh's snapshot object (a body byte) and returns its ETag.
func flip(t *testing.T, b *Backing, wh string) string {
	t.Helper()
	d := snapshotBytes(t, b.store, wh)
	d[len(d)-5] ^= 0x01
	putRaw(t, b.store, wh, d)
	etag, err := b.ObjectETag(context.Background(), wh)
	if err != nil || etag == "" {
		t.Fatalf("object etag: %q %v", etag, err)
	}
	return etag
}

func TestReplace(t *testing.T) {
	ctx := context.Background()
	state := map[catalog.Kind][]catalog.Record{
		catalog.KindNamespace: recs("b", "2", "a", "1"),
		catalog.KindTable:     recs("a\x1ft", "{}"),
		catalog.KindCommit:    nil, // empty: omitted
	}
	none := func(*testing.T, *Backing) string { return "" }
	cases := []struct {
		name   string
		seeded bool                              // the warehouse has a snapshot first
		ifETag func(*testing.T, *Backing) string // the condition passed
		kinds  map[catalog.Kind][]catalog.Record // nil = state
		wh     string
		want   error // nil = success; errAny = a plain error
	}{
		{"absent, expect none", false, none, nil, "w", nil},
		{"absent, expect one", false, func(*testing.T, *Backing) string { return "abc" }, nil, "w", catalog.ErrConflict},
		{"present, matching", true, currentETag, nil, "w", nil},
		{"present, expect none", true, none, nil, "w", catalog.ErrConflict},
		{"present, stale", true, func(t *testing.T, b *Backing) string {
			old := currentETag(t, b)
			if _, err := b.Put(ctx, "w", catalog.KindNamespace, "later", nil, ""); err != nil {
				t.Fatal(err)
			}
			return old
		}, nil, "w", catalog.ErrConflict},
		{"empty state", true, currentETag, map[catalog.Kind][]catalog.Record{}, "w", nil},
		{"registry refused", false, none, nil, "", errAny},
		{"unknown kind", false, none, map[catalog.Kind][]catalog.Record{"nope": recs("a", "")}, "w", errAny},
		{"invalid key", false, none, map[catalog.Kind][]catalog.Record{catalog.KindTable: recs("a\x00", "")}, "w", errAny},
		{"repeated key", false, none, map[catalog.Kind][]catalog.Record{catalog.KindTable: recs("a", "1", "a", "2")}, "w", errAny},
		{"table/view collision", false, none,
			map[catalog.Kind][]catalog.Record{catalog.KindTable: recs("x", ""), catalog.KindView: recs("x", "")}, "w", catalog.ErrConflict},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := newBacking(t)
			if c.seeded {
				seed(t, b, "w")
			}
			kinds := c.kinds
			if kinds == nil {
				kinds = state
			}
			ifETag := c.ifETag(t, b)
			before, beforeETag, err := b.Records(ctx, "w")
			if err != nil {
				t.Fatal(err)
			}
			etag, err := b.Replace(ctx, c.wh, kinds, ifETag)
			switch {
			case c.want == errAny:
				if err == nil || errors.Is(err, catalog.ErrConflict) {
					t.Fatalf("want a plain error, got %v", err)
				}
			case c.want != nil:
				if !errors.Is(err, c.want) {
					t.Fatalf("got %v, want %v", err, c.want)
				}
			case err != nil:
				t.Fatal(err)
			}
			got, gotETag, rerr := b.Records(ctx, "w")
			if rerr != nil {
				t.Fatal(rerr)
			}
			if err != nil { // nothing applied
				if gotETag != beforeETag || !sameContent(got, before) {
					t.Fatalf("failed replace changed the state: %v", got)
				}
				return
			}
			if gotETag != etag || etag == "" {
				t.Fatalf("etag %q, records from %q", etag, gotETag)
			}
			if !sameContent(got, kinds) {
				t.Fatalf("state %v, want %v", got, kinds)
			}
			// One generation for all, new to every record.
			vers := map[string]bool{}
			for _, rs := range got {
				for _, r := range rs {
					vers[r.Version] = true
				}
			}
			if len(vers) > 1 {
				t.Fatalf("records of one replace at several versions: %v", vers)
			}
			for _, rs := range before {
				for _, r := range rs {
					if vers[r.Version] {
						t.Fatalf("version %q reused", r.Version)
					}
				}
			}
			if r, err := b.Get(ctx, "w", catalog.KindTable, "a\x1ft"); kinds[catalog.KindTable] != nil && (err != nil || string(r.Value) != "{}") {
				t.Fatalf("get: %v %+v", err, r)
			}
			if _, err := b.Get(ctx, "w", catalog.KindNamespace, "ns"); !errors.Is(err, catalog.ErrNotFound) {
				t.Fatalf("previous record survived: %v", err)
			}
			l, _, err := b.List(ctx, "w", catalog.KindNamespace, catalog.ListOptions{})
			if err != nil || len(l) != len(kinds[catalog.KindNamespace]) {
				t.Fatalf("list: %v %v", err, l)
			}
			if now, err := b.SnapshotETag(ctx, "w"); err != nil || now != etag {
				t.Fatalf("snapshot etag %q %v", now, err)
			}
		})
	}
}

// currentETag is warehouse "w"'s snapshot ETag, from a HEAD alone.
func currentETag(t *testing.T, b *Backing) string {
	t.Helper()
	e, err := b.ObjectETag(context.Background(), "w")
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestFingerprint(t *testing.T) {
	base := map[catalog.Kind][]catalog.Record{
		catalog.KindNamespace: recs("a", "1", "b", "2"),
		catalog.KindTable:     recs("a\x1ft", `{"x":"<&>"}`),
	}
	reg := []byte(`{"prefix":"p"}`)
	other := func(edit func(m map[catalog.Kind][]catalog.Record)) map[catalog.Kind][]catalog.Record {
		m := maps.Clone(base)
		for k, v := range m {
			m[k] = append([]catalog.Record(nil), v...)
		}
		edit(m)
		return m
	}
	fp := Fingerprint("w", reg, base)
	if len(fp) != 64 || fp != Fingerprint("w", reg, base) {
		t.Fatalf("fingerprint %q", fp)
	}
	cases := []struct {
		name  string
		wh    string
		reg   []byte
		kinds map[catalog.Kind][]catalog.Record
		equal bool
	}{
		{"other versions", "w", reg, other(func(m map[catalog.Kind][]catalog.Record) {
			m[catalog.KindNamespace] = []catalog.Record{{Key: "b", Value: []byte("2"), Version: "x.9"}, {Key: "a", Value: []byte("1")}}
		}), true},
		{"empty kind added", "w", reg, other(func(m map[catalog.Kind][]catalog.Record) { m[catalog.KindView] = nil }), true},
		{"value changed", "w", reg, other(func(m map[catalog.Kind][]catalog.Record) { m[catalog.KindNamespace] = recs("a", "1", "b", "3") }), false},
		{"key added", "w", reg, other(func(m map[catalog.Kind][]catalog.Record) { m[catalog.KindCommit] = recs("c", "") }), false},
		{"kind changed", "w", reg, other(func(m map[catalog.Kind][]catalog.Record) {
			m[catalog.KindView], m[catalog.KindTable] = m[catalog.KindTable], nil
		}), false},
		{"registry changed", "w", []byte(`{}`), base, false},
		{"warehouse changed", "v", reg, base, false},
	}
	for _, c := range cases {
		if got := Fingerprint(c.wh, c.reg, c.kinds); (got == fp) != c.equal {
			t.Errorf("%s: equal = %v, want %v", c.name, got == fp, c.equal)
		}
	}
	// The same records published as a snapshot fingerprint the same.
	b := newBacking(t)
	ctx := context.Background()
	if _, err := b.Replace(ctx, "w", base, ""); err != nil {
		t.Fatal(err)
	}
	got, _, err := b.Records(ctx, "w")
	if err != nil {
		t.Fatal(err)
	}
	if Fingerprint("w", reg, got) != fp {
		t.Fatal("snapshot records fingerprint differently")
	}
}

func TestRemove(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name   string
		damage bool
		ifETag func(b *Backing, etag string) string
		want   error
	}{
		{"matching", false, func(_ *Backing, e string) string { return e }, nil},
		{"stale", false, func(*Backing, string) string { return "0123" }, catalog.ErrConflict},
		{"expect none", false, func(*Backing, string) string { return "" }, catalog.ErrConflict},
		{"damaged snapshot", true, func(_ *Backing, e string) string { return e }, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := newBacking(t)
			seed(t, b, "w", "other")
			old, err := b.Get(ctx, "w", catalog.KindNamespace, "ns")
			if err != nil {
				t.Fatal(err)
			}
			etag := currentETag(t, b)
			if c.damage {
				etag = flip(t, b, "w")
				if _, err := b.SnapshotETag(ctx, "w"); !errors.Is(err, ErrSnapshotInvalid) {
					t.Fatalf("snapshot etag of a damaged snapshot: %v", err)
				}
			}
			err = b.Remove(ctx, "w", c.ifETag(b, etag))
			if c.want != nil {
				if !errors.Is(err, c.want) {
					t.Fatalf("got %v, want %v", err, c.want)
				}
				if _, err := b.Get(ctx, "w", catalog.KindNamespace, "ns"); err != nil {
					t.Fatalf("refused remove lost the state: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, err := b.Get(ctx, "w", catalog.KindNamespace, "ns"); !errors.Is(err, catalog.ErrNotFound) {
				t.Fatalf("get after remove: %v", err)
			}
			if l, _, err := b.List(ctx, "w", catalog.KindNamespace, catalog.ListOptions{}); err != nil || len(l) != 0 {
				t.Fatalf("list after remove: %v %v", err, l)
			}
			if u := b.Unhealthy(); len(u) != 0 {
				t.Fatalf("unhealthy after remove: %v", u)
			}
			if e, err := b.SnapshotETag(ctx, "w"); err != nil || e != "" {
				t.Fatalf("snapshot etag after remove: %q %v", e, err)
			}
			if err := b.Remove(ctx, "w", ""); err != nil {
				t.Fatalf("removing nothing: %v", err)
			}
			// Re-created: the old version token does not come back.
			v, err := b.Put(ctx, "w", catalog.KindNamespace, "ns", []byte("x"), "")
			if err != nil || v == old.Version {
				t.Fatalf("re-create: %v %q", err, v)
			}
			if _, err := b.Get(ctx, "other", catalog.KindNamespace, "ns"); err != nil {
				t.Fatalf("other warehouse: %v", err)
			}
		})
	}
	if err := newBacking(t).Remove(ctx, "", ""); err == nil {
		t.Fatal("removing the registry accepted")
	}
}

// TestRecordsCopies: the values Records returns are the caller's.
func TestRecordsCopies(t *testing.T) {
	ctx := context.Background()
	b := newBacking(t)
	seed(t, b, "w")
	got, _, err := b.Records(ctx, "w")
	if err != nil {
		t.Fatal(err)
	}
	got[catalog.KindNamespace][0].Value[0] = 'X'
	again, _, err := b.Records(ctx, "w")
	if err != nil || bytes.Equal(again[catalog.KindNamespace][0].Value, got[catalog.KindNamespace][0].Value) {
		t.Fatalf("records share values: %v", err)
	}
}
