package fs

// In-place writes to a stored file (phasePatched): the changed byte
// ranges only, over the version the writer opened, committed as a patch
// (objstore.PatchAsync) that shares the rest of that version's data.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"time"

	"github.com/cairnstore/cairn/objstore"
)

// patchMin is the size from which an existing file opened for writing is
// patched rather than staged whole: below it, copying the file to a
// staging file costs less than the patch's extra segments.
const patchMin = bufMax

// rangeSet is a sorted set of disjoint, non-touching byte ranges.
type rangeSet []objstore.Range

// add puts [off, off+n) in the set, merging what it touches.
func (rs rangeSet) add(off, n int64) rangeSet {
	if n <= 0 {
		return rs
	}
	end := off + n
	// The first range that ends at or past off, and the first that
	// starts past end: those between merge with the new one.
	i := sort.Search(len(rs), func(i int) bool { return rs[i].End() >= off })
	j := sort.Search(len(rs), func(j int) bool { return rs[j].Offset > end })
	if i < j {
		off = min(off, rs[i].Offset)
		end = max(end, rs[j-1].End())
	}
	merged := objstore.Range{Offset: off, Length: end - off}
	out := append(rs[:i:i], merged)
	return append(out, rs[j:]...)
}

// clip drops what the set holds at or past size.
func (rs rangeSet) clip(size int64) rangeSet {
	i := sort.Search(len(rs), func(i int) bool { return rs[i].End() > size })
	if i < len(rs) && rs[i].Offset < size {
		rs[i].Length = size - rs[i].Offset
		i++
	}
	return rs[:i]
}

// patchable says whether a file in phaseBase may be patched: its base is
// readable (not ciphertext) and large enough to be worth it.
func (ws *writeState) patchable() bool {
	return ws.phase == phaseBase && !ws.sealed && ws.base != nil && ws.base.Size() > patchMin
}

// patchLocked moves a patchable state to phasePatched: an empty sparse
// staging file for the changed ranges, the base kept. Nothing is copied.
func (n *fileNode) patchLocked() error {
	ws := n.ws
	if err := ws.checkMove(phasePatched); err != nil {
		return err
	}
	ref, err := n.fsys.stages.get()
	if err != nil {
		return err
	}
	ws.stage, ws.stageRef = ref.f, ref
	ws.ranges, ws.since = nil, nil
	return ws.moveTo(phasePatched)
}

// growPatchedLocked prepares the size to grow to size: base bytes past
// the current size (cut by an earlier truncation) must read as zeros
// now, so that range becomes a changed one, a hole of the staging file.
// The staging file never holds bytes at or past the size (truncations
// cut it too), so the hole is zeros. Since the last snapshot the whole
// growth is a changed range: the version that snapshot makes, the next
// base, may hold bytes there.
func (n *fileNode) growPatchedLocked(size int64) error {
	ws := n.ws
	if size <= ws.size {
		return nil
	}
	if err := ws.stage.Truncate(size); err != nil {
		return fmt.Errorf("zero %s past its old end: %w", n.Path(nil), err)
	}
	if top := min(size, ws.base.Size()); top > ws.size {
		ws.ranges = ws.ranges.add(ws.size, top-ws.size)
	}
	ws.since = ws.since.add(ws.size, size-ws.size)
	return nil
}

// writePatchedLocked writes p at off: to the staging file, as a changed
// range.
func (n *fileNode) writePatchedLocked(p []byte, off int64) (int, error) {
	ws := n.ws
	end := off + int64(len(p))
	if end > ws.size {
		if err := n.growPatchedLocked(off); err != nil {
			return 0, err
		}
	}
	w, err := ws.stage.WriteAt(p, off)
	ws.stagedBytes += int64(w)
	ws.ranges = ws.ranges.add(off, int64(w))
	ws.since = ws.since.add(off, int64(w))
	if e := off + int64(w); e > ws.size {
		ws.size = e
	}
	return w, err
}

// truncatePatchedLocked sets the size of a patched file.
func (n *fileNode) truncatePatchedLocked(size int64) error {
	ws := n.ws
	if size > ws.size {
		if err := n.growPatchedLocked(size); err != nil {
			return err
		}
		ws.size = size
		return nil
	}
	if err := ws.stage.Truncate(size); err != nil {
		return fmt.Errorf("truncate %s: %w", n.Path(nil), err)
	}
	ws.ranges = ws.ranges.clip(size)
	ws.since = ws.since.clip(size)
	ws.size = size
	return nil
}

