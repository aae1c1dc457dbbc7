package fs

import (
	"context"
	"io"
	"syscall"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/cairnstore/cairn/objstore"
)

// maxLinkLen bounds a symlink target read back (PATH_MAX).
const maxLinkLen = 4096

// linkNode is a symbolic link: an object holding its target.
type linkNode struct {
	gofs.Inode
	noXattrs
	fsys *FS
}

var (
	_ gofs.NodeReadlinker = (*linkNode)(nil)
	_ gofs.NodeGetattrer  = (*linkNode)(nil)
	_ gofs.NodeSetattrer  = (*linkNode)(nil)
)

func (l *linkNode) Readlink(ctx context.Context) ([]byte, syscall.Errno) {
	if errno := l.fsys.allow(ctx, l.EmbeddedInode(), 0); errno != 0 {
		return nil, errno
	}
	bucket, key := location(l.EmbeddedInode())
	r, err := l.fsys.openPlain(ctx, bucket, key)
	if err != nil {
		return nil, l.fsys.errno("readlink", bucket+"/"+key, err)
	}
	defer func() { _ = r.Close() }()
	b, err := io.ReadAll(io.LimitReader(r, maxLinkLen))
	if err != nil {
		return nil, l.fsys.errno("readlink", bucket+"/"+key, err)
	}
	return b, 0
}

func (l *linkNode) Getattr(ctx context.Context, fh gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	if fh == nil {
		if errno := l.fsys.allow(ctx, l.EmbeddedInode(), 0); errno != 0 {
			return errno
		}
	}
	bucket, key := location(l.EmbeddedInode())
	info, err := l.fsys.store.Head(ctx, bucket, key, objstore.GetOptions{})
	if err != nil {
		return l.fsys.errno("getattr", bucket+"/"+key, err)
	}
	attrsFrom(info, 0o777, l.fsys.owner).fill(&out.Attr, syscall.S_IFLNK)
	return 0
}

// Setattr changes the link itself (lchown, lutimes), never its target.
func (l *linkNode) Setattr(ctx context.Context, fh gofs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	if errno := l.fsys.allowSetattr(ctx, l.EmbeddedInode(), fh, in); errno != 0 {
		return errno
	}
	bucket, key := location(l.EmbeddedInode())
	info, err := l.fsys.store.Head(ctx, bucket, key, objstore.GetOptions{})
	if err != nil {
		return l.fsys.errno("setattr", bucket+"/"+key, err)
	}
	a := attrsFrom(info, 0o777, l.fsys.owner)
	if a.applySetattr(in) {
		if err := l.fsys.setMeta(ctx, bucket, key, info.ContentType, withAttrs(info.Meta, a)); err != nil {
			return l.fsys.errno("setattr", bucket+"/"+key, err)
		}
	}
	a.fill(&out.Attr, syscall.S_IFLNK)
	return 0
}
