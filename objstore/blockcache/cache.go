package blockcache

import (
	"container/list"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// ErrGeometry is returned by New for a size that holds no slot, or a
// slot size that is not a whole number of pages.
var ErrGeometry = errors.New("blockcache: size must hold at least one slot of whole pages")

// ErrHugePages is returned by New when the kernel forces huge pages on
// shared memory: punching one slot out of a huge page would zero it in
// place, under bytes a socket may still be sending.
var ErrHugePages = errors.New("blockcache: shmem huge pages are forced (/sys/kernel/mm/transparent_hugepage/shmem_enabled)")

// Key names one block of one data object.
type Key struct {
	Data  string // data object id
	Block int64  // block index within it
}

// Stats counts what the cache did since it was made.
type Stats struct {
	Hits     uint64 // lookups that found their block
	Misses   uint64 // lookups that did not
	Admitted uint64 // blocks written into the cache
	Evicted  uint64 // blocks dropped to make room
	Slots    int    // slots in all
	Used     int    // slots holding a block
	Hot      int    // of which in the protected segment
	SlotSize int    // bytes per slot
}

// Cache is a fixed-size cache of verified blocks in memfds. It is safe
// for concurrent use.
type Cache struct {
	files    []*os.File // the memfds; slot i lives in files[i%len(files)]
	maps     [][]byte   // a shared mapping of each file
	slotSize int
	slots    int

	noPopulate atomic.Bool // MADV_POPULATE_WRITE is not known here (before Linux 5.14)
	protMax    int         // most blocks kept in the protected segment

	mu         sync.Mutex // protects the following
	entries    map[Key]*entry
	prob       list.List // probation: blocks not read since they came in, most recent at the front
	prot       list.List // protected: blocks read again, most recent at the front
	free       []int     // slots never used or given back
	filling    map[Key]bool
	stats      Stats
	slotLooked []bool // a slot's pages may be on a socket (its block was looked up)
	inUse      int    // pinned blocks and fills under way: the mappings must stay
	closed     bool   // Close was called; the memory goes when inUse drops to 0
	gone       bool   // the mappings and files are released
}

type entry struct {
	key       Key
	slot      int
	n         int // bytes held
	pins      int
	protected bool
	elem      *list.Element // in prob or prot
}

// Handle is a block pinned by Lookup: its slot is not reused until
// Release. File, Off and Len locate its bytes: in cache file File (see
// OpenFile), from Off.
type Handle struct {
	e    *entry
	File int
	Off  int64
	Len  int
}

// stripes is how many memfds the slots are spread over: writing a memfd
// takes its inode lock, and concurrent writers should rarely meet there.
const stripes = 8

// protectedShare is the part of the slots the protected segment may fill.
const protectedShare = 0.8

// New makes a cache of size bytes cut into slots of slotSize bytes. The
// memory is taken as blocks come in, not up front.
func New(size int64, slotSize int) (*Cache, error) {
	if slotSize <= 0 || size < int64(slotSize) || slotSize%os.Getpagesize() != 0 {
		return nil, fmt.Errorf("%w: size %d, slot %d", ErrGeometry, size, slotSize)
	}
	if b, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/shmem_enabled"); err == nil && strings.Contains(string(b), "[force]") {
		return nil, ErrHugePages
	}
	slots := int(size / int64(slotSize))
	c := &Cache{
		slotSize: slotSize,
		slots:    slots,
		protMax:  int(float64(slots) * protectedShare),
		entries:  make(map[Key]*entry),
		filling:  make(map[Key]bool),
		free:     make([]int, 0, slots),
	}
	for i := slots - 1; i >= 0; i-- {
		c.free = append(c.free, i)
	}
	n := min(stripes, slots)
	for i := range n {
		fd, err := unix.MemfdCreate("cairn-block-cache", unix.MFD_CLOEXEC)
		if err != nil {
			_ = c.Close()
			return nil, fmt.Errorf("blockcache: memfd_create: %w", err)
		}
		f := os.NewFile(uintptr(fd), "memfd:cairn-block-cache")
		c.files = append(c.files, f)
		size := int64((slots-i+n-1)/n) * int64(slotSize)
		if err := f.Truncate(size); err != nil {
			_ = c.Close()
			return nil, fmt.Errorf("blockcache: size the memfd: %w", err)
		}
		m, err := unix.Mmap(fd, 0, int(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
		if err != nil {
			_ = c.Close()
			return nil, fmt.Errorf("blockcache: map the memfd: %w", err)
		}
		c.maps = append(c.maps, m)
		// Small pages only: a slot is punched out page by page.
		if err := unix.Madvise(m, unix.MADV_NOHUGEPAGE); err != nil && !errors.Is(err, unix.EINVAL) {
			_ = c.Close()
			return nil, fmt.Errorf("blockcache: madvise: %w", err)
		}
	}
	c.slotLooked = make([]bool, slots)
	return c, nil
}

// where is slot i's file and offset.
func (c *Cache) where(slot int) (file int, off int64) {
	n := len(c.files)
	return slot % n, int64(slot/n) * int64(c.slotSize)
}

// SlotSize is the largest block the cache holds.
func (c *Cache) SlotSize() int { return c.slotSize }

// Lookup pins k's block and returns it, or says it is not cached. A
// pinned block must be released. A hit moves a block from probation to
// the protected segment (pushing the protected segment's least recently
// used block back to probation when it is full).
func (c *Cache) Lookup(k Key) (Handle, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return Handle{}, false
	}
	e, ok := c.entries[k]
	if !ok {
		c.stats.Misses++
		return Handle{}, false
	}
	c.stats.Hits++
	c.inUse++
	e.pins++
	c.slotLooked[e.slot] = true
	switch {
	case e.protected:
		c.prot.MoveToFront(e.elem)
	case c.protMax == 0:
		c.prob.MoveToFront(e.elem)
	default:
		c.prob.Remove(e.elem)
		e.protected, e.elem = true, c.prot.PushFront(e)
		if c.prot.Len() > c.protMax {
			d := c.prot.Remove(c.prot.Back()).(*entry)
			d.protected, d.elem = false, c.prob.PushFront(d)
		}
	}
	file, off := c.where(e.slot)
	return Handle{e: e, File: file, Off: off, Len: e.n}, true
}

// Release unpins a block returned by Lookup.
func (c *Cache) Release(h Handle) {
	if h.e == nil {
		return
	}
	c.mu.Lock()
	h.e.pins--
	c.inUse--
	err := c.releaseMemoryLocked()
	c.mu.Unlock()
	_ = err // a late teardown has no caller to tell; the process is stopping
}

// Insert puts block k, given as consecutive parts, on probation: it is
// the first to go unless it is read before other blocks push it out. It
// evicts the least recently used unpinned block, probation first, when
// no slot is free, and says whether the block went in (not when it is
// empty, larger than a slot, already cached, or every slot is pinned). A
// failure to write the memfd (out of memory) is returned and nothing is
// kept.
func (c *Cache) Insert(k Key, parts ...[]byte) (bool, error) {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	if n == 0 || n > c.slotSize {
		return false, nil
	}
	slot, reused, ok := c.reserve(k)
	if !ok {
		return false, nil
	}
	err := c.fill(slot, parts, reused)
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.filling, k)
	c.inUse--
	if c.closed {
		_ = c.releaseMemoryLocked()
		return false, nil
	}
	if err != nil {
		c.free = append(c.free, slot) // slotLooked still says whether to punch it
		return false, err
	}
	c.slotLooked[slot] = false // fresh pages, or pages nobody was sent
	e := &entry{key: k, slot: slot, n: n}
	e.elem = c.prob.PushFront(e)
	c.entries[k] = e
	c.stats.Admitted++
	return true, nil
}

