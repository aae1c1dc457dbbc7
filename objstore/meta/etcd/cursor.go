package etcd

import (
	"bytes"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/cairnstore/cairn/objstore/meta"
)

// firstPage is the size of a cursor's first page: most walks (a key's
// versions, "is there any key under this prefix") stop after a few keys.
// Pages double from there up to Config.PageSize.
const firstPage = 16

// snapCursor walks a table's keys at the transaction's revision, a page
// at a time. peek and advance work on the page; the next page is fetched
// with a range request or, for a large table, received from the cursor's
// stream (stream.go).
type snapCursor struct {
	t    *tx
	name meta.Table
	tp   string // the table's key prefix
	end  string // the end of its range

	page []kv
	pos  int
	// st is the open stream of the walk, nil when it ended or the cluster
	// has none.
	st *stream
	// more says the range holds keys after the page; next is where the
	// next page starts (the last key of this one, plus a zero byte).
	more bool
	next string
	size int // the next page's size
}

type kv struct{ k, v []byte }

// seek positions the cursor at the first key at or after key.
func (c *snapCursor) seek(key []byte) error {
	c.close()
	c.page, c.pos, c.more = c.page[:0], 0, false
	from := full(c.tp, key)
	if c.t.x.large[c.name].Load() && !c.t.x.noStream.Load() {
		return c.open(from)
	}
	c.size = firstPage
	return c.fetch(from)
}

func (c *snapCursor) fetch(from string) error {
	resp, err := c.t.read(from, clientv3.WithRange(c.end), clientv3.WithLimit(int64(c.size)))
	if err != nil {
		return err
	}
	c.page, c.pos = c.page[:0], 0
	for _, e := range resp.Kvs {
		c.page = append(c.page, kv{k: e.Key[len(c.tp):], v: present(e.Value)})
	}
	if resp.Count > streamAbove {
		c.t.x.large[c.name].Store(true)
	}
	c.more = resp.More && len(resp.Kvs) > 0
	if c.more {
		c.next = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
	}
	c.size = min(2*c.size, max(firstPage, c.t.x.cfg.PageSize))
	return nil
}

// peek returns the current key, ok false at the end.
func (c *snapCursor) peek() (kv, bool, error) {
	for c.pos == len(c.page) && c.st != nil {
		if err := c.recv(); err != nil {
			return kv{}, false, err
		}
	}
	if c.pos == len(c.page) && c.more {
		if err := c.fetch(c.next); err != nil {
			return kv{}, false, err
		}
	}
	if c.pos == len(c.page) {
		return kv{}, false, nil
	}
	return c.page[c.pos], true, nil
}

func (c *snapCursor) advance() { c.pos++ }

// cursor is a meta.Cursor: the table at the transaction's revision, with
// an Update's own writes merged in (a buffered value hides the stored
// one, a buffered deletion hides the key).
type cursor struct {
	t    *tx
	name meta.Table
	snap snapCursor
	// last is the key returned last, nil before the first; done is set
	// at the end of the table.
	last []byte
	done bool
	err  error
}

func (c *cursor) Seek(key []byte) (k, v []byte) {
	if c.err != nil {
		return nil, nil
	}
	c.done = false
	if err := c.snap.seek(key); err != nil {
		return c.fail(err)
	}
	return c.step(key, true)
}

func (c *cursor) First() (k, v []byte) { return c.Seek(nil) }

func (c *cursor) Next() (k, v []byte) {
	if c.err != nil || c.done {
		return nil, nil
	}
	if c.last == nil {
		return c.First()
	}
	return c.step(c.last, false)
}

func (c *cursor) Err() error { return c.err }

func (c *cursor) fail(err error) (k, v []byte) {
	c.err = c.t.fail(err)
	return nil, nil
}

// step returns the first key at (inclusive) or after from, of the
// snapshot and the buffered writes merged. The snapshot cursor is
// already at or after from.
func (c *cursor) step(from []byte, inclusive bool) (k, v []byte) {
	for {
		s, sok, err := c.snap.peek()
		if err != nil {
			return c.fail(err)
		}
		b, bok := c.bufferedFrom(from, inclusive)
		if bok && (!sok || bytes.Compare(b.k, s.k) <= 0) {
			if sok && bytes.Equal(b.k, s.k) {
				c.snap.advance() // the write replaces the stored key
			}
			if b.del {
				from, inclusive = b.k, false
				continue
			}
			c.last = b.k
			return b.k, b.v
		}
		if sok {
			c.snap.advance()
			c.last = s.k
			return s.k, s.v
		}
		c.done = true
		return nil, nil
	}
}

// bufferedFrom returns the first buffered write at or after from.
func (c *cursor) bufferedFrom(from []byte, inclusive bool) (item, bool) {
	tr := c.t.writes[c.name]
	if tr == nil {
		return item{}, false
	}
	var out item
	var ok bool
	tr.AscendGreaterOrEqual(item{k: from}, func(it item) bool {
		if !inclusive && bytes.Equal(it.k, from) {
			return true
		}
		out, ok = it, true
		return false
	})
	return out, ok
}

// errCursor is a cursor that failed before it started.
type errCursor struct{ err error }

func (c errCursor) Seek([]byte) (k, v []byte) { return nil, nil }
func (c errCursor) First() (k, v []byte)      { return nil, nil }
func (c errCursor) Next() (k, v []byte)       { return nil, nil }
func (c errCursor) Err() error                { return c.err }
