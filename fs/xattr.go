package fs

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/cairnstore/cairn/objstore"
	gofs "github.com/hanwen/go-fuse/v2/fs"
)

// Extended attributes. user.NAME is the S3 user metadata x-amz-meta-NAME
// (names are lower-cased, as HTTP headers are); user.cairn.* attributes are
// read-only facts of the current version, readable by name but not
// listed: cp -a, rsync -aX and mv across buckets copy what listxattr
// shows, and a fact set on the copy would be refused (EPERM) or wrong
// (the copy's ETag is its own). Setting a fact to the value it holds is
// accepted and changes nothing, so that a tool copying attributes
// between two files of one version stays quiet. Other namespaces (security.,
// system., trusted.) are not kept: getting, setting or removing one is
// ENOTSUP, as on a Linux filesystem without them, which also tells ls(1)
// to stop asking for SELinux labels and POSIX ACLs on the mount (coreutils
// remembers a device that answered ENOTSUP) instead of costing a round
// trip each per file.
const (
	xattrUser    = "user."
	xattrFacts   = "user.cairn."
	xattrCreate  = 1 // XATTR_CREATE
	xattrReplace = 2 // XATTR_REPLACE
)

// facts are the read-only user.cairn.* attributes of a version.
func facts(info objstore.ObjectInfo) map[string]string {
	return map[string]string{
		xattrFacts + "etag":    info.ETag,
		xattrFacts + "version": info.VersionID,
		xattrFacts + "size":    strconv.FormatInt(info.Size, 10),
		xattrFacts + "mtime":   info.ModTime.UTC().Format("2006-01-02T15:04:05.000000000Z"),
	}
}

// kept says whether attr is in a namespace the mount keeps (user.).
func kept(attr string) bool {
	return strings.HasPrefix(attr, xattrUser)
}

// getxattr answers getxattr for the object info describes.
func getxattr(info objstore.ObjectInfo, attr string, dest []byte) (uint32, syscall.Errno) {
	if !kept(attr) {
		return 0, syscall.ENOTSUP
	}
	var v string
	var ok bool
	switch {
	case strings.HasPrefix(attr, xattrFacts):
		v, ok = facts(info)[attr]
	case strings.HasPrefix(attr, xattrUser):
		v, ok = info.Meta[userMeta+strings.ToLower(strings.TrimPrefix(attr, xattrUser))]
	}
	if !ok {
		return 0, syscall.ENODATA
	}
	if len(dest) < len(v) {
		return uint32(len(v)), syscall.ERANGE
	}
	return uint32(copy(dest, v)), 0
}

// isFact says whether attr names a user.cairn.* fact, in the
// lower-cased form setxattr stores names in.
func isFact(attr string) bool {
	return kept(attr) && strings.HasPrefix(xattrUser+strings.ToLower(strings.TrimPrefix(attr, xattrUser)), xattrFacts)
}

// setFact answers a setxattr (or, with remove, a removexattr) of the fact
// attr of the version info describes (nil: a directory without a marker,
// which has none): setting the value it holds is accepted and changes
// nothing, anything else is EPERM.
func setFact(info *objstore.ObjectInfo, attr string, data []byte, flags uint32, remove bool) syscall.Errno {
	if remove || info == nil {
		return syscall.EPERM
	}
	v, ok := facts(*info)[xattrUser+strings.ToLower(strings.TrimPrefix(attr, xattrUser))]
	switch {
	case !ok || v != string(data):
		return syscall.EPERM
	case flags&xattrCreate != 0:
		return syscall.EEXIST
	}
	return 0
}

// refuseFact answers a write of the fact attr on the node at path, with
// the log line of a refusal.
func (f *FS) refuseFact(info *objstore.ObjectInfo, path, attr string, data []byte, flags uint32, remove bool) syscall.Errno {
	errno := setFact(info, attr, data, flags, remove)
	if errno == syscall.EPERM {
		f.log.Info().Str("path", path).Str("xattr", attr).Bool("remove", remove).
			Msg("xattr change refused: user.cairn.* attributes are read-only facts of the current version; only their own value may be set")
	}
	return errno
}