// content is what a patched file holds: the changed ranges from the
// staging file over the base (zeros past its size).
func (ws *writeState) content() objstore.Patch {
	return objstore.Patch{Base: ws.base, Size: ws.size, Dirty: ws.ranges, Src: ws.stage}
}

// stageTrim is how many bytes a patched file's staging file takes before
// a rebase with nothing changed since the snapshot swaps it for an empty
// one.
const stageTrim = 64 << 20

// heldDelay bounds how long a patched file's commit is held back for
// more changes (a file closed and opened again, as an editor, a log
// writer or a test harness do, makes one version of many closes).
const heldDelay = time.Second

// snapMax is how many changed bytes a patch's snapshot copies to memory,
// so that the file may change on while the patch is written; a larger
// patch reads the staging file, and the next change waits for it.
const snapMax = 16 << 20

// heldPatch is a patched file's commit, pending in the store (its key's
// readers wait for it) from a flush on, whose content is taken only when
// it is let go (letGoLocked): at fsync, at the last release when the
// file is not kept (parkLocked), after heldDelay, or when something
// waits for it (objstore.PutOptions.OnWait). Closes meanwhile add to it.
type heldPatch struct {
	ready chan struct{} // closed when p (or err) is set
	p     objstore.Patch
	meta  map[string]string
	err   error
	pend  *objstore.Pending
	timer *time.Timer
}

// commitPatchedLocked commits a patched file: it registers a held patch
// unless one is held already, and lets it go at once when final. It
// returns the pending put that will hold the content.
func (n *fileNode) commitPatchedLocked(ctx context.Context, bucket, key string, opt objstore.PutOptions, final bool) (*objstore.Pending, error) {
	ws := n.ws
	if ws.held == nil {
		h := &heldPatch{ready: make(chan struct{})}
		src := func(ctx context.Context) (objstore.Patch, error) {
			select {
			case <-h.ready:
			case <-ctx.Done():
				return objstore.Patch{}, ctx.Err()
			}
			return h.p, h.err
		}
		opt.Meta = nil
		opt.FinalMeta = func(m map[string]string) { maps.Copy(m, h.meta) }
		opt.OnWait = func() { n.letGo(ws, h) }
		n.fsys.self.expect(bucket, key)
		pend, err := n.fsys.store.PatchFuncAsync(ctx, bucket, key, src, opt)
		if err != nil {
			n.fsys.self.cancel(bucket, key)
			return nil, err
		}
		h.pend = pend
		h.timer = time.AfterFunc(heldDelay, func() { n.letGo(ws, h) })
		ws.held = h
	}
	pend := ws.held.pend
	if final {
		n.letGoLocked(ws)
	}
	return pend, nil
}

// letGo lets ws's held patch h go, unless it went already.
func (n *fileNode) letGo(ws *writeState, h *heldPatch) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if ws.held == h {
		n.letGoLocked(ws)
	}
}

// letGoLocked gives ws's held patch the content as it is now (or fails
// it: the file was removed, or a write failed). The changed bytes are
// copied (snapshot), so that writes go on while the patch is written.
func (n *fileNode) letGoLocked(ws *writeState) {
	h := ws.held
	ws.held = nil
	h.timer.Stop()
	defer close(h.ready)
	switch {
	case ws.failed != nil:
		h.err = ws.failed
		return
	case n.unlinked || !n.attached():
		h.err = fmt.Errorf("%w: %s was removed while written", objstore.ErrIncompleteBody, n.Path(nil))
		return
	}
	n.rebaseLocked(ws)
	p, copied, err := ws.snapshot()
	if err != nil {
		h.err = fmt.Errorf("commit %s: %w", n.Path(nil), err)
		return
	}
	h.p = p
	h.meta = withAttrs(ws.meta, ws.attrs)
	ws.meta = h.meta
	ws.since = nil
	ws.patched = h.pend
	if !copied {
		ws.inflight = h.pend // the patch reads the staging file
	}
	ws.dirty, ws.metaDirty = false, false
	n.pendingAttrs = ws.attrs
	n.pendingAttrs.size = ws.size
}

