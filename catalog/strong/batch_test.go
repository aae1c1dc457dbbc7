package strong

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/cairnstore/cairn/catalog"
)

// TestGroupCommit: concurrent writes of one warehouse share publishes but
// keep per-record semantics: of many conditional writes on one version
// exactly one lands, unconditional writes of one key all get distinct
// versions (no token names two values), and failures stay private.
func TestGroupCommit(t *testing.T) {
	ctx := context.Background()
	b := openBacking(t, newStore(t), Options{})
	v0, err := b.Put(ctx, "w", catalog.KindTable, "k", []byte("v0"), "")
	if err != nil {
		t.Fatal(err)
	}
	const n = 16
	type out struct {
		ver string
		err error
	}
	run := func(fn func(i int) (string, error)) []out {
		res := make([]out, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				v, err := fn(i)
				res[i] = out{v, err}
			}()
		}
		wg.Wait()
		return res
	}
	res := run(func(i int) (string, error) {
		return b.Put(ctx, "w", catalog.KindTable, "k", fmt.Appendf(nil, "c%d", i), v0)
	})
	won := 0
	for _, r := range res {
		switch {
		case r.err == nil:
			won++
		case !errors.Is(r.err, catalog.ErrConflict):
			t.Fatalf("conditional write: %v", r.err)
		}
	}
	if won != 1 {
		t.Fatalf("%d conditional writes on one version landed, want 1", won)
	}
	res = run(func(i int) (string, error) {
		return b.Put(ctx, "w", catalog.KindTable, "k", fmt.Appendf(nil, "u%d", i), catalog.AnyVersion)
	})
	seen := map[string]bool{}
	for _, r := range res {
		if r.err != nil || seen[r.ver] {
			t.Fatalf("unconditional write: %q %v (versions must be distinct)", r.ver, r.err)
		}
		seen[r.ver] = true
	}
	rec, err := b.Get(ctx, "w", catalog.KindTable, "k")
	if err != nil || !seen[rec.Version] {
		t.Fatalf("final version %q not one handed out: %v", rec.Version, err)
	}
	res = run(func(i int) (string, error) {
		if i%2 == 0 {
			return b.Put(ctx, "w", catalog.KindNamespace, "dup", nil, "") // one of these lands
		}
		return b.Put(ctx, "w", catalog.KindNamespace, fmt.Sprintf("ns%d", i), nil, "")
	})
	created := 0
	for i, r := range res {
		if i%2 == 1 && r.err != nil {
			t.Fatalf("independent create failed with its batch: %v", r.err)
		}
		if i%2 == 0 && r.err == nil {
			created++
		}
	}
	if created != 1 {
		t.Fatalf("%d creates of one key landed", created)
	}
}