// listxattr answers listxattr for the object info describes: its user
// metadata, without the facts (readable by name only).
func listxattr(info objstore.ObjectInfo, dest []byte) (uint32, syscall.Errno) {
	var names []string
	for k := range info.Meta {
		// User metadata named like a fact (x-amz-meta-cairn.etag, set
		// over S3) is hidden behind the fact.
		if name := xattrUser + strings.TrimPrefix(k, userMeta); strings.HasPrefix(k, userMeta) && !strings.HasPrefix(name, xattrFacts) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	var b []byte
	for _, n := range names {
		b = append(append(b, n...), 0)
	}
	if len(dest) < len(b) {
		return uint32(len(b)), syscall.ERANGE
	}
	return uint32(copy(dest, b)), 0
}

// setxattr returns the metadata after setting (or, with data nil and
// remove, removing) attr, or the errno refusing it.
func setxattr(m map[string]string, attr string, data []byte, flags uint32, remove bool) (map[string]string, syscall.Errno) {
	if !kept(attr) || len(attr) == len(xattrUser) {
		return nil, syscall.ENOTSUP
	}
	name := strings.ToLower(strings.TrimPrefix(attr, xattrUser))
	if strings.HasPrefix(xattrUser+name, xattrFacts) {
		return nil, syscall.EPERM
	}
	k := userMeta + name
	_, exists := m[k]
	switch {
	case remove && !exists, !remove && flags&xattrReplace != 0 && !exists:
		return nil, syscall.ENODATA
	case !remove && flags&xattrCreate != 0 && exists:
		return nil, syscall.EEXIST
	}
	out := maps.Clone(m)
	if out == nil {
		out = map[string]string{}
	}
	if remove {
		delete(out, k)
	} else {
		out[k] = string(data)
	}
	return out, 0
}

func (n *fileNode) Getxattr(ctx context.Context, attr string, dest []byte) (uint32, syscall.Errno) {
	if !kept(attr) {
		return 0, syscall.ENOTSUP
	}
	if errno := n.fsys.allowXattr(ctx, n.EmbeddedInode(), attr, false); errno != 0 {
		return 0, errno
	}
	info, err := n.xattrInfo(ctx)
	if err != nil {
		return 0, n.fsys.errno("getxattr", n.Path(nil), err)
	}
	return getxattr(info, attr, dest)
}

func (n *fileNode) Listxattr(ctx context.Context, dest []byte) (uint32, syscall.Errno) {
	if errno := n.fsys.allowXattr(ctx, n.EmbeddedInode(), "", false); errno != 0 {
		return 0, errno
	}
	info, err := n.xattrInfo(ctx)
	if err != nil {
		return 0, n.fsys.errno("listxattr", n.Path(nil), err)
	}
	return listxattr(info, dest)
}

func (n *fileNode) Setxattr(ctx context.Context, attr string, data []byte, flags uint32) syscall.Errno {
	if errno := n.fsys.allowXattr(ctx, n.EmbeddedInode(), attr, true); errno != 0 {
		return errno
	}
	return n.changeXattr(ctx, attr, data, flags, false)
}

func (n *fileNode) Removexattr(ctx context.Context, attr string) syscall.Errno {
	if errno := n.fsys.allowXattr(ctx, n.EmbeddedInode(), attr, true); errno != 0 {
		return errno
	}
	return n.changeXattr(ctx, attr, nil, 0, true)
}

// xattrInfo is the version whose metadata the attributes show; while the
// file is being written, with the metadata it will be committed with.
func (n *fileNode) xattrInfo(ctx context.Context) (objstore.ObjectInfo, error) {
	n.mu.Lock()
	var m map[string]string
	writing := n.ws != nil
	if writing {
		m = n.ws.meta
	}
	n.mu.Unlock()
	info, err := n.head(ctx)
	if writing {
		if isNotFound(err) {
			err = nil
		}
		info.Meta = m
	}
	return info, err
}

func (n *fileNode) changeXattr(ctx context.Context, attr string, data []byte, flags uint32, remove bool) syscall.Errno {
	if isFact(attr) {
		info, err := n.xattrInfo(ctx)
		if err != nil {
			return n.fsys.errno("setxattr", n.Path(nil), err)
		}
		return n.fsys.refuseFact(&info, n.Path(nil), attr, data, flags, remove)
	}
	n.mu.Lock()
	if n.ws != nil {
		defer n.mu.Unlock()
		m, errno := setxattr(n.ws.meta, attr, data, flags, remove)
		if errno != 0 {
			return errno
		}
		n.ws.meta = m
		return n.fsys.errno("setxattr", n.Path(nil), n.metaChangedLocked(ctx))
	}
	n.mu.Unlock()
	info, err := n.head(ctx)
	if err != nil {
		return n.fsys.errno("setxattr", n.Path(nil), err)
	}
	m, errno := setxattr(info.Meta, attr, data, flags, remove)
	if errno != 0 {
		return errno
	}
	bucket, key := n.key()
	m = pinMtime(m, attrsFrom(info, defaultFileMode, n.fsys.owner))
	return n.fsys.errno("setxattr", n.Path(nil), n.fsys.setMeta(ctx, bucket, key, info.ContentType, m))
}

func (d *dirNode) Getxattr(ctx context.Context, attr string, dest []byte) (uint32, syscall.Errno) {
	if !kept(attr) {
		return 0, syscall.ENOTSUP
	}
	if errno := d.fsys.allowXattr(ctx, d.EmbeddedInode(), attr, false); errno != 0 {
		return 0, errno
	}
	_, marker, err := d.attrs(ctx, false)
	if err != nil {
		return 0, d.fsys.errno("getxattr", d.Path(nil), err)
	}
	if marker == nil {
		return 0, syscall.ENODATA
	}
	return getxattr(*marker, attr, dest)
}

func (d *dirNode) Listxattr(ctx context.Context, dest []byte) (uint32, syscall.Errno) {
	if errno := d.fsys.allowXattr(ctx, d.EmbeddedInode(), "", false); errno != 0 {
		return 0, errno
	}
	_, marker, err := d.attrs(ctx, false)
	if err != nil {
		return 0, d.fsys.errno("listxattr", d.Path(nil), err)
	}
	if marker == nil {
		return 0, 0
	}
	return listxattr(*marker, dest)
}

func (d *dirNode) Setxattr(ctx context.Context, attr string, data []byte, flags uint32) syscall.Errno {
	if errno := d.fsys.allowXattr(ctx, d.EmbeddedInode(), attr, true); errno != 0 {
		return errno
	}
	return d.changeXattr(ctx, attr, data, flags, false)
}

func (d *dirNode) Removexattr(ctx context.Context, attr string) syscall.Errno {
	if errno := d.fsys.allowXattr(ctx, d.EmbeddedInode(), attr, true); errno != 0 {
		return errno
	}
	return d.changeXattr(ctx, attr, nil, 0, true)
}

// changeXattr keeps a directory's attributes in its marker, made when the
// directory has none. Buckets hold none.
func (d *dirNode) changeXattr(ctx context.Context, attr string, data []byte, flags uint32, remove bool) syscall.Errno {
	bucket, prefix := d.loc()
	if prefix == "" {
		return syscall.ENOTSUP
	}
	a, marker, err := d.attrs(ctx, true)
	if err != nil {
		return d.fsys.errno("setxattr", d.Path(nil), err)
	}
	if isFact(attr) {
		return d.fsys.refuseFact(marker, d.Path(nil), attr, data, flags, remove)
	}
	var cur map[string]string
	contentType := ""
	if marker != nil {
		cur, contentType = marker.Meta, marker.ContentType
	}
	m, errno := setxattr(cur, attr, data, flags, remove)
	if errno != 0 {
		return errno
	}
	if marker != nil {
		err = d.fsys.setMeta(ctx, bucket, prefix, contentType, pinMtime(m, a))
	} else {
		err = d.fsys.put(ctx, bucket, prefix, nil, objstore.PutOptions{Meta: withAttrs(m, a)})
	}
	return d.fsys.errno("setxattr", d.Path(nil), err)
}

// noXattrs gives the nodes that keep no attributes and whose
// permissions need no check for it (symlinks, for which the kernel
// answers user. requests itself, and the control tree's files, whose
// root-only directory nobody else gets through) Linux's answers: a user.
// attribute is missing, setting one is not supported, and other
// namespaces are not kept. go-fuse alone would answer ENODATA to
// everything, setxattr too.
type noXattrs struct{}

var (
	_ gofs.NodeGetxattrer    = noXattrs{}
	_ gofs.NodeSetxattrer    = noXattrs{}
	_ gofs.NodeRemovexattrer = noXattrs{}
)

func (noXattrs) Getxattr(ctx context.Context, attr string, dest []byte) (uint32, syscall.Errno) {
	return 0, noXattr(attr, false, false)
}

func (noXattrs) Setxattr(ctx context.Context, attr string, data []byte, flags uint32) syscall.Errno {
	return noXattr(attr, true, false)
}

func (noXattrs) Removexattr(ctx context.Context, attr string) syscall.Errno {
	return noXattr(attr, true, true)
}

// noXattr is the answer of a node that keeps no attributes to getting
// (write false), setting or removing attr.
func noXattr(attr string, write, remove bool) syscall.Errno {
	if !kept(attr) || (write && !remove) {
		return syscall.ENOTSUP
	}
	return syscall.ENODATA
}

// The mount's root and the control tree's directories keep no
// attributes either, but Linux checks a user. request's permission
// first (the control tree's directories are root's alone).

var (
	_ gofs.NodeGetxattrer    = (*rootNode)(nil)
	_ gofs.NodeSetxattrer    = (*rootNode)(nil)
	_ gofs.NodeRemovexattrer = (*rootNode)(nil)
	_ gofs.NodeGetxattrer    = (*ctlDirNode)(nil)
	_ gofs.NodeSetxattrer    = (*ctlDirNode)(nil)
	_ gofs.NodeRemovexattrer = (*ctlDirNode)(nil)
)

// noXattrAt is noXattr after allowXattr's check of the caller on n.
func (f *FS) noXattrAt(ctx context.Context, n *gofs.Inode, attr string, write, remove bool) syscall.Errno {
	if kept(attr) {
		if errno := f.allowXattr(ctx, n, attr, write); errno != 0 {
			return errno
		}
	}
	return noXattr(attr, write, remove)
}

func (r *rootNode) Getxattr(ctx context.Context, attr string, dest []byte) (uint32, syscall.Errno) {
	return 0, r.fsys.noXattrAt(ctx, r.EmbeddedInode(), attr, false, false)
}

func (r *rootNode) Setxattr(ctx context.Context, attr string, data []byte, flags uint32) syscall.Errno {
	return r.fsys.noXattrAt(ctx, r.EmbeddedInode(), attr, true, false)
}

func (r *rootNode) Removexattr(ctx context.Context, attr string) syscall.Errno {
	return r.fsys.noXattrAt(ctx, r.EmbeddedInode(), attr, true, true)
}

func (d *ctlDirNode) Getxattr(ctx context.Context, attr string, dest []byte) (uint32, syscall.Errno) {
	return 0, d.fsys.noXattrAt(ctx, d.EmbeddedInode(), attr, false, false)
}

func (d *ctlDirNode) Setxattr(ctx context.Context, attr string, data []byte, flags uint32) syscall.Errno {
	return d.fsys.noXattrAt(ctx, d.EmbeddedInode(), attr, true, false)
}

func (d *ctlDirNode) Removexattr(ctx context.Context, attr string) syscall.Errno {
	return d.fsys.noXattrAt(ctx, d.EmbeddedInode(), attr, true, true)
}
