package fs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/cairnstore/cairn/objstore"
)

// fileNode is a regular file. While it is open for writing, its content
// lives in a write state shared by every handle of the file; it becomes a
// new version of the object at each flush, fsync and last release.
type fileNode struct {
	gofs.Inode
	fsys *FS

	mu       sync.Mutex // protects the fields below and ws's fields
	ws       *writeState
	unlinked bool // removed on the mount: commits would resurrect it
	// last is the version last seen: a node replaced or deleted by
	// another face (see FS.invalidate) keeps answering with it, as an
	// open file whose name went does on a local filesystem.
	last    objstore.ObjectInfo
	hasLast bool
	readers int // open read-only handles, reading last (or older)
}

// writeState is the content of a file being written.
type writeState struct {
	base  *objstore.ObjectReader // the version the writes start from, until staged
	stage *os.File               // the new content, once anything changed
	size  int64
	attrs attrs
	// contentType and meta are carried over from the version written over.
	contentType string
	meta        map[string]string
	dirty       bool // the content differs from the store's
	metaDirty   bool // attributes or metadata differ from the store's
	writers     int  // open writable handles
	// seq, while every write has appended to a file written from empty,
	// takes the bytes instead of a staging file.
	seq *seqWriter
	// baseLazy: the content is the object's current version, to be
	// opened as the base when the content next changes.
	baseLazy bool
}

var (
	_ gofs.NodeOpener        = (*fileNode)(nil)
	_ gofs.NodeGetattrer     = (*fileNode)(nil)
	_ gofs.NodeSetattrer     = (*fileNode)(nil)
	_ gofs.NodeGetxattrer    = (*fileNode)(nil)
	_ gofs.NodeSetxattrer    = (*fileNode)(nil)
	_ gofs.NodeListxattrer   = (*fileNode)(nil)
	_ gofs.NodeRemovexattrer = (*fileNode)(nil)
)

// startNew makes a new, empty file that is open for writing once.
func (n *fileNode) startNew(a attrs) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.ws = &writeState{attrs: a, dirty: true, writers: 1, seq: &seqWriter{}}
}

// writing says whether the file is open for writing on the mount.
func (n *fileNode) writing() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.ws != nil
}

// fillIfWriting fills out from the write state, if there is one.
func (n *fileNode) fillIfWriting(out *fuse.Attr) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.ws == nil {
		return false
	}
	a := n.ws.attrs
	a.size = n.ws.size
	a.fill(out, syscall.S_IFREG)
	return true
}

func (n *fileNode) markUnlinked() {
	n.mu.Lock()
	n.unlinked = true
	n.mu.Unlock()
}

func (n *fileNode) key() (bucket, key string) { return location(n.EmbeddedInode()) }

// head reads the object's current version.
func (n *fileNode) head(ctx context.Context) (objstore.ObjectInfo, error) {
	if !n.attached() {
		n.mu.Lock()
		defer n.mu.Unlock()
		if n.hasLast {
			return n.last, nil
		}
		return objstore.ObjectInfo{}, fmt.Errorf("%w: %s was removed", objstore.ErrNoSuchKey, n.Path(nil))
	}
	bucket, key := n.key()
	info, err := n.fsys.store.Head(ctx, bucket, key, objstore.GetOptions{})
	if err == nil {
		n.mu.Lock()
		if n.readers == 0 {
			n.last, n.hasLast = info, true
		}
		n.mu.Unlock()
	}
	return info, err
}

// statInfo is the version Getattr describes: the current one, except
// while descriptors read an older one. The kernel keeps one size and one
// page cache per inode, so an inode whose key another face changed keeps
// describing the version its open descriptors read, and the name moves to
// a new inode (FS.detach), as a rename over an open file does locally.
func (n *fileNode) statInfo(ctx context.Context) (objstore.ObjectInfo, error) {
	info, err := n.head(ctx)
	n.mu.Lock()
	stale := n.readers > 0 && n.hasLast && (err == nil && !sameVersion(n.last, info) || isNotFound(err))
	if stale {
		info, err = n.last, nil
	}
	n.mu.Unlock()
	if stale {
		go n.fsys.detachNode(n)
	}
	return info, err
}

