package fs

// In-place writes to a stored file (phasePatched): the changed byte
// ranges only, over the version the writer opened, committed as a patch
// (objstore.PatchAsync) that shares the rest of that version's data.

import (
	"context"
	"errors"
	"fmt"
	"sort"

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
	ws.ranges = nil
	return ws.moveTo(phasePatched)
}

// growPatchedLocked prepares the size to grow to size: base bytes past
// the current size (cut by an earlier truncation) must read as zeros
// now, so that range becomes a changed one, a hole of the staging file.
// The staging file never holds bytes at or past the size (truncations
// cut it too), so the hole is zeros.
func (n *fileNode) growPatchedLocked(size int64) error {
	ws := n.ws
	top := min(size, ws.base.Size())
	if top <= ws.size {
		return nil
	}
	if err := ws.stage.Truncate(top); err != nil {
		return fmt.Errorf("zero %s past its old end: %w", n.Path(nil), err)
	}
	ws.ranges = ws.ranges.add(ws.size, top-ws.size)
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
	ws.ranges = ws.ranges.add(off, int64(w))
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
	ws.size = size
	return nil
}

// content is what a patched file holds: the changed ranges from the
// staging file over the base (zeros past its size).
func (ws *writeState) content() objstore.Patch {
	return objstore.Patch{Base: ws.base, Size: ws.size, Dirty: ws.ranges, Src: ws.stage}
}

// commitPatchedLocked starts the background patch of what changed since
// the base. Its staging file and base stay as they are until it is done
// (ws.inflight); rebaseLocked then makes the committed version the base.
func (n *fileNode) commitPatchedLocked(ctx context.Context, bucket, key string, opt objstore.PutOptions) (*objstore.Pending, error) {
	ws := n.ws
	pend, err := n.fsys.store.PatchAsync(ctx, bucket, key, ws.content(), opt)
	if err != nil {
		return nil, err
	}
	ws.patched = pend
	return pend, nil
}

// rebaseLocked, once the last patch is committed and nothing reads the
// staging file, makes the committed version the base and forgets the
// changed ranges, so that the next commit writes only what changes from
// here (a file fsynced every few writes does not rewrite all it wrote
// since its open at each fsync). When the version cannot be opened as
// committed (replaced or removed since), the state keeps its base and
// ranges: they still describe the content.
func (n *fileNode) rebaseLocked(ctx context.Context) {
	ws := n.ws
	pend := ws.patched
	if ws.phase != phasePatched || pend == nil || ws.inflight != nil || ws.dirty {
		return
	}
	ws.patched = nil
	info, err := pend.Wait(ctx)
	if err != nil {
		return // the commit failed: fsync reports it; the ranges stand
	}
	bucket, key := n.key()
	r, err := n.fsys.openReader(ctx, bucket, key, objstore.GetOptions{VersionID: info.VersionID})
	if err != nil {
		if !errors.Is(err, objstore.ErrNoSuchKey) && !errors.Is(err, objstore.ErrNoSuchVersion) {
			n.fsys.log.Warn().Err(err).Str("path", n.Path(nil)).Msg("cannot reopen the committed version; the next commit writes what changed since the open")
		}
		return
	}
	if r.Info().ETag != info.ETag || r.Size() != ws.size {
		_ = r.Close()
		return
	}
	if err := ws.stage.Truncate(0); err != nil {
		_ = r.Close()
		return
	}
	_ = ws.base.Close()
	ws.base, ws.ranges = r, nil
}
