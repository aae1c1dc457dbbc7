package fs

import (
	"context"
	"sync"
	"syscall"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/cairnstore/cairn/objstore"
)

// handle is an open file. A read-only handle reads the version pinned at
// open; a writable one shares its file's write state.
type handle struct {
	node    *fileNode
	write   bool
	counted bool // counted in node.readers
	cached  bool // counted in node.cached
	// fd, when passthrough, is the staging file the kernel reads and
	// writes directly (FUSE passthrough), without asking the mount.
	fd          int
	passthrough bool
	stage       *staged // held while the kernel may pass through to it
	// uncached: opened with direct I/O while the inode may still have a
	// backing file (counted in node.uncached).
	uncached bool
	// loose: a handle opened while the file was being written, which
	// pinned a version at its first read (counted in node.loose).
	loose bool
	// keep: a writer taking up a kept write state, whose open keeps the
	// page cache (kernelModes.keepsWriterCache).
	keep bool

	mu     sync.Mutex // protects reader
	reader *objstore.ObjectReader
}

// pinned returns the version the handle reads, pinning the current one
// the first time (a handle opened while the file was being written on the
// mount reads what was committed).
func (h *handle) pinned(ctx context.Context) (*objstore.ObjectReader, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.reader == nil {
		bucket, key := h.node.key()
		r, err := h.node.fsys.openPlain(ctx, bucket, key)
		if err != nil {
			return nil, err
		}
		h.reader = r
		// It reads this version through the page cache for as long as
		// it stays open, whatever version later opens find: none of
		// them may keep the cache meanwhile.
		n := h.node
		n.mu.Lock()
		n.modes.pinLoose(h)
		n.mu.Unlock()
	}
	return h.reader, nil
}

// ptHandle is the handle of a passthrough writer. Only it offers go-fuse
// a passthrough descriptor: go-fuse passes every handle that offers one
// through to whatever backing file the inode has registered, which may
// be a staging file that is already gone.
type ptHandle struct{ *handle }

// fuseHandle is what Open and Create answer the kernel with, and the
// open flags it needs.
func (h *handle) fuseHandle() (gofs.FileHandle, uint32) {
	switch {
	case h.passthrough:
		return &ptHandle{h}, 0
	case h.uncached:
		return h, fuse.FOPEN_DIRECT_IO
	case h.keep:
		return h, fuse.FOPEN_KEEP_CACHE
	}
	return h, 0
}

// opened is Open's answer with h.
func (h *handle) opened() (gofs.FileHandle, uint32, syscall.Errno) {
	fh, flags := h.fuseHandle()
	return fh, flags, 0
}

// ptLinger is how long after a passthrough handle's release the inode is
// kept from new passthrough opens and its readers bypass the page cache:
// go-fuse drops the kernel's backing file only after the release returns.
const ptLinger = time.Second

var (
	_ gofs.FilePassthroughFder = (*ptHandle)(nil)
	_ gofs.FileReader          = (*handle)(nil)
	_ gofs.FileWriter          = (*handle)(nil)
	_ gofs.FileFlusher         = (*handle)(nil)
	_ gofs.FileFsyncer         = (*handle)(nil)
	_ gofs.FileReleaser        = (*handle)(nil)
)

func (h *handle) Read(ctx context.Context, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	n, err := h.node.readAt(ctx, h, dest, off)
	if err != nil {
		return nil, h.node.fsys.errno("read", h.node.Path(nil), err)
	}
	return fuse.ReadResultData(dest[:n]), 0
}

func (h *handle) Write(ctx context.Context, data []byte, off int64) (uint32, syscall.Errno) {
	if !h.write {
		return 0, syscall.EBADF
	}
	n, err := h.node.writeAt(ctx, data, off)
	if err != nil {
		return uint32(n), h.node.fsys.errno("write", h.node.Path(nil), err)
	}
	return uint32(n), 0
}

// directOK says whether a new file's handle may take direct I/O. A file
// created in a run of small files (no passthrough) is written through
// the mount anyway; with direct I/O the kernel skips file_remove_privs,
// whose security.capability GETXATTR costs a round trip per new file on
// kernels without FUSE_HANDLE_KILLPRIV_V2 (a fifth of a `cp -r` of small
// files); the mount clears set-ID bits itself (dropSetIDLocked). A file
// created with set-ID bits keeps the kernel's page-cache path, and so
// does every file on a kernel that would refuse shared mappings of
// direct-I/O files (no CAP_DIRECT_IO_ALLOW_MMAP, before Linux 6.6).
func (h *handle) directOK(mode uint32) bool {
	return h.write && !h.passthrough && mode&suidBits == 0 && h.node.fsys.directMmap.Load() && h.node.smallRunWriter()
}

// PassthroughFd gives the kernel the staging file of a passthrough writer.
func (h *ptHandle) PassthroughFd() (int, bool) { return h.fd, true }

// Flush runs at every close(2) of a descriptor: what was written becomes
// visible to every face of the store.
func (h *handle) Flush(ctx context.Context) syscall.Errno {
	if !h.write {
		return 0
	}
	errno := h.node.fsys.errno("flush", h.node.Path(nil), h.node.flush(ctx))
	return errno
}

func (h *handle) Fsync(ctx context.Context, flags uint32) syscall.Errno {
	return h.node.fsys.errno("fsync", h.node.Path(nil), h.node.fsync(ctx, h.write))
}

func (h *handle) Release(ctx context.Context) syscall.Errno {
	h.mu.Lock()
	if h.reader != nil {
		_ = h.reader.Close()
		h.reader = nil
	}
	h.mu.Unlock()
	h.node.mu.Lock()
	h.node.modes.uncount(h)
	h.node.mu.Unlock()
	if h.stage != nil {
		defer h.stage.release()
	}
	if h.passthrough {
		n := h.node
		time.AfterFunc(ptLinger, func() {
			n.mu.Lock()
			n.modes.lingerDone()
			n.mu.Unlock()
		})
	}
	if h.write {
		return h.node.fsys.errno("release", h.node.Path(nil), h.node.endWrite(ctx))
	}
	return 0
}