// sameVersion says whether a and b describe one version of a key.
func sameVersion(a, b objstore.ObjectInfo) bool {
	return a.VersionID == b.VersionID && a.ETag == b.ETag && a.ModTime.Equal(b.ModTime) && a.Size == b.Size
}

func (n *fileNode) Getattr(ctx context.Context, _ gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	if n.fillIfWriting(&out.Attr) {
		return 0
	}
	info, err := n.statInfo(ctx)
	if err != nil {
		return n.fsys.errno("getattr", n.Path(nil), err)
	}
	attrsFrom(info, defaultFileMode, n.fsys.owner).fill(&out.Attr, syscall.S_IFREG)
	return 0
}

func (n *fileNode) Open(ctx context.Context, flags uint32) (gofs.FileHandle, uint32, syscall.Errno) {
	write := flags&syscall.O_ACCMODE != syscall.O_RDONLY
	trunc := flags&syscall.O_TRUNC != 0
	if write || trunc {
		if err := n.beginWrite(ctx, trunc); err != nil {
			return nil, 0, n.fsys.errno("open", n.Path(nil), err)
		}
		return &handle{node: n, write: true}, 0, 0
	}
	if n.writing() {
		return &handle{node: n}, 0, 0
	}
	if !n.attached() {
		return nil, 0, syscall.ENOENT
	}
	bucket, key := n.key()
	r, err := n.fsys.store.Open(ctx, bucket, key, objstore.GetOptions{})
	if err != nil {
		return nil, 0, n.fsys.errno("open", n.Path(nil), err)
	}
	info := r.Info()
	n.mu.Lock()
	stale := n.readers > 0 && n.hasLast && !sameVersion(n.last, info)
	if !stale {
		n.last, n.hasLast = info, true
	}
	n.readers++
	n.mu.Unlock()
	var fuseFlags uint32
	if stale {
		// Other descriptors read an older version through this inode's
		// page cache: bypass it, and give the name a new inode.
		fuseFlags = fuse.FOPEN_DIRECT_IO
		go n.fsys.detachNode(n)
	}
	return &handle{node: n, reader: r, counted: true}, fuseFlags, 0
}

// beginWrite opens the file for writing: the first writer pins the
// current version as the base of its writes.
func (n *fileNode) beginWrite(ctx context.Context, trunc bool) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.ws == nil {
		bucket, key := n.key()
		r, err := n.fsys.store.Open(ctx, bucket, key, objstore.GetOptions{})
		if err != nil {
			return err
		}
		info := r.Info()
		n.ws = &writeState{
			base: r, size: info.Size, attrs: attrsFrom(info, defaultFileMode, n.fsys.owner),
			contentType: info.ContentType, meta: info.Meta,
		}
	}
	n.ws.writers++
	if trunc && n.ws.writers == 1 && n.ws.stage == nil {
		// Rewritten from empty: the sequential path may take it.
		if n.ws.base != nil {
			_ = n.ws.base.Close()
			n.ws.base = nil
		}
		n.ws.size, n.ws.dirty, n.ws.seq = 0, true, &seqWriter{}
		n.ws.attrs.mtime = time.Now()
		return nil
	}
	if trunc && n.ws.size != 0 {
		if err := n.truncateLocked(0); err != nil {
			n.ws.writers--
			return err
		}
	}
	return nil
}

// endWrite closes one writable handle; the last one commits and drops the
// write state.
func (n *fileNode) endWrite(ctx context.Context) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.ws == nil {
		return nil
	}
	n.ws.writers--
	if n.ws.writers > 0 {
		return nil
	}
	err := n.commitLocked(ctx)
	n.ws.close()
	n.ws = nil
	return err
}

func (ws *writeState) close() {
	if ws.seq != nil {
		ws.seq.abort()
		ws.seq = nil
	}
	if ws.base != nil {
		_ = ws.base.Close()
		ws.base = nil
	}
	if ws.stage != nil {
		_ = ws.stage.Close()
		ws.stage = nil
	}
}

