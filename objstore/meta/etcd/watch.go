package etcd

import (
	"context"
	"fmt"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/cairnstore/cairn/objstore/meta"
)

// ownCommits remembers the ids of this index's recent commits, so that
// WatchOthers can tell its own transactions from other processes'. An id
// is noted before its commit is sent, so its events are always
// recognised; the set keeps the last ownCommitsMax.
type ownCommits struct {
	mu    sync.Mutex // protects ids and order
	ids   map[string]bool
	order []string
}

// ownCommitsMax bounds the remembered ids: far more than the commits a
// watch can lag behind by.
const ownCommitsMax = 1 << 14

func (o *ownCommits) add(id string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.ids == nil {
		o.ids = map[string]bool{}
	}
	o.ids[id] = true
	o.order = append(o.order, id)
	if len(o.order) > ownCommitsMax {
		delete(o.ids, o.order[0])
		o.order = o.order[1:]
	}
}

func (o *ownCommits) has(id string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.ids[id]
}

var _ meta.Watcher = (*Index)(nil)

// WatchOthers implements meta.Watcher with an etcd watch of the store's
// prefix. A transaction's events share one revision and end with the
// write of the commit marker (doc.go), whose value, the transaction's
// id, tells whose it was. A watch that breaks is opened again from the
// revision after the last one seen; when the cluster compacted that
// history, fn hears of the gap (a nil key).
func (x *Index) WatchOthers(ctx context.Context, table meta.Table, fn func(key []byte, deleted bool)) error {
	tp, ok := x.keys.tables[table]
	if !ok {
		return fmt.Errorf("%w: %q", meta.ErrUnknownTable, table)
	}
	var next int64 // the revision to resume from; 0: now
	for {
		err := x.watchOnce(ctx, tp, &next, fn)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		x.cfg.Log.Debug().Err(err).Msg("etcd index: watch broke; resuming")
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// change is one table event of a revision being gathered.
type change struct {
	key     []byte
	deleted bool
}

// watchOnce watches from *next until the watch breaks, reporting each
// revision's table changes unless its marker names one of this index's
// commits.
func (x *Index) watchOnce(ctx context.Context, tp string, next *int64, fn func([]byte, bool)) error {
	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	defer cancel()
	opts := []clientv3.OpOption{clientv3.WithPrefix()}
	if *next > 0 {
		opts = append(opts, clientv3.WithRev(*next))
	}
	for resp := range x.cli.Watch(wctx, x.keys.prefix, opts...) {
		if resp.CompactRevision != 0 {
			fn(nil, false) // history gone: what was missed is unknown
			*next = resp.CompactRevision
			return fmt.Errorf("etcd: watch compacted at %d", resp.CompactRevision)
		}
		if err := resp.Err(); err != nil {
			return err
		}
		var rev int64
		var pending []change
		flush := func(own bool) {
			if !own {
				for _, c := range pending {
					fn(c.key, c.deleted)
				}
			}
			pending = pending[:0]
		}
		for _, ev := range resp.Events {
			if ev.Kv.ModRevision != rev {
				flush(false) // a revision without a marker is no store transaction of ours
				rev = ev.Kv.ModRevision
			}
			k := string(ev.Kv.Key)
			switch {
			case k == x.keys.rev:
				flush(x.own.has(string(ev.Kv.Value)))
			case len(k) > len(tp) && k[:len(tp)] == tp:
				pending = append(pending, change{key: []byte(k[len(tp):]), deleted: ev.Type == clientv3.EventTypeDelete})
			}
			*next = ev.Kv.ModRevision + 1
		}
		flush(false)
	}
	return fmt.Errorf("etcd: watch ended")
}
