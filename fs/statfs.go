package fs

import (
	"context"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// statfsBlock is the block size statfs reports sizes in.
const statfsBlock = 4096

// statfs reports the room for user data on the store's drives.
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
	out.Files = st.Files
	out.Ffree = 1 << 32
	out.NameLen = maxNameLen
	return 0
}
