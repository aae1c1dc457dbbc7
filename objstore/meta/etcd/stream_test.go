package etcd

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairnstore/cairn/objstore/meta"
	"github.com/cairnstore/cairn/objstore/meta/etcd/etcdtest"
	"github.com/cairnstore/cairn/objstore/meta/indextest"
)

// TestStreams runs the conformance suite with every table marked large,
// so that every cursor reads through a RangeStream rather than pages,
// and checks that a range request over a large table marks it.
func TestStreams(t *testing.T) {
	const ops = 1100
	m := etcdtest.Start(t, etcdtest.Options{MaxTxnOps: ops})
	ctx := context.Background()
	var n atomic.Int64
	open := func(t *testing.T, cfg Config) *Index {
		x, err := Open(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = x.Close() })
		for _, l := range x.large {
			l.Store(true)
		}
		return x
	}
	t.Run("Conformance", func(t *testing.T) {
		indextest.Run(t, indextest.Factory{
			Open: func(t *testing.T, limits meta.Limits) (meta.Index, bool) {
				cfg := Config{Endpoints: []string{m.Endpoint()}, Prefix: fmt.Sprintf("/streams/%d", n.Add(1)),
					MaxTxnOps: ops, Limits: limits, RequestTimeout: 2 * time.Second}
				return open(t, cfg), true
			},
			Reopen: func(t *testing.T, idx meta.Index) meta.Index {
				cfg := idx.(*Index).Config()
				if err := idx.Close(); err != nil {
					t.Fatal(err)
				}
				return open(t, cfg)
			},
		})
	})
	t.Run("LargeTableIsMarked", func(t *testing.T) {
		x, err := Open(ctx, Config{Endpoints: []string{m.Endpoint()}, Prefix: "/streams/large", MaxTxnOps: ops})
		if err != nil {
			t.Fatal(err)
		}
		defer x.Close()
		for lo := 0; lo <= streamAbove; lo += 1000 {
			err := x.Update(ctx, func(tx meta.Tx) error {
				for i := lo; i < lo+1000; i++ {
					if err := tx.Put(meta.Parts, []byte(fmt.Sprintf("p%07d", i)), nil); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		walk := func() (keys int) {
			err := x.View(ctx, func(tx meta.Tx) error {
				return meta.Scan(tx, meta.Parts, []byte("p00001"), func(_, _ []byte) error { keys++; return nil })
			})
			if err != nil {
				t.Fatal(err)
			}
			return keys
		}
		if got := walk(); got != 100 || !x.large[meta.Parts].Load() || x.large[meta.Objects].Load() {
			t.Fatalf("scan of a large table: %d keys, parts marked %v, objects %v", got, x.large[meta.Parts].Load(), x.large[meta.Objects].Load())
		}
		if got := walk(); got != 100 {
			t.Fatalf("streamed scan: %d keys", got)
		}
	})
}
