package fs

import (
	"context"
	"sort"
	"syscall"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/cairnstore/cairn/objstore"
)

// rootNode is the mount root: one directory per bucket, and .cairn/.
type rootNode struct {
	gofs.Inode
	fsys *FS
}

var (
	_ gofs.NodeLookuper  = (*rootNode)(nil)
	_ gofs.NodeReaddirer = (*rootNode)(nil)
	_ gofs.NodeMkdirer   = (*rootNode)(nil)
	_ gofs.NodeRmdirer   = (*rootNode)(nil)
	_ gofs.NodeGetattrer = (*rootNode)(nil)
	_ gofs.NodeStatfser  = (*rootNode)(nil)
	_ gofs.NodeRenamer   = (*rootNode)(nil)
	_ gofs.NodeCreater   = (*rootNode)(nil)
)

func (r *rootNode) Getattr(ctx context.Context, _ gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	a := attrs{perm: defaultDirMode, uid: r.fsys.owner.uid, gid: r.fsys.owner.gid, mtime: time.Now()}
	a.fill(&out.Attr, syscall.S_IFDIR)
	return 0
}

func (r *rootNode) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	if errno := r.fsys.allow(ctx, r.EmbeddedInode(), mayExec); errno != 0 {
		return nil, errno
	}
	if name == controlDirName && r.fsys.opt.Control != nil {
		return r.controlDir(ctx, out), 0
	}
	if !visible(name) || objstore.IsSystemBucket(name) {
		return nil, syscall.ENOENT
	}
	info, err := r.fsys.store.HeadBucket(ctx, name)
	if err != nil {
		return nil, r.fsys.errno("lookup", name, err)
	}
	return r.bucketChild(ctx, name, info, out), 0
}

func (r *rootNode) bucketChild(ctx context.Context, name string, info objstore.BucketInfo, out *fuse.EntryOut) *gofs.Inode {
	a := attrs{perm: defaultDirMode, uid: r.fsys.owner.uid, gid: r.fsys.owner.gid, mtime: info.Created}
	a.fill(&out.Attr, syscall.S_IFDIR)
	if ch := r.GetChild(name); ch != nil {
		if _, ok := ch.Operations().(*dirNode); ok {
			return ch
		}
	}
	return r.NewInode(ctx, &dirNode{fsys: r.fsys}, gofs.StableAttr{Mode: syscall.S_IFDIR})
}

func (r *rootNode) Readdir(ctx context.Context) (gofs.DirStream, syscall.Errno) {
	buckets, err := r.fsys.store.ListBuckets(ctx)
	if err != nil {
		return nil, r.fsys.errno("readdir", "/", err)
	}
	var entries []fuse.DirEntry
	for _, b := range buckets {
		if visible(b.Name) && !objstore.IsSystemBucket(b.Name) {
			entries = append(entries, fuse.DirEntry{Name: b.Name, Mode: syscall.S_IFDIR})
		}
	}
	if r.fsys.opt.Control != nil {
		entries = append(entries, fuse.DirEntry{Name: controlDirName, Mode: syscall.S_IFDIR})
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name < entries[j].Name })
	return gofs.NewListDirStream(entries), 0
}

// Mkdir creates a bucket.
func (r *rootNode) Mkdir(ctx context.Context, name string, mode uint32, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	if name == controlDirName {
		return nil, syscall.EEXIST
	}
	if errno := r.fsys.allow(ctx, r.EmbeddedInode(), mayWrite|mayExec); errno != 0 {
		return nil, errno
	}
	if err := r.fsys.store.CreateBucket(ctx, name, objstore.BucketOptions{}); err != nil {
		return nil, r.fsys.errno("mkdir", name, err)
	}
	info, err := r.fsys.store.HeadBucket(ctx, name)
	if err != nil {
		return nil, r.fsys.errno("mkdir", name, err)
	}
	ch := r.bucketChild(ctx, name, info, out)
	if d, ok := ch.Operations().(*dirNode); ok {
		d.setEmpty()
	}
	return ch, 0
}

// Rmdir deletes an empty bucket.
func (r *rootNode) Rmdir(ctx context.Context, name string) syscall.Errno {
	if name == controlDirName || objstore.IsSystemBucket(name) {
		return syscall.EPERM
	}
	if errno := r.fsys.allow(ctx, r.EmbeddedInode(), mayWrite|mayExec); errno != 0 {
		return errno
	}
	return r.fsys.errno("rmdir", name, r.fsys.store.DeleteBucket(ctx, name))
}

// Create refuses files at the root: only buckets live there.
func (r *rootNode) Create(ctx context.Context, name string, flags uint32, mode uint32, out *fuse.EntryOut) (*gofs.Inode, gofs.FileHandle, uint32, syscall.Errno) {
	r.fsys.log.Debug().Str("name", name).Msg("create at the mount root refused: only buckets (directories) live there")
	return nil, nil, 0, syscall.EPERM
}

// Rename of buckets is not supported.
func (r *rootNode) Rename(ctx context.Context, name string, newParent gofs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	r.fsys.log.Debug().Str("name", name).Msg("rename of a bucket refused")
	return syscall.EXDEV
}

func (r *rootNode) Statfs(ctx context.Context, out *fuse.StatfsOut) syscall.Errno {
	return r.fsys.statfs(ctx, out)
}
