package fs

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// stagePoolMax is how many empty staging files the mount keeps for
// reuse: creating and freeing an inode per small file written costs more
// than the write itself. A file is in use from its create until its
// background put has read it, some 10-60 ms, so a burst of small files
// (cp -r) keeps a few hundred in use at once.
const stagePoolMax = 512

// stageReserve is how many empty staging files a goroutine keeps made in
// advance, so that a create finds one instead of allocating an inode on
// the way (ext4's inode allocator takes ~100 us, serialised behind the
// journal); it refills when fewer remain than half of it.
const stageReserve = 128

// staged is a staging file with the references that keep it: the write
// state, and the handles the kernel passes through to it. The last
// release empties it and puts it back in the pool.
type staged struct {
	f    *os.File
	refs atomic.Int32
	pool *stagePool
}

func (s *staged) hold() *staged {
	s.refs.Add(1)
	return s
}

func (s *staged) release() {
	if s.refs.Add(-1) == 0 {
		s.pool.put(s.f)
	}
}

// stagePool makes staging files under dir and keeps emptied ones.
type stagePool struct {
	dir string

	mu      sync.Mutex // protects free, seq, closed and filling
	free    []*os.File
	seq     uint64
	closed  bool
	filling bool // a refill goroutine runs
}

// refillLocked starts a goroutine that makes staging files until
// stageReserve are free, unless one runs or enough are free.
func (p *stagePool) refillLocked() {
	if p.closed || p.filling || len(p.free) >= stageReserve/2 {
		return
	}
	p.filling = true
	go p.refill()
}

func (p *stagePool) refill() {
	for {
		p.mu.Lock()
		if p.closed || len(p.free) >= stageReserve {
			p.filling = false
			p.mu.Unlock()
			return
		}
		p.seq++
		seq := p.seq
		p.mu.Unlock()
		f, err := p.create(seq)
		p.mu.Lock()
		if err != nil || p.closed {
			p.filling = false
			p.mu.Unlock()
			if f != nil {
				_ = f.Close()
			}
			return // get makes its own and reports the error
		}
		p.free = append(p.free, f)
		p.mu.Unlock()
	}
}

// start makes the first reserve in the background.
func (p *stagePool) start() {
	p.mu.Lock()
	p.refillLocked()
	p.mu.Unlock()
}

// get returns an empty staging file, held once.
func (p *stagePool) get() (*staged, error) {
	p.mu.Lock()
	var f *os.File
	if n := len(p.free); n > 0 {
		f, p.free = p.free[n-1], p.free[:n-1]
	}
	p.refillLocked()
	p.seq++
	seq := p.seq
	p.mu.Unlock()
	if f == nil {
		var err error
		if f, err = p.create(seq); err != nil {
			return nil, err
		}
	}
	s := &staged{f: f, pool: p}
	s.refs.Store(1)
	return s, nil
}

// create makes a staging file. An O_TMPFILE file has no name: one call,
// and a crash leaves nothing to sweep. Filesystems without it get a
// named file, unlinked at once.
func (p *stagePool) create(seq uint64) (*os.File, error) {
	fd, err := unix.Open(p.dir, unix.O_RDWR|unix.O_TMPFILE|unix.O_CLOEXEC, 0o600)
	if err == nil {
		return os.NewFile(uintptr(fd), filepath.Join(p.dir, "(staging)")), nil
	}
	name := filepath.Join(p.dir, fmt.Sprintf("stage-%d-%d", os.Getpid(), seq))
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("staging file: %w", err)
	}
	if err := os.Remove(name); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("staging file: %w", err)
	}
	return f, nil
}

// stageReuseMax is the largest staging file the pool empties and keeps.
// A larger one is closed: writing a large file again into an emptied
// staging file that held one ran at 1.3-1.5 GB/s here against 4.3-5.2
// into a fresh one (the same `rm; dd` of 1 GiB repeated on one mount),
// and a fresh file costs nothing next to a large write.
const stageReuseMax = 1 << 20

// put empties f and keeps it, or closes it when the pool is full or f
// held more than stageReuseMax.
func (p *stagePool) put(f *os.File) {
	p.mu.Lock()
	full := p.closed || len(p.free) >= stagePoolMax
	p.mu.Unlock()
	if fi, err := f.Stat(); err != nil || fi.Size() > stageReuseMax {
		// Freed here, not where the kernel drops its last reference
		// (go-fuse unregisters a backing file under a global lock).
		_ = f.Truncate(0)
		full = true
	}
	if full {
		_ = f.Close()
		return
	}
	if err := f.Truncate(0); err != nil {
		_ = f.Close()
		return
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		_ = f.Close()
		return
	}
	p.mu.Lock()
	if !p.closed && len(p.free) < stagePoolMax {
		p.free = append(p.free, f)
		f = nil
	}
	p.mu.Unlock()
	if f != nil {
		_ = f.Close()
	}
}

// drain closes the kept files.
func (p *stagePool) drain() {
	p.mu.Lock()
	free := p.free
	p.free, p.closed = nil, true
	p.mu.Unlock()
	for _, f := range free {
		_ = f.Close()
	}
}
