package etcd_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cairnstore/cairn/objstore/meta"
	"github.com/cairnstore/cairn/objstore/meta/etcd"
	"github.com/cairnstore/cairn/objstore/meta/etcd/etcdtest"
)

// TestOutage stops the cluster under an open index: every call fails
// soon, with ErrUnavailable (or the caller's own deadline when that comes
// first), an Update whose commit is cut off says its outcome is unknown,
// and once the cluster is back the same index works again on the same
// data.
func TestOutage(t *testing.T) {
	m := etcdtest.Start(t, etcdtest.Options{})
	const dial = 500 * time.Millisecond
	cfg := etcd.Config{Endpoints: []string{m.Endpoint()}, Prefix: "/cairn/outage", RequestTimeout: 2 * time.Second, DialTimeout: dial}
	idx := openIndex(t, cfg)
	ctx := context.Background()
	var seq uint64
	err := idx.Update(ctx, func(tx meta.Tx) (err error) {
		if seq, err = tx.NextSeq(); err != nil {
			return err
		}
		return tx.Put(meta.Objects, []byte("k"), []byte("before"))
	})
	if err != nil {
		t.Fatal(err)
	}

	// A commit cut off: the cluster stops after the transaction's reads.
	// Whether the index saw the connection go before it sent the commit
	// (ErrUnavailable: nothing sent) or after (ErrUnavailable and
	// ErrOutcomeUnknown: it could not find out) depends on timing; the
	// write is lost either way (checked after the restart).
	start := time.Now()
	err = idx.Update(ctx, func(tx meta.Tx) error {
		if _, err := tx.Get(meta.Objects, []byte("k")); err != nil {
			return err
		}
		m.Stop()
		return tx.Put(meta.Objects, []byte("k"), []byte("lost"))
	})
	if !errors.Is(err, etcd.ErrUnavailable) {
		t.Fatalf("Update whose commit was cut off: %v, want ErrUnavailable", err)
	}
	t.Logf("update whose commit was cut off: %v after %v", err, time.Since(start).Round(time.Millisecond))

	for _, tc := range []struct {
		name string
		// deadline is the caller's, none when zero
		deadline time.Duration
		call     func(ctx context.Context) error
		want     error
		bound    time.Duration
	}{
		{"view", 0, func(ctx context.Context) error {
			return idx.View(ctx, func(tx meta.Tx) error { _, err := tx.Get(meta.Objects, []byte("k")); return err })
		}, etcd.ErrUnavailable, dial},
		{"update", 0, func(ctx context.Context) error {
			return idx.Update(ctx, func(tx meta.Tx) error { return tx.Put(meta.Objects, []byte("k"), []byte("v")) })
		}, etcd.ErrUnavailable, dial},
		{"update that only reads", 0, func(ctx context.Context) error {
			return idx.Update(ctx, func(tx meta.Tx) error { _, err := tx.Get(meta.Objects, []byte("k")); return err })
		}, etcd.ErrUnavailable, dial},
		{"open", 0, func(ctx context.Context) error {
			x, err := etcd.Open(ctx, cfg)
			if err == nil {
				_ = x.Close()
			}
			return err
		}, etcd.ErrUnavailable, dial},
		{"view with a shorter deadline", 200 * time.Millisecond, func(ctx context.Context) error {
			return idx.View(ctx, func(tx meta.Tx) error { _, err := tx.Get(meta.Objects, []byte("k")); return err })
		}, context.DeadlineExceeded, 200 * time.Millisecond},
	} {
		cctx, cancel := ctx, context.CancelFunc(func() {})
		if tc.deadline > 0 {
			cctx, cancel = context.WithTimeout(ctx, tc.deadline)
		}
		start := time.Now()
		err := tc.call(cctx)
		took := time.Since(start)
		cancel()
		if !errors.Is(err, tc.want) {
			t.Errorf("%s with the cluster down: %v, want %v", tc.name, err, tc.want)
		}
		// The bound, and slack for a slow machine (the race detector).
		if took > tc.bound+time.Second {
			t.Errorf("%s with the cluster down took %v, more than %v", tc.name, took, tc.bound)
		}
		t.Logf("%s with the cluster down: %v after %v", tc.name, err, took.Round(time.Millisecond))
	}

	m.Restart(t)
	start = time.Now()
	for {
		err = idx.Update(ctx, func(tx meta.Tx) error {
			v, err := tx.Get(meta.Objects, []byte("k"))
			if err != nil {
				return err
			}
			if string(v) != "before" {
				t.Errorf("after the restart k is %q, want %q", v, "before")
			}
			s, err := tx.NextSeq()
			if err == nil && s <= seq {
				t.Errorf("sequence after the restart %d, not above %d", s, seq)
			}
			return err
		})
		if err == nil || time.Since(start) > 15*time.Second {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("the index does not work again after the restart: %v", err)
	}
	t.Logf("working again %v after the restart", time.Since(start).Round(time.Millisecond))
}