// reserve takes a slot for k, evicting when none is free. reused says
// the slot's pages must be replaced, not written over: a reader may have
// handed them to a socket.
func (c *Cache) reserve(k Key) (slot int, reused, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.entries[k]; ok || c.filling[k] || c.closed {
		return 0, false, false
	}
	if len(c.free) > 0 {
		slot = c.free[len(c.free)-1]
		c.free = c.free[:len(c.free)-1]
	} else {
		e := c.victim()
		if e == nil {
			return 0, false, false
		}
		if e.protected {
			c.prot.Remove(e.elem)
		} else {
			c.prob.Remove(e.elem)
		}
		delete(c.entries, e.key)
		c.stats.Evicted++
		slot = e.slot
	}
	reused = c.slotLooked[slot]
	c.filling[k] = true
	c.inUse++
	return slot, reused, true
}

// victim is the least recently used unpinned block, on probation first.
func (c *Cache) victim() *entry {
	for _, l := range []*list.List{&c.prob, &c.prot} {
		for el := l.Back(); el != nil; el = el.Prev() {
			if e := el.Value.(*entry); e.pins == 0 {
				return e
			}
		}
	}
	return nil
}

// fill writes parts into slot. A reused slot whose pages may be on a
// socket is punched out first, so a sendfile still queued keeps the
// bytes it was given; other slots are written over in place. The pages
// are made in one call (MADV_POPULATE_WRITE, which also reports a lack of
// memory as an error rather than a SIGBUS on a fault) and filled through
// the mapping; a kernel without it gets pwrite(2).
func (c *Cache) fill(slot int, parts [][]byte, reused bool) error {
	i, off := c.where(slot)
	if reused {
		if err := unix.Fallocate(int(c.files[i].Fd()), unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, off, int64(c.slotSize)); err != nil {
			return fmt.Errorf("blockcache: free slot: %w", err)
		}
	}
	dst := c.maps[i][off : off+int64(c.slotSize)]
	if !c.noPopulate.Load() {
		err := unix.Madvise(dst, unix.MADV_POPULATE_WRITE)
		if err == nil {
			n := 0
			for _, p := range parts {
				n += copy(dst[n:], p)
			}
			return nil
		}
		if !errors.Is(err, unix.EINVAL) {
			return fmt.Errorf("blockcache: fill slot: %w", err)
		}
		c.noPopulate.Store(true)
	}
	for _, p := range parts {
		if _, err := c.files[i].WriteAt(p, off); err != nil {
			return fmt.Errorf("blockcache: fill slot: %w", err)
		}
		off += int64(len(p))
	}
	return nil
}

