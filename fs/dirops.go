package fs

import (
	"bytes"
	"context"
	"strings"
	"syscall"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/cairnstore/cairn/objstore"
)

// RENAME_NOREPLACE and RENAME_EXCHANGE, as renameat2(2) passes them.
const (
	renameNoReplace = 1
	renameExchange  = 2
)

// newKey checks a name about to be created under prefix and returns its key.
func newKey(prefix, name string) (string, syscall.Errno) {
	if len(name) > maxNameLen {
		return "", syscall.ENAMETOOLONG
	}
	if !visible(name) {
		return "", syscall.EINVAL
	}
	key := prefix + name
	if len(key)+1 > objstore.MaxKeyLen {
		return "", syscall.ENAMETOOLONG
	}
	return key, 0
}

// exists says whether name is taken in d, in the store or by a file being
// created on the mount.
func (d *dirNode) exists(ctx context.Context, name string) (entry, bool, error) {
	if ch := d.GetChild(name); ch != nil {
		if fn, ok := ch.Operations().(*fileNode); ok && fn.writing() {
			return entry{kind: kindFile}, true, nil
		}
	}
	bucket, prefix := d.loc()
	e, err := d.fsys.probe(ctx, bucket, prefix+name)
	switch {
	case err == nil:
		return e, true, nil
	case isNotFound(err):
		return entry{}, false, nil
	default:
		return entry{}, false, err
	}
}

// freeName checks a name about to be made in d: valid, and not taken
// (EEXIST). It returns the bucket and the new key.
func (d *dirNode) freeName(ctx context.Context, op, name string) (bucket, key string, errno syscall.Errno) {
	bucket, prefix := d.loc()
	if key, errno = newKey(prefix, name); errno != 0 {
		return "", "", errno
	}
	_, taken, err := d.exists(ctx, name)
	switch {
	case err != nil:
		return "", "", d.fsys.errno(op, bucket+"/"+key, err)
	case taken:
		return "", "", syscall.EEXIST
	}
	return bucket, key, 0
}

func (d *dirNode) Mkdir(ctx context.Context, name string, mode uint32, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	ctx = uninterruptible(ctx)
	if errno := d.fsys.allow(ctx, d.EmbeddedInode(), mayWrite|mayExec); errno != 0 {
		return nil, errno
	}
	bucket, key, errno := d.freeName(ctx, "mkdir", name)
	if errno != 0 {
		return nil, errno
	}
	o := callerOwner(ctx, d.fsys.owner)
	a := attrs{perm: mode & 0o7777, uid: o.uid, gid: o.gid, mtime: time.Now()}
	if err := d.fsys.putMarker(ctx, bucket, key+"/", a); err != nil {
		return nil, d.fsys.errno("mkdir", bucket+"/"+key, err)
	}
	d.listed(name, entry{kind: kindDir})
	a.fill(&out.Attr, syscall.S_IFDIR)
	nd := &dirNode{fsys: d.fsys}
	nd.setEmpty()
	return d.NewInode(ctx, nd, gofs.StableAttr{Mode: syscall.S_IFDIR}), 0
}

func (d *dirNode) Rmdir(ctx context.Context, name string) syscall.Errno {
	ctx = uninterruptible(ctx)
	if errno := d.fsys.allowUnlink(ctx, d.EmbeddedInode(), d.childAttrs(ctx, name)); errno != 0 {
		return errno
	}
	bucket, prefix := d.loc()
	sub := prefix + name + "/"
	page, err := d.fsys.store.List(ctx, bucket, objstore.ListOptions{Prefix: sub, MaxKeys: 2})
	if err != nil {
		return d.fsys.errno("rmdir", bucket+"/"+sub, err)
	}
	hasMarker := false
	for _, o := range page.Objects {
		if o.Key != sub {
			return syscall.ENOTEMPTY
		}
		hasMarker = true
	}
	if ch := d.GetChild(name); ch != nil {
		for _, gc := range ch.Children() {
			if fn, ok := gc.Operations().(*fileNode); ok && fn.writing() {
				return syscall.ENOTEMPTY
			}
		}
	}
	if !hasMarker {
		return syscall.ENOENT
	}
	if err := d.fsys.remove(ctx, bucket, sub); err != nil {
		return d.fsys.errno("rmdir", bucket+"/"+sub, err)
	}
	d.dropListing()
	return d.fsys.errno("rmdir", bucket+"/"+prefix, d.keepAlive(ctx))
}

