package meta

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/google/btree"
)

// Mem is an index database held in memory, for tests: nothing durable.
// Open gives an Index onto it, with the same contract as Bolt
// (meta/indextest runs both); several may be open at once, as several
// processes can reach one replicated index, and closing one leaves the
// data to the others and to the next Open. Each table is a
// copy-on-write B-tree: an Update works on lazy clones of the tables it
// writes and publishes them whole when it commits, so a View is a
// pointer to one committed state and never waits for a writer.
//
// Limits, when set, are enforced as an engine with bounded transactions
// would (ErrTxTooLarge), so that tests can check that callers split their
// writes.
type Mem struct {
	limits Limits
	mu     sync.Mutex // serialises Updates; protects the clones of state
	state  atomic.Pointer[memState]
}

// MemIndex is one open Index onto a Mem.
type MemIndex struct {
	m      *Mem
	closed atomic.Bool
}

var _ Index = (*MemIndex)(nil)

// memState is one committed state; it is never written after it is
// published.
type memState struct {
	tables map[Table]*btree.BTreeG[memItem]
	seq    uint64
}

type memItem struct{ k, v []byte }

func memLess(a, b memItem) bool { return bytes.Compare(a.k, b.k) < 0 }

// NewMem returns an empty in-memory database with every table of
// AllTables.
func NewMem(limits Limits) *Mem {
	st := &memState{tables: map[Table]*btree.BTreeG[memItem]{}}
	for _, t := range AllTables {
		st.tables[t] = btree.NewG(16, memLess)
	}
	m := &Mem{limits: limits}
	m.state.Store(st)
	return m
}

// Open returns a new Index onto the database.
func (m *Mem) Open() *MemIndex { return &MemIndex{m: m} }

// DB returns the database the index is open on.
func (x *MemIndex) DB() *Mem { return x.m }

// View implements Index.
func (x *MemIndex) View(ctx context.Context, fn func(Tx) error) error {
	if err := x.check(ctx); err != nil {
		return err
	}
	m := x.m
	t := &memTx{m: m, st: m.state.Load()}
	return t.finish(fn(t))
}

// Update implements Index.
func (x *MemIndex) Update(ctx context.Context, fn func(Tx) error) error {
	if err := x.check(ctx); err != nil {
		return err
	}
	m := x.m
	m.mu.Lock()
	defer m.mu.Unlock()
	if x.closed.Load() {
		return ErrClosed
	}
	cur := m.state.Load()
	next := &memState{tables: make(map[Table]*btree.BTreeG[memItem], len(cur.tables)), seq: cur.seq}
	for name, tr := range cur.tables {
		next.tables[name] = tr
	}
	t := &memTx{m: m, st: next, writable: true, cloned: map[Table]bool{}}
	if err := t.finish(fn(t)); err != nil {
		return err
	}
	m.state.Store(next)
	return nil
}

// Limits implements Index.
func (x *MemIndex) Limits() Limits { return x.m.limits }

// Close implements Index. It waits for the Update in flight.
func (x *MemIndex) Close() error {
	x.m.mu.Lock()
	defer x.m.mu.Unlock()
	x.closed.Store(true)
	return nil
}

func (x *MemIndex) check(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if x.closed.Load() {
		return ErrClosed
	}
	return nil
}

// memTx is a transaction over one memState: the published one in a View,
// a private copy whose written tables are clones in an Update.
type memTx struct {
	m        *Mem
	st       *memState
	writable bool
	cloned   map[Table]bool
	writes   int
	bytes    int
	err      error // the first failed call: the transaction cannot commit
}

func (t *memTx) fail(err error) error {
	if t.err == nil {
		t.err = err
	}
	return err
}

func (t *memTx) finish(err error) error {
	if err != nil {
		return err
	}
	return t.err
}

