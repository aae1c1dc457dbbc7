package fs

import (
	"context"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/cairnstore/cairn/objstore"
)

// kind is what a name in a directory is.
type kind int

const (
	kindFile kind = iota + 1
	kindDir
	kindLink
)

// entry is a name found in the store: its kind and, for files, links and
// directories with a marker, the object describing it.
type entry struct {
	kind    kind
	info    objstore.ObjectInfo
	hasInfo bool
}

// dirNode is a bucket or a directory inside one.
type dirNode struct {
	gofs.Inode
	fsys *FS

	mu       sync.Mutex // protects listing and listedAt
	listing  map[string]entry
	listedAt time.Time
}

var (
	_ gofs.NodeLookuper    = (*dirNode)(nil)
	_ gofs.NodeReaddirer   = (*dirNode)(nil)
	_ gofs.NodeMkdirer     = (*dirNode)(nil)
	_ gofs.NodeRmdirer     = (*dirNode)(nil)
	_ gofs.NodeCreater     = (*dirNode)(nil)
	_ gofs.NodeUnlinker    = (*dirNode)(nil)
	_ gofs.NodeRenamer     = (*dirNode)(nil)
	_ gofs.NodeSymlinker   = (*dirNode)(nil)
	_ gofs.NodeLinker      = (*dirNode)(nil)
	_ gofs.NodeMknoder     = (*dirNode)(nil)
	_ gofs.NodeGetattrer   = (*dirNode)(nil)
	_ gofs.NodeSetattrer   = (*dirNode)(nil)
	_ gofs.NodeStatfser    = (*dirNode)(nil)
	_ gofs.NodeGetxattrer  = (*dirNode)(nil)
	_ gofs.NodeSetxattrer  = (*dirNode)(nil)
	_ gofs.NodeListxattrer = (*dirNode)(nil)
)

// loc is the bucket and the key prefix of the directory ("" for a bucket).
func (d *dirNode) loc() (bucket, prefix string) {
	bucket, key := location(d.EmbeddedInode())
	return bucket, dirPrefix(key)
}

func (d *dirNode) dropListing() {
	d.mu.Lock()
	d.listing, d.listedAt = nil, time.Time{}
	d.mu.Unlock()
}

// cached returns what the last Readdir found for name while the listing
// is fresh (the kernel's READDIRPLUS looks up every name just listed):
// fresh says the listing is current, found whether it has name. The
// mount keeps a fresh listing current with its own changes, and the
// change feed drops it when another face changes the directory.
func (d *dirNode) cached(name string) (e entry, found, fresh bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.listing == nil || time.Since(d.listedAt) > d.fsys.opt.AttrTimeout {
		return entry{}, false, false
	}
	e, found = d.listing[name]
	return e, found, true
}

// listed records a name the mount made in the directory, keeping a fresh
// listing current.
func (d *dirNode) listed(name string, e entry) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.listing != nil {
		d.listing[name] = e
	}
}

// setEmpty records that the directory, just made, is empty.
func (d *dirNode) setEmpty() {
	d.mu.Lock()
	d.listing, d.listedAt = map[string]entry{}, time.Now()
	d.mu.Unlock()
}

// probe finds what name is in the store: a directory (any key under
// key/), else a file or symlink. A directory shadows a file of its name.
func (f *FS) probe(ctx context.Context, bucket, key string) (entry, error) {
	page, err := f.store.List(ctx, bucket, objstore.ListOptions{Prefix: key + "/", MaxKeys: 1})
	if err != nil {
		return entry{}, err
	}
	if len(page.Objects) > 0 || len(page.CommonPrefixes) > 0 {
		e := entry{kind: kindDir}
		if len(page.Objects) > 0 && page.Objects[0].Key == key+"/" {
			e.info, e.hasInfo = page.Objects[0], true
		}
		return e, nil
	}
	info, err := f.store.Head(ctx, bucket, key, objstore.GetOptions{})
	if err != nil {
		return entry{}, err
	}
	return fileEntry(info), nil
}

func fileEntry(info objstore.ObjectInfo) entry {
	if info.Meta[metaSymlink] == "1" {
		return entry{kind: kindLink, info: info, hasInfo: true}
	}
	return entry{kind: kindFile, info: info, hasInfo: true}
}

func (d *dirNode) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	if errno := d.fsys.allow(ctx, d.EmbeddedInode(), mayExec); errno != 0 {
		return nil, errno
	}
	if !visible(name) {
		return nil, syscall.ENOENT
	}
	if ch := d.GetChild(name); ch != nil {
		if fn, ok := ch.Operations().(*fileNode); ok && fn.fillIfWriting(&out.Attr) {
			return ch, 0
		}
	}
	bucket, prefix := d.loc()
	e, found, fresh := d.cached(name)
	if fresh && !found {
		return nil, syscall.ENOENT
	}
	if !found || e.kind != kindDir && !e.hasInfo {
		var err error
		if e, err = d.fsys.probe(ctx, bucket, prefix+name); err != nil {
			return nil, d.fsys.errno("lookup", bucket+"/"+prefix+name, err)
		}
	}
	return d.child(ctx, name, e, out)
}

