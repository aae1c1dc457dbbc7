package backingtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/cairnstore/cairn/catalog"
)

// Run runs every subtest of the suite, each on a fresh, empty backing
// from newBacking.
func Run(t *testing.T, newBacking func(t *testing.T) catalog.Backing) {
	tests := []struct {
		name string
		fn   func(t *testing.T, b catalog.Backing)
	}{
		{"Conditions", testConditions},
		{"Versions", testVersions},
		{"Values", testValues},
		{"InvalidAddress", testInvalidAddress},
		{"List", testList},
		{"ListOrder", testListOrder},
		{"Concurrent", testConcurrent},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, newBacking(t)) })
	}
}

// errAny marks a step that must fail with an error wrapping neither
// sentinel (an invalid argument, not a missing record or a conflict).
var errAny = errors.New("an error wrapping neither sentinel")

// check fails t when err is not what want says: nil for success, errAny,
// or a sentinel err must wrap.
func check(t *testing.T, what string, err, want error) {
	t.Helper()
	switch {
	case want == errAny:
		if err == nil || errors.Is(err, catalog.ErrNotFound) || errors.Is(err, catalog.ErrConflict) {
			t.Errorf("%s: %v, want %v", what, err, want)
		}
	case want == nil:
		if err != nil {
			t.Errorf("%s: %v, want success", what, err)
		}
	case !errors.Is(err, want):
		t.Errorf("%s: %v, want %v", what, err, want)
	}
}

// testConditions: Put and Delete under every kind of condition, in
// order on one record "a" (and "b", "zz").
func testConditions(t *testing.T, b catalog.Backing) {
	ctx := context.Background()
	k := catalog.KindTable
	put := func(key, value, ifVersion string) func() error {
		return func() error { _, err := b.Put(ctx, "w", k, key, []byte(value), ifVersion); return err }
	}
	del := func(key, ifVersion string) func() error {
		return func() error { return b.Delete(ctx, "w", k, key, ifVersion) }
	}
	get := func(key string) func() error {
		return func() error { _, err := b.Get(ctx, "w", k, key); return err }
	}
	steps := []struct {
		name string
		run  func() error
		want error
	}{
		{"get absent", get("a"), catalog.ErrNotFound},
		{"put with version on absent", put("a", "x", "abc"), catalog.ErrNotFound},
		{"delete with version on absent", del("a", "abc"), catalog.ErrNotFound},
		{"unconditional delete of absent", del("a", catalog.AnyVersion), nil},
		{"empty-condition delete of absent", del("a", ""), nil},
		{"create", put("a", "x", ""), nil},
		{"get created", get("a"), nil},
		{"create again", put("a", "x", ""), catalog.ErrConflict},
		{"stale version", put("a", "y", "0123"), catalog.ErrConflict},
		{"delete stale", del("a", "0123"), catalog.ErrConflict},
		{"unconditional put on absent", put("b", "1", catalog.AnyVersion), nil},
		{"unconditional put on present", put("b", "2", catalog.AnyVersion), nil},
		{"create then unconditional delete", put("zz", "x", ""), nil},
		{"unconditional delete of present", del("zz", catalog.AnyVersion), nil},
		{"deleted is absent", get("zz"), catalog.ErrNotFound},
		{"re-create after delete", put("zz", "x", ""), nil},
		{"empty-condition delete of present", del("zz", ""), nil},
		{"deleted again is absent", get("zz"), catalog.ErrNotFound},
	}
	for _, s := range steps {
		check(t, s.name, s.run(), s.want)
	}
	for key, want := range map[string]string{"a": "x", "b": "2"} {
		r, err := b.Get(ctx, "w", k, key)
		if err != nil || string(r.Value) != want || r.Key != key {
			t.Errorf("get %s: %v %+v, want value %q", key, err, r, want)
		}
	}
}

