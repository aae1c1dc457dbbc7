package fs

// Permission checks. The mount does not ask the kernel to check modes
// (the default_permissions mount option): with it, every create in a
// directory invalidates the directory's attributes in the kernel, and the
// next path walk through it costs a GETATTR round trip, one more per file
// a `cp -r` writes. The mount checks in its own operations instead, as
// Linux would: root (uid 0) may do anything but execute a file with no
// execute bit; everybody else needs search permission on every directory
// above what they touch and the owner, group (primary or supplementary)
// or other bits the operation asks for on the node itself. Requests the
// kernel makes with no caller (none here) are let through.

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/cairnstore/cairn/objstore"
)

// Access modes, as access(2) and the kernel's MAY_* bits number them.
const (
	mayExec  = 1
	mayWrite = 2
	mayRead  = 4
)

// fmodeExec is __FMODE_EXEC, which the kernel leaves in the open flags
// of an execve.
const fmodeExec = 0x20

// caller is who makes a request.
type caller struct {
	uid, gid, pid uint32
	known         bool
}

func callerOf(ctx context.Context) caller {
	c, ok := fuse.FromContext(ctx)
	if !ok || c == nil {
		return caller{}
	}
	return caller{uid: c.Uid, gid: c.Gid, pid: c.Pid, known: true}
}

// privileged says whether the caller passes every check (root, or a
// request with no caller).
func (c caller) privileged() bool { return !c.known || c.uid == 0 }

// inGroup says whether gid is the caller's primary group or one of the
// supplementary groups of its process.
func (c caller) inGroup(gid uint32) bool {
	if c.gid == gid {
		return true
	}
	groups, err := procGroups(c.pid)
	if err != nil {
		return false
	}
	for _, g := range groups {
		if g == gid {
			return true
		}
	}
	return false
}

// permits says whether the caller may access a node with attributes a in
// mode mask (mayRead|mayWrite|mayExec). Root's execute right on files is
// the kernel's to check (it refuses files with no execute bit itself).
func (c caller) permits(a attrs, mask uint32) bool {
	mask &= 7
	if mask == 0 || c.privileged() {
		return true
	}
	var bits uint32
	switch {
	case c.uid == a.uid:
		bits = a.perm >> 6
	case (a.perm>>3)&mask == a.perm&mask:
		bits = a.perm // group and other agree: no need to know the groups
	case c.inGroup(a.gid):
		bits = a.perm >> 3
	default:
		bits = a.perm
	}
	return bits&mask == mask
}

// owns says whether the caller may act as the owner of a node with
// attributes a (chmod, utimes to a given time, the sticky bit).
func (c caller) owns(a attrs) bool { return c.privileged() || c.uid == a.uid }

// procGroups reads the supplementary groups of process pid.
func procGroups(pid uint32) ([]uint32, error) {
	if pid == 0 {
		return nil, fmt.Errorf("no process")
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return nil, err
	}
	return parseGroups(data)
}

