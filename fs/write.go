package fs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"

	"github.com/cairnstore/cairn/objstore"
)

// bufMax is how much of a file the mount keeps in memory: a file written
// from empty stays in a buffer until it outgrows it (small files never
// touch a staging file), then moves to a staging file.
const bufMax = 128 << 10

// writeState is the content of a file being written, shared by its
// writable handles. Its phase says where the content lives (phase.go):
// still the base version (nothing changed yet), a buffer (a file written
// from empty, while small), or a staging file written through the mount,
// by the kernel itself (passthrough), or held for a gated put, or the
// base with the changed ranges in a sparse staging file (patched). base
// is set only in phaseBase and phasePatched, buf used only in
// phaseBuffered, stage and stageRef set exactly when onStage or patched,
// ranges and patched used only in phasePatched, gate set exactly in
// phaseGated.
type writeState struct {
	phase writePhase             // changed only by moveTo
	base  *objstore.ObjectReader // the version the writes start from, in phaseBase and phasePatched
	// sealed: base is ciphertext (objstore.Encrypted), whose bytes are
	// never read (errEncrypted); only replacing the whole content, a
	// truncation to 0 first, goes on.
	sealed   bool
	buf      []byte   // the content, in phaseBuffered
	stage    *os.File // the content, once staged (onStage)
	stageRef *staged  // stage's reference
	// ranges are the byte ranges changed since base, in phasePatched:
	// their bytes are in stage at the same offsets.
	ranges rangeSet
	// since are the ranges changed since the last patch's snapshot, in
	// phasePatched: the changed ranges once the state rebases on the
	// version that patch made.
	since rangeSet
	// stagedBytes counts the bytes written to stage since it was last
	// emptied, in phasePatched (see stageTrim).
	stagedBytes int64
	// patched is the last patch let go in phasePatched, until the state
	// rebases on the version it made (rebaseLocked); it reads base.
	patched *objstore.Pending
	// held is a patch registered at a flush and held back for more
	// changes (patch.go), in phasePatched only.
	held *heldPatch
	// parked: kept after its last release, for a writer opening the file
	// again soon (fileNode.idle, parkLocked); the key it was kept for.
	parkedAt    string
	parkedTimer *time.Timer
	size        int64
	attrs       attrs
	// contentType and meta are carried over from the version written over.
	contentType string
	meta        map[string]string
	dirty       bool // the content differs from the store's
	metaDirty   bool // attributes or metadata differ from the store's
	writers     int  // open writable handles
	// inflight is a background put still reading the stage, which must
	// not change until it is done.
	inflight *objstore.Pending
	// failed is the error of a write that failed (a full disk): the
	// content is not whole, so it is not committed, and flush reports it.
	failed error

	// ptWriters are the passthrough writers (one per user and
	// privilege): a passthrough write found by refreshLocked clears the
	// set-ID bits any of them would clear, since the mount cannot tell
	// which of them wrote.
	ptWriters []caller
	stamp     stamp // stage's size and mtime when last looked at
	mtimeSet  bool  // attrs.mtime was set explicitly (utimens)
	// gate is the background put a flush started, waiting for the
	// content to be final (the last release, fsync, or gateDelay): set
	// in phaseGated only.
	gate *gate
	// created: the state of a file made by create (its size counts for
	// the small-file run, FS.smallRun).
	created bool
	// noPassthrough: write through the mount even where passthrough
	// would be allowed (a run of small files is being written).
	noPassthrough bool
}

// smallRunMin is how many small files (at most bufMax) in a row must have
// been created before new files skip passthrough: for a small file the
// staging file, its truncation and the gated put cost more than the one
// write the kernel saves. One larger file ends the run.
const smallRunMin = 8

// stamp tells whether a staging file changed.
type stamp struct {
	size  int64
	mtime time.Time
}

// gateDelay bounds how long a flushed file's background put waits for
// the file's last release: a descriptor still open (a dup) and still
// writing after that gets its writes committed at its own close.
const gateDelay = 2 * time.Second

// gate holds a background put until the content is final, so that a
// flush followed by more passthrough writes on another descriptor never
// commits a torn copy; readers of the key wait meanwhile.
type gate struct {
	ready chan struct{}
	stage *os.File
	size  int64
	meta  map[string]string
	err   error
	timer *time.Timer
}

