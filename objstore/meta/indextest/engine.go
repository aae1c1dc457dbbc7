package indextest

// The suite's checks of the engine around transactions: sequence
// numbers, the transaction bound, contexts, Close and reopening.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/cairnstore/cairn/objstore/meta"
)

func testNextSeq(t *testing.T, f Factory) {
	idx := open(t, f)
	var last uint64
	for i := 0; i < 5; i++ {
		err := idx.Update(context.Background(), func(tx meta.Tx) error {
			for j := 0; j < 3; j++ {
				s, err := tx.NextSeq()
				if err != nil {
					return err
				}
				if s <= last {
					t.Errorf("sequence %d after %d", s, last)
				}
				last = s
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

func testLimits(t *testing.T, f Factory) {
	limits := meta.Limits{MaxWrites: 4, MaxBytes: 64}
	idx, ok := f.Open(t, limits)
	if !ok {
		t.Skip("engine takes no limits")
	}
	if got := idx.Limits(); got != limits {
		t.Fatalf("Limits() = %+v, want %+v", got, limits)
	}
	for _, tc := range []struct {
		name   string
		writes int
		size   int
		ok     bool
	}{
		{"within", 4, 8, true},
		{"too many writes", 5, 1, false},
		{"too many bytes", 2, 40, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := idx.Update(context.Background(), func(tx meta.Tx) error {
				for i := 0; i < tc.writes; i++ {
					k := []byte(fmt.Sprintf("%s-%d", tc.name[:3], i))
					if err := tx.Put(meta.Objects, k, bytes.Repeat([]byte("v"), tc.size)); err != nil {
						return err
					}
				}
				return nil
			})
			if tc.ok && err != nil {
				t.Fatalf("within limits: %v", err)
			}
			if !tc.ok && !errors.Is(err, meta.ErrTxTooLarge) {
				t.Fatalf("beyond limits: %v, want ErrTxTooLarge", err)
			}
			if _, found := get(t, idx, meta.Objects, tc.name[:3]+"-0"); found != tc.ok {
				t.Fatalf("first write committed: %v, want %v", found, tc.ok)
			}
		})
	}
	if !limits.Fits(4, 64) || limits.Fits(5, 1) || limits.Fits(1, 65) || !(meta.Limits{}).Fits(1<<30, 1<<30) {
		t.Fatal("Limits.Fits")
	}
}

func testContext(t *testing.T, f Factory) {
	idx := open(t, f)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ran := false
	for name, call := range map[string]func(context.Context, func(meta.Tx) error) error{"view": idx.View, "update": idx.Update} {
		err := call(ctx, func(meta.Tx) error { ran = true; return nil })
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a cancelled context: %v", name, err)
		}
	}
	if ran {
		t.Fatal("a transaction ran with a cancelled context")
	}
}

func testClosed(t *testing.T, f Factory) {
	idx := open(t, f)
	put(t, idx, meta.Objects, "k", "v")
	if err := idx.Close(); err != nil {
		t.Fatal(err)
	}
	for name, call := range map[string]func(context.Context, func(meta.Tx) error) error{"view": idx.View, "update": idx.Update} {
		err := call(context.Background(), func(meta.Tx) error { return nil })
		if !errors.Is(err, meta.ErrClosed) {
			t.Errorf("%s after Close: %v, want ErrClosed", name, err)
		}
	}
}

func testReopen(t *testing.T, f Factory) {
	if f.Reopen == nil {
		t.Skip("engine cannot be reopened")
	}
	idx := open(t, f)
	put(t, idx, meta.Objects, "k", "v")
	var seq uint64
	if err := idx.Update(context.Background(), func(tx meta.Tx) (err error) { seq, err = tx.NextSeq(); return err }); err != nil {
		t.Fatal(err)
	}
	idx = f.Reopen(t, idx)
	if got, ok := get(t, idx, meta.Objects, "k"); !ok || got != "v" {
		t.Fatalf("after reopen: %q %v", got, ok)
	}
	err := idx.Update(context.Background(), func(tx meta.Tx) error {
		s, err := tx.NextSeq()
		if err == nil && s <= seq {
			t.Errorf("sequence after reopen %d, not above %d", s, seq)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// contextTimer bounds how long the isolation test waits for a writer that
// an engine makes wait for an open reader.
func contextTimer() <-chan time.Time { return time.After(2 * time.Second) }