// snapshot is the content as a patch over the base, its changed bytes
// copied to memory when they are at most snapMax (copied); else the
// patch reads them from the staging file.
func (ws *writeState) snapshot() (objstore.Patch, bool, error) {
	p := ws.content()
	p.Dirty = slices.Clone(ws.ranges)
	var total int64
	for _, r := range p.Dirty {
		total += r.Length
	}
	if total > snapMax {
		return p, false, nil
	}
	rb := &rangeBytes{ranges: p.Dirty, buf: make([]byte, total), at: make([]int64, len(p.Dirty))}
	off := int64(0)
	for i, r := range p.Dirty {
		rb.at[i] = off
		if _, err := ws.stage.ReadAt(rb.buf[off:off+r.Length], r.Offset); err != nil && !errors.Is(err, io.EOF) {
			return objstore.Patch{}, false, err
		}
		off += r.Length
	}
	p.Src = rb
	return p, true, nil
}

// rangeBytes holds the bytes of ranges one after another in buf (range
// i's from at[i]): an io.ReaderAt of those ranges at their own offsets.
type rangeBytes struct {
	ranges []objstore.Range
	buf    []byte
	at     []int64
}

// ReadAt reads within one of the ranges.
func (rb *rangeBytes) ReadAt(p []byte, off int64) (int, error) {
	i := sort.Search(len(rb.ranges), func(i int) bool { return rb.ranges[i].End() > off })
	if i == len(rb.ranges) || rb.ranges[i].Offset > off {
		return 0, fmt.Errorf("read at %d: %w", off, io.ErrUnexpectedEOF)
	}
	pos := rb.at[i] + off - rb.ranges[i].Offset
	n := copy(p, rb.buf[pos:pos+rb.ranges[i].End()-off])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// rebaseLocked, once the last patch let go is committed and nothing
// reads the staging file, makes the version it made the base and the
// ranges changed since its snapshot the changed ranges, so that the next
// commit writes only what changed from there (a file fsynced every few
// writes does not rewrite all it wrote since its open at each fsync).
// It never waits: with the patch still on its way, the state keeps its
// base and ranges, which still describe the content. So it does when the
// version cannot be opened as committed (replaced or removed since).
func (n *fileNode) rebaseLocked(ws *writeState) {
	pend := ws.patched
	if ws.phase != phasePatched || pend == nil || ws.inflight != nil {
		return
	}
	select {
	case <-pend.Done():
	default:
		return
	}
	ws.patched = nil
	info, err := pend.Wait(context.Background())
	if err != nil {
		return // the commit failed: fsync reports it; the ranges stand
	}
	// Derived from the base and the patch (the cost of the change), or
	// else read again. Committed: a newer held patch of this file may be
	// pending, which waits for this very state.
	r, err := n.fsys.store.Rebase(context.Background(), ws.base, pend)
	if err != nil {
		n.fsys.log.Debug().Err(err).Str("path", n.Path(nil)).Msg("rebase refused; reopening the committed version")
		if r, err = n.reopenCommitted(info); err != nil {
			return
		}
	}
	if len(ws.since) == 0 && ws.stagedBytes >= stageTrim {
		// Space only: what the staging file holds outside the changed
		// ranges is never read. The state moves to an empty staging file
		// and the old one is emptied off the node's lock: freeing the
		// blocks of a sparse file scattered with small writes takes
		// up to a second.
		if ref, err := n.fsys.stages.get(); err == nil {
			old := ws.stageRef
			ws.stage, ws.stageRef, ws.stagedBytes = ref.f, ref, 0
			go old.release()
		}
	}
	_ = ws.base.Close()
	ws.base, ws.ranges = r, slices.Clone(ws.since)
}

// reopenCommitted opens the version a patch committed, nil when it is
// no longer there as committed.
func (n *fileNode) reopenCommitted(info objstore.ObjectInfo) (*objstore.ObjectReader, error) {
	bucket, key := n.key()
	r, err := n.fsys.store.Open(context.Background(), bucket, key, objstore.GetOptions{VersionID: info.VersionID, Committed: true})
	if err != nil {
		if !errors.Is(err, objstore.ErrNoSuchKey) && !errors.Is(err, objstore.ErrNoSuchVersion) {
			n.fsys.log.Warn().Err(err).Str("path", n.Path(nil)).Msg("cannot reopen the committed version; the next commit writes what changed since the open")
		}
		return nil, err
	}
	if r.Info().ETag != info.ETag {
		_ = r.Close()
		return nil, fmt.Errorf("%s: replaced since its commit", n.Path(nil))
	}
	return r, nil
}