// beginWrite opens the file for writing and returns the handle: the
// first writer pins the current version as the base of its writes
// (O_TRUNC needs none).
func (n *fileNode) beginWrite(ctx context.Context, trunc bool) (*handle, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.modes.beginWriter()
	revived := n.ws == nil && n.idle != nil && n.reviveLocked(ctx)
	if n.ws == nil && n.modes.mustPassThrough() {
		return n.reuseStageLocked(ctx, trunc)
	}
	if n.ws == nil {
		bucket, key := n.key()
		if trunc {
			info, err := n.fsys.store.Head(ctx, bucket, key, objstore.GetOptions{})
			if err != nil {
				return nil, err
			}
			ws := &writeState{
				dirty: true, attrs: attrsFrom(info, defaultFileMode, n.fsys.owner),
				contentType: info.ContentType, meta: info.Meta,
			}
			if err := n.startLocked(ws, phaseBuffered); err != nil {
				return nil, err
			}
			n.ws.attrs.mtime = time.Now()
			n.dropSetIDLocked(ctx) // as open(2) with O_TRUNC does
		} else {
			// Not openPlain: the kernel truncates an open(O_TRUNC) with
			// a SETATTR after the OPEN, so an encrypted base is taken,
			// sealed, and refused only if its bytes are needed.
			r, err := n.fsys.openReader(ctx, bucket, key, objstore.GetOptions{})
			if err != nil {
				return nil, err
			}
			info := r.Info()
			ws := &writeState{
				base: r, sealed: objstore.Encrypted(info), size: info.Size, attrs: attrsFrom(info, defaultFileMode, n.fsys.owner),
				contentType: info.ContentType, meta: info.Meta,
			}
			if err := n.startLocked(ws, phaseBase); err != nil {
				return nil, err
			}
		}
		n.ws.writers++
		h, err := n.writeHandleLocked(ctx)
		if err != nil {
			n.ws.close()
			n.ws = nil
		}
		return h, err
	}
	n.ws.writers++
	if trunc && n.ws.size != 0 {
		if err := n.truncateLocked(0); err != nil {
			n.ws.writers--
			return nil, err
		}
	}
	if trunc {
		n.dropSetIDLocked(ctx)
	}
	h, err := n.writeHandleLocked(ctx)
	if err == nil && revived {
		h.keep = n.modes.keepsWriterCache(h)
	}
	return h, err
}

// startLocked makes ws, just made, the file's write state, in its first
// phase p; the state is closed if it cannot take it.
func (n *fileNode) startLocked(ws *writeState, p writePhase) error {
	if err := ws.moveTo(p); err != nil {
		ws.close()
		return err
	}
	n.ws = ws
	return nil
}

// smallRunWriter says whether the file is being written through the
// mount because it was created in a run of small files.
func (n *fileNode) smallRunWriter() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.ws != nil && n.ws.noPassthrough && !n.ws.passesThrough()
}

// writeHandleLocked makes the handle of a new writer. The first writer of
// a file that no cached handle has open takes the passthrough path: the
// content moves to a staging file at once and the kernel writes to it
// directly, as go-fuse's loopback does with its files.
func (n *fileNode) writeHandleLocked(ctx context.Context) (*handle, error) {
	ws := n.ws
	// Not staged yet; a base worth patching is never staged whole for
	// passthrough, which would copy all of it.
	fresh := (ws.phase == phaseBase && !ws.patchable()) || ws.phase == phaseBuffered
	// A sealed base (ciphertext) cannot be staged for passthrough: its
	// writer goes through the mount, which refuses what needs its bytes.
	if ws.writers == 1 && fresh && !ws.sealed && !ws.noPassthrough && !n.fsys.opt.NoPassthrough && n.modes.canPassthrough() && n.fsys.roomToStage(ctx) {
		// The mount never sees a passthrough write, so a file whose
		// set-ID bits this writer's writes would clear is written
		// through the mount.
		if setIDKill(n.fsys.callerOf(ctx), ws.attrs.perm, ws.attrs.gid, false) == 0 {
			if err := n.stageLocked(ws.size, phasePassthrough); err != nil {
				return nil, err
			}
			if err := n.refreshLocked(); err != nil {
				return nil, err
			}
		}
	}
	h := &handle{node: n, write: true}
	if ws.passesThrough() {
		// The kernel wants every open of an inode with a backing file
		// to pass through to the same one.
		ws.joinPassthroughLocked(n.fsys.callerOf(ctx))
		n.passthroughLocked(h, ws.stageRef)
	} else {
		h.cached = true
		n.modes.count(h)
	}
	return h, nil
}

