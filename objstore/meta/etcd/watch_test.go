package etcd_test

import (
	"bytes"
	"context"
	"sync"
	"testing"
	"time"

	"github.com/cairnstore/cairn/objstore"
	"github.com/cairnstore/cairn/objstore/meta"
	"github.com/cairnstore/cairn/objstore/meta/etcd"
	"github.com/cairnstore/cairn/objstore/meta/etcd/etcdtest"
)

// keyLog gathers what a WatchOthers reports.
type keyLog struct {
	mu   sync.Mutex
	keys []string
}

func (l *keyLog) add(k []byte, deleted bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := "put " + string(k)
	if deleted {
		s = "del " + string(k)
	}
	if k == nil {
		s = "gap"
	}
	l.keys = append(l.keys, s)
}

func (l *keyLog) get() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.keys...)
}

// TestWatchOthers: two indexes on one prefix (two nodes); each one's
// WatchOthers reports the other's puts and deletes of the table watched,
// in commit order, and never its own, nor other tables'.
func TestWatchOthers(t *testing.T) {
	m := etcdtest.Start(t, etcdtest.Options{})
	cfg := etcd.Config{Endpoints: []string{m.Endpoint()}, Prefix: "/cairn/watch/"}
	a, b := openIndex(t, cfg), openIndex(t, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var seenA, seenB keyLog
	var wg sync.WaitGroup
	for _, w := range []struct {
		x   *etcd.Index
		log *keyLog
	}{{a, &seenA}, {b, &seenB}} {
		wg.Go(func() { _ = w.x.WatchOthers(ctx, meta.Objects, w.log.add) })
	}
	time.Sleep(200 * time.Millisecond) // the watches are open
	update := func(x *etcd.Index, fn func(tx meta.Tx) error) {
		t.Helper()
		if err := x.Update(context.Background(), fn); err != nil {
			t.Fatal(err)
		}
	}
	update(a, func(tx meta.Tx) error {
		if err := tx.Put(meta.Objects, []byte("b\x00one"), []byte("1")); err != nil {
			return err
		}
		return tx.Put(meta.Buckets, []byte("b"), []byte("{}")) // another table: not reported
	})
	update(b, func(tx meta.Tx) error { return tx.Put(meta.Objects, []byte("b\x00two"), []byte("2")) })
	update(a, func(tx meta.Tx) error { return tx.Delete(meta.Objects, []byte("b\x00one")) })
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) && (len(seenA.get()) < 1 || len(seenB.get()) < 2) {
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // and nothing more arrives
	cancel()
	wg.Wait()
	if got := seenB.get(); len(got) != 2 || got[0] != "put b\x00one" || got[1] != "del b\x00one" {
		t.Errorf("b saw %q, want a's put and delete", got)
	}
	if got := seenA.get(); len(got) != 1 || got[0] != "put b\x00two" {
		t.Errorf("a saw %q, want b's put only", got)
	}
}

// TestStoreWatchesOtherNodes: two stores on one etcd prefix (two nodes;
// here sharing drive directories, as the data plane across nodes is not
// the point): a put and a delete through one reach the other's Watch.
func TestStoreWatchesOtherNodes(t *testing.T) {
	m := etcdtest.Start(t, etcdtest.Options{})
	cfg := etcd.Config{Endpoints: []string{m.Endpoint()}, Prefix: "/cairn/watchstore/"}
	dir := t.TempDir()
	open := func() *objstore.Store {
		s, err := objstore.Open(context.Background(), objstore.Options{Index: openIndex(t, cfg), Dir: dir, DriveCount: 3, Parity: 1, BlockSize: 64 << 10})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
	a := open()
	if err := a.CreateBucket(context.Background(), "bkt", objstore.BucketOptions{}); err != nil {
		t.Fatal(err)
	}
	b := open()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	events := b.Watch(ctx, "bkt", "")
	time.Sleep(300 * time.Millisecond) // b's watch of etcd is open
	if _, err := a.Put(ctx, "bkt", "k", bytes.NewReader([]byte("hello")), 5, objstore.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	want := func(op objstore.Op) {
		t.Helper()
		select {
		case e := <-events:
			if e.Op != op || e.Key != "k" {
				t.Fatalf("event %+v, want op %v of k", e, op)
			}
		case <-ctx.Done():
			t.Fatalf("no event of a's write on b")
		}
	}
	want(objstore.OpPut)
	t.Logf("a's put reached b's watchers in %v", time.Since(start).Round(time.Millisecond))
	if _, err := a.Delete(ctx, "bkt", "k", objstore.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	want(objstore.OpDelete)
	// b's own writes reach its watchers once, not again from etcd.
	if _, err := b.Put(ctx, "bkt", "own", bytes.NewReader([]byte("x")), 1, objstore.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	n := 0
	timeout := time.After(time.Second)
	for done := false; !done; {
		select {
		case e := <-events:
			if e.Key == "own" {
				n++
			}
		case <-timeout:
			done = true
		}
	}
	if n != 1 {
		t.Fatalf("b's own put reached its watchers %d times, want once", n)
	}
}