// ReadAt copies the pinned block's bytes from within into p.
func (c *Cache) ReadAt(h Handle, p []byte, within int) (int, error) {
	if within < 0 || within+len(p) > h.Len {
		return 0, fmt.Errorf("blockcache: read [%d, %d) of a %d-byte block", within, within+len(p), h.Len)
	}
	return copy(p, c.maps[h.File][h.Off+int64(within):]), nil
}

// Bytes is the pinned block's bytes in the cache's own mapping, valid
// until Release: a writer given them reads the cached bytes where they
// are, with no copy into a buffer first. Nothing may write to them.
func (c *Cache) Bytes(h Handle) []byte {
	return c.maps[h.File][h.Off : h.Off+int64(h.Len) : h.Off+int64(h.Len)]
}

// Files is the number of cache files (Handle.File is below it).
func (c *Cache) Files() int { return len(c.files) }

// OpenFile opens cache file i read-only with a file offset of its own,
// for a reader that sends pinned blocks with sendfile(2) (seek to
// Handle.Off, then copy Handle.Len bytes). The caller closes it.
func (c *Cache) OpenFile(i int) (*os.File, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gone {
		return nil, fmt.Errorf("blockcache: %w", os.ErrClosed)
	}
	f, err := os.Open(fmt.Sprintf("/proc/self/fd/%d", c.files[i].Fd()))
	if err != nil {
		return nil, fmt.Errorf("blockcache: reopen the memfd: %w", err)
	}
	return f, nil
}

// Stats returns the counters so far.
func (c *Cache) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.stats
	s.Slots, s.Used, s.Hot, s.SlotSize = c.slots, len(c.entries), c.prot.Len(), c.slotSize
	return s
}

// Close stops the cache: lookups miss and nothing more comes in. Its
// memory is released now, or when the last pinned block is released and
// the last fill under way ends (a reader still sending must not find its
// mapping gone).
func (c *Cache) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	return c.releaseMemoryLocked()
}

// releaseMemoryLocked unmaps and closes the memfds once the cache is
// closed and nothing uses them.
func (c *Cache) releaseMemoryLocked() error {
	if !c.closed || c.inUse > 0 || c.gone {
		return nil
	}
	c.gone = true
	var err error
	for _, m := range c.maps {
		err = errors.Join(err, unix.Munmap(m))
	}
	for _, f := range c.files {
		err = errors.Join(err, f.Close())
	}
	return err
}
