package etcd

import (
	"context"
	"fmt"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
)

// Cursors of large tables read through etcd's RangeStream (etcd 3.7 and
// later). A range request with a limit makes etcd count every key from
// its start to the end of the range, so each page of a walk near the
// start of a large table costs the server time in proportion to the
// table (about 4 ms per 100 000 keys, measured); a stream without a limit
// is sent in chunks that the server does not count, at a cost that does
// not grow with the table (about 1 ms to the first chunk, measured on
// one member). So a cursor pages with range requests until one of them
// reports (its Count) more than streamAbove keys in the rest of the
// table; from then on the index streams that table's cursors. The cursor
// takes chunks as the walk needs them and cancels the stream when the
// walk moves or the transaction ends (what the server sent ahead is
// bounded by gRPC's flow control). A cluster without RangeStream answers
// Unimplemented; the index then pages with range requests only.

// streamAbove is the count of keys past which a table is read with
// streams: counting that many costs a range request about what opening a
// stream does.
const streamAbove = 25_000

// stream is one open RangeStream.
type stream struct {
	ch     clientv3.GetStreamChan
	cancel context.CancelFunc
	from   string // where it started, to fall back to pages
	first  bool   // no chunk received yet
}

// open starts a stream of the range from from at the transaction's
// revision.
func (c *snapCursor) open(from string) error {
	t := c.t
	if err := t.start(); err != nil {
		return err
	}
	if err := t.x.reachable(t.ctx); err != nil {
		return t.fail(err)
	}
	ctx, cancel := context.WithCancel(t.ctx)
	ch, err := t.x.cli.GetStream(ctx, from, clientv3.WithRange(c.end), clientv3.WithRev(t.rev))
	if err != nil {
		cancel()
		return t.fail(wrap(t.ctx, "range", err))
	}
	c.st = &stream{ch: ch, cancel: cancel, from: from, first: true}
	t.open = append(t.open, c)
	return nil
}

// recv takes the stream's next chunk as the page; at the end of the
// stream it closes it.
func (c *snapCursor) recv() error {
	t := c.t
	timer := time.NewTimer(t.x.cfg.RequestTimeout)
	defer timer.Stop()
	select {
	case r, ok := <-c.st.ch:
		if !ok {
			c.close()
			return nil
		}
		if err := r.Err(); err != nil {
			if c.st.first && code(err) == codes.Unimplemented {
				// A cluster before RangeStream: pages from now on.
				t.x.noStream.Store(true)
				from := c.st.from
				c.close()
				c.size = firstPage
				return c.fetch(from)
			}
			c.close()
			return t.fail(wrap(t.ctx, "range", err))
		}
		c.st.first = false
		c.page, c.pos = c.page[:0], 0
		for _, e := range r.Kvs {
			c.page = append(c.page, kv{k: e.Key[len(c.tp):], v: present(e.Value)})
		}
		return nil
	case <-timer.C:
		c.close()
		return t.fail(fmt.Errorf("%w: range: no answer in %v", ErrUnavailable, t.x.cfg.RequestTimeout))
	case <-t.ctx.Done():
		c.close()
		return t.fail(fmt.Errorf("etcd: range: %w", t.ctx.Err()))
	}
}

// close cancels the cursor's stream, if open, and waits for the client's
// reader of it to end.
func (c *snapCursor) close() {
	if c.st == nil {
		return
	}
	c.st.cancel()
	for range c.st.ch {
	}
	c.st = nil
}
