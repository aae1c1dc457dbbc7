package fs

import (
	"context"
	"sync"
	"syscall"

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
		r, err := h.node.fsys.store.Open(ctx, bucket, key, objstore.GetOptions{})
		if err != nil {
			return nil, err
		}
		h.reader = r
	}
	return h.reader, nil
}

var (
	_ gofs.FilePassthroughFder = (*handle)(nil)
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
	n, err := h.node.writeAt(data, off)
	if err != nil {
		return uint32(n), h.node.fsys.errno("write", h.node.Path(nil), err)
	}
	return uint32(n), 0
}

// PassthroughFd gives the kernel the staging file of a passthrough
// writer. Other handles say no; go-fuse still passes them through to the
// inode's staging file while a passthrough writer has it open.
func (h *handle) PassthroughFd() (int, bool) { return h.fd, h.passthrough }

// Flush runs at every close(2) of a descriptor: what was written becomes
// visible to every face of the store.
func (h *handle) Flush(ctx context.Context) syscall.Errno {
	if !h.write {
		return 0
	}
	return h.node.fsys.errno("flush", h.node.Path(nil), h.node.flush(ctx))
}

func (h *handle) Fsync(ctx context.Context, flags uint32) syscall.Errno {
	return h.node.fsys.errno("fsync", h.node.Path(nil), h.node.fsync(ctx))
}

func (h *handle) Release(ctx context.Context) syscall.Errno {
	h.mu.Lock()
	if h.reader != nil {
		_ = h.reader.Close()
		h.reader = nil
	}
	h.mu.Unlock()
	h.node.mu.Lock()
	if h.counted {
		h.node.readers--
	}
	if h.cached {
		h.node.cached--
	}
	h.node.mu.Unlock()
	if h.write {
		return h.node.fsys.errno("release", h.node.Path(nil), h.node.endWrite(ctx))
	}
	return 0
}
