package fs

import (
	"context"
	"maps"
	"strconv"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/cairnstore/cairn/objstore"
)

// Object metadata keys the mount keeps its POSIX attributes in. They are
// not x-amz-meta-* keys, so S3 clients do not see them as user metadata.
const (
	metaMode    = "x-cairn-mode"    // permission bits, octal
	metaUID     = "x-cairn-uid"     // decimal
	metaGID     = "x-cairn-gid"     // decimal
	metaMtime   = "x-cairn-mtime"   // Unix nanoseconds
	metaSymlink = "x-cairn-symlink" // "1": the bytes are a symlink's target
	userMeta    = "x-amz-meta-"     // S3 user metadata, user.* xattrs
)

// Default permissions of objects written over S3, which carry none.
const (
	defaultFileMode = 0o644
	defaultDirMode  = 0o755
)

// attrs are the POSIX attributes of one file, directory or symlink.
type attrs struct {
	perm     uint32 // permission bits (07777)
	uid, gid uint32
	mtime    time.Time
	// ctime is when the attributes or the content last changed: the
	// version's time in the store (a change of metadata alone makes a
	// version too), zero where nothing says (fill shows mtime then).
	// It is never stored: x-cairn-mtime is the mtime alone.
	ctime time.Time
	size  int64
}

// attrsFrom reads the attributes kept in an object's metadata, with the
// object's own size and time where the metadata says nothing.
func attrsFrom(info objstore.ObjectInfo, defPerm uint32, owner owner) attrs {
	a := attrs{perm: defPerm, uid: owner.uid, gid: owner.gid, mtime: info.ModTime, ctime: info.ModTime, size: info.Size}
	if v, ok := info.Meta[metaMode]; ok {
		if n, err := strconv.ParseUint(v, 8, 32); err == nil {
			a.perm = uint32(n) & 0o7777
		}
	}
	if v, ok := info.Meta[metaUID]; ok {
		if n, err := strconv.ParseUint(v, 10, 32); err == nil {
			a.uid = uint32(n)
		}
	}
	if v, ok := info.Meta[metaGID]; ok {
		if n, err := strconv.ParseUint(v, 10, 32); err == nil {
			a.gid = uint32(n)
		}
	}
	if v, ok := info.Meta[metaMtime]; ok {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			a.mtime = time.Unix(0, n)
		}
	}
	return a
}

// store writes the attributes into metadata m.
func (a attrs) store(m map[string]string) {
	m[metaMode] = strconv.FormatUint(uint64(a.perm), 8)
	m[metaUID] = strconv.FormatUint(uint64(a.uid), 10)
	m[metaGID] = strconv.FormatUint(uint64(a.gid), 10)
	m[metaMtime] = strconv.FormatInt(a.mtime.UnixNano(), 10)
}

// withAttrs returns a copy of m holding a.
func withAttrs(m map[string]string, a attrs) map[string]string {
	out := maps.Clone(m)
	if out == nil {
		out = map[string]string{}
	}
	a.store(out)
	return out
}

// fill writes the attributes into a FUSE reply, with typ one of
// syscall.S_IFREG, S_IFDIR or S_IFLNK.
func (a attrs) fill(out *fuse.Attr, typ uint32) {
	out.Mode = typ | a.perm
	out.Size = uint64(a.size)
	out.Blocks = (uint64(a.size) + 511) / 512
	out.Blksize = 4096
	out.Nlink = 1
	if typ == syscall.S_IFDIR {
		out.Nlink = 2
		out.Size = 4096
		out.Blocks = 8
	}
	out.Owner = fuse.Owner{Uid: a.uid, Gid: a.gid}
	ctime := a.ctimeShown()
	out.SetTimes(&a.mtime, &a.mtime, &ctime)
}

// ctimeShown is the ctime a stat shows: never before the mtime (a write
// or a utimens changes both), which it is when nothing says more.
func (a attrs) ctimeShown() time.Time {
	if a.ctime.Before(a.mtime) {
		return a.mtime
	}
	return a.ctime
}

// pinMtime returns m holding the mtime a shows, for a change of metadata
// alone (setxattr) of an object whose mtime is its version's time
// (written over S3, no x-cairn-mtime): the change makes a new version,
// which must not move the mtime, only the ctime.
func pinMtime(m map[string]string, a attrs) map[string]string {
	if _, ok := m[metaMtime]; ok {
		return m
	}
	out := maps.Clone(m)
	if out == nil {
		out = map[string]string{}
	}
	out[metaMtime] = strconv.FormatInt(a.mtime.UnixNano(), 10)
	return out
}

// applySetattr changes a as a setattr request asks (mode, owner, mtime)
// and says whether anything changed.
func (a *attrs) applySetattr(in *fuse.SetAttrIn) bool {
	changed := false
	if m, ok := in.GetMode(); ok {
		a.perm, changed = m&0o7777, true
	}
	if uid, ok := in.GetUID(); ok {
		a.uid, changed = uid, true
	}
	if gid, ok := in.GetGID(); ok {
		a.gid, changed = gid, true
	}
	if mt, ok := in.GetMTime(); ok {
		a.mtime, changed = mt, true
	}
	return changed
}

// owner is the owner given to objects that carry none.
type owner struct{ uid, gid uint32 }

// callerOwner is the owner of what the calling process creates: the
// caller's ids, or def when the request carries none.
func callerOwner(ctx context.Context, def owner) owner {
	if c, ok := fuse.FromContext(ctx); ok {
		return owner{c.Uid, c.Gid}
	}
	return def
}
