package faultdrive

import (
	"context"
	"slices"

	"github.com/cairnstore/cairn/objstore/drive"
)

// change runs fn, a change to file k, under the file's lock after
// capturing its undo log (all: its whole content, see capture).
func (d *Drive) change(ctx context.Context, k fileKey, all bool, fn func() error) error {
	f := d.file(k)
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := d.capture(ctx, k, f, all); err != nil {
		return err
	}
	return fn()
}

// Create implements drive.Drive.
func (d *Drive) Create(ctx context.Context, name string) (drive.ShardWriter, error) {
	if err := drive.CheckName(name); err != nil {
		return nil, err
	}
	end, err := d.begin(OpCreate, name)
	if err != nil {
		return nil, err
	}
	defer end()
	var w drive.ShardWriter
	err = d.change(ctx, shardKey(name), false, func() error {
		var err error
		w, err = d.inner.Create(ctx, name)
		return err
	})
	if err != nil {
		return nil, err
	}
	sw := &shardWriter{d: d, ctx: ctx, name: name, w: w}
	sw.h = d.track(w.Abort)
	return sw, nil
}

type shardWriter struct {
	d    *Drive
	ctx  context.Context
	name string
	w    drive.ShardWriter
	h    *handle
}

func (w *shardWriter) WriteAt(p []byte, off int64) (int, error) {
	return w.d.write(w.ctx, shardKey(w.name), w.w, p, off)
}

// write is a handle's WriteAt: faults, then the write, logged.
func (d *Drive) write(ctx context.Context, k fileKey, w interface {
	WriteAt([]byte, int64) (int, error)
}, p []byte, off int64) (int, error) {
	f := d.rules.match(OpWrite, k.name)
	if f.short {
		p = p[:len(p)/2]
	}
	if err := f.apply(); err != nil && !f.short {
		return 0, err
	}
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.crashed {
		return 0, ErrCrashed
	}
	var n int
	err := d.change(ctx, k, false, func() error {
		if k.pack {
			if err := d.logWrite(ctx, k, d.file(k), off, len(p)); err != nil {
				return err
			}
		}
		var err error
		n, err = w.WriteAt(p, off)
		return err
	})
	if err == nil && f.short {
		err = f.err
	}
	return n, err
}

func (w *shardWriter) Close() error {
	end, err := w.d.begin(OpClose, w.name)
	if err != nil {
		w.Abort()
		return err
	}
	defer end()
	w.d.untrack(w.h)
	// Closing may write bytes the writer held back.
	return w.d.change(w.ctx, shardKey(w.name), false, w.w.Close)
}

func (w *shardWriter) Abort() {
	w.d.untrack(w.h)
	w.w.Abort()
}

// Open implements drive.Drive.
func (d *Drive) Open(ctx context.Context, name string) (drive.ShardReader, error) {
	if err := drive.CheckName(name); err != nil {
		return nil, err
	}
	end, err := d.begin(OpOpen, name)
	if err != nil {
		return nil, err
	}
	defer end()
	r, err := d.inner.Open(ctx, name)
	if err != nil {
		return nil, err
	}
	sr := &reader{d: d, name: name, r: r}
	sr.h = d.track(func() { _ = r.Close() })
	return sr, nil
}

type reader struct {
	d    *Drive
	name string
	r    interface {
		ReadAt([]byte, int64) (int, error)
		Close() error
	}
	h *handle
}

func (r *reader) ReadAt(p []byte, off int64) (int, error) {
	end, err := r.d.begin(OpRead, r.name)
	if err != nil {
		return 0, err
	}
	defer end()
	return r.r.ReadAt(p, off)
}

func (r *reader) Close() error {
	r.d.untrack(r.h)
	return r.r.Close()
}

// Remove implements drive.Drive.
func (d *Drive) Remove(ctx context.Context, name string) error {
	if err := drive.CheckName(name); err != nil {
		return err
	}
	end, err := d.begin(OpRemove, name)
	if err != nil {
		return err
	}
	defer end()
	return d.change(ctx, shardKey(name), true, func() error { return d.inner.Remove(ctx, name) })
}

// Stage implements drive.Drive. The staged file itself is not logged: a
// crash before Commit leaves the old shard, and the inner drive's staging
// area holds nothing a reopened drive keeps.
func (d *Drive) Stage(ctx context.Context, name string) (drive.StagedFile, error) {
	if err := drive.CheckName(name); err != nil {
		return nil, err
	}
	end, err := d.begin(OpStage, name)
	if err != nil {
		return nil, err
	}
	defer end()
	st, err := d.inner.Stage(ctx, name)
	if err != nil {
		return nil, err
	}
	s := &staged{d: d, name: name, st: st}
	s.h = d.track(st.Abort)
	return s, nil
}

type staged struct {
	d    *Drive
	name string
	st   drive.StagedFile
	h    *handle
}

func (s *staged) WriteAt(p []byte, off int64) (int, error) {
	f := s.d.rules.match(OpWrite, s.name)
	if f.short {
		p = p[:len(p)/2]
	}
	if err := f.apply(); err != nil && !f.short {
		return 0, err
	}
	s.d.mu.RLock()
	defer s.d.mu.RUnlock()
	if s.d.crashed {
		return 0, ErrCrashed
	}
	n, err := s.st.WriteAt(p, off)
	if err == nil && f.short {
		err = f.err
	}
	return n, err
}

