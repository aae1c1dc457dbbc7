package etcd_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairnstore/cairn/objstore/meta"
	"github.com/cairnstore/cairn/objstore/meta/etcd"
	"github.com/cairnstore/cairn/objstore/meta/etcd/etcdtest"
	"github.com/cairnstore/cairn/objstore/meta/indextest"
)

// suiteTxnOps is the --max-txn-ops of the clusters the conformance suite
// runs on: its unbounded index must take the suite's 1000-write
// transaction. (etcd bounds every transaction; the suite's bounded one
// runs with the Limits it asks for.)
const suiteTxnOps = 1100

// testTimeout is the request timeout of the tests' indexes: short, so
// that a test of an unreachable cluster ends soon.
const testTimeout = 2 * time.Second

// openIndex opens an index on endpoints under prefix, closed when the
// test ends.
func openIndex(t testing.TB, cfg etcd.Config) *etcd.Index {
	t.Helper()
	if cfg.RequestTimeout == 0 {
		cfg.RequestTimeout = testTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	idx, err := etcd.Open(ctx, cfg)
	if err != nil {
		t.Fatalf("open etcd index: %v", err)
	}
	t.Cleanup(func() { _ = idx.Close() })
	return idx
}

// factory runs the conformance suite on the cluster at endpoints, each
// test's index under a prefix of its own.
func factory(endpoints []string, txnOps int) indextest.Factory {
	var n atomic.Int64
	return indextest.Factory{
		Open: func(t *testing.T, limits meta.Limits) (meta.Index, bool) {
			cfg := etcd.Config{
				Endpoints: endpoints,
				Prefix:    fmt.Sprintf("/cairn-test/%d", n.Add(1)),
				MaxTxnOps: txnOps,
				Limits:    limits,
			}
			return openIndex(t, cfg), true
		},
		Reopen: func(t *testing.T, idx meta.Index) meta.Index {
			cfg := idx.(*etcd.Index).Config()
			if err := idx.Close(); err != nil {
				t.Fatal(err)
			}
			return openIndex(t, cfg)
		},
	}
}

// TestIndexConformance runs the meta.Index suite on a single member.
func TestIndexConformance(t *testing.T) {
	m := etcdtest.Start(t, etcdtest.Options{MaxTxnOps: suiteTxnOps})
	indextest.Run(t, factory([]string{m.Endpoint()}, suiteTxnOps))
}

// TestPrefixesAreSeparate checks that two stores on one cluster do not
// see each other's keys or sequence numbers.
func TestPrefixesAreSeparate(t *testing.T) {
	m := etcdtest.Start(t, etcdtest.Options{})
	a := openIndex(t, etcd.Config{Endpoints: []string{m.Endpoint()}, Prefix: "/stores/a"})
	b := openIndex(t, etcd.Config{Endpoints: []string{m.Endpoint()}, Prefix: "/stores/b"})
	ctx := context.Background()
	for i, idx := range []*etcd.Index{a, b} {
		err := idx.Update(ctx, func(tx meta.Tx) error {
			for j := 0; j <= i; j++ {
				if _, err := tx.NextSeq(); err != nil {
					return err
				}
			}
			return tx.Put(meta.Objects, []byte("k"), []byte(fmt.Sprint(i)))
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for i, idx := range []*etcd.Index{a, b} {
		err := idx.Update(ctx, func(tx meta.Tx) error {
			var keys []string
			if err := meta.Scan(tx, meta.Objects, nil, func(k, v []byte) error {
				keys = append(keys, string(k)+"="+string(v))
				return nil
			}); err != nil {
				return err
			}
			if want := fmt.Sprintf("[k=%d]", i); fmt.Sprint(keys) != want {
				t.Errorf("store %d holds %v, want %s", i, keys, want)
			}
			seq, err := tx.NextSeq()
			if err == nil && seq != uint64(i+2) {
				t.Errorf("store %d: sequence %d, want %d", i, seq, i+2)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
