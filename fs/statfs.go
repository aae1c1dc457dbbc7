package fs

import (
	"context"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// statfsBlock is the block size statfs reports sizes in.
const statfsBlock = 4096

// statfs reports the room for user data on the store's drives, and the
// objects as inodes (inodes).
func (f *FS) statfs(ctx context.Context, out *fuse.StatfsOut) syscall.Errno {
	st, err := f.store.StatFS(ctx)
	if err != nil {
		return f.errno("statfs", "/", err)
	}
	out.Bsize = statfsBlock
	out.Frsize = statfsBlock
	out.Blocks = st.TotalBytes / statfsBlock
	out.Bfree = st.FreeBytes / statfsBlock
	out.Bavail = st.AvailableBytes / statfsBlock
	out.Files, out.Ffree = inodes(st.Files, out.Bavail)
	out.NameLen = maxNameLen
	return 0
}

// inodesFree is the free inodes statfs starts from: the store has no
// inode table, so any number of objects fits while there is room.
const inodesFree = 10 << 20

// inodes are statfs's total and free inodes for used objects and avail
// free blocks. As JuiceFS reports (its StatFS without an inode quota),
// the free inodes start at inodesFree and double until the used ones
// are at most 80% of the total, so that df -i never shows a store
// filling up with objects; no more than the free blocks, since a file
// written takes one at least (none free: a full store takes no new
// file), so that df -i shows a full drive as full. Total = used + free,
// as on any filesystem.
func inodes(used, avail uint64) (files, free uint64) {
	free = inodesFree
	for used*10 > (used+free)*8 {
		free *= 2
	}
	free = min(free, avail)
	return used + free, free
}
