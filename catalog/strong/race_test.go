package strong

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"

	"github.com/cairnstore/cairn/catalog"
)

// TestCASRace: two backings (two processes) on one store. Unique creates
// all survive; read-modify-write increments of one counter either land or
// get ErrConflict, and the counter equals the number that landed.
func TestCASRace(t *testing.T) {
	ctx := context.Background()
	st := newStore(t)
	bs := []*Backing{openBacking(t, st, Options{}), openBacking(t, st, Options{})}
	const workers, rounds = 4, 15
	var mu sync.Mutex
	landed, conflicts := 0, 0
	var wg sync.WaitGroup
	errs := make(chan error, 2*workers)
	for i := range 2 * workers {
		b := bs[i%2]
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
					n, _ = strconv.Atoi(string(rec.Value))
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
	for _, b := range bs {
		recs, _, err := b.List(ctx, "w", catalog.KindCommit, catalog.ListOptions{KeysOnly: true})
		if err != nil || len(recs) != 2*workers*rounds {
			t.Fatalf("creates: %d of %d, %v", len(recs), 2*workers*rounds, err)
		}
		rec, err := b.Get(ctx, "w", catalog.KindTable, "counter")
		if err != nil || string(rec.Value) != strconv.Itoa(landed) {
			t.Fatalf("counter %q, %d landed (%d conflicts): %v", rec.Value, landed, conflicts, err)
		}
	}
	t.Logf("%d increments landed, %d conflicts", landed, conflicts)
}