// child returns the inode for name, reusing the one in the tree when it
// is of the same kind, and fills out with its attributes.
func (d *dirNode) child(ctx context.Context, name string, e entry, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	existing := d.GetChild(name)
	switch e.kind {
	case kindDir:
		bucket, prefix := d.loc()
		if !e.hasInfo {
			if info, err := d.fsys.store.Head(ctx, bucket, prefix+name+"/", objstore.GetOptions{}); err == nil {
				e.info, e.hasInfo = info, true
			}
		}
		d.fsys.dirAttrsAt(ctx, bucket, prefix+name+"/", e).fill(&out.Attr, syscall.S_IFDIR)
		if existing != nil {
			if _, ok := existing.Operations().(*dirNode); ok {
				return existing, 0
			}
		}
		return d.NewInode(ctx, &dirNode{fsys: d.fsys}, gofs.StableAttr{Mode: syscall.S_IFDIR}), 0
	case kindLink:
		attrsFrom(e.info, 0o777, d.fsys.owner).fill(&out.Attr, syscall.S_IFLNK)
		if existing != nil {
			if _, ok := existing.Operations().(*linkNode); ok {
				return existing, 0
			}
		}
		return d.NewInode(ctx, &linkNode{fsys: d.fsys}, gofs.StableAttr{Mode: syscall.S_IFLNK}), 0
	default:
		attrsFrom(e.info, defaultFileMode, d.fsys.owner).fill(&out.Attr, syscall.S_IFREG)
		if existing != nil {
			if fn, ok := existing.Operations().(*fileNode); ok {
				fn.fillIfWriting(&out.Attr)
				return existing, 0
			}
		}
		return d.NewInode(ctx, &fileNode{fsys: d.fsys}, gofs.StableAttr{Mode: syscall.S_IFREG}), 0
	}
}

// dirAttrs are a directory's attributes: its marker's, or defaults for a
// directory that only exists through the keys under it (implied), with no
// mtime (dirAttrsAt finds it; permission checks need none).
func (f *FS) dirAttrs(e entry) attrs {
	if e.hasInfo {
		return attrsFrom(e.info, defaultDirMode, f.owner)
	}
	return attrs{perm: defaultDirMode, uid: f.owner.uid, gid: f.owner.gid}
}

// dirAttrsAt are dirAttrs of the directory at prefix ("a/b/") of bucket,
// with the mtime of an implied one (impliedMtime).
func (f *FS) dirAttrsAt(ctx context.Context, bucket, prefix string, e entry) attrs {
	a := f.dirAttrs(e)
	if !e.hasInfo {
		a.mtime = f.impliedMtime(ctx, bucket, prefix)
	}
	return a
}

// impliedMtimeKeys is how many keys under an implied directory
// impliedMtime looks at: one page of a listing.
const impliedMtimeKeys = 256

// impliedMtime is the mtime of a directory that has no marker: the
// newest mtime of the files directly in it, of the first
// impliedMtimeKeys keys, as a directory's mtime is when its latest entry
// was made; the bucket's creation when it holds none (only directories,
// or the listing failed). Never the Unix epoch: find -newer, rsync and
// make would take the directory for 55 years old.
func (f *FS) impliedMtime(ctx context.Context, bucket, prefix string) time.Time {
	var newest time.Time
	page, err := f.store.List(ctx, bucket, objstore.ListOptions{Prefix: prefix, Delimiter: "/", MaxKeys: impliedMtimeKeys})
	if err == nil {
		for _, o := range page.Objects {
			if mt := attrsFrom(o, 0, f.owner).mtime; o.Key != prefix && mt.After(newest) {
				newest = mt
			}
		}
	}
	if newest.IsZero() {
		if b, err := f.store.HeadBucket(ctx, bucket); err == nil {
			newest = b.Created
		}
	}
	if newest.IsZero() {
		newest = time.Now() // the bucket is gone: the directory goes with it
	}
	return newest
}