// testVersions: versions are opaque, non-empty, never AnyVersion, and
// change on every Put, so a version once replaced never matches again.
func testVersions(t *testing.T, b catalog.Backing) {
	ctx := context.Background()
	k := catalog.KindTable
	valid := func(what, v string) {
		t.Helper()
		if v == "" || v == catalog.AnyVersion {
			t.Fatalf("%s: version %q", what, v)
		}
	}
	v1, err := b.Put(ctx, "w", k, "a", []byte("x"), "")
	if err != nil {
		t.Fatal(err)
	}
	valid("create", v1)
	r, err := b.Get(ctx, "w", k, "a")
	if err != nil || r.Version != v1 {
		t.Fatalf("get: %v %q, want version %q", err, r.Version, v1)
	}
	// Equal values still get a new version (no ABA).
	v2, err := b.Put(ctx, "w", k, "a", []byte("x"), v1)
	if err != nil || v2 == v1 {
		t.Fatalf("rewrite: %v %q %q", err, v2, v1)
	}
	valid("rewrite", v2)
	check(t, "put with the replaced version", func() error { _, err := b.Put(ctx, "w", k, "a", []byte("z"), v1); return err }(), catalog.ErrConflict)
	check(t, "delete with the replaced version", b.Delete(ctx, "w", k, "a", v1), catalog.ErrConflict)
	v3, err := b.Put(ctx, "w", k, "a", []byte("y"), catalog.AnyVersion)
	if err != nil || v3 == v2 || v3 == v1 {
		t.Fatalf("unconditional rewrite: %v %q", err, v3)
	}
	valid("unconditional rewrite", v3)
	check(t, "delete with the current version", b.Delete(ctx, "w", k, "a", v3), nil)
	// Re-created: no earlier version comes back.
	v4, err := b.Put(ctx, "w", k, "a", []byte("x"), "")
	if err != nil || v4 == v3 || v4 == v2 || v4 == v1 {
		t.Fatalf("recreate: %v %q (earlier %q %q %q)", err, v4, v1, v2, v3)
	}
	valid("recreate", v4)
	check(t, "delete with the pre-delete version", b.Delete(ctx, "w", k, "a", v3), catalog.ErrConflict)
	check(t, "put with the pre-delete version", func() error { _, err := b.Put(ctx, "w", k, "a", nil, v3); return err }(), catalog.ErrConflict)
	// The version of a listed record is the one Get gives.
	recs, _, err := b.List(ctx, "w", k, catalog.ListOptions{})
	if err != nil || len(recs) != 1 || recs[0].Version != v4 {
		t.Fatalf("list: %v %+v, want version %q", err, recs, v4)
	}
}

// testValues: values come back byte for byte; nil reads back empty.
func testValues(t *testing.T, b catalog.Backing) {
	ctx := context.Background()
	large := bytes.Repeat([]byte("0123456789abcdef"), 1<<14) // 256 KiB
	values := []struct {
		key   string
		value []byte
	}{
		{"nil", nil},
		{"empty", []byte{}},
		{"json", []byte(`{"metadata-location":"s3://w/t/metadata/00001.metadata.json"}`)},
		{"newlines", []byte("\nfirst\nsecond\n\n")},
		{"binary", []byte{0, 1, 0xff, '\n', 0, 0x1e, 0x1f}},
		{"large", large},
	}
	for _, v := range values {
		if _, err := b.Put(ctx, "w", catalog.KindCommit, v.key, v.value, ""); err != nil {
			t.Fatalf("put %s: %v", v.key, err)
		}
	}
	for _, v := range values {
		r, err := b.Get(ctx, "w", catalog.KindCommit, v.key)
		if err != nil || !bytes.Equal(r.Value, v.value) {
			t.Errorf("get %s: %v, %d bytes, want %d", v.key, err, len(r.Value), len(v.value))
		}
		if err == nil && r.Value == nil {
			t.Errorf("get %s: nil value, want an empty one", v.key)
		}
	}
	recs, _, err := b.List(ctx, "w", catalog.KindCommit, catalog.ListOptions{})
	if err != nil || len(recs) != len(values) {
		t.Fatalf("list: %v, %d records", err, len(recs))
	}
	for _, r := range recs {
		for _, v := range values {
			if v.key == r.Key && !bytes.Equal(r.Value, v.value) {
				t.Errorf("listed %s: %d bytes, want %d", r.Key, len(r.Value), len(v.value))
			}
		}
	}
}

