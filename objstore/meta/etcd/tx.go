package etcd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/google/btree"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/cairnstore/cairn/objstore/meta"
)

// tx is one transaction: reads at one revision of the cluster (rev,
// fixed by the first read), and in an Update writes buffered per table
// until the commit. A tx is used by one goroutine.
type tx struct {
	ctx      context.Context
	x        *Index
	writable bool

	// begun is set by the first read, which fixes rev; mark is the mod
	// revision of the commit marker at rev (0: absent), what the commit
	// compares.
	begun bool
	rev   int64
	mark  int64

	// gets caches the values read at rev by key (nil: absent): they
	// cannot change, and a group commit asks for the same bucket record
	// once per request.
	gets map[string][]byte

	// writes holds an Update's buffered writes, per table in key order.
	writes        map[meta.Table]*btree.BTreeG[item]
	nwrites, size int // counted against the limits, as meta does

	// open lists the cursors that opened a stream, closed when the
	// transaction ends.
	open []*snapCursor

	seq       uint64
	seqLoaded bool
	seqUsed   bool

	err error // the first failed call: the transaction cannot commit
}

// item is one buffered write: a value, or a deletion.
type item struct {
	k, v []byte
	del  bool
}

func itemLess(a, b item) bool { return bytes.Compare(a.k, b.k) < 0 }

func newTx(ctx context.Context, x *Index, writable bool) *tx {
	return &tx{ctx: ctx, x: x, writable: writable, gets: map[string][]byte{}}
}

// fail records the first failed call.
func (t *tx) fail(err error) error {
	if t.err == nil {
		t.err = err
	}
	return err
}

// finish ends the transaction's reads: it closes the cursors' streams
// and returns fn's error, or the first failed call's.
func (t *tx) finish(err error) error {
	for _, c := range t.open {
		c.close()
	}
	t.open = nil
	if err != nil {
		return err
	}
	return t.err
}

// start fixes the transaction's revision, if no read did yet, by reading
// the commit marker.
func (t *tx) start() error {
	if t.begun {
		return nil
	}
	_, err := t.get(t.x.keys.rev)
	return err
}

// table returns the key prefix of a table.
func (t *tx) table(name meta.Table) (string, error) {
	tp, ok := t.x.keys.tables[name]
	if !ok {
		return "", t.fail(fmt.Errorf("%w: %q", meta.ErrUnknownTable, name))
	}
	return tp, nil
}

// read runs a range request at the transaction's revision. The first
// read fixes the revision: in an Update it reads the commit marker in
// the same (read-only, linearizable) etcd transaction; later reads ask
// any member for that revision (serializable), and the leader's view
// when a member is behind.
func (t *tx) read(key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	if err := t.x.reachable(t.ctx); err != nil {
		return nil, err
	}
	ctx, cancel := t.x.rctx(t.ctx)
	defer cancel()
	cli := t.x.cli
	if !t.begun {
		if !t.writable {
			resp, err := retryRead(ctx, func() (*clientv3.GetResponse, error) { return cli.Get(ctx, key, opts...) })
			if err != nil {
				return nil, wrap(t.ctx, "read", err)
			}
			t.begun, t.rev = true, resp.Header.Revision
			return resp, nil
		}
		resp, err := retryRead(ctx, func() (*clientv3.TxnResponse, error) {
			return cli.Txn(ctx).Then(clientv3.OpGet(t.x.keys.rev), clientv3.OpGet(key, opts...)).Commit()
		})
		if err != nil {
			return nil, wrap(t.ctx, "read", err)
		}
		if kvs := resp.Responses[0].GetResponseRange().GetKvs(); len(kvs) > 0 {
			t.mark = kvs[0].ModRevision
		}
		t.begun, t.rev = true, resp.Header.Revision
		return (*clientv3.GetResponse)(resp.Responses[1].GetResponseRange()), nil
	}
	at := append(append(make([]clientv3.OpOption, 0, len(opts)+2), opts...), clientv3.WithRev(t.rev))
	resp, err := cli.Get(ctx, key, append(at, clientv3.WithSerializable())...)
	if errors.Is(err, rpctypes.ErrFutureRev) || electing(err) {
		// This member is behind, or between leaders: the leader's view.
		resp, err = retryRead(ctx, func() (*clientv3.GetResponse, error) { return cli.Get(ctx, key, at[:len(opts)+1]...) })
	}
	if err != nil {
		return nil, wrap(t.ctx, "read", err)
	}
	return resp, nil
}

// get returns the value of a full key at rev (nil: absent), through the
// cache.
func (t *tx) get(key string) ([]byte, error) {
	if v, ok := t.gets[key]; ok {
		return v, nil
	}
	resp, err := t.read(key)
	if err != nil {
		return nil, t.fail(err)
	}
	var v []byte
	if len(resp.Kvs) > 0 {
		v = present(resp.Kvs[0].Value)
	}
	t.gets[key] = v
	return v, nil
}

