package fs

import (
	"context"
	"syscall"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/cairnstore/cairn/frontends/control"
)

// The control tree is root's alone: the mount checks these modes
// (perm.go).
const (
	ctlDirMode      = 0o700
	ctlReadOnlyMode = 0o400
	ctlWritableMode = 0o600
)

// controlDir returns the inode of .cairn/.
func (r *rootNode) controlDir(ctx context.Context, out *fuse.EntryOut) *gofs.Inode {
	ctlAttrs(ctlDirMode).fill(&out.Attr, syscall.S_IFDIR)
	if ch := r.GetChild(controlDirName); ch != nil {
		return ch
	}
	return r.NewInode(ctx, &ctlDirNode{fsys: r.fsys, dir: r.fsys.opt.Control}, gofs.StableAttr{Mode: syscall.S_IFDIR})
}

func ctlAttrs(perm uint32) attrs {
	return attrs{perm: perm, mtime: time.Now()}
}

// ctlDirNode is a directory of the control tree.
type ctlDirNode struct {
	gofs.Inode
	fsys *FS
	dir  *control.Dir
}

var (
	_ gofs.NodeLookuper  = (*ctlDirNode)(nil)
	_ gofs.NodeReaddirer = (*ctlDirNode)(nil)
	_ gofs.NodeGetattrer = (*ctlDirNode)(nil)
)

func (d *ctlDirNode) Getattr(ctx context.Context, _ gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	ctlAttrs(ctlDirMode).fill(&out.Attr, syscall.S_IFDIR)
	return 0
}

func (d *ctlDirNode) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	if errno := d.fsys.allow(ctx, d.EmbeddedInode(), mayExec); errno != 0 {
		return nil, errno
	}
	n, err := d.dir.Lookup(ctx, name)
	if err != nil {
		return nil, d.fsys.ctlErrno("lookup", d.Path(nil)+"/"+name, err)
	}
	existing := d.GetChild(name)
	switch n := n.(type) {
	case *control.Dir:
		ctlAttrs(ctlDirMode).fill(&out.Attr, syscall.S_IFDIR)
		if existing != nil {
			if cd, ok := existing.Operations().(*ctlDirNode); ok && cd.dir == n {
				return existing, 0
			}
		}
		return d.NewInode(ctx, &ctlDirNode{fsys: d.fsys, dir: n}, gofs.StableAttr{Mode: syscall.S_IFDIR}), 0
	case *control.File:
		cf := &ctlFileNode{fsys: d.fsys, file: n}
		ctlAttrs(cf.perm()).fill(&out.Attr, syscall.S_IFREG)
		if existing != nil {
			if old, ok := existing.Operations().(*ctlFileNode); ok && old.file == n {
				return existing, 0
			}
		}
		return d.NewInode(ctx, cf, gofs.StableAttr{Mode: syscall.S_IFREG}), 0
	}
	return nil, syscall.ENOENT
}

func (d *ctlDirNode) Readdir(ctx context.Context) (gofs.DirStream, syscall.Errno) {
	list, err := d.dir.List(ctx)
	if err != nil {
		return nil, d.fsys.ctlErrno("readdir", d.Path(nil), err)
	}
	entries := make([]fuse.DirEntry, 0, len(list))
	for _, e := range list {
		mode := uint32(syscall.S_IFREG)
		if _, ok := e.Node.(*control.Dir); ok {
			mode = syscall.S_IFDIR
		}
		entries = append(entries, fuse.DirEntry{Name: e.Name, Mode: mode})
	}
	return gofs.NewListDirStream(entries), 0
}

// ctlFileNode is a control file: reading returns its document, read once
// per open; each write(2) runs its operation with the bytes written and
// fails with the operation's errno, so `echo word > file` reports it.
type ctlFileNode struct {
	gofs.Inode
	noXattrs
	fsys *FS
	file *control.File
}

var (
	_ gofs.NodeOpener    = (*ctlFileNode)(nil)
	_ gofs.NodeGetattrer = (*ctlFileNode)(nil)
	_ gofs.NodeSetattrer = (*ctlFileNode)(nil)
)

func (c *ctlFileNode) perm() uint32 {
	if c.file.Writable() {
		return ctlWritableMode
	}
	return ctlReadOnlyMode
}

func (c *ctlFileNode) Getattr(ctx context.Context, _ gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	ctlAttrs(c.perm()).fill(&out.Attr, syscall.S_IFREG)
	return 0
}

// Setattr accepts the truncation that `>` asks for and changes nothing.
func (c *ctlFileNode) Setattr(ctx context.Context, fh gofs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	if errno := c.fsys.allowSetattr(ctx, c.EmbeddedInode(), fh, in); errno != 0 {
		return errno
	}
	if in.Valid&^(fuse.FATTR_SIZE|fuse.FATTR_FH|fuse.FATTR_LOCKOWNER|fuse.FATTR_MTIME|fuse.FATTR_ATIME|fuse.FATTR_MTIME_NOW|fuse.FATTR_ATIME_NOW|fuse.FATTR_CTIME) != 0 {
		return syscall.EPERM
	}
	ctlAttrs(c.perm()).fill(&out.Attr, syscall.S_IFREG)
	return 0
}

func (c *ctlFileNode) Open(ctx context.Context, flags uint32) (gofs.FileHandle, uint32, syscall.Errno) {
	if errno := c.fsys.allow(ctx, c.EmbeddedInode(), openMask(flags)); errno != 0 {
		return nil, 0, errno
	}
	h := &ctlHandle{node: c}
	if flags&syscall.O_ACCMODE != syscall.O_RDONLY {
		if !c.file.Writable() {
			return nil, 0, syscall.EACCES
		}
		h.write = true
	}
	if flags&syscall.O_ACCMODE != syscall.O_WRONLY {
		doc, err := c.file.Read(ctx)
		if err != nil {
			return nil, 0, c.fsys.ctlErrno("open", c.Path(nil), err)
		}
		h.doc = doc
	}
	return h, fuse.FOPEN_DIRECT_IO, 0
}

type ctlHandle struct {
	node  *ctlFileNode
	doc   []byte
	write bool
}

var (
	_ gofs.FileReader = (*ctlHandle)(nil)
	_ gofs.FileWriter = (*ctlHandle)(nil)
)

func (h *ctlHandle) Read(ctx context.Context, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	if off >= int64(len(h.doc)) {
		return fuse.ReadResultData(nil), 0
	}
	return fuse.ReadResultData(h.doc[off:min(int64(len(h.doc)), off+int64(len(dest)))]), 0
}

func (h *ctlHandle) Write(ctx context.Context, data []byte, off int64) (uint32, syscall.Errno) {
	if !h.write {
		return 0, syscall.EBADF
	}
	if err := h.node.file.Write(ctx, data); err != nil {
		return 0, h.node.fsys.ctlErrno("write", h.node.Path(nil), err)
	}
	return uint32(len(data)), 0
}

// ctlErrno maps a control operation's error (control.Errno) and logs it.
func (f *FS) ctlErrno(op, path string, err error) syscall.Errno {
	e := control.Errno(err)
	if e == syscall.ENOSYS {
		e = syscall.EIO // see FS.errno
	}
	if e != syscall.ENOENT {
		f.log.Warn().Err(err).Str("op", op).Str("path", path).Str("errno", e.Error()).Msg("control request failed")
	}
	return e
}