// parseGroups reads the Groups: line of a /proc/PID/status file.
func parseGroups(status []byte) ([]uint32, error) {
	sc := bufio.NewScanner(bytes.NewReader(status))
	for sc.Scan() {
		rest, ok := bytes.CutPrefix(sc.Bytes(), []byte("Groups:"))
		if !ok {
			continue
		}
		var out []uint32
		for _, f := range bytes.Fields(rest) {
			g, err := strconv.ParseUint(string(f), 10, 32)
			if err != nil {
				return nil, fmt.Errorf("groups: %q: %w", f, err)
			}
			out = append(out, uint32(g))
		}
		return out, nil
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("no Groups: line")
}

// permAttrs returns the mode and owner the checks of n go by.
func (f *FS) permAttrs(ctx context.Context, n *gofs.Inode) (attrs, error) {
	switch op := n.Operations().(type) {
	case *dirNode:
		a, _, err := op.attrs(ctx)
		return a, err
	case *fileNode:
		var out fuse.Attr
		if op.fillIfWriting(&out) {
			return attrs{perm: out.Mode & 0o7777, uid: out.Uid, gid: out.Gid}, nil
		}
		info, err := op.statInfo(ctx)
		if err != nil {
			return attrs{}, err
		}
		return attrsFrom(info, defaultFileMode, f.owner), nil
	case *linkNode:
		bucket, key := location(n)
		info, err := f.store.Head(ctx, bucket, key, objstore.GetOptions{})
		if err != nil {
			return attrs{}, err
		}
		return attrsFrom(info, 0o777, f.owner), nil
	case *ctlDirNode:
		return ctlAttrs(ctlDirMode), nil
	case *ctlFileNode:
		return ctlAttrs(op.perm()), nil
	default: // the mount's root
		return attrs{perm: defaultDirMode, uid: f.owner.uid, gid: f.owner.gid}, nil
	}
}

// allow checks that the caller may search every directory above n and
// access n in mode mask (0: only reach it). It returns EACCES, or the
// errno of a failed look-up of the attributes. Root passes at once.
func (f *FS) allow(ctx context.Context, n *gofs.Inode, mask uint32) syscall.Errno {
	c := callerOf(ctx)
	if c.privileged() {
		return 0
	}
	var chain []*gofs.Inode
	for p := n; ; {
		_, parent := p.Parent()
		if parent == nil {
			break
		}
		chain = append(chain, parent)
		p = parent
	}
	for i := len(chain) - 1; i >= 0; i-- { // from the root down, as a path walk
		if errno := f.allowOne(ctx, c, chain[i], mayExec); errno != 0 {
			return errno
		}
	}
	if mask&7 == 0 {
		return 0
	}
	return f.allowOne(ctx, c, n, mask)
}

func (f *FS) allowOne(ctx context.Context, c caller, n *gofs.Inode, mask uint32) syscall.Errno {
	a, err := f.permAttrs(ctx, n)
	if err != nil {
		return f.errno("access", n.Path(nil), err)
	}
	if !c.permits(a, mask) {
		return syscall.EACCES
	}
	return 0
}

// access answers access(2) and chdir's check (the kernel asks the mount
// for those): as allow, and for root, no execute right on a regular file
// without an execute bit.
func (f *FS) access(ctx context.Context, n *gofs.Inode, mask uint32) syscall.Errno {
	c := callerOf(ctx)
	if c.privileged() {
		if mask&mayExec == 0 || n.Mode()&syscall.S_IFMT != syscall.S_IFREG {
			return 0
		}
		a, err := f.permAttrs(ctx, n)
		if err != nil {
			return f.errno("access", n.Path(nil), err)
		}
		if a.perm&0o111 == 0 {
			return syscall.EACCES
		}
		return 0
	}
	return f.allow(ctx, n, mask)
}

// openMask is the access an open(2) with flags asks for.
func openMask(flags uint32) uint32 {
	var mask uint32
	switch flags & syscall.O_ACCMODE {
	case syscall.O_RDONLY:
		mask = mayRead
	case syscall.O_WRONLY:
		mask = mayWrite
	default:
		mask = mayRead | mayWrite
	}
	if flags&syscall.O_TRUNC != 0 {
		mask |= mayWrite
	}
	if flags&fmodeExec != 0 {
		mask |= mayExec
	}
	return mask
}

// allowUnlink checks that the caller may remove (or rename away) child,
// named in dir: write and search permission on dir and, when dir has the
// sticky bit, ownership of dir or of child (EPERM otherwise).
func (f *FS) allowUnlink(ctx context.Context, dir *gofs.Inode, childAttrs func() (attrs, error)) syscall.Errno {
	c := callerOf(ctx)
	if c.privileged() {
		return 0
	}
	if errno := f.allow(ctx, dir, mayWrite|mayExec); errno != 0 {
		return errno
	}
	da, err := f.permAttrs(ctx, dir)
	if err != nil {
		return f.errno("access", dir.Path(nil), err)
	}
	if da.perm&syscall.S_ISVTX == 0 || c.owns(da) {
		return 0
	}
	ca, err := childAttrs()
	if err != nil {
		return f.errno("access", dir.Path(nil), err)
	}
	if !c.owns(ca) {
		return syscall.EPERM
	}
	return 0
}

// childAttrs returns how to get the attributes of name in d, from its
// inode when the kernel looked it up, else from the store.
func (d *dirNode) childAttrs(ctx context.Context, name string) func() (attrs, error) {
	return func() (attrs, error) {
		if ch := d.GetChild(name); ch != nil {
			return d.fsys.permAttrs(ctx, ch)
		}
		bucket, prefix := d.loc()
		e, err := d.fsys.probe(ctx, bucket, prefix+name)
		if err != nil {
			return attrs{}, err
		}
		if e.kind == kindDir {
			return d.fsys.dirAttrs(e), nil
		}
		return attrsFrom(e.info, defaultFileMode, d.fsys.owner), nil
	}
}

// allowSetattr checks a setattr request against the caller's rights, as
// chmod(2), chown(2), truncate(2) and utimensat(2) do, and clears the
// set-group-ID bit a chmod asks for when the caller is not in the file's
// group (as Linux does).
func (f *FS) allowSetattr(ctx context.Context, n *gofs.Inode, fh gofs.FileHandle, in *fuse.SetAttrIn) syscall.Errno {
	c := callerOf(ctx)
	if c.privileged() {
		return 0
	}
	if errno := f.allow(ctx, n, 0); errno != 0 {
		return errno
	}
	a, err := f.permAttrs(ctx, n)
	if err != nil {
		return f.errno("setattr", n.Path(nil), err)
	}
	owner := c.owns(a)
	if _, ok := in.GetSize(); ok && fh == nil && !c.permits(a, mayWrite) {
		return syscall.EACCES
	}
	if uid, ok := in.GetUID(); ok && (uid != a.uid || !owner) {
		return syscall.EPERM
	}
	if gid, ok := in.GetGID(); ok && (!owner || gid != a.gid && !c.inGroup(gid)) {
		return syscall.EPERM
	}
	if m, ok := in.GetMode(); ok {
		if !owner {
			return syscall.EPERM
		}
		gid := a.gid
		if g, ok := in.GetGID(); ok {
			gid = g
		}
		if m&syscall.S_ISGID != 0 && !c.inGroup(gid) {
			in.Mode &^= syscall.S_ISGID
		}
	}
	if in.Valid&(fuse.FATTR_ATIME|fuse.FATTR_MTIME) != 0 && !owner {
		now := in.Valid&(fuse.FATTR_ATIME|fuse.FATTR_ATIME_NOW) != fuse.FATTR_ATIME &&
			in.Valid&(fuse.FATTR_MTIME|fuse.FATTR_MTIME_NOW) != fuse.FATTR_MTIME
		if !now {
			return syscall.EPERM
		}
		if !c.permits(a, mayWrite) {
			return syscall.EACCES
		}
	}
	return 0
}

// allowXattr checks a user.* extended attribute request, as Linux's
// xattr_permission: read permission to get one, write permission to set
// or remove one, and in a sticky directory only its owner may change
// the directory's. Other namespaces are the handlers' to refuse; listing
// needs only to reach the node.
func (f *FS) allowXattr(ctx context.Context, n *gofs.Inode, attr string, write bool) syscall.Errno {
	c := callerOf(ctx)
	if c.privileged() {
		return 0
	}
	switch {
	case attr == "" || !strings.HasPrefix(attr, xattrUser):
		return f.allow(ctx, n, 0)
	case !write:
		return f.allow(ctx, n, mayRead)
	}
	if errno := f.allow(ctx, n, mayWrite); errno != 0 {
		return errno
	}
	if n.Mode()&syscall.S_IFMT != syscall.S_IFDIR {
		return 0
	}
	a, err := f.permAttrs(ctx, n)
	if err != nil {
		return f.errno("setxattr", n.Path(nil), err)
	}
	if a.perm&syscall.S_ISVTX != 0 && !c.owns(a) {
		return syscall.EPERM
	}
	return 0
}

// Access and Opendir of every kind of node: the kernel asks the mount
// for access(2), chdir(2) and opening a directory.

var (
	_ gofs.NodeAccesser  = (*rootNode)(nil)
	_ gofs.NodeAccesser  = (*dirNode)(nil)
	_ gofs.NodeAccesser  = (*fileNode)(nil)
	_ gofs.NodeAccesser  = (*linkNode)(nil)
	_ gofs.NodeAccesser  = (*ctlDirNode)(nil)
	_ gofs.NodeAccesser  = (*ctlFileNode)(nil)
	_ gofs.NodeOpendirer = (*rootNode)(nil)
	_ gofs.NodeOpendirer = (*dirNode)(nil)
	_ gofs.NodeOpendirer = (*ctlDirNode)(nil)
)

func (r *rootNode) Access(ctx context.Context, mask uint32) syscall.Errno {
	return r.fsys.access(ctx, r.EmbeddedInode(), mask)
}

func (d *dirNode) Access(ctx context.Context, mask uint32) syscall.Errno {
	return d.fsys.access(ctx, d.EmbeddedInode(), mask)
}

func (n *fileNode) Access(ctx context.Context, mask uint32) syscall.Errno {
	return n.fsys.access(ctx, n.EmbeddedInode(), mask)
}

func (l *linkNode) Access(ctx context.Context, mask uint32) syscall.Errno {
	return l.fsys.access(ctx, l.EmbeddedInode(), mask)
}

func (d *ctlDirNode) Access(ctx context.Context, mask uint32) syscall.Errno {
	return d.fsys.access(ctx, d.EmbeddedInode(), mask)
}

func (c *ctlFileNode) Access(ctx context.Context, mask uint32) syscall.Errno {
	return c.fsys.access(ctx, c.EmbeddedInode(), mask)
}

func (r *rootNode) Opendir(ctx context.Context) syscall.Errno {
	return r.fsys.allow(ctx, r.EmbeddedInode(), mayRead)
}

func (d *dirNode) Opendir(ctx context.Context) syscall.Errno {
	return d.fsys.allow(ctx, d.EmbeddedInode(), mayRead)
}

func (d *ctlDirNode) Opendir(ctx context.Context) syscall.Errno {
	return d.fsys.allow(ctx, d.EmbeddedInode(), mayRead)
}