// stageLocked copies the base into a staging file, the first time the
// content changes.
func (n *fileNode) stageLocked(keep int64) error {
	ws := n.ws
	if ws.stage != nil {
		return nil
	}
	if ws.seq != nil {
		if err := n.endSeqLocked(); err != nil {
			return err
		}
		if ws.stage != nil {
			return nil
		}
	}
	if ws.base == nil && ws.baseLazy && keep > 0 {
		bucket, key := n.key()
		r, err := n.fsys.store.Open(context.Background(), bucket, key, objstore.GetOptions{})
		if err != nil {
			return err
		}
		ws.base = r
	}
	ws.baseLazy = false
	f, err := n.fsys.stageFile()
	if err != nil {
		return err
	}
	if keep > 0 && ws.base != nil {
		if _, err := io.Copy(f, io.NewSectionReader(ws.base, 0, min(keep, ws.base.Size()))); err != nil {
			_ = f.Close()
			return fmt.Errorf("stage %s: %w", n.Path(nil), err)
		}
	}
	if ws.base != nil {
		_ = ws.base.Close()
		ws.base = nil
	}
	ws.stage = f
	return nil
}

func (n *fileNode) writeAt(ctx context.Context, p []byte, off int64) (int, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	ws := n.ws
	if ws == nil {
		return 0, syscall.EBADF
	}
	if ws.seq != nil && ws.stage == nil && off == ws.size {
		bucket, key := n.key()
		if err := ws.seq.write(ctx, n.fsys, bucket, key, ws.contentType, p); err != nil {
			return 0, err
		}
		ws.size += int64(len(p))
		ws.dirty = true
		ws.attrs.mtime = time.Now()
		return len(p), nil
	}
	if err := n.stageLocked(ws.size); err != nil {
		return 0, err
	}
	w, err := ws.stage.WriteAt(p, off)
	if end := off + int64(w); end > ws.size {
		ws.size = end
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
	if size == ws.size {
		ws.attrs.mtime = time.Now()
		ws.metaDirty = true
		return nil
	}
	if err := n.stageLocked(min(size, ws.size)); err != nil {
		return err
	}
	if err := ws.stage.Truncate(size); err != nil {
		return fmt.Errorf("truncate %s: %w", n.Path(nil), err)
	}
	ws.size = size
	ws.dirty = true
	ws.attrs.mtime = time.Now()
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
	if ws.seq != nil && !ws.seq.streaming() {
		if off >= int64(len(ws.seq.buf)) {
			return 0, nil
		}
		return copy(p, ws.seq.buf[off:]), nil
	}
	if ws.seq != nil {
		if err := n.endSeqLocked(); err != nil {
			return 0, err
		}
	}
	switch {
	case ws.stage != nil:
		return readFull(ws.stage, ws.size, p, off)
	case ws.base != nil:
		return readFull(ws.base, ws.size, p, off)
	case ws.baseLazy && ws.size > 0:
		if err := n.stageLocked(ws.size); err != nil {
			return 0, err
		}
		return readFull(ws.stage, ws.size, p, off)
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

// endSeqLocked leaves the sequential path: buffered bytes move to a
// staging file; a streaming put is finished, so the store holds what was
// written, and the content continues copy-on-write from that version.
func (n *fileNode) endSeqLocked() error {
	ws := n.ws
	seq := ws.seq
	ws.seq = nil
	if !seq.streaming() {
		f, err := n.fsys.stageFile()
		if err != nil {
			return err
		}
		if _, err := f.Write(seq.buf); err != nil {
			_ = f.Close()
			return fmt.Errorf("stage %s: %w", n.Path(nil), err)
		}
		ws.stage = f
		return nil
	}
	if err := n.finishSeqLocked(seq); err != nil {
		return err
	}
	ws.baseLazy = true
	return nil
}

// finishSeqLocked ends a streaming put with the file's metadata.
func (n *fileNode) finishSeqLocked(seq *seqWriter) error {
	ws := n.ws
	bucket, key := n.key()
	m := withAttrs(ws.meta, ws.attrs)
	if err := seq.finish(context.Background(), n.fsys, bucket, key, ws.contentType, m); err != nil {
		return err
	}
	ws.meta, ws.dirty = m, false
	return nil
}

// metaChangedLocked notes a change of attributes or metadata while the
// file is open for writing. When the content is already committed (the
// writer closed, the release is still to come) it commits them at once,
// so that they are visible when the call returns.
func (n *fileNode) metaChangedLocked(ctx context.Context) error {
	n.ws.metaDirty = true
	if n.ws.dirty || n.ws.seq != nil && n.ws.seq.streaming() {
		return nil
	}
	return n.commitLocked(ctx)
}

// flush commits what was written since the last commit.
func (n *fileNode) flush(ctx context.Context) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.commitLocked(ctx)
}

// attached says whether the node still has a name (unlinked or renamed
// over, an open file's writes have nowhere to go).
func (n *fileNode) attached() bool {
	for p := n.EmbeddedInode(); !p.IsRoot(); {
		_, parent := p.Parent()
		if parent == nil {
			return false
		}
		p = parent
	}
	return true
}

// commitLocked puts the content (or, when only metadata changed, the new
// metadata) as the object's new version, without waiting for durability.
func (n *fileNode) commitLocked(ctx context.Context) error {
	ws := n.ws
	if ws == nil || !ws.dirty && !ws.metaDirty {
		return nil
	}
	if n.unlinked || !n.attached() {
		if ws.seq != nil {
			ws.seq.abort()
			ws.seq = nil
		}
		return nil
	}
	bucket, key := n.key()
	m := withAttrs(ws.meta, ws.attrs)
	var err error
	switch {
	case !ws.dirty:
		err = n.fsys.setMeta(ctx, bucket, key, ws.contentType, m)
	case ws.seq != nil && ws.seq.streaming():
		err = n.finishSeqLocked(ws.seq)
		ws.seq, ws.baseLazy = nil, true
		return err
	case ws.seq != nil:
		// The buffer keeps the whole content: later appends stay on
		// the sequential path and put it whole again.
		err = n.fsys.put(ctx, bucket, key, ws.seq.buf, objstore.PutOptions{ContentType: ws.contentType, Meta: m})
	case ws.stage != nil:
		n.fsys.self.expect(bucket, key)
		_, err = n.fsys.store.PutAsync(ctx, bucket, key, io.NewSectionReader(ws.stage, 0, ws.size), ws.size, objstore.PutOptions{ContentType: ws.contentType, Meta: m})
		if err != nil {
			n.fsys.self.cancel(bucket, key)
		}
	case ws.base == nil && !ws.baseLazy: // a new, empty file
		err = n.fsys.put(ctx, bucket, key, nil, objstore.PutOptions{ContentType: ws.contentType, Meta: m})
	default:
		err = n.fsys.setMeta(ctx, bucket, key, ws.contentType, m)
	}
	if err != nil {
		return err
	}
	ws.meta = m
	ws.dirty, ws.metaDirty = false, false
	return nil
}

// fsync commits and waits until the commit is durable.
func (n *fileNode) fsync(ctx context.Context) error {
	if err := n.flush(ctx); err != nil {
		return err
	}
	bucket, key := n.key()
	return n.fsys.store.Sync(ctx, bucket, key)
}

func (n *fileNode) Setattr(ctx context.Context, _ gofs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	size, setSize := in.GetSize()
	if setSize {
		if err := n.beginWrite(ctx, false); err != nil {
			return n.fsys.errno("truncate", n.Path(nil), err)
		}
		n.mu.Lock()
		err := n.truncateLocked(int64(size))
		n.mu.Unlock()
		if eerr := n.endWrite(ctx); err == nil {
			err = eerr
		}
		if err != nil {
			return n.fsys.errno("truncate", n.Path(nil), err)
		}
	}
	n.mu.Lock()
	if n.ws != nil {
		if n.ws.attrs.applySetattr(in) {
			if err := n.metaChangedLocked(ctx); err != nil {
				n.mu.Unlock()
				return n.fsys.errno("setattr", n.Path(nil), err)
			}
		}
		a := n.ws.attrs
		a.size = n.ws.size
		n.mu.Unlock()
		a.fill(&out.Attr, syscall.S_IFREG)
		return 0
	}
	n.mu.Unlock()
	info, err := n.head(ctx)
	if err != nil {
		return n.fsys.errno("setattr", n.Path(nil), err)
	}
	a := attrsFrom(info, defaultFileMode, n.fsys.owner)
	if a.applySetattr(in) {
		bucket, key := n.key()
		if err := n.fsys.setMeta(ctx, bucket, key, info.ContentType, withAttrs(info.Meta, a)); err != nil {
			return n.fsys.errno("setattr", n.Path(nil), err)
		}
	}
	a.fill(&out.Attr, syscall.S_IFREG)
	return 0
}
