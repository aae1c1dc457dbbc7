package faultdrive

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"sync"

	"github.com/cairnstore/cairn/objstore/drive"
)

// Drive is a drive.Drive wrapping another with faults and crashes. It is
// safe for concurrent use.
type Drive struct {
	inner drive.Drive
	rules ruleSet

	mu      sync.RWMutex // operations hold it shared; Sync and Crash alone
	crashed bool         // guarded by mu

	filesMu sync.Mutex // protects files
	files   map[fileKey]*file

	openMu sync.Mutex // protects open
	open   map[*handle]bool
}

var _ drive.Drive = (*Drive)(nil)

// New wraps inner.
func New(inner drive.Drive, cfg Config) *Drive {
	d := &Drive{inner: inner, files: map[fileKey]*file{}, open: map[*handle]bool{}}
	d.rules.set(cfg.Rules)
	return d
}

// SetRules replaces the rules (and restarts their call counts).
func (d *Drive) SetRules(rules []Rule) { d.rules.set(rules) }

// Inner returns the wrapped drive.
func (d *Drive) Inner() drive.Drive { return d.inner }

// Index implements drive.Drive.
func (d *Drive) Index() int { return d.inner.Index() }

// String implements drive.Drive.
func (d *Drive) String() string { return "fault:" + d.inner.String() }

// fileKey names a shard file or a pack segment.
type fileKey struct {
	pack bool
	name string // shard name, or drive.PackName of the segment
	seg  uint64
}

func shardKey(name string) fileKey { return fileKey{name: name} }
func packKey(seg uint64) fileKey   { return fileKey{pack: true, name: drive.PackName(seg), seg: seg} }

// file is one file's lock and undo log.
type file struct {
	mu sync.Mutex // serializes the file's changes, their logging and its flushes
	undoLog
}

// undoLog is what a file changed since its last flush.
type undoLog struct {
	dirty   bool    // changed since the last flush; the rest is meaningless when not
	existed bool    // the file existed at the last flush
	size    int64   // its size then
	full    bool    // patches hold the whole flushed content
	patches []patch // the bytes changes overwrote, oldest first, within size
}

type patch struct {
	off int64
	old []byte
}

func (d *Drive) file(k fileKey) *file {
	d.filesMu.Lock()
	defer d.filesMu.Unlock()
	f := d.files[k]
	if f == nil {
		f = &file{}
		d.files[k] = f
	}
	return f
}

// begin starts an operation: it holds d.mu shared until the returned
// function runs, fails after a crash, and applies the matching fault.
func (d *Drive) begin(op Op, names ...string) (end func(), err error) {
	f := d.rules.match(op, names...)
	if err := f.apply(); err != nil {
		return nil, err
	}
	d.mu.RLock()
	if d.crashed {
		d.mu.RUnlock()
		return nil, ErrCrashed
	}
	return d.mu.RUnlock, nil
}

// capture starts the undo log of a file about to change, when it is
// clean: whether it exists, its size and, for a shard file, its whole
// content. A pack segment's whole content is taken only when all is set
// (before it is removed). f.mu is held.
func (d *Drive) capture(ctx context.Context, k fileKey, f *file, all bool) error {
	if !f.dirty {
		f.undoLog = undoLog{dirty: true}
		if !k.pack {
			b, exists, err := d.readShard(ctx, k.name)
			if err != nil {
				return err
			}
			if exists {
				f.existed, f.size, f.full = true, int64(len(b)), true
				f.patches = []patch{{off: 0, old: b}}
			}
			return nil
		}
		p, err := d.inner.OpenPack(ctx, k.seg, false)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		n, err := p.Size()
		_ = p.Close()
		if err != nil {
			return err
		}
		f.existed, f.size = true, n
	}
	if all && f.existed && !f.full {
		b, err := d.readPack(ctx, k.seg, 0, f.size)
		if err != nil {
			return err
		}
		f.patches = append(f.patches, patch{off: 0, old: b})
		f.full = true
	}
	return nil
}

