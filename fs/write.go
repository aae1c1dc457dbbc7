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
// writable handles. It lives in a buffer (a file written from empty, while
// small), in a staging file, or is still the base version (nothing
// changed yet).
type writeState struct {
	base     *objstore.ObjectReader // the version the writes start from, until staged
	buf      []byte                 // the content, while inBuf
	inBuf    bool
	stage    *os.File // the content, once staged
	stageRef *staged  // stage's reference
	size     int64
	attrs    attrs
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

	// passthrough: the kernel writes to stage itself (FUSE passthrough),
	// so the mount learns size and changes from stage (refreshLocked).
	passthrough bool
	// ptWriters are the passthrough writers (one per user and
	// privilege): a passthrough write found by refreshLocked clears the
	// set-ID bits any of them would clear, since the mount cannot tell
	// which of them wrote.
	ptWriters []caller
	stamp     stamp // stage's size and mtime when last looked at
	mtimeSet  bool  // attrs.mtime was set explicitly (utimens)
	// gate is the background put a flush started, waiting for the
	// content to be final (the last release, fsync, or gateDelay).
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
	n.pcValid = false
	n.writeGen++
	if n.ws == nil && n.ptLive > 0 {
		return n.reuseStageLocked(ctx, trunc)
	}
	if n.ws == nil {
		bucket, key := n.key()
		if trunc {
			info, err := n.fsys.store.Head(ctx, bucket, key, objstore.GetOptions{})
			if err != nil {
				return nil, err
			}
			n.ws = &writeState{
				inBuf: true, dirty: true, attrs: attrsFrom(info, defaultFileMode, n.fsys.owner),
				contentType: info.ContentType, meta: info.Meta,
			}
			n.ws.attrs.mtime = time.Now()
			n.dropSetIDLocked(ctx) // as open(2) with O_TRUNC does
		} else {
			r, err := n.fsys.store.Open(ctx, bucket, key, objstore.GetOptions{})
			if err != nil {
				return nil, err
			}
			info := r.Info()
			n.ws = &writeState{
				base: r, size: info.Size, attrs: attrsFrom(info, defaultFileMode, n.fsys.owner),
				contentType: info.ContentType, meta: info.Meta,
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
	return n.writeHandleLocked(ctx)
}

// smallRunWriter says whether the file is being written through the
// mount because it was created in a run of small files.
func (n *fileNode) smallRunWriter() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.ws != nil && n.ws.noPassthrough && !n.ws.passthrough
}

// writeHandleLocked makes the handle of a new writer. The first writer of
// a file that no cached handle has open takes the passthrough path: the
// content moves to a staging file at once and the kernel writes to it
// directly, as go-fuse's loopback does with its files.
func (n *fileNode) writeHandleLocked(ctx context.Context) (*handle, error) {
	ws := n.ws
	if ws.writers == 1 && !ws.passthrough && !ws.noPassthrough && !n.fsys.opt.NoPassthrough && n.cached == 0 && n.ptOpen == 0 && n.uncached == 0 && ws.stage == nil && n.fsys.roomToStage(ctx) {
		// The mount never sees a passthrough write, so a file whose
		// set-ID bits this writer's writes would clear is written
		// through the mount.
		if setIDKill(n.fsys.callerOf(ctx), ws.attrs.perm, ws.attrs.gid, false) == 0 {
			if err := n.stageLocked(ws.size); err != nil {
				return nil, err
			}
			ws.passthrough = true
			if err := n.refreshLocked(); err != nil {
				return nil, err
			}
		}
	}
	h := &handle{node: n, write: true}
	if ws.passthrough {
		// The kernel wants every open of an inode with a backing file
		// to pass through to the same one.
		ws.joinPassthroughLocked(n.fsys.callerOf(ctx))
		n.passthroughLocked(h, ws.stageRef)
	} else {
		h.cached = true
		n.cached++
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
	if ws.inflight != nil {
		// The background put still reads the staging file: release it
		// when the put is done, without holding up this release (the
		// kernel has few background requests in flight at a time).
		go ws.close()
		return err
	}
	ws.close()
	return err
}

// close releases the state's files once no background put reads them.
func (ws *writeState) close() {
	if ws.inflight != nil {
		<-ws.inflight.Done()
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
	if n.ws.gate != nil {
		return
	}
	if p := n.ws.inflight; p != nil {
		_, _ = p.Wait(context.Background()) // hurries its burst and commit; its error is fsync's
		n.ws.inflight = nil
	}
}

// stageLocked moves the content to a staging file, the first time it
// changes beyond what the buffer holds: the buffer, or the first keep
// bytes of the base.
func (n *fileNode) stageLocked(keep int64) error {
	ws := n.ws
	if ws.stage != nil {
		return nil
	}
	ref, err := n.fsys.stages.get()
	if err != nil {
		return err
	}
	f := ref.f
	switch {
	case ws.inBuf:
		_, err = f.Write(ws.buf)
		ws.buf, ws.inBuf = nil, false
	case keep > 0 && ws.base != nil:
		_, err = io.Copy(f, io.NewSectionReader(ws.base, 0, min(keep, ws.base.Size())))
	}
	if err != nil {
		ref.release()
		return fmt.Errorf("stage %s: %w", n.Path(nil), err)
	}
	if ws.base != nil {
		_ = ws.base.Close()
		ws.base = nil
	}
	ws.stage, ws.stageRef = f, ref
	return nil
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
	end := off + int64(len(p))
	if ws.inBuf && end <= bufMax {
		if int64(len(ws.buf)) < end {
			ws.buf = append(ws.buf, make([]byte, end-int64(len(ws.buf)))...)
		}
		copy(ws.buf[off:], p)
		ws.size = int64(len(ws.buf))
		ws.dirty = true
		ws.attrs.mtime = time.Now()
		return len(p), nil
	}
	if err := n.stageLocked(ws.size); err != nil {
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
	if ws.inBuf && size <= bufMax {
		if size < int64(len(ws.buf)) {
			ws.buf = ws.buf[:size:size] // appends must not write where a reader was
		} else {
			ws.buf = append(ws.buf, make([]byte, size-int64(len(ws.buf)))...)
		}
		ws.size = size
		return nil
	}
	if err := n.stageLocked(min(size, ws.size)); err != nil {
		return err
	}
	if err := ws.stage.Truncate(size); err != nil {
		ws.failed = fmt.Errorf("truncate %s: %w", n.Path(nil), err)
		return ws.failed
	}
	ws.size = size
	if ws.passthrough {
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
	case ws.inBuf:
		return readFull(bytes.NewReader(ws.buf), ws.size, p, off)
	case ws.stage != nil:
		return readFull(ws.stage, ws.size, p, off)
	case ws.base != nil:
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