// present returns v, non-nil: an empty value is present, not absent.
func present(v []byte) []byte {
	if v == nil {
		return []byte{}
	}
	return v
}

func (t *tx) Get(name meta.Table, key []byte) ([]byte, error) {
	tp, err := t.table(name)
	if err != nil {
		return nil, err
	}
	if it, ok := t.buffered(name, key); ok {
		if it.del {
			return nil, nil
		}
		return it.v, nil
	}
	return t.get(full(tp, key))
}

// buffered returns the transaction's own write of key, if any.
func (t *tx) buffered(name meta.Table, key []byte) (item, bool) {
	tr := t.writes[name]
	if tr == nil {
		return item{}, false
	}
	return tr.Get(item{k: key})
}

func (t *tx) Put(name meta.Table, key, value []byte) error {
	if len(key) == 0 {
		return t.fail(fmt.Errorf("meta: put %s: empty key", name))
	}
	// Copies: the caller may reuse its buffers once Put returns.
	return t.write(name, item{k: bytes.Clone(key), v: append([]byte{}, value...)}, len(key)+len(value))
}

func (t *tx) Delete(name meta.Table, key []byte) error {
	return t.write(name, item{k: bytes.Clone(key), del: true}, len(key))
}

// write buffers one write of n bytes, counted against the limits.
func (t *tx) write(name meta.Table, it item, n int) error {
	if !t.writable {
		return t.fail(fmt.Errorf("meta: write to %s in a read-only transaction", name))
	}
	if _, err := t.table(name); err != nil {
		return err
	}
	t.nwrites++
	t.size += n
	if l := t.x.limits; !l.Fits(t.nwrites, t.size) {
		return t.fail(fmt.Errorf("%w: %d writes, %d bytes; the index takes at most %d writes and %d bytes",
			meta.ErrTxTooLarge, t.nwrites, t.size, l.MaxWrites, l.MaxBytes))
	}
	if t.writes == nil {
		t.writes = map[meta.Table]*btree.BTreeG[item]{}
	}
	tr := t.writes[name]
	if tr == nil {
		tr = btree.NewG(16, itemLess)
		t.writes[name] = tr
	}
	tr.ReplaceOrInsert(it)
	return nil
}

func (t *tx) Cursor(name meta.Table) meta.Cursor {
	tp, err := t.table(name)
	if err != nil {
		return errCursor{err}
	}
	return &cursor{t: t, name: name, snap: snapCursor{t: t, name: name, tp: tp, end: end(tp)}}
}

// NextSeq implements meta.Tx: the counter is read at the transaction's
// revision and written by its commit, which the commit marker makes
// safe against another writer taking the same numbers.
func (t *tx) NextSeq() (uint64, error) {
	if !t.writable {
		return 0, t.fail(fmt.Errorf("meta: sequence in a read-only transaction"))
	}
	if !t.seqLoaded {
		raw, err := t.get(t.x.keys.seq)
		if err != nil {
			return 0, err
		}
		if raw != nil {
			n, err := strconv.ParseUint(string(raw), 10, 64)
			if err != nil {
				return 0, t.fail(fmt.Errorf("%w: sequence %q: %w", meta.ErrCorruptRecord, raw, err))
			}
			t.seq = n
		}
		t.seqLoaded = true
	}
	t.seq++
	t.seqUsed = true
	return t.seq, nil
}

// dirty reports whether the transaction has anything to commit.
func (t *tx) dirty() bool { return t.writes != nil || t.seqUsed }

// retryRead runs a read-only request again while the cluster answers
// that it is electing a leader, until ctx (the request's own deadline)
// ends: a read has no effect to repeat, and an election takes a moment,
// in which a member lost costs no request.
func retryRead[T any](ctx context.Context, do func() (T, error)) (T, error) {
	for attempt := 1; ; attempt++ {
		v, err := do()
		if err == nil || !electing(err) {
			return v, err
		}
		select {
		case <-ctx.Done():
			return v, err
		case <-time.After(time.Duration(min(attempt, 10)) * 20 * time.Millisecond):
		}
	}
}

// electing reports whether err says the cluster is between leaders.
func electing(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, rpctypes.ErrLeaderChanged) || errors.Is(err, rpctypes.ErrNoLeader) {
		return true
	}
	desc := rpctypes.ErrorDesc(err)
	return desc == rpctypes.ErrorDesc(rpctypes.ErrGRPCLeaderChanged) || desc == rpctypes.ErrorDesc(rpctypes.ErrGRPCNoLeader)
}
