package etcd

import (
	"context"
	"errors"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/cairnstore/cairn/objstore/meta"
	"github.com/cairnstore/cairn/objstore/meta/etcd/etcdtest"
)

// TestResolve checks how a commit whose answer was lost is settled: sent
// again, it applies exactly once; lost to another writer, it never
// applies and says so.
func TestResolve(t *testing.T) {
	m := etcdtest.Start(t, etcdtest.Options{})
	ctx := context.Background()
	x, err := Open(ctx, Config{Endpoints: []string{m.Endpoint()}, Prefix: "/cairn/resolve", RequestTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	if err := x.Update(ctx, func(tx meta.Tx) error { return tx.Put(meta.Objects, []byte("init"), nil) }); err != nil {
		t.Fatal(err)
	}
	// prepare reads like a transaction, buffers a write of key and
	// returns what commit would send.
	prepare := func(t *testing.T, key string) (mark int64, id string, cmp clientv3.Cmp, ops []clientv3.Op) {
		t.Helper()
		tx := newTx(ctx, x, true)
		if _, err := tx.Get(meta.Objects, []byte(key)); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.NextSeq(); err != nil {
			t.Fatal(err)
		}
		if err := tx.Put(meta.Objects, []byte(key), []byte("v")); err != nil {
			t.Fatal(err)
		}
		if id, err = txnID(); err != nil {
			t.Fatal(err)
		}
		if ops, err = x.ops(tx, id); err != nil {
			t.Fatal(err)
		}
		return tx.mark, id, clientv3.Compare(clientv3.ModRevision(x.keys.rev), "=", tx.mark), ops
	}
	has := func(t *testing.T, key string) bool {
		t.Helper()
		var ok bool
		err := x.View(ctx, func(tx meta.Tx) (err error) { ok, err = meta.Has(tx, meta.Objects, []byte(key)); return err })
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	lost := errors.New("answer lost")
	tests := []struct {
		name string
		// before runs between preparing the transaction and resolving it.
		before func(t *testing.T, cmp clientv3.Cmp, ops []clientv3.Op)
		won    bool
	}{
		{"applied, answer lost", func(t *testing.T, cmp clientv3.Cmp, ops []clientv3.Op) {
			resp, err := x.cli.Txn(ctx).If(cmp).Then(ops...).Commit()
			if err != nil || !resp.Succeeded {
				t.Fatalf("first send: %v %v", resp, err)
			}
		}, true},
		{"never arrived", func(*testing.T, clientv3.Cmp, []clientv3.Op) {}, true},
		{"another writer first", func(t *testing.T, _ clientv3.Cmp, _ []clientv3.Op) {
			if err := x.Update(ctx, func(tx meta.Tx) error { return tx.Put(meta.Objects, []byte("other"), nil) }); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"applied, then another writer", func(t *testing.T, cmp clientv3.Cmp, ops []clientv3.Op) {
			resp, err := x.cli.Txn(ctx).If(cmp).Then(ops...).Commit()
			if err != nil || !resp.Succeeded {
				t.Fatalf("first send: %v %v", resp, err)
			}
			if err := x.Update(ctx, func(tx meta.Tx) error { return tx.Put(meta.Objects, []byte("other2"), nil) }); err != nil {
				t.Fatal(err)
			}
		}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mark, id, cmp, ops := prepare(t, tc.name)
			tc.before(t, cmp, ops)
			won, err := x.resolve(ctx, mark, id, cmp, ops, lost)
			if err != nil || won != tc.won {
				t.Fatalf("resolve = %v, %v; want %v", won, err, tc.won)
			}
			if got := has(t, tc.name); got != tc.won {
				t.Fatalf("the write is there: %v, want %v", got, tc.won)
			}
		})
	}
}