// keepAlive gives the directory a marker when the keys under it are gone,
// so that it stays, as a POSIX directory does when emptied.
func (d *dirNode) keepAlive(ctx context.Context) error {
	bucket, prefix := d.loc()
	if prefix == "" {
		return nil
	}
	page, err := d.fsys.store.List(ctx, bucket, objstore.ListOptions{Prefix: prefix, MaxKeys: 1})
	if err != nil || len(page.Objects) > 0 {
		return err
	}
	a := d.fsys.dirAttrs(entry{kind: kindDir})
	a.mtime = time.Now() // emptied now
	return d.fsys.putMarker(ctx, bucket, prefix, a)
}

func (d *dirNode) Create(ctx context.Context, name string, flags uint32, mode uint32, out *fuse.EntryOut) (*gofs.Inode, gofs.FileHandle, uint32, syscall.Errno) {
	ctx = uninterruptible(ctx)
	if errno := d.fsys.allow(ctx, d.EmbeddedInode(), mayWrite|mayExec); errno != 0 {
		return nil, nil, 0, errno
	}
	_, prefix := d.loc()
	if _, errno := newKey(prefix, name); errno != 0 {
		return nil, nil, 0, errno
	}
	if ch := d.GetChild(name); ch != nil {
		if _, ok := ch.Operations().(*dirNode); ok {
			return nil, nil, 0, syscall.EISDIR
		}
	}
	o := callerOwner(ctx, d.fsys.owner)
	fn := &fileNode{fsys: d.fsys}
	h, err := fn.startNew(ctx, attrs{perm: mode & 0o7777, uid: o.uid, gid: o.gid, mtime: time.Now()})
	if err != nil {
		return nil, nil, 0, d.fsys.errno("create", d.Path(nil)+"/"+name, err)
	}
	ch := d.NewInode(ctx, fn, gofs.StableAttr{Mode: syscall.S_IFREG})
	fn.fillIfWriting(&out.Attr)
	d.listed(name, entry{kind: kindFile})
	fh, fuseFlags := h.fuseHandle()
	if h.directOK(mode) {
		fuseFlags |= fuse.FOPEN_DIRECT_IO
	}
	return ch, fh, fuseFlags, 0
}

func (d *dirNode) Mknod(ctx context.Context, name string, mode uint32, dev uint32, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	d.fsys.log.Debug().Str("name", name).Msg("mknod refused: the mount holds only files, directories and symlinks")
	return nil, syscall.EPERM
}

func (d *dirNode) Unlink(ctx context.Context, name string) syscall.Errno {
	ctx = uninterruptible(ctx)
	if errno := d.fsys.allowUnlink(ctx, d.EmbeddedInode(), d.childAttrs(ctx, name)); errno != 0 {
		return errno
	}
	bucket, prefix := d.loc()
	key := prefix + name
	if ch := d.GetChild(name); ch != nil {
		if fn, ok := ch.Operations().(*fileNode); ok {
			fn.markUnlinked()
		}
	}
	if err := d.fsys.remove(ctx, bucket, key); err != nil {
		return d.fsys.errno("unlink", bucket+"/"+key, err)
	}
	d.dropListing()
	return d.fsys.errno("unlink", bucket+"/"+prefix, d.keepAlive(ctx))
}