// testInvalidAddress: every method refuses an address outside the
// contract with an error that wraps neither sentinel, and stores nothing.
func testInvalidAddress(t *testing.T, b catalog.Backing) {
	ctx := context.Background()
	addrs := []struct {
		name string
		wh   string
		kind catalog.Kind
		key  string
	}{
		{"empty key", "w", catalog.KindTable, ""},
		{"nul key", "w", catalog.KindTable, "a\x00"},
		{"bad utf-8 key", "w", catalog.KindTable, "\xff"},
		{"slash warehouse", "a/b", catalog.KindTable, "a"},
		{"nul warehouse", "a\x00", catalog.KindTable, "a"},
		{"bad utf-8 warehouse", "\xff", catalog.KindTable, "a"},
		{"dot warehouse", ".", catalog.KindTable, "a"},
		{"dot-dot warehouse", "..", catalog.KindTable, "a"},
		{"unknown kind", "w", "nope", "a"},
		{"empty kind", "w", "", "a"},
	}
	for _, a := range addrs {
		_, err := b.Get(ctx, a.wh, a.kind, a.key)
		check(t, a.name+": get", err, errAny)
		_, err = b.Put(ctx, a.wh, a.kind, a.key, []byte("x"), "")
		check(t, a.name+": create", err, errAny)
		_, err = b.Put(ctx, a.wh, a.kind, a.key, []byte("x"), catalog.AnyVersion)
		check(t, a.name+": unconditional put", err, errAny)
		check(t, a.name+": delete", b.Delete(ctx, a.wh, a.kind, a.key, catalog.AnyVersion), errAny)
		if a.key != "" && !strings.ContainsRune(a.key, 0) && a.key != "\xff" {
			// The key is fine: List of the (warehouse, kind) must fail too.
			_, _, err = b.List(ctx, a.wh, a.kind, catalog.ListOptions{})
			check(t, a.name+": list", err, errAny)
		}
	}
	// Nothing was stored anywhere valid either.
	for _, kind := range catalog.Kinds() {
		for _, wh := range []string{"", "w", "a"} {
			recs, _, err := b.List(ctx, wh, kind, catalog.ListOptions{KeysOnly: true})
			if err != nil || len(recs) != 0 {
				t.Errorf("list %q %s after refused writes: %v %v", wh, kind, recs, err)
			}
		}
	}
}