func (t *memTx) table(name Table) (*btree.BTreeG[memItem], error) {
	tr, ok := t.st.tables[name]
	if !ok {
		return nil, t.fail(fmt.Errorf("%w: %q", ErrUnknownTable, name))
	}
	return tr, nil
}

// writeTable returns the transaction's own clone of a table, counting one
// write of n bytes against the limits.
func (t *memTx) writeTable(name Table, n int) (*btree.BTreeG[memItem], error) {
	if !t.writable {
		return nil, t.fail(fmt.Errorf("meta: write to %s in a read-only transaction", name))
	}
	tr, err := t.table(name)
	if err != nil {
		return nil, err
	}
	t.writes++
	t.bytes += n
	if !t.m.limits.Fits(t.writes, t.bytes) {
		return nil, t.fail(fmt.Errorf("%w: %d writes, %d bytes; the index takes at most %d writes and %d bytes",
			ErrTxTooLarge, t.writes, t.bytes, t.m.limits.MaxWrites, t.m.limits.MaxBytes))
	}
	if !t.cloned[name] {
		tr = tr.Clone()
		t.st.tables[name] = tr
		t.cloned[name] = true
	}
	return tr, nil
}

func (t *memTx) Get(name Table, key []byte) ([]byte, error) {
	tr, err := t.table(name)
	if err != nil {
		return nil, err
	}
	it, ok := tr.Get(memItem{k: key})
	if !ok {
		return nil, nil
	}
	return it.v, nil
}

func (t *memTx) Put(name Table, key, value []byte) error {
	if len(key) == 0 {
		return t.fail(fmt.Errorf("meta: put %s: empty key", name))
	}
	tr, err := t.writeTable(name, len(key)+len(value))
	if err != nil {
		return err
	}
	// Copies: the caller may reuse its buffers once the transaction ends.
	tr.ReplaceOrInsert(memItem{k: bytes.Clone(key), v: append([]byte{}, value...)})
	return nil
}

func (t *memTx) Delete(name Table, key []byte) error {
	tr, err := t.writeTable(name, len(key))
	if err != nil {
		return err
	}
	tr.Delete(memItem{k: key})
	return nil
}

func (t *memTx) Cursor(name Table) Cursor {
	tr, err := t.table(name)
	if err != nil {
		return errCursor{err}
	}
	return &memCursor{tr: tr}
}

func (t *memTx) NextSeq() (uint64, error) {
	if !t.writable {
		return 0, t.fail(fmt.Errorf("meta: sequence in a read-only transaction"))
	}
	t.st.seq++
	return t.st.seq, nil
}

// memCursor walks a tree in key order, fetching a few items at a time.
type memCursor struct {
	tr  *btree.BTreeG[memItem]
	buf []memItem
	// after is the last key returned; nil before the first.
	after []byte
	done  bool
}

const memCursorBatch = 32

func (c *memCursor) fill(from []byte, inclusive bool) {
	c.buf = c.buf[:0]
	c.tr.AscendGreaterOrEqual(memItem{k: from}, func(it memItem) bool {
		if !inclusive && bytes.Equal(it.k, from) {
			return true
		}
		c.buf = append(c.buf, it)
		return len(c.buf) < memCursorBatch
	})
}

func (c *memCursor) pop() (k, v []byte) {
	if len(c.buf) == 0 {
		c.done = true
		return nil, nil
	}
	it := c.buf[0]
	c.buf = c.buf[1:]
	c.after = it.k
	return it.k, it.v
}

func (c *memCursor) Seek(key []byte) (k, v []byte) {
	c.done = false
	c.fill(key, true)
	return c.pop()
}

func (c *memCursor) First() (k, v []byte) { return c.Seek(nil) }

func (c *memCursor) Next() (k, v []byte) {
	if c.done {
		return nil, nil
	}
	if len(c.buf) == 0 {
		if c.after == nil {
			return c.First()
		}
		c.fill(c.after, false)
	}
	return c.pop()
}

func (c *memCursor) Err() error { return nil }