// endWrite closes one writable handle; the last one commits and drops the
// write state.
func (n *fileNode) endWrite(ctx context.Context) error {
	n.mu.Lock()
	ws := n.ws
	if ws == nil {
		n.mu.Unlock()
		return nil
	}
	ws.writers--
	if ws.writers > 0 {
		n.mu.Unlock()
		return nil
	}
	if n.parkLocked(ctx) {
		n.mu.Unlock()
		return nil
	}
	err := n.commitLocked(ctx, true)
	n.ws = nil
	n.mu.Unlock()
	if ws.created && err == nil {
		if ws.size <= bufMax {
			n.fsys.smallRun.Add(1)
		} else {
			n.fsys.smallRun.Store(0)
		}
	}
	if ws.busy() {
		// The background put still reads the staging file or the base:
		// release them when the put is done, without holding up this
		// release (the kernel has few background requests in flight at
		// a time).
		go ws.close()
		return err
	}
	ws.close()
	return err
}

// busy says whether a background put still reads the state's files.
func (ws *writeState) busy() bool {
	for _, p := range []*objstore.Pending{ws.inflight, ws.patched} {
		if p == nil {
			continue
		}
		select {
		case <-p.Done():
		default:
			return true
		}
	}
	return false
}

// close releases the state's files once no background put reads them.
// A held patch must have been let go.
func (ws *writeState) close() {
	for _, p := range []*objstore.Pending{ws.inflight, ws.patched} {
		if p != nil {
			<-p.Done()
		}
	}
	if ws.base != nil {
		_ = ws.base.Close()
	}
	if ws.stageRef != nil {
		ws.stageRef.release()
	}
}

// settleLocked waits until no background put reads the content, before
// it changes (a put still at its gate has not started reading).
func (n *fileNode) settleLocked() {
	if n.ws.phase == phaseGated {
		return
	}
	if p := n.ws.inflight; p != nil {
		_, _ = p.Wait(context.Background()) // hurries its burst and commit; its error is fsync's
		n.ws.inflight = nil
	}
	n.rebaseLocked(n.ws)
}

// stageLocked moves the content to a staging file, the first time it
// changes beyond what the buffer holds: the buffer, or the first keep
// bytes of the base. The state moves to phase to (phaseStaged, or
// phasePassthrough for a writer taking that path at open); one already
// staged stays as it is. When the staging file cannot be written, the
// state keeps its phase and content.
func (n *fileNode) stageLocked(keep int64, to writePhase) error {
	ws := n.ws
	if ws.onStage() {
		return nil
	}
	if err := ws.checkMove(to); err != nil {
		return err
	}
	ref, err := n.fsys.stages.get()
	if err != nil {
		return err
	}
	f := ref.f
	switch {
	case ws.phase == phaseBuffered:
		_, err = f.Write(ws.buf)
	case ws.phase == phaseBase && keep > 0 && ws.sealed:
		err = errEncrypted
	case ws.phase == phaseBase && keep > 0:
		_, err = io.Copy(f, io.NewSectionReader(ws.base, 0, min(keep, ws.base.Size())))
	}
	if err != nil {
		ref.release()
		return fmt.Errorf("stage %s: %w", n.Path(nil), err)
	}
	ws.buf = nil
	if ws.base != nil {
		_ = ws.base.Close()
		ws.base = nil
	}
	ws.stage, ws.stageRef = f, ref
	return ws.moveTo(to)
}