func (d *dirNode) Readdir(ctx context.Context) (gofs.DirStream, syscall.Errno) {
	bucket, prefix := d.loc()
	listing := map[string]entry{}
	var files []objstore.ObjectInfo
	after := ""
	for {
		page, err := d.fsys.store.List(ctx, bucket, objstore.ListOptions{Prefix: prefix, Delimiter: "/", After: after})
		if err != nil {
			return nil, d.fsys.errno("readdir", bucket+"/"+prefix, err)
		}
		for _, p := range page.CommonPrefixes {
			if name := strings.TrimSuffix(p[len(prefix):], "/"); visible(name) {
				listing[name] = entry{kind: kindDir}
			}
		}
		for _, o := range page.Objects {
			if name := o.Key[len(prefix):]; o.Key != prefix && visible(name) {
				files = append(files, o)
			}
		}
		if !page.IsTruncated {
			break
		}
		after = page.NextMarker
	}
	for _, o := range files {
		if name := o.Key[len(prefix):]; listing[name].kind != kindDir {
			listing[name] = fileEntry(o)
		}
	}
	// Files created on the mount and not yet closed are not in the store.
	for name, ch := range d.Children() {
		if fn, ok := ch.Operations().(*fileNode); ok && fn.writing() {
			if _, listed := listing[name]; !listed {
				listing[name] = entry{kind: kindFile}
			}
		}
	}
	d.mu.Lock()
	d.listing, d.listedAt = listing, time.Now()
	d.mu.Unlock()
	entries := make([]fuse.DirEntry, 0, len(listing))
	for name, e := range listing {
		mode := uint32(syscall.S_IFREG)
		switch e.kind {
		case kindDir:
			mode = syscall.S_IFDIR
		case kindLink:
			mode = syscall.S_IFLNK
		}
		entries = append(entries, fuse.DirEntry{Name: name, Mode: mode})
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name < entries[j].Name })
	return gofs.NewListDirStream(entries), 0
}

func (d *dirNode) Getattr(ctx context.Context, fh gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	if fh == nil {
		if errno := d.fsys.allow(ctx, d.EmbeddedInode(), 0); errno != 0 {
			return errno
		}
	}
	a, _, err := d.attrs(ctx, true)
	if err != nil {
		return d.fsys.errno("getattr", d.Path(nil), err)
	}
	a.fill(&out.Attr, syscall.S_IFDIR)
	return 0
}

// attrs reads the directory's attributes from its marker; marker is nil
// when there is none (a bucket has none). withMtime asks for the mtime of
// an implied directory too, which costs a listing (impliedMtime): what is
// shown or written into a new marker needs it, permission checks and
// xattr reads do not.
func (d *dirNode) attrs(ctx context.Context, withMtime bool) (a attrs, marker *objstore.ObjectInfo, err error) {
	bucket, prefix := d.loc()
	if prefix == "" {
		b, err := d.fsys.store.HeadBucket(ctx, bucket)
		if err != nil {
			return attrs{}, nil, err
		}
		return attrs{perm: defaultDirMode, uid: d.fsys.owner.uid, gid: d.fsys.owner.gid, mtime: b.Created}, nil, nil
	}
	info, err := d.fsys.store.Head(ctx, bucket, prefix, objstore.GetOptions{})
	switch {
	case err == nil:
		return d.fsys.dirAttrs(entry{kind: kindDir, info: info, hasInfo: true}), &info, nil
	case isNotFound(err) && !withMtime:
		return d.fsys.dirAttrs(entry{kind: kindDir}), nil, nil
	case isNotFound(err):
		return d.fsys.dirAttrsAt(ctx, bucket, prefix, entry{kind: kindDir}), nil, nil
	default:
		return attrs{}, nil, err
	}
}

// Setattr changes a directory's mode, owner or mtime, kept in its marker
// (made when the directory had none). A bucket's attributes are fixed.
func (d *dirNode) Setattr(ctx context.Context, fh gofs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	if errno := d.fsys.allowSetattr(ctx, d.EmbeddedInode(), fh, in); errno != 0 {
		return errno
	}
	bucket, prefix := d.loc()
	a, marker, err := d.attrs(ctx, true)
	if err != nil {
		return d.fsys.errno("setattr", bucket+"/"+prefix, err)
	}
	if !a.applySetattr(in) {
		a.fill(&out.Attr, syscall.S_IFDIR)
		return 0
	}
	if prefix == "" {
		d.fsys.log.Info().Str("bucket", bucket).Msg("setattr on a bucket directory refused: a bucket's mode, owner and times are fixed")
		return syscall.EPERM
	}
	if marker != nil {
		err = d.fsys.setMeta(ctx, bucket, prefix, marker.ContentType, withAttrs(marker.Meta, a))
	} else {
		err = d.fsys.putMarker(ctx, bucket, prefix, a)
	}
	if err != nil {
		return d.fsys.errno("setattr", bucket+"/"+prefix, err)
	}
	a.fill(&out.Attr, syscall.S_IFDIR)
	return 0
}

func (d *dirNode) Statfs(ctx context.Context, out *fuse.StatfsOut) syscall.Errno {
	return d.fsys.statfs(ctx, out)
}

func isNotFound(err error) bool { return errnoOf(err) == syscall.ENOENT }
