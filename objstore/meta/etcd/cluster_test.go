package etcd_test

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"

	"github.com/cairnstore/cairn/objstore/meta"
	"github.com/cairnstore/cairn/objstore/meta/etcd"
	"github.com/cairnstore/cairn/objstore/meta/etcd/etcdtest"
	"github.com/cairnstore/cairn/objstore/meta/indextest"
)

// TestCluster runs on a three-member cluster on 127.0.0.1: the
// conformance suite, then two nodes (two indexes, each talking to a
// member of its own) sharing one store.
func TestCluster(t *testing.T) {
	c := etcdtest.StartCluster(t, 3, etcdtest.Options{MaxTxnOps: suiteTxnOps})
	eps := c.Endpoints()
	t.Run("Conformance", func(t *testing.T) {
		indextest.Run(t, factory(eps, suiteTxnOps))
	})
	nodes := func(t *testing.T, prefix string) (a, b *etcd.Index) {
		a = openIndex(t, etcd.Config{Endpoints: eps[:1], Prefix: prefix})
		b = openIndex(t, etcd.Config{Endpoints: eps[1:2], Prefix: prefix})
		return a, b
	}
	t.Run("TwoNodesCounter", func(t *testing.T) {
		a, b := nodes(t, "/cairn/counter")
		testTwoNodesCounter(t, a, b)
	})
	t.Run("TwoNodesWriteSkew", func(t *testing.T) {
		a, b := nodes(t, "/cairn/skew")
		testWriteSkew(t, a, b)
	})
	t.Run("MemberDown", func(t *testing.T) {
		idx := openIndex(t, etcd.Config{Endpoints: eps, Prefix: "/cairn/member-down"})
		c.Members[0].Stop()
		for i := 0; i < 20; i++ {
			if err := increment(context.Background(), idx, "n"); err != nil {
				t.Fatalf("with one member of three down: %v", err)
			}
		}
		c.Members[0].Restart(t)
		if got := counter(t, idx, "n"); got != 20 {
			t.Fatalf("counter %d, want 20", got)
		}
	})
}

// increment adds one to the counter key in one Update.
func increment(ctx context.Context, idx meta.Index, key string) error {
	return idx.Update(ctx, func(tx meta.Tx) error {
		raw, err := tx.Get(meta.Settings, []byte(key))
		if err != nil {
			return err
		}
		n := 0
		if raw != nil {
			if n, err = strconv.Atoi(string(raw)); err != nil {
				return err
			}
		}
		return tx.Put(meta.Settings, []byte(key), []byte(strconv.Itoa(n+1)))
	})
}

func counter(t *testing.T, idx meta.Index, key string) int {
	t.Helper()
	n := 0
	err := idx.View(context.Background(), func(tx meta.Tx) error {
		raw, err := tx.Get(meta.Settings, []byte(key))
		if err != nil || raw == nil {
			return err
		}
		n, err = strconv.Atoi(string(raw))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// testTwoNodesCounter increments one counter from both nodes at once,
// several writers each: no increment is lost, none is applied twice.
func testTwoNodesCounter(t *testing.T, a, b *etcd.Index) {
	const writers, rounds = 3, 15 // per node
	var wg sync.WaitGroup
	for _, idx := range []*etcd.Index{a, b} {
		for w := 0; w < writers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < rounds; i++ {
					if err := increment(context.Background(), idx, "counter"); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	if got, want := counter(t, a, "counter"), 2*writers*rounds; got != want {
		t.Fatalf("counter %d after %d increments from two nodes", got, want)
	}
	t.Logf("node a: %+v, node b: %+v", a.Stats(), b.Stats())
}

// testWriteSkew runs the classic write skew: each node reads two absent
// keys and, seeing both absent, writes its own. Both transactions read
// before either commits, so under snapshot isolation alone both would
// commit; serializable, the second runs again, sees the first's key and
// writes nothing.
func testWriteSkew(t *testing.T, a, b *etcd.Index) {
	var read sync.WaitGroup
	read.Add(2)
	var once [2]sync.Once
	var wg sync.WaitGroup
	for i, idx := range []*etcd.Index{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mine := fmt.Sprintf("on-call-%d", i)
			err := idx.Update(context.Background(), func(tx meta.Tx) error {
				any, err := meta.HasAny(tx, meta.Settings, []byte("on-call-"))
				if err != nil {
					return err
				}
				once[i].Do(func() { read.Done(); read.Wait() }) // both have read
				if any {
					return nil
				}
				return tx.Put(meta.Settings, []byte(mine), []byte("yes"))
			})
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	var keys []string
	err := a.View(context.Background(), func(tx meta.Tx) error {
		return meta.Scan(tx, meta.Settings, []byte("on-call-"), func(k, _ []byte) error {
			keys = append(keys, string(k))
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 1 {
		t.Fatalf("write skew: %v written, want exactly one", keys)
	}
	if n := a.Stats().Conflicts + b.Stats().Conflicts; n != 1 {
		t.Fatalf("%d conflicts, want 1: the node that committed second must have run again", n)
	}
}
