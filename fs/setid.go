package fs

// Clearing set-user-ID and set-group-ID bits, which the mount does itself
// (FUSE_HANDLE_KILLPRIV_V2) with Linux's rules.

import (
	"context"
	"syscall"
)

// dropSetIDLocked clears the set-ID bits a write or truncation by the
// caller clears on Linux (setIDKill). With FUSE_HANDLE_KILLPRIV_V2 the
// kernel leaves this to the mount for every write and truncation it
// sends; passthrough writes, which the mount never sees, are caught by
// refreshLocked.
func (n *fileNode) dropSetIDLocked(ctx context.Context) {
	if n.ws.attrs.perm&suidBits == 0 {
		return
	}
	n.killSetIDLocked(n.fsys.callerOf(ctx), false)
}

// killSetIDLocked clears the set-ID bits of the file being written that
// a write by c (or a chown, when chown) clears.
func (n *fileNode) killSetIDLocked(c caller, chown bool) {
	n.killLocked(setIDKill(c, n.ws.attrs.perm, n.ws.attrs.gid, chown))
}

// killLocked clears the bits kill of the file being written, and has the
// kernel drop the mode it caches (a WRITE's reply carries no
// attributes).
func (n *fileNode) killLocked(kill uint32) {
	ws := n.ws
	if kill&ws.attrs.perm == 0 {
		return
	}
	ws.attrs.perm &^= kill
	ws.metaDirty = true
	go func() {
		// Attributes only (no offset), and not under n.mu. The kernel
		// may not know the inode yet (ENOENT): nothing is cached then.
		_ = n.EmbeddedInode().NotifyContent(-1, 0)
	}()
}

// setIDKill is the set-ID bits of a regular file with permission bits
// perm and group gid that Linux clears when c writes to or truncates it
// (setattr_should_drop_suidgid: set-user-ID, and set-group-ID when
// group-executable or when c is not in gid; none when c holds
// CAP_FSETID), or, when chown, when it is chowned (chown_common: the
// same, but CAP_FSETID only keeps a set-group-ID bit without group
// execute).
func setIDKill(c caller, perm, gid uint32, chown bool) uint32 {
	if perm&suidBits == 0 || !chown && c.has(capFsetid) {
		return 0
	}
	kill := perm & syscall.S_ISUID
	if perm&syscall.S_ISGID != 0 {
		if member, _ := c.inGroup(gid); perm&syscall.S_IXGRP != 0 || !member && !c.has(capFsetid) {
			kill |= syscall.S_ISGID
		}
	}
	return kill
}