// writeAt writes p at off into the write state, clearing the set-ID bits
// the caller's write clears.
func (n *fileNode) writeAt(ctx context.Context, p []byte, off int64) (int, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	ws := n.ws
	if ws == nil {
		return 0, syscall.EBADF
	}
	n.dropSetIDLocked(ctx)
	n.settleLocked()
	if ws.patchable() {
		if err := n.patchLocked(); err != nil {
			ws.failed = fmt.Errorf("write %s: %w", n.Path(nil), err)
			return 0, err
		}
	}
	if ws.phase == phasePatched {
		w, err := n.writePatchedLocked(p, off)
		if err != nil {
			ws.failed = fmt.Errorf("write %s: %w", n.Path(nil), err)
		}
		if w > 0 {
			ws.dirty = true
			ws.attrs.mtime = time.Now()
		}
		return w, err
	}
	end := off + int64(len(p))
	if ws.phase == phaseBuffered && end <= bufMax {
		if int64(len(ws.buf)) < end {
			ws.buf = append(ws.buf, make([]byte, end-int64(len(ws.buf)))...)
		}
		copy(ws.buf[off:], p)
		ws.size = int64(len(ws.buf))
		ws.dirty = true
		ws.attrs.mtime = time.Now()
		return len(p), nil
	}
	if err := n.stageLocked(ws.size, phaseStaged); err != nil {
		ws.failed = err
		return 0, err
	}
	w, err := ws.stage.WriteAt(p, off)
	if err != nil {
		ws.failed = fmt.Errorf("write %s: %w", n.Path(nil), err)
	}
	if e := off + int64(w); e > ws.size {
		ws.size = e
	}
	if w > 0 {
		ws.dirty = true
		ws.attrs.mtime = time.Now()
	}
	return w, err
}

// truncateLocked sets the size of the file being written.
func (n *fileNode) truncateLocked(size int64) error {
	ws := n.ws
	if err := n.refreshLocked(); err != nil {
		return err
	}
	ws.attrs.mtime = time.Now()
	if size == ws.size {
		ws.metaDirty = true
		return nil
	}
	n.settleLocked()
	ws.dirty = true
	if ws.patchable() {
		if err := n.patchLocked(); err != nil {
			return err
		}
	}
	if ws.phase == phasePatched {
		if err := n.truncatePatchedLocked(size); err != nil {
			ws.failed = err
			return err
		}
		return nil
	}
	if ws.phase == phaseBuffered && size <= bufMax {
		if size < int64(len(ws.buf)) {
			ws.buf = ws.buf[:size:size] // appends must not write where a reader was
		} else {
			ws.buf = append(ws.buf, make([]byte, size-int64(len(ws.buf)))...)
		}
		ws.size = size
		return nil
	}
	if err := n.stageLocked(min(size, ws.size), phaseStaged); err != nil {
		return err
	}
	if err := ws.stage.Truncate(size); err != nil {
		ws.failed = fmt.Errorf("truncate %s: %w", n.Path(nil), err)
		return ws.failed
	}
	ws.size = size
	if ws.passesThrough() {
		if err := n.refreshLocked(); err != nil {
			return err
		}
		ws.dirty = true
	}
	return nil
}

// readAt reads the content being written, or h's pinned version.
func (n *fileNode) readAt(ctx context.Context, h *handle, p []byte, off int64) (int, error) {
	n.mu.Lock()
	if n.ws == nil {
		n.mu.Unlock()
		// The pinned version is immutable: concurrent reads (the
		// kernel's readahead) need no lock.
		r, err := h.pinned(ctx)
		if err != nil {
			return 0, err
		}
		return readFull(r, r.Size(), p, off)
	}
	defer n.mu.Unlock()
	ws := n.ws
	switch {
	case ws.phase == phaseBuffered:
		return readFull(bytes.NewReader(ws.buf), ws.size, p, off)
	case ws.onStage():
		return readFull(ws.stage, ws.size, p, off)
	case ws.phase == phasePatched:
		return readFull(ws.content(), ws.size, p, off)
	case ws.phase == phaseBase && ws.sealed:
		return 0, fmt.Errorf("%s: %w", n.Path(nil), errEncrypted)
	case ws.phase == phaseBase:
		return readFull(ws.base, ws.size, p, off)
	}
	return 0, nil
}

// readFull reads from r (size bytes long) at off, short only at the end.
func readFull(r io.ReaderAt, size int64, p []byte, off int64) (int, error) {
	if off >= size {
		return 0, nil
	}
	if int64(len(p)) > size-off {
		p = p[:size-off]
	}
	m, err := r.ReadAt(p, off)
	if errors.Is(err, io.EOF) {
		err = nil
	}
	return m, err
}
