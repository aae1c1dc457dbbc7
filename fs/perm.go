package fs

// Permission checks. The mount does not ask the kernel to check modes
// (the default_permissions mount option): with it, every create in a
// directory invalidates the directory's attributes in the kernel, and the
// next path walk through it costs a GETATTR round trip, one more per file
// a `cp -r` writes. The mount checks in its own operations instead, as
// Linux would: the caller's effective capabilities (CAP_DAC_OVERRIDE,
// CAP_DAC_READ_SEARCH, CAP_FOWNER, CAP_CHOWN, CAP_FSETID, read with its
// supplementary groups from /proc/PID/status, caller.go) pass what they
// pass in the kernel; otherwise search permission
// on every directory above what is touched and the owner, group or other
// bits the operation asks for on the node itself decide.
//
// What cannot be done from here: a path walk through entries the kernel
// has cached does not reach the mount, so an operation checks the
// directories above its node again (but for one through an open
// descriptor that says so, FATTR_FH); and a stat the kernel answers from
// its attribute cache (up to the attribute timeout after another lookup)
// is not checked.

import (
	"cmp"
	"context"
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

// permAttrs returns the mode and owner the checks of n go by.
func (f *FS) permAttrs(ctx context.Context, n *gofs.Inode) (attrs, error) {
	switch op := n.Operations().(type) {
	case *dirNode:
		a, _, err := op.attrs(ctx, false) // no mtime: a check needs none, and it would list
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
// errno of a failed look-up of the attributes. A caller with
// CAP_DAC_OVERRIDE (root) passes without a look-up.
func (f *FS) allow(ctx context.Context, n *gofs.Inode, mask uint32) syscall.Errno {
	return f.allowAs(ctx, f.callerOf(ctx), n, mask, true)
}

// allowAs is allow for caller c; walk false checks n alone (a request
// through an open descriptor, whose path is not walked again).
func (f *FS) allowAs(ctx context.Context, c caller, n *gofs.Inode, mask uint32, walk bool) syscall.Errno {
	dir := n.Mode()&syscall.S_IFMT == syscall.S_IFDIR
	if c.has(capDacOverride) && (dir || mask&mayExec == 0) {
		return 0
	}
	if walk && !c.has(capDacReadSearch) {
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
	if !c.permits(a, n.Mode()&syscall.S_IFMT == syscall.S_IFDIR, mask) {
		return syscall.EACCES
	}
	return 0
}

// access answers access(2) and chdir's check (the kernel asks the mount
// for those), as allow does.
func (f *FS) access(ctx context.Context, n *gofs.Inode, mask uint32) syscall.Errno {
	return f.allow(ctx, n, mask)
}

// openMask is the access an open(2) with flags asks for: an execve
// needs execute permission alone.
func openMask(flags uint32) uint32 {
	var mask uint32
	switch flags & syscall.O_ACCMODE {
	case syscall.O_RDONLY:
		mask = mayRead
		if flags&fmodeExec != 0 {
			mask = mayExec
		}
	case syscall.O_WRONLY:
		mask = mayWrite
	default:
		mask = mayRead | mayWrite
	}
	if flags&syscall.O_TRUNC != 0 {
		mask |= mayWrite
	}
	return mask
}

// allowUnlink checks that the caller may remove (or rename away) child,
// named in dir: write and search permission on dir and, when dir has the
// sticky bit, ownership of dir or of child (EPERM otherwise).
func (f *FS) allowUnlink(ctx context.Context, dir *gofs.Inode, childAttrs func() (attrs, error)) syscall.Errno {
	c := f.callerOf(ctx)
	if errno := f.allowAs(ctx, c, dir, mayWrite|mayExec, true); errno != 0 {
		return errno
	}
	if c.has(capFowner) {
		return 0
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

// suidBits are the bits a write by someone else clears.
const suidBits = syscall.S_ISUID | syscall.S_ISGID

// allowSetattr checks a setattr request against the caller's rights, as
// chmod(2), chown(2), truncate(2) and utimensat(2) do, and clears the
// set-group-ID bit a chmod asks for when the caller is not in the file's
// group (as Linux does). A request through an open descriptor (FATTR_FH)
// does not check the directories above. A kernel without
// FUSE_HANDLE_KILLPRIV_V2 clears the set-user-ID and set-group-ID bits of
// a file someone writes to itself, with a chmod in the writer's name:
// that is let through for writers.
func (f *FS) allowSetattr(ctx context.Context, n *gofs.Inode, fh gofs.FileHandle, in *fuse.SetAttrIn) syscall.Errno {
	c := f.callerOf(ctx)
	if c.has(capDacOverride) && c.has(capFowner) && c.has(capChown) && c.has(capFsetid) {
		return 0 // root: nothing below can refuse, so no need to read the attributes
	}
	if errno := f.allowAs(ctx, c, n, 0, fh == nil); errno != 0 {
		return errno
	}
	a, err := f.permAttrs(ctx, n)
	if err != nil {
		return f.errno("setattr", n.Path(nil), err)
	}
	dir := n.Mode()&syscall.S_IFMT == syscall.S_IFDIR
	owner := c.owns(a)
	if _, ok := in.GetSize(); ok && fh == nil && !c.permits(a, dir, mayWrite) {
		return syscall.EACCES
	}
	// chown_ok and chgrp_ok: the owner proper (CAP_FOWNER is not
	// enough) may keep the owner and give the group to one of theirs.
	uid, setUID := in.GetUID()
	if setUID && !c.has(capChown) && (c.uid != a.uid || uid != a.uid) {
		return syscall.EPERM
	}
	gid, setGID := in.GetGID()
	if setGID && !c.has(capChown) {
		member, _ := c.inGroup(gid)
		if c.uid != a.uid || gid != a.gid && !member {
			return syscall.EPERM
		}
	}
	if m, ok := in.GetMode(); ok {
		// The kernel clears set-user-ID and set-group-ID itself, in the
		// name of whoever writes or chowns the file: a mode that only
		// drops some of those bits passes for them.
		m &= 0o7777
		dropsOnly := m&^suidBits == a.perm&^suidBits && m&suidBits != a.perm&suidBits && m&suidBits&^a.perm == 0
		killpriv := !f.killprivV2.Load() && dropsOnly && (setUID || setGID || c.permits(a, dir, mayWrite))
		if !owner && !killpriv {
			return syscall.EPERM
		}
		if !setGID {
			gid = a.gid
		}
		if member, _ := c.inGroup(gid); m&syscall.S_ISGID != 0 && !member && !c.has(capFsetid) {
			in.Mode &^= syscall.S_ISGID
		}
	}
	if in.Valid&(fuse.FATTR_ATIME|fuse.FATTR_MTIME) != 0 && !owner {
		// Only "both times to now" (touch, utimes(NULL)) or the times a
		// truncation sets are a writer's right; the kernel does not say
		// which one a lone UTIME_NOW was, so one time alone needs the
		// owner.
		const bothNow = fuse.FATTR_ATIME | fuse.FATTR_ATIME_NOW | fuse.FATTR_MTIME | fuse.FATTR_MTIME_NOW
		_, trunc := in.GetSize()
		if in.Valid&bothNow != bothNow && !trunc {
			return syscall.EPERM
		}
		if !c.permits(a, dir, mayWrite) {
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
	c := f.callerOf(ctx)
	switch {
	case attr == "" || !strings.HasPrefix(attr, xattrUser):
		return f.allowAs(ctx, c, n, 0, true)
	case !write:
		return f.allowAs(ctx, c, n, mayRead, true)
	}
	if errno := f.allowAs(ctx, c, n, mayWrite, true); errno != 0 {
		return errno
	}
	if n.Mode()&syscall.S_IFMT != syscall.S_IFDIR || c.has(capFowner) {
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

// What go-fuse would answer for the control tree and the mount's root
// when they lack a method (success for unlink and rmdir, ENOTSUP for
// setattr) is refused instead.

var (
	_ gofs.NodeUnlinker  = (*ctlDirNode)(nil)
	_ gofs.NodeRmdirer   = (*ctlDirNode)(nil)
	_ gofs.NodeSetattrer = (*ctlDirNode)(nil)
	_ gofs.NodeUnlinker  = (*rootNode)(nil)
	_ gofs.NodeSetattrer = (*rootNode)(nil)
)

// Unlink refuses: the control tree's files are the server's.
func (d *ctlDirNode) Unlink(ctx context.Context, name string) syscall.Errno {
	return cmp.Or(d.fsys.allow(ctx, d.EmbeddedInode(), mayWrite|mayExec), syscall.EPERM)
}

// Rmdir refuses: the control tree's directories are the server's.
func (d *ctlDirNode) Rmdir(ctx context.Context, name string) syscall.Errno {
	return cmp.Or(d.fsys.allow(ctx, d.EmbeddedInode(), mayWrite|mayExec), syscall.EPERM)
}

// Setattr refuses: the control tree's modes are fixed.
func (d *ctlDirNode) Setattr(ctx context.Context, fh gofs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	return cmp.Or(d.fsys.allow(ctx, d.EmbeddedInode(), 0), syscall.EPERM)
}

// Unlink refuses: only buckets (directories) live at the mount's root.
func (r *rootNode) Unlink(ctx context.Context, name string) syscall.Errno {
	return syscall.EPERM
}

// Setattr refuses: the mount root's attributes are fixed.
func (r *rootNode) Setattr(ctx context.Context, fh gofs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	return syscall.EPERM
}
