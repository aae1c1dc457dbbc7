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
	dirty       bool // content or metadata differ from the store's
	writers     int  // open writable handles
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
	n.ws = &writeState{attrs: a, dirty: true, writers: 1}
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
	bucket, key := n.key()
	return n.fsys.store.Head(ctx, bucket, key, objstore.GetOptions{})
}

func (n *fileNode) Getattr(ctx context.Context, _ gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	if n.fillIfWriting(&out.Attr) {
		return 0
	}
	info, err := n.head(ctx)
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
	bucket, key := n.key()
	r, err := n.fsys.store.Open(ctx, bucket, key, objstore.GetOptions{})
	if err != nil {
		return nil, 0, n.fsys.errno("open", n.Path(nil), err)
	}
	return &handle{node: n, reader: r}, 0, 0
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

func (n *fileNode) writeAt(p []byte, off int64) (int, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	ws := n.ws
	if ws == nil {
		return 0, syscall.EBADF
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
func (n *fileNode) readAt(h *handle, p []byte, off int64) (int, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	var r io.ReaderAt
	size := int64(0)
	switch {
	case n.ws != nil && n.ws.stage != nil:
		r, size = n.ws.stage, n.ws.size
	case h.reader != nil:
		r, size = h.reader, h.reader.Size()
	case n.ws != nil && n.ws.base != nil:
		r, size = n.ws.base, n.ws.size
	default:
		return 0, nil
	}
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

// flush commits what was written since the last commit.
func (n *fileNode) flush(ctx context.Context) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.commitLocked(ctx)
}

// commitLocked puts the staged content (or, when only metadata changed,
// the new metadata) as the object's new version, without waiting for
// durability.
func (n *fileNode) commitLocked(ctx context.Context) error {
	ws := n.ws
	if ws == nil || !ws.dirty || n.unlinked {
		return nil
	}
	bucket, key := n.key()
	m := withAttrs(ws.meta, ws.attrs)
	var err error
	switch {
	case ws.stage != nil:
		n.fsys.self.expect(bucket, key)
		_, err = n.fsys.store.PutAsync(ctx, bucket, key, io.NewSectionReader(ws.stage, 0, ws.size), ws.size, objstore.PutOptions{ContentType: ws.contentType, Meta: m})
		if err != nil {
			n.fsys.self.cancel(bucket, key)
		}
	case ws.base == nil: // a new, empty file
		err = n.fsys.put(ctx, bucket, key, nil, objstore.PutOptions{ContentType: ws.contentType, Meta: m})
	default:
		err = n.fsys.setMeta(ctx, bucket, key, ws.contentType, m)
	}
	if err != nil {
		return err
	}
	ws.meta = m
	ws.dirty = false
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
			n.ws.dirty = true
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