// testList: paging with After and Limit, Prefix, KeysOnly, and
// warehouses and kinds kept apart.
func testList(t *testing.T, b catalog.Backing) {
	ctx := context.Background()
	for i := range 25 {
		if _, err := b.Put(ctx, "w", catalog.KindNamespace, fmt.Sprintf("k%02d", i), []byte{byte(i)}, ""); err != nil {
			t.Fatal(err)
		}
	}
	// Another warehouse and kind stay apart.
	for _, r := range []struct {
		wh   string
		kind catalog.Kind
		key  string
	}{{"w2", catalog.KindNamespace, "k00"}, {"w", catalog.KindTable, "k00"}, {"", catalog.KindWarehouse, "w"}, {"", catalog.KindNamespace, "k99"}} {
		if _, err := b.Put(ctx, r.wh, r.kind, r.key, nil, ""); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	after := ""
	for pages := 0; ; pages++ {
		if pages > 3 {
			t.Fatalf("more than 3 pages of 10 for 25 records: %v", got)
		}
		recs, more, err := b.List(ctx, "w", catalog.KindNamespace, catalog.ListOptions{After: after, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if r.Version == "" || len(r.Value) != 1 || r.Value[0] != byte(len(got)) {
				t.Fatalf("record %+v", r)
			}
			got = append(got, r.Key)
		}
		if len(recs) > 10 {
			t.Fatalf("%d records past a limit of 10", len(recs))
		}
		if !more {
			break
		}
		after = recs[len(recs)-1].Key
	}
	if len(got) != 25 || got[0] != "k00" || got[24] != "k24" {
		t.Fatalf("listed %v", got)
	}
	cases := []struct {
		opt   catalog.ListOptions
		n     int
		first string
		more  bool
	}{
		{catalog.ListOptions{}, 25, "k00", false},
		{catalog.ListOptions{Prefix: "k1", KeysOnly: true}, 10, "k10", false},
		{catalog.ListOptions{Prefix: "k1", After: "k15"}, 4, "k16", false},
		{catalog.ListOptions{Prefix: "k1", After: "k0"}, 10, "k10", false},
		{catalog.ListOptions{Prefix: "k1", After: "k2"}, 0, "", false},
		{catalog.ListOptions{Prefix: "k1", Limit: 3}, 3, "k10", true},
		{catalog.ListOptions{Prefix: "k1", Limit: 10}, 10, "k10", false},
		{catalog.ListOptions{After: "k23", Limit: 1}, 1, "k24", false},
		{catalog.ListOptions{After: "k24"}, 0, "", false},
		{catalog.ListOptions{Limit: 25}, 25, "k00", false},
		{catalog.ListOptions{Limit: 24}, 24, "k00", true},
		{catalog.ListOptions{Prefix: "x"}, 0, "", false},
		{catalog.ListOptions{Prefix: "k00"}, 1, "k00", false},
	}
	for _, c := range cases {
		recs, more, err := b.List(ctx, "w", catalog.KindNamespace, c.opt)
		if err != nil || len(recs) != c.n || more != c.more || (c.n > 0 && recs[0].Key != c.first) {
			t.Errorf("%+v: %d records, more %v, %v; want %d from %q, more %v", c.opt, len(recs), more, err, c.n, c.first, c.more)
		}
		for _, r := range recs {
			if c.opt.KeysOnly && (r.Version != "" || r.Value != nil) {
				t.Errorf("keys only: %+v", r)
			}
			if !c.opt.KeysOnly && r.Version == "" {
				t.Errorf("%+v: record %q without a version", c.opt, r.Key)
			}
		}
	}
	for _, c := range []struct {
		wh   string
		kind catalog.Kind
		keys string
	}{
		{"", catalog.KindWarehouse, "w"},
		{"", catalog.KindNamespace, "k99"},
		{"w2", catalog.KindNamespace, "k00"},
		{"w", catalog.KindTable, "k00"},
		{"w", catalog.KindView, ""},
		{"w3", catalog.KindTable, ""},
	} {
		recs, more, err := b.List(ctx, c.wh, c.kind, catalog.ListOptions{})
		var keys []string
		for _, r := range recs {
			keys = append(keys, r.Key)
		}
		if err != nil || more || strings.Join(keys, ",") != c.keys {
			t.Errorf("list %q %s: %v %v %v, want [%s]", c.wh, c.kind, keys, more, err, c.keys)
		}
	}
}

// testListOrder: keys with "/", the catalog's separators and non-ASCII
// list in ascending byte order, and a Prefix with "/" selects by bytes,
// not by path segments.
func testListOrder(t *testing.T, b catalog.Backing) {
	ctx := context.Background()
	keys := []string{"é", "b", "a/b/c", "a", "ns\x1et", "ns\x1fa\x1et", "a/", "a/b", "A", "ns"}
	for _, k := range keys {
		if _, err := b.Put(ctx, "w", catalog.KindPrefix, k, []byte(k), ""); err != nil {
			t.Fatalf("put %q: %v", k, err)
		}
	}
	want := []string{"A", "a", "a/", "a/b", "a/b/c", "b", "ns", "ns\x1et", "ns\x1fa\x1et", "é"}
	list := func(opt catalog.ListOptions) []string {
		t.Helper()
		recs, _, err := b.List(ctx, "w", catalog.KindPrefix, opt)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range recs {
			if !opt.KeysOnly && string(r.Value) != r.Key {
				t.Errorf("record %q holds %q", r.Key, r.Value)
			}
			out = append(out, r.Key)
		}
		return out
	}
	cases := []struct {
		opt  catalog.ListOptions
		want []string
	}{
		{catalog.ListOptions{}, want},
		{catalog.ListOptions{KeysOnly: true}, want},
		{catalog.ListOptions{Prefix: "a/"}, []string{"a/", "a/b", "a/b/c"}},
		{catalog.ListOptions{Prefix: "a/b"}, []string{"a/b", "a/b/c"}},
		{catalog.ListOptions{After: "a/"}, want[3:]},
		{catalog.ListOptions{Prefix: "ns"}, []string{"ns", "ns\x1et", "ns\x1fa\x1et"}},
		{catalog.ListOptions{Prefix: "ns\x1e"}, []string{"ns\x1et"}},
		{catalog.ListOptions{After: "ns\x1f"}, []string{"ns\x1fa\x1et", "é"}},
	}
	for _, c := range cases {
		if got := list(c.opt); strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("%+v: %q, want %q", c.opt, got, c.want)
		}
	}
	for _, k := range keys {
		if r, err := b.Get(ctx, "w", catalog.KindPrefix, k); err != nil || r.Key != k {
			t.Errorf("get %q: %v %q", k, err, r.Key)
		}
	}
}

// testConcurrent: distinct creates all land; read-modify-write
// increments of one record land or fail with ErrConflict, and the record
// counts exactly those that landed.
func testConcurrent(t *testing.T, b catalog.Backing) {
	ctx := context.Background()
	const workers, rounds = 6, 10
	var mu sync.Mutex
	landed, conflicts := 0, 0
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for i := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range rounds {
				if _, err := b.Put(ctx, "w", catalog.KindCommit, fmt.Sprintf("c-%d-%d", i, r), []byte("x"), ""); err != nil {
					errs <- fmt.Errorf("create: %w", err)
					return
				}
				n, ver := 0, ""
				rec, err := b.Get(ctx, "w", catalog.KindTable, "counter")
				switch {
				case errors.Is(err, catalog.ErrNotFound):
				case err != nil:
					errs <- err
					return
				default:
					if n, err = strconv.Atoi(string(rec.Value)); err != nil {
						errs <- fmt.Errorf("counter %q: %w", rec.Value, err)
						return
					}
					ver = rec.Version
				}
				_, err = b.Put(ctx, "w", catalog.KindTable, "counter", []byte(strconv.Itoa(n+1)), ver)
				mu.Lock()
				switch {
				case err == nil:
					landed++
				case errors.Is(err, catalog.ErrConflict):
					conflicts++
				default:
					errs <- err
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	recs, _, err := b.List(ctx, "w", catalog.KindCommit, catalog.ListOptions{KeysOnly: true})
	if err != nil || len(recs) != workers*rounds {
		t.Fatalf("creates: %d of %d, %v", len(recs), workers*rounds, err)
	}
	rec, err := b.Get(ctx, "w", catalog.KindTable, "counter")
	if err != nil || string(rec.Value) != strconv.Itoa(landed) || landed == 0 {
		t.Fatalf("counter %q, %d landed (%d conflicts): %v", rec.Value, landed, conflicts, err)
	}
	t.Logf("%d increments landed, %d conflicts", landed, conflicts)
}