func (d *dirNode) Symlink(ctx context.Context, target, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	ctx = uninterruptible(ctx)
	if errno := d.fsys.allow(ctx, d.EmbeddedInode(), mayWrite|mayExec); errno != 0 {
		return nil, errno
	}
	bucket, key, errno := d.freeName(ctx, "symlink", name)
	if errno != 0 {
		return nil, errno
	}
	o := callerOwner(ctx, d.fsys.owner)
	a := attrs{perm: 0o777, uid: o.uid, gid: o.gid, mtime: time.Now(), size: int64(len(target))}
	m := withAttrs(nil, a)
	m[metaSymlink] = "1"
	if err := d.fsys.put(ctx, bucket, key, []byte(target), objstore.PutOptions{Meta: m}); err != nil {
		return nil, d.fsys.errno("symlink", bucket+"/"+key, err)
	}
	d.listed(name, entry{kind: kindLink})
	a.fill(&out.Attr, syscall.S_IFLNK)
	return d.NewInode(ctx, &linkNode{fsys: d.fsys}, gofs.StableAttr{Mode: syscall.S_IFLNK}), 0
}

// Link refuses hard links: an object has one name.
func (d *dirNode) Link(ctx context.Context, target gofs.InodeEmbedder, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	d.fsys.log.Info().Str("name", name).Msg("hard link refused: objects have one name; use a symlink or a copy")
	return nil, syscall.EPERM
}

// put writes a small object asynchronously (see objstore.PutAsync).
func (f *FS) put(ctx context.Context, bucket, key string, data []byte, opt objstore.PutOptions) error {
	f.self.expect(bucket, key)
	if _, err := f.store.PutAsync(ctx, bucket, key, objstore.FromReader(bytes.NewReader(data), int64(len(data))), opt); err != nil {
		f.self.cancel(bucket, key)
		return err
	}
	return nil
}

// putMarker writes the marker of the directory at prefix ("a/b/").
func (f *FS) putMarker(ctx context.Context, bucket, prefix string, a attrs) error {
	return f.put(ctx, bucket, prefix, nil, objstore.PutOptions{Meta: withAttrs(nil, a)})
}

// setMeta replaces an object's metadata, keeping its bytes.
func (f *FS) setMeta(ctx context.Context, bucket, key, contentType string, m map[string]string) error {
	f.self.expect(bucket, key)
	if _, err := f.store.SetMetaAsync(ctx, bucket, key, contentType, m, ""); err != nil {
		f.self.cancel(bucket, key)
		return err
	}
	return nil
}

// remove deletes a key.
func (f *FS) remove(ctx context.Context, bucket, key string) error {
	f.self.expect(bucket, key)
	if _, err := f.store.Delete(ctx, bucket, key, objstore.DeleteOptions{}); err != nil {
		f.self.cancel(bucket, key)
		return err
	}
	return nil
}

// Rename moves a file or a directory with the store's atomic rename.
func (d *dirNode) Rename(ctx context.Context, name string, newParent gofs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	ctx = uninterruptible(ctx)
	if flags&renameExchange != 0 {
		return syscall.EINVAL
	}
	nd, ok := newParent.(*dirNode)
	if !ok {
		return syscall.EXDEV
	}
	bucket, prefix := d.loc()
	nbucket, nprefix := nd.loc()
	if bucket != nbucket {
		return syscall.EXDEV
	}
	from := prefix + name
	to, errno := newKey(nprefix, newName)
	if errno != 0 {
		return errno
	}
	src, ok, err := d.exists(ctx, name)
	if err != nil || !ok {
		if err != nil {
			return d.fsys.errno("rename", bucket+"/"+from, err)
		}
		return syscall.ENOENT
	}
	dst, dstExists, err := nd.exists(ctx, newName)
	if err != nil {
		return d.fsys.errno("rename", bucket+"/"+to, err)
	}
	if errno := d.allowRename(ctx, name, nd, newName, src, dstExists); errno != 0 {
		return errno
	}
	if dstExists && flags&renameNoReplace != 0 {
		return syscall.EEXIST
	}
	if src.kind == kindDir {
		errno = d.renameDir(ctx, name, bucket, from, to, dst, dstExists)
	} else {
		errno = d.renameFile(ctx, name, bucket, from, to, dst, dstExists)
	}
	if errno != 0 {
		return errno
	}
	d.dropListing()
	nd.dropListing()
	return d.fsys.errno("rename", bucket+"/"+prefix, d.keepAlive(ctx))
}

