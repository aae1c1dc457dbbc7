package etcd

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/cairnstore/cairn/objstore/meta"
)

// commit sends an Update's writes as one etcd transaction: if the commit
// marker's mod revision is still the one the transaction read, apply
// every write, rewrite the counter and the marker. It reports false when
// the compare failed (a writer of the store committed since: nothing was
// applied, run the transaction again). A transaction that wrote nothing
// commits without a request: it read one consistent state.
func (x *Index) commit(ctx context.Context, t *tx) (bool, error) {
	if !t.dirty() {
		return true, nil
	}
	// Blind writes: the marker's revision now is as good as any.
	if err := t.start(); err != nil {
		return false, err
	}
	id, err := txnID()
	if err != nil {
		return false, err
	}
	ops, err := x.ops(t, id)
	if err != nil {
		return false, err
	}
	if err := x.reachable(ctx); err != nil {
		return false, err // nothing was sent
	}
	x.own.add(id)
	cmp := clientv3.Compare(clientv3.ModRevision(x.keys.rev), "=", t.mark)
	// The commit runs to its answer even when the caller gives up: an
	// abandoned commit would leave its outcome unknown.
	cctx := context.WithoutCancel(ctx)
	rctx, cancel := x.rctx(cctx)
	resp, err := x.cli.Txn(rctx).If(cmp).Then(ops...).Commit()
	cancel()
	if err == nil {
		return resp.Succeeded, nil
	}
	if !ambiguous(err) {
		return false, wrap(cctx, "commit", err)
	}
	x.cfg.Log.Warn().Err(err).Msg("etcd index: commit unanswered, finding out whether it applied")
	return x.resolve(cctx, t.mark, id, cmp, ops, err)
}

// ops returns the etcd operations of t's writes, its counter and the
// marker, or meta.ErrTxTooLarge when they would pass the cluster's
// bounds. (Within Limits they never do; this guards a misconfiguration.)
func (x *Index) ops(t *tx, id string) ([]clientv3.Op, error) {
	var ops []clientv3.Op
	size := x.cfg.fixedBytes()
	for _, name := range meta.AllTables {
		tr := t.writes[name]
		if tr == nil {
			continue
		}
		tp := x.keys.tables[name]
		tr.Ascend(func(it item) bool {
			k := full(tp, it.k)
			size += len(k) + len(it.v) + opFraming
			if it.del {
				ops = append(ops, clientv3.OpDelete(k))
			} else {
				ops = append(ops, clientv3.OpPut(k, string(it.v)))
			}
			return true
		})
	}
	if t.seqUsed {
		ops = append(ops, clientv3.OpPut(x.keys.seq, strconv.FormatUint(t.seq, 10)))
	}
	ops = append(ops, clientv3.OpPut(x.keys.rev, id))
	if len(ops) > x.cfg.MaxTxnOps || size > x.cfg.MaxRequestBytes {
		return nil, fmt.Errorf("%w: %d operations of about %d bytes; the cluster takes %d and %d",
			meta.ErrTxTooLarge, len(ops), size, x.cfg.MaxTxnOps, x.cfg.MaxRequestBytes)
	}
	return ops, nil
}

// txnID returns a new transaction id, the marker's value once it commits.
func txnID() (string, error) {
	var b [txnIDLen / 2]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("etcd: transaction id: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// resolve finds out whether a commit whose answer was lost applied. It
// sends the same transaction again: that one applies only if the first
// did not (both compare the marker at mark, and either rewrites it), so
// if it applies the transaction committed once. If its compare fails,
// the first write of the marker after mark tells who won: ours (id) or
// another writer's, and then ours can never apply. Each step is retried
// until the request timeout, twice over, has passed; then the outcome is
// unknown (ErrOutcomeUnknown).
func (x *Index) resolve(ctx context.Context, mark int64, id string, cmp clientv3.Cmp, ops []clientv3.Op, cause error) (bool, error) {
	deadline := time.Now().Add(2 * x.cfg.RequestTimeout)
	for time.Now().Before(deadline) {
		rctx, cancel := context.WithDeadline(ctx, deadline)
		resp, err := x.cli.Txn(rctx).If(cmp).Then(ops...).Commit()
		cancel()
		if err == nil && resp.Succeeded {
			return true, nil
		}
		if err == nil {
			won, known, err := x.firstMarker(ctx, deadline, mark, id)
			if known {
				return won, nil
			}
			if err != nil {
				cause = err
			}
		} else if !ambiguous(err) {
			return false, wrap(ctx, "commit", err)
		} else {
			cause = err
		}
		time.Sleep(50 * time.Millisecond)
	}
	x.stats.unknown.Add(1)
	return false, fmt.Errorf("%w: %w: %w", ErrUnavailable, ErrOutcomeUnknown, cause)
}

// firstMarker reads the first write of the marker after revision mark
// from the cluster's history, and reports whether its value is id.
// known is false when the history was compacted or could not be read.
func (x *Index) firstMarker(ctx context.Context, deadline time.Time, mark int64, id string) (won, known bool, err error) {
	wctx, cancel := context.WithDeadline(clientv3.WithRequireLeader(ctx), deadline)
	defer cancel()
	for resp := range x.cli.Watch(wctx, x.keys.rev, clientv3.WithRev(mark+1)) {
		if err := resp.Err(); err != nil {
			return false, false, err
		}
		if resp.CompactRevision != 0 {
			return false, false, fmt.Errorf("etcd: marker history compacted at %d", resp.CompactRevision)
		}
		if len(resp.Events) > 0 {
			return string(resp.Events[0].Kv.Value) == id, true, nil
		}
	}
	return false, false, wctx.Err()
}
