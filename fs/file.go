package fs

import (
	"context"
	"fmt"
	"sync"
	"syscall"

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
	// modes counts the open handles by the kind of open the kernel was
	// told, and what its page cache holds (kmode.go): they decide the
	// kind of each new open.
	modes kernelModes
	// pending is the last background put of the file's content, and
	// pendingAttrs the attributes it commits: Getattr answers with them
	// until it is done, fsync reports its error.
	pending      *objstore.Pending
	pendingAttrs attrs
	// idle is a patched file's write state kept after its last release
	// (park.go), for a writer opening the file again.
	idle *writeState
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

// startNew makes a new, empty file that is open for writing once, and
// returns its handle.
func (n *fileNode) startNew(ctx context.Context, a attrs) (*handle, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.modes.beginWriter()
	ws := &writeState{attrs: a, dirty: true, writers: 1, created: true,
		noPassthrough: n.fsys.smallRun.Load() >= smallRunMin}
	if err := n.startLocked(ws, phaseBuffered); err != nil {
		return nil, err
	}
	return n.writeHandleLocked(ctx)
}

// writing says whether the file is open for writing on the mount.
func (n *fileNode) writing() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.ws != nil
}

// fillIfWriting fills out from the write state, or from the background
// put still on its way, if there is one.
func (n *fileNode) fillIfWriting(out *fuse.Attr) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.ws != nil {
		_ = n.refreshLocked() // a failed stat shows the last size known
		a := n.ws.attrs
		a.size = n.ws.size
		a.fill(out, syscall.S_IFREG)
		return true
	}
	if n.pending != nil {
		select {
		case <-n.pending.Done():
		default:
			n.pendingAttrs.fill(out, syscall.S_IFREG)
			return true
		}
	}
	return false
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
		if !n.modes.readsPinned() {
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
	stale := n.modes.readsPinned() && n.hasLast && (err == nil && !sameVersion(n.last, info) || isNotFound(err))
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

func (n *fileNode) Getattr(ctx context.Context, fh gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	if fh == nil {
		if errno := n.fsys.allow(ctx, n.EmbeddedInode(), 0); errno != 0 {
			return errno
		}
	}
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
	if errno := n.fsys.allow(ctx, n.EmbeddedInode(), openMask(flags)); errno != 0 {
		return nil, 0, errno
	}
	write := flags&syscall.O_ACCMODE != syscall.O_RDONLY
	trunc := flags&syscall.O_TRUNC != 0
	if write || trunc {
		if err := n.awaitStageReuse(ctx); err != nil {
			return nil, 0, n.fsys.errno("open", n.Path(nil), err)
		}
		h, err := n.beginWrite(ctx, trunc)
		if err != nil {
			return nil, 0, n.fsys.errno("open", n.Path(nil), err)
		}
		return h.opened()
	}
	n.mu.Lock()
	if st := n.backingLocked(); st != nil {
		// The kernel refuses any other kind of open of an inode with a
		// backing file: read the staging file the writers write (or
		// wrote: what they committed last).
		h := &handle{node: n}
		n.passthroughLocked(h, st)
		n.mu.Unlock()
		return h.opened()
	}
	if n.modes.mayBeBacked() {
		// The last passthrough handle was released a moment ago: the
		// kernel may not have dropped its backing file yet, so a cached
		// open could be refused. A direct one reads through the mount
		// (the committed version), and keeps new writers from
		// passthrough while it is open.
		h := &handle{node: n, uncached: true}
		n.modes.count(h)
		n.mu.Unlock()
		return h.opened()
	}
	if n.ws != nil {
		h := &handle{node: n, cached: true}
		n.modes.count(h)
		n.mu.Unlock()
		return h, 0, 0
	}
	gen := n.modes.generation()
	// Counted as cached from here, so that no writer starts passthrough
	// while the version is looked up (the kernel would refuse this open).
	h := &handle{node: n, cached: true}
	n.modes.count(h)
	n.mu.Unlock()
	fail := func(errno syscall.Errno) (gofs.FileHandle, uint32, syscall.Errno) {
		n.mu.Lock()
		n.modes.uncount(h)
		n.mu.Unlock()
		return nil, 0, errno
	}
	if !n.attached() {
		// Detached since the kernel resolved the name (another face
		// replaced or removed the key): ESTALE has the kernel look the
		// name up again, finding the new file or none.
		return fail(syscall.ESTALE)
	}
	bucket, key := n.key()
	r, err := n.fsys.openPlain(ctx, bucket, key)
	if err != nil {
		return fail(n.fsys.errno("open", n.Path(nil), err))
	}
	info := r.Info()
	n.mu.Lock()
	stale := n.modes.readsPinned() && n.hasLast && !sameVersion(n.last, info)
	// A writer begun meanwhile may have put data in the cache that is
	// not this version's.
	quiet := n.modes.cacheQuiet(gen, n.ws != nil)
	keep := !stale && n.modes.keepsCache(info, quiet)
	if !stale {
		n.last, n.hasLast = info, true
		n.modes.cacheHolds(info, quiet)
	}
	h.reader = r
	n.modes.countReader(h)
	n.mu.Unlock()
	var fuseFlags uint32
	if keep {
		// What the cache holds is this version's: a file read again is
		// read from memory, as on a local filesystem.
		fuseFlags = fuse.FOPEN_KEEP_CACHE
	}
	if stale {
		// Other descriptors read an older version through this inode's
		// page cache: bypass it, and give the name a new inode.
		fuseFlags = fuse.FOPEN_DIRECT_IO
		go n.fsys.detachNode(n)
	}
	return h, fuseFlags, 0
}

func (n *fileNode) Setattr(ctx context.Context, fh gofs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	if errno := n.fsys.allowSetattr(ctx, n.EmbeddedInode(), fh, in); errno != 0 {
		return errno
	}
	size, setSize := in.GetSize()
	if setSize {
		// As a writer of its own: with no other writer, the truncated
		// content is committed when it ends.
		h, err := n.beginWrite(ctx, false)
		if err != nil {
			return n.fsys.errno("truncate", n.Path(nil), err)
		}
		n.mu.Lock()
		err = n.truncateLocked(int64(size))
		if err == nil {
			// Committed with the truncated content, not after it.
			n.killLocked(n.setattrKill(ctx, in, n.ws.attrs))
		}
		n.mu.Unlock()
		if errno := h.Release(ctx); err == nil && errno != 0 {
			return errno
		}
		if err != nil {
			return n.fsys.errno("truncate", n.Path(nil), err)
		}
	}
	n.mu.Lock()
	if n.ws != nil {
		if err := n.refreshLocked(); err != nil {
			n.mu.Unlock()
			return n.fsys.errno("setattr", n.Path(nil), err)
		}
		if _, ok := in.GetMTime(); ok {
			n.ws.mtimeSet = true
		}
		before := n.ws.attrs.perm
		changed := n.applySetattr(ctx, in, &n.ws.attrs)
		if n.ws.attrs.perm&suidBits&^before != 0 {
			n.markStageLocked()
		}
		if changed {
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
	if n.applySetattr(ctx, in, &a) {
		bucket, key := n.key()
		if err := n.fsys.setMeta(ctx, bucket, key, info.ContentType, withAttrs(info.Meta, a)); err != nil {
			return n.fsys.errno("setattr", n.Path(nil), err)
		}
	}
	a.fill(&out.Attr, syscall.S_IFREG)
	return 0
}

// applySetattr changes a as the request asks, clearing the set-ID bits
// it asks the mount to clear, and says whether anything changed.
func (n *fileNode) applySetattr(ctx context.Context, in *fuse.SetAttrIn, a *attrs) bool {
	kill := n.setattrKill(ctx, in, *a)
	changed := a.applySetattr(in)
	if kill&a.perm != 0 {
		a.perm &^= kill
		changed = true
	}
	return changed
}

// setattrKill is the set-ID bits a setattr request asks the mount to
// clear from a file with attributes a: with FUSE_HANDLE_KILLPRIV_V2 the
// kernel marks a chown, and a truncation by a caller without CAP_FSETID,
// with FATTR_KILL_SUIDGID instead of sending the mode itself.
func (n *fileNode) setattrKill(ctx context.Context, in *fuse.SetAttrIn, a attrs) uint32 {
	if in.Valid&fuse.FATTR_KILL_SUIDGID == 0 || a.perm&suidBits == 0 {
		return 0
	}
	_, setUID := in.GetUID()
	_, setGID := in.GetGID()
	return setIDKill(n.fsys.callerOf(ctx), a.perm, a.gid, setUID || setGID)
}