// Commit is durable on return, so it ends the shard's undo log.
func (s *staged) Commit() error {
	end, err := s.d.begin(OpCommit, s.name)
	if err != nil {
		s.Abort()
		return err
	}
	defer end()
	s.d.untrack(s.h)
	f := s.d.file(shardKey(s.name))
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := s.st.Commit(); err != nil {
		// The rename may or may not have happened: keep the log, which
		// restores the old shard either way.
		return err
	}
	s.d.flushed([]*file{f})
	return nil
}

func (s *staged) Abort() {
	s.d.untrack(s.h)
	s.st.Abort()
}

// Walk implements drive.Drive.
func (d *Drive) Walk(ctx context.Context, fn func(name string) error) error {
	end, err := d.begin(OpWalk)
	if err != nil {
		return err
	}
	defer end()
	return d.inner.Walk(ctx, fn)
}

// OpenPack implements drive.Drive.
func (d *Drive) OpenPack(ctx context.Context, seg uint64, create bool) (drive.PackFile, error) {
	k := packKey(seg)
	end, err := d.begin(OpOpenPack, k.name)
	if err != nil {
		return nil, err
	}
	defer end()
	var p drive.PackFile
	open := func() error {
		var err error
		p, err = d.inner.OpenPack(ctx, seg, create)
		return err
	}
	if create {
		err = d.change(ctx, k, false, open)
	} else {
		err = open()
	}
	if err != nil {
		return nil, err
	}
	pf := &packFile{d: d, ctx: ctx, k: k, p: p}
	pf.h = d.track(func() { _ = p.Close() })
	return pf, nil
}

type packFile struct {
	d   *Drive
	ctx context.Context
	k   fileKey
	p   drive.PackFile
	h   *handle
}

func (p *packFile) ReadAt(b []byte, off int64) (int, error) {
	end, err := p.d.begin(OpRead, p.k.name)
	if err != nil {
		return 0, err
	}
	defer end()
	return p.p.ReadAt(b, off)
}

func (p *packFile) WriteAt(b []byte, off int64) (int, error) {
	return p.d.write(p.ctx, p.k, p.p, b, off)
}

func (p *packFile) Size() (int64, error) {
	end, err := p.d.begin(OpRead, p.k.name)
	if err != nil {
		return 0, err
	}
	defer end()
	return p.p.Size()
}

func (p *packFile) Close() error {
	p.d.untrack(p.h)
	return p.p.Close()
}

// RemovePack implements drive.Drive.
func (d *Drive) RemovePack(ctx context.Context, seg uint64) error {
	k := packKey(seg)
	end, err := d.begin(OpRemovePack, k.name)
	if err != nil {
		return err
	}
	defer end()
	return d.change(ctx, k, true, func() error { return d.inner.RemovePack(ctx, seg) })
}

// Packs implements drive.Drive.
func (d *Drive) Packs(ctx context.Context) ([]uint64, error) {
	end, err := d.begin(OpPacks)
	if err != nil {
		return nil, err
	}
	defer end()
	return d.inner.Packs(ctx)
}

// Sync implements drive.Drive: it waits for the changes in flight and
// ends every undo log once the inner drive synced.
func (d *Drive) Sync(ctx context.Context) error {
	f := d.rules.match(OpSync)
	if err := f.apply(); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.crashed {
		return ErrCrashed
	}
	if err := d.inner.Sync(ctx); err != nil {
		return err
	}
	d.filesMu.Lock()
	clear(d.files)
	d.filesMu.Unlock()
	return nil
}

// SyncFiles implements drive.Drive: the files' changes wait while the
// inner drive flushes them, and their logs end when it did.
func (d *Drive) SyncFiles(ctx context.Context, names []string) error {
	for _, n := range names {
		if err := drive.CheckName(n); err != nil {
			return err
		}
	}
	keys := make([]fileKey, len(names))
	for i, n := range names {
		keys[i] = shardKey(n)
	}
	return d.syncKeys(ctx, OpSyncFiles, names, keys, func() error { return d.inner.SyncFiles(ctx, names) })
}

// SyncPacks implements drive.Drive like SyncFiles.
func (d *Drive) SyncPacks(ctx context.Context, segs []uint64) error {
	keys := make([]fileKey, len(segs))
	names := make([]string, len(segs))
	for i, seg := range segs {
		keys[i] = packKey(seg)
		names[i] = keys[i].name
	}
	return d.syncKeys(ctx, OpSyncPacks, names, keys, func() error { return d.inner.SyncPacks(ctx, segs) })
}

func (d *Drive) syncKeys(ctx context.Context, op Op, names []string, keys []fileKey, sync func() error) error {
	end, err := d.begin(op, names...)
	if err != nil {
		return err
	}
	defer end()
	if err := ctx.Err(); err != nil {
		return err
	}
	slices.SortFunc(keys, func(a, b fileKey) int {
		switch {
		case a.name < b.name:
			return -1
		case a.name > b.name:
			return 1
		}
		return 0
	})
	keys = slices.Compact(keys)
	fs := make([]*file, len(keys))
	for i, k := range keys {
		fs[i] = d.file(k)
		fs[i].mu.Lock()
	}
	defer func() {
		for _, f := range fs {
			f.mu.Unlock()
		}
	}()
	if err := sync(); err != nil {
		return err
	}
	d.flushed(fs)
	return nil
}