// readShard reads a whole inner shard file; exists is false when absent.
func (d *Drive) readShard(ctx context.Context, name string) (b []byte, exists bool, err error) {
	r, err := d.inner.Open(ctx, name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	defer func() { _ = r.Close() }()
	b, err = io.ReadAll(io.NewSectionReader(r, 0, 1<<62))
	if err != nil {
		return nil, false, fmt.Errorf("faultdrive: read back %s: %w", name, err)
	}
	return b, true, nil
}

// readPack reads n bytes at off of an inner pack segment.
func (d *Drive) readPack(ctx context.Context, seg uint64, off, n int64) ([]byte, error) {
	p, err := d.inner.OpenPack(ctx, seg, false)
	if err != nil {
		return nil, err
	}
	defer func() { _ = p.Close() }()
	b := make([]byte, n)
	if m, err := p.ReadAt(b, off); err != nil && (!errors.Is(err, io.EOF) || int64(m) != n) {
		return nil, fmt.Errorf("faultdrive: read back pack %s: %w", drive.PackName(seg), err)
	}
	return b, nil
}

// logWrite records what a write of n bytes at off overwrites within the
// flushed size of a pack segment (a shard file's log holds its whole
// content from the start). f.mu is held and the file captured.
func (d *Drive) logWrite(ctx context.Context, k fileKey, f *file, off int64, n int) error {
	if !f.existed || f.full || off >= f.size {
		return nil // nothing flushed is overwritten, or the log has it all
	}
	b, err := d.readPack(ctx, k.seg, off, min(off+int64(n), f.size)-off)
	if err != nil {
		return err
	}
	f.patches = append(f.patches, patch{off: off, old: b})
	return nil
}

// flushed forgets the logs of files a flush covered.
func (d *Drive) flushed(fs []*file) {
	for _, f := range fs {
		f.undoLog = undoLog{}
	}
}

// handle is an open inner handle, closed by Crash.
type handle struct {
	close func()
}

func (d *Drive) track(close func()) *handle {
	h := &handle{close: close}
	d.openMu.Lock()
	d.open[h] = true
	d.openMu.Unlock()
	return h
}

func (d *Drive) untrack(h *handle) {
	d.openMu.Lock()
	delete(d.open, h)
	d.openMu.Unlock()
}

// Crash simulates a power loss of d (see Crash).
func (d *Drive) Crash(ctx context.Context) error { return Crash(ctx, d) }

// Crash simulates a power loss of all the drives at one instant: it waits
// for the operations in flight, then undoes on each inner drive every
// change no flush covered, closes the handles still open and makes every
// drive refuse all operations with ErrCrashed. The inner drives then hold
// what a machine would find after the power came back.
func Crash(ctx context.Context, drives ...*Drive) error {
	seen := map[*Drive]bool{}
	drives = slices.DeleteFunc(slices.Clone(drives), func(d *Drive) bool {
		dup := seen[d]
		seen[d] = true
		return dup
	})
	for _, d := range drives {
		d.mu.Lock()
	}
	var errs []error
	for _, d := range drives {
		if !d.crashed {
			d.crashed = true
			errs = append(errs, d.undo(ctx))
		}
	}
	for _, d := range drives {
		d.mu.Unlock()
	}
	return errors.Join(errs...)
}

// undo closes the open handles and plays the logs back. d.mu is held
// alone.
func (d *Drive) undo(ctx context.Context) error {
	d.openMu.Lock()
	for h := range d.open {
		h.close()
	}
	clear(d.open)
	d.openMu.Unlock()
	d.filesMu.Lock()
	defer d.filesMu.Unlock()
	var errs []error
	for k, f := range d.files {
		if f.dirty {
			errs = append(errs, d.restore(ctx, k, f))
		}
	}
	clear(d.files)
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("faultdrive %d: crash: %w", d.Index(), err)
	}
	return d.inner.Sync(ctx)
}

// restore puts a file back as it was at its last flush.
func (d *Drive) restore(ctx context.Context, k fileKey, f *file) error {
	if !f.existed {
		if k.pack {
			return d.inner.RemovePack(ctx, k.seg)
		}
		return d.inner.Remove(ctx, k.name)
	}
	var b []byte
	if f.full {
		b = make([]byte, f.size)
	} else {
		var err error
		if b, err = d.readPack(ctx, k.seg, 0, f.size); err != nil {
			return err
		}
	}
	for _, p := range slices.Backward(f.patches) {
		copy(b[p.off:], p.old)
	}
	if k.pack {
		if err := d.inner.RemovePack(ctx, k.seg); err != nil {
			return err
		}
		pf, err := d.inner.OpenPack(ctx, k.seg, true)
		if err != nil {
			return err
		}
		_, err = pf.WriteAt(b, 0)
		return errors.Join(err, pf.Close())
	}
	w, err := d.inner.Create(ctx, k.name)
	if err != nil {
		return err
	}
	if _, err := w.WriteAt(b, 0); err != nil {
		w.Abort()
		return err
	}
	return w.Close()
}
