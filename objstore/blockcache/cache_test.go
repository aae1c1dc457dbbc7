package blockcache

import (
	"bytes"
	"errors"
	"io"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
)

const slot = 64 << 10

func newCache(t *testing.T, slots int) *Cache {
	t.Helper()
	c, err := New(int64(slots)*slot, slot)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func block(fill byte, n int) []byte { return bytes.Repeat([]byte{fill}, n) }

func insert(t *testing.T, c *Cache, k Key, parts ...[]byte) {
	t.Helper()
	if ok, err := c.Insert(k, parts...); !ok || err != nil {
		t.Fatalf("insert %v: %v %v", k, ok, err)
	}
}

// read returns k's bytes, nil on a miss.
func read(t *testing.T, c *Cache, k Key) []byte {
	t.Helper()
	h, ok := c.Lookup(k)
	if !ok {
		return nil
	}
	defer c.Release(h)
	p := make([]byte, h.Len)
	if _, err := c.ReadAt(h, p, 0); err != nil {
		t.Fatal(err)
	}
	if b := c.Bytes(h); !bytes.Equal(b, p) || cap(b) != h.Len {
		t.Fatalf("%v: Bytes gives %d bytes (cap %d) that differ from ReadAt's %d", k, len(b), cap(b), len(p))
	}
	return p
}

func TestNewGeometry(t *testing.T) {
	for _, tc := range []struct {
		size int64
		slot int
	}{{0, slot}, {slot - 1, slot}, {slot, 0}, {slot, -1}, {4 * slot, 100000}} {
		if _, err := New(tc.size, tc.slot); !errors.Is(err, ErrGeometry) {
			t.Errorf("New(%d, %d) = %v, want ErrGeometry", tc.size, tc.slot, err)
		}
	}
}

func TestInsertLookup(t *testing.T) {
	c := newCache(t, 4)
	k := Key{"d1", 0}
	if _, hit := c.Lookup(k); hit {
		t.Fatal("hit in an empty cache")
	}
	insert(t, c, k, block(1, 100), block(2, 50))
	want := append(block(1, 100), block(2, 50)...)
	if got := read(t, c, k); !bytes.Equal(got, want) {
		t.Fatalf("read %d bytes, want the 150 inserted in order", len(got))
	}
	if ok, _ := c.Insert(k, block(3, 100)); ok {
		t.Fatal("a cached key went in again")
	}
	if got := read(t, c, k); !bytes.Equal(got, want) {
		t.Fatal("a second insert changed the block")
	}
	st := c.Stats()
	if st.Admitted != 1 || st.Used != 1 || st.Hot != 1 || st.Slots != 4 || st.Hits != 2 || st.Misses != 1 {
		t.Fatalf("stats %+v", st)
	}
}

func TestInsertRejects(t *testing.T) {
	c := newCache(t, 2)
	for _, parts := range [][][]byte{nil, {{}}, {block(1, slot+1)}, {block(1, slot), {1}}} {
		if ok, err := c.Insert(Key{"x", 0}, parts...); ok || err != nil {
			t.Fatalf("insert of %d parts: %v %v", len(parts), ok, err)
		}
	}
}

// TestProbationFirst: blocks never read go before blocks read again,
// whatever their age.
func TestProbationFirst(t *testing.T) {
	c := newCache(t, 5) // protected holds 4
	hot, cold := Key{"hot", 0}, Key{"cold", 0}
	insert(t, c, hot, block('h', 10))
	read(t, c, hot) // protected now
	insert(t, c, cold, block('c', 10))
	for i := range 10 { // a scan of blocks nobody reads back
		insert(t, c, Key{"scan", int64(i)}, block(byte(i), 10))
	}
	if read(t, c, cold) != nil {
		t.Fatal("an unread block outlived a scan")
	}
	if got := read(t, c, hot); !bytes.Equal(got, block('h', 10)) {
		t.Fatal("a block read again was evicted by a scan")
	}
	if st := c.Stats(); st.Evicted != 7 || st.Used != 5 {
		t.Fatalf("stats %+v", st)
	}
}

// TestProtectedOverflow: the protected segment keeps at most 80% of the
// slots; its least recently used block goes back on probation, and from
// there out first.
func TestProtectedOverflow(t *testing.T) {
	c := newCache(t, 5) // protected holds 4
	for i := range 5 {
		insert(t, c, Key{"k", int64(i)}, block(byte(i), 10))
		read(t, c, Key{"k", int64(i)})
	}
	if st := c.Stats(); st.Hot != 4 {
		t.Fatalf("%d protected, want 4", st.Hot)
	}
	insert(t, c, Key{"new", 0}, block('n', 10)) // evicts k/0, demoted first
	if read(t, c, Key{"k", 0}) != nil {
		t.Fatal("the demoted block survived")
	}
	for i := 1; i < 5; i++ {
		if read(t, c, Key{"k", int64(i)}) == nil {
			t.Fatalf("k/%d lost", i)
		}
	}
}

func TestPinnedNotEvicted(t *testing.T) {
	c := newCache(t, 1)
	a, b := Key{"a", 0}, Key{"b", 0}
	insert(t, c, a, block('a', slot))
	h, ok := c.Lookup(a)
	if !ok {
		t.Fatal("miss")
	}
	if ok, _ := c.Insert(b, block('b', slot)); ok {
		t.Fatal("went in over a pinned block")
	}
	c.Release(h)
	insert(t, c, b, block('b', slot))
	if got := read(t, c, b); !bytes.Equal(got, block('b', slot)) {
		t.Fatal("reused slot does not hold the new block")
	}
}

// TestOpenFileSeek reads a block the way sendfile does: from the file
// offset of a file of its own.
func TestOpenFileSeek(t *testing.T) {
	c := newCache(t, 3)
	insert(t, c, Key{"a", 0}, block('a', slot))
	insert(t, c, Key{"b", 1}, block('b', 300))
	h, _ := c.Lookup(Key{"b", 1})
	defer c.Release(h)
	f, err := c.OpenFile(h.File)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Seek(h.Off+5, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(io.LimitReader(f, int64(h.Len-5)))
	if err != nil || !bytes.Equal(got, block('b', 295)) {
		t.Fatalf("read %d bytes, %v", len(got), err)
	}
	if _, err := c.ReadAt(h, make([]byte, 10), 295); err == nil {
		t.Fatal("read past the block allowed")
	}
}

// TestReuseKeepsSplicedPages is the promise sendfile relies on: pages of
// a slot already spliced into a pipe (as sendfile splices them onto a
// socket) keep their bytes when the slot is evicted and refilled.
func TestReuseKeepsSplicedPages(t *testing.T) {
	c := newCache(t, 1)
	a := Key{"a", 0}
	insert(t, c, a, block('a', slot))
	h, _ := c.Lookup(a)
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(p[0])
	defer unix.Close(p[1])
	off := h.Off
	n, err := unix.Splice(int(c.files[h.File].Fd()), &off, p[1], nil, 16<<10, 0)
	if err != nil || n != 16<<10 {
		t.Fatalf("splice: %d %v", n, err)
	}
	c.Release(h)
	insert(t, c, Key{"b", 0}, block('b', slot))
	if got := read(t, c, Key{"b", 0}); !bytes.Equal(got, block('b', slot)) {
		t.Fatal("refilled slot does not hold the new block")
	}
	got := make([]byte, n)
	if _, err := io.ReadFull(fdReader(p[0]), got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, block('a', int(n))) {
		t.Fatal("bytes in flight changed when their slot was reused")
	}
}

type fdReader int

func (r fdReader) Read(p []byte) (int, error) { return unix.Read(int(r), p) }

// TestCloseWhilePinned: a block pinned when the cache closes stays
// readable until released; afterwards nothing is looked up or kept.
func TestCloseWhilePinned(t *testing.T) {
	c, err := New(4*slot, slot)
	if err != nil {
		t.Fatal(err)
	}
	a := Key{"a", 0}
	insert(t, c, a, block('a', 100))
	h, ok := c.Lookup(a)
	if !ok {
		t.Fatal("miss")
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	p := make([]byte, 100)
	if _, err := c.ReadAt(h, p, 0); err != nil || !bytes.Equal(p, block('a', 100)) {
		t.Fatalf("pinned block after Close: %v", err)
	}
	f, err := c.OpenFile(h.File)
	if err != nil {
		t.Fatalf("OpenFile while a block is pinned: %v", err)
	}
	_ = f.Close()
	if _, hit := c.Lookup(a); hit {
		t.Fatal("hit after Close")
	}
	if ok, err := c.Insert(Key{"b", 0}, block('b', 10)); ok || err != nil {
		t.Fatalf("insert after Close: %v %v", ok, err)
	}
	c.Release(h)
	if _, err := c.OpenFile(0); err == nil {
		t.Fatal("OpenFile after the last release")
	}
}

// TestConcurrent churns a small cache from many goroutines: every hit
// must hold the bytes its key was inserted with (run with -race).
func TestConcurrent(t *testing.T) {
	c := newCache(t, 8)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 300 {
				k := Key{"k", int64((g*7 + i) % 20)}
				want := block(byte(k.Block), 1000)
				if h, ok := c.Lookup(k); ok {
					p := make([]byte, h.Len)
					_, err := c.ReadAt(h, p, 0)
					c.Release(h)
					if err != nil || !bytes.Equal(p, want) {
						t.Errorf("%v: wrong bytes (%v)", k, err)
						return
					}
					continue
				}
				if _, err := c.Insert(k, want[:500], want[500:]); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if st := c.Stats(); st.Used > 8 || st.Hits == 0 || st.Evicted == 0 {
		t.Fatalf("stats %+v", st)
	}
}