// allowRename checks the caller's rights for a rename of name in d to
// newName in nd, as rename(2): removing from d, adding to nd, replacing
// what newName names, and for a directory moved elsewhere, writing its
// ".." entry (write permission on the directory itself).
func (d *dirNode) allowRename(ctx context.Context, name string, nd *dirNode, newName string, src entry, dstExists bool) syscall.Errno {
	c := d.fsys.callerOf(ctx)
	if c.has(capDacOverride) && c.has(capFowner) {
		return 0
	}
	if errno := d.fsys.allowUnlink(ctx, d.EmbeddedInode(), d.childAttrs(ctx, name)); errno != 0 {
		return errno
	}
	if dstExists {
		if errno := d.fsys.allowUnlink(ctx, nd.EmbeddedInode(), nd.childAttrs(ctx, newName)); errno != 0 {
			return errno
		}
	} else if errno := d.fsys.allow(ctx, nd.EmbeddedInode(), mayWrite|mayExec); errno != 0 {
		return errno
	}
	if src.kind == kindDir && nd != d {
		// The directories above were checked with d.
		a, err := d.childAttrs(ctx, name)()
		if err != nil {
			return d.fsys.errno("rename", d.Path(nil)+"/"+name, err)
		}
		if !c.permits(a, true, mayWrite) {
			return syscall.EACCES
		}
	}
	return 0
}

func (d *dirNode) renameFile(ctx context.Context, name, bucket, from, to string, dst entry, dstExists bool) syscall.Errno {
	if dstExists && dst.kind == kindDir {
		return syscall.EISDIR
	}
	// A file still being written commits first, so that the rename moves
	// what the writer has written so far.
	if ch := d.GetChild(name); ch != nil {
		if fn, ok := ch.Operations().(*fileNode); ok {
			if err := fn.flush(ctx); err != nil {
				return d.fsys.errno("rename", bucket+"/"+from, err)
			}
		}
	}
	d.fsys.self.expect(bucket, from)
	if err := d.fsys.store.Rename(ctx, bucket, from, to, objstore.RenameOptions{}); err != nil {
		d.fsys.self.cancel(bucket, from)
		return d.fsys.errno("rename", bucket+"/"+from, err)
	}
	return 0
}

func (d *dirNode) renameDir(ctx context.Context, name, bucket, from, to string, dst entry, dstExists bool) syscall.Errno {
	if dstExists && dst.kind != kindDir {
		return syscall.ENOTDIR
	}
	if strings.HasPrefix(to+"/", from+"/") {
		return syscall.EINVAL // into itself
	}
	if err := d.fsys.flushUnder(ctx, d.GetChild(name)); err != nil {
		return d.fsys.errno("rename", bucket+"/"+from, err)
	}
	d.fsys.self.expect(bucket, from+"/")
	n, err := d.fsys.store.RenamePrefix(ctx, bucket, from+"/", to+"/", objstore.RenameOptions{IfNoneMatch: "*", ReplaceMarker: true})
	if err != nil {
		d.fsys.self.cancel(bucket, from+"/")
		if isExists(err) {
			return syscall.ENOTEMPTY
		}
		return d.fsys.errno("rename", bucket+"/"+from, err)
	}
	if n == 0 {
		d.fsys.self.cancel(bucket, from+"/")
		return syscall.ENOENT
	}
	return 0
}

// flushUnder commits the files being written under n.
func (f *FS) flushUnder(ctx context.Context, n *gofs.Inode) error {
	if n == nil {
		return nil
	}
	for _, ch := range n.Children() {
		switch op := ch.Operations().(type) {
		case *fileNode:
			if err := op.flush(ctx); err != nil {
				return err
			}
		case *dirNode:
			if err := f.flushUnder(ctx, ch); err != nil {
				return err
			}
		}
	}
	return nil
}

func isExists(err error) bool { return errnoOf(err) == syscall.EEXIST }

// uninterruptible keeps a kernel interrupt from aborting a namespace
// change half-way to EINTR, which rename(2), unlink(2) and the others
// never return on Linux: the kernel interrupts a request whenever its
// caller gets any signal (a Go program's preemption signal included),
// for instance while the change waits for pending puts of the keys it
// moves. Such a change is short; the caller still sees the outcome.
func uninterruptible(ctx context.Context) context.Context { return context.WithoutCancel(ctx) }
