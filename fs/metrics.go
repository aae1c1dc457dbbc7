package fs

import (
	"syscall"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// OpObserver is told of every FUSE request the mount answers (Options.Ops),
// so that cmd/ can export them as metrics without fs importing a metrics
// library. op is the request's lower-case name ("lookup", "getattr",
// "read", "write", "create", "rename", ...; OpNames lists them all), d how
// long the mount took to answer and errno what it answered (0: success;
// ENOENT is the normal answer to a lookup of a name that is not there).
// ObserveOp is called from the goroutine serving the request, for many
// requests at once: it must be safe for concurrent use and quick.
// Requests the kernel serves alone (cached attributes and entries,
// passthrough reads and writes) never reach it.
type OpObserver interface {
	ObserveOp(op string, d time.Duration, errno syscall.Errno)
}

// OpNames returns the op names an OpObserver may see (a new slice each
// call: the package keeps no mutable state).
func OpNames() []string {
	return []string{
		"lookup", "forget", "getattr", "setattr", "mknod", "mkdir", "unlink", "rmdir", "rename", "link",
		"symlink", "readlink", "access", "getxattr", "listxattr", "setxattr", "removexattr",
		"create", "tmpfile", "open", "read", "lseek", "getlk", "setlk", "setlkw", "release", "write",
		"copy_file_range", "ioctl", "flush", "fsync", "fallocate", "opendir", "readdir", "readdirplus",
		"releasedir", "fsyncdir", "statfs", "statx",
	}
}

// mountServer is gofs.Mount with the node filesystem wrapped in an
// observedFS when obs is set.
func mountServer(dir string, root gofs.InodeEmbedder, opt *gofs.Options, obs OpObserver) (*fuse.Server, error) {
	raw := gofs.NewNodeFS(root, opt)
	if obs != nil {
		raw = &observedFS{RawFileSystem: raw, obs: obs}
	}
	server, err := fuse.NewServer(raw, dir, &opt.MountOptions)
	if err != nil {
		return nil, err
	}
	go server.Serve()
	if err := server.WaitMount(); err != nil {
		return nil, err
	}
	return server, nil
}

// observedFS times every request of the filesystem it wraps. Methods it
// does not override (String, SetDebug, Init, OnUnmount) go straight
// through.
type observedFS struct {
	fuse.RawFileSystem
	obs OpObserver
}

var _ fuse.RawFileSystem = (*observedFS)(nil)

// done reports a request that started at start and answered st.
func (o *observedFS) done(op string, start time.Time, st fuse.Status) {
	o.obs.ObserveOp(op, time.Since(start), syscall.Errno(st))
}

func (o *observedFS) Lookup(cancel <-chan struct{}, h *fuse.InHeader, name string, out *fuse.EntryOut) fuse.Status {
	t := time.Now()
	st := o.RawFileSystem.Lookup(cancel, h, name, out)
	if st == fuse.OK && out.NodeId == 0 {
		// go-fuse answers a name that is not there with a negative
		// entry (node 0) the kernel may cache, not with ENOENT.
		o.done("lookup", t, fuse.ENOENT)
		return st
	}
	o.done("lookup", t, st)
	return st
}

func (o *observedFS) Forget(nodeid, nlookup uint64) {
	t := time.Now()
	o.RawFileSystem.Forget(nodeid, nlookup)
	o.done("forget", t, fuse.OK)
}

func (o *observedFS) GetAttr(cancel <-chan struct{}, in *fuse.GetAttrIn, out *fuse.AttrOut) fuse.Status {
	t := time.Now()
	st := o.RawFileSystem.GetAttr(cancel, in, out)
	o.done("getattr", t, st)
	return st
}

func (o *observedFS) SetAttr(cancel <-chan struct{}, in *fuse.SetAttrIn, out *fuse.AttrOut) fuse.Status {
	t := time.Now()
	st := o.RawFileSystem.SetAttr(cancel, in, out)
	o.done("setattr", t, st)
	return st
}

func (o *observedFS) Mknod(cancel <-chan struct{}, in *fuse.MknodIn, name string, out *fuse.EntryOut) fuse.Status {
	t := time.Now()
	st := o.RawFileSystem.Mknod(cancel, in, name, out)
	o.done("mknod", t, st)
	return st
}

func (o *observedFS) Mkdir(cancel <-chan struct{}, in *fuse.MkdirIn, name string, out *fuse.EntryOut) fuse.Status {
	t := time.Now()
	st := o.RawFileSystem.Mkdir(cancel, in, name, out)
	o.done("mkdir", t, st)
	return st
}

func (o *observedFS) Unlink(cancel <-chan struct{}, h *fuse.InHeader, name string) fuse.Status {
	t := time.Now()
	st := o.RawFileSystem.Unlink(cancel, h, name)
	o.done("unlink", t, st)
	return st
}

func (o *observedFS) Rmdir(cancel <-chan struct{}, h *fuse.InHeader, name string) fuse.Status {
	t := time.Now()
	st := o.RawFileSystem.Rmdir(cancel, h, name)
	o.done("rmdir", t, st)
	return st
}

func (o *observedFS) Rename(cancel <-chan struct{}, in *fuse.RenameIn, oldName, newName string) fuse.Status {
	t := time.Now()
	st := o.RawFileSystem.Rename(cancel, in, oldName, newName)
	o.done("rename", t, st)
	return st
}

func (o *observedFS) Link(cancel <-chan struct{}, in *fuse.LinkIn, name string, out *fuse.EntryOut) fuse.Status {
	t := time.Now()
	st := o.RawFileSystem.Link(cancel, in, name, out)
	o.done("link", t, st)
	return st
}

func (o *observedFS) Symlink(cancel <-chan struct{}, h *fuse.InHeader, target, name string, out *fuse.EntryOut) fuse.Status {
	t := time.Now()
	st := o.RawFileSystem.Symlink(cancel, h, target, name, out)
	o.done("symlink", t, st)
	return st
}

func (o *observedFS) Readlink(cancel <-chan struct{}, h *fuse.InHeader) ([]byte, fuse.Status) {
	t := time.Now()
	b, st := o.RawFileSystem.Readlink(cancel, h)
	o.done("readlink", t, st)
	return b, st
}

func (o *observedFS) Access(cancel <-chan struct{}, in *fuse.AccessIn) fuse.Status {
	t := time.Now()
	st := o.RawFileSystem.Access(cancel, in)
	o.done("access", t, st)
	return st
}

func (o *observedFS) GetXAttr(cancel <-chan struct{}, h *fuse.InHeader, attr string, dest []byte) (uint32, fuse.Status) {
	t := time.Now()
	n, st := o.RawFileSystem.GetXAttr(cancel, h, attr, dest)
	o.done("getxattr", t, st)
	return n, st
}

func (o *observedFS) ListXAttr(cancel <-chan struct{}, h *fuse.InHeader, dest []byte) (uint32, fuse.Status) {
	t := time.Now()
	n, st := o.RawFileSystem.ListXAttr(cancel, h, dest)
	o.done("listxattr", t, st)
	return n, st
}

func (o *observedFS) SetXAttr(cancel <-chan struct{}, in *fuse.SetXAttrIn, attr string, data []byte) fuse.Status {
	t := time.Now()
	st := o.RawFileSystem.SetXAttr(cancel, in, attr, data)
	o.done("setxattr", t, st)
	return st
}

func (o *observedFS) RemoveXAttr(cancel <-chan struct{}, h *fuse.InHeader, attr string) fuse.Status {
	t := time.Now()
	st := o.RawFileSystem.RemoveXAttr(cancel, h, attr)
	o.done("removexattr", t, st)
	return st
}

func (o *observedFS) Create(cancel <-chan struct{}, in *fuse.CreateIn, name string, out *fuse.CreateOut) fuse.Status {
	t := time.Now()
	st := o.RawFileSystem.Create(cancel, in, name, out)
	o.done("create", t, st)
	return st
}

func (o *observedFS) Tmpfile(cancel <-chan struct{}, in *fuse.CreateIn, out *fuse.CreateOut) fuse.Status {
	t := time.Now()
	st := o.RawFileSystem.Tmpfile(cancel, in, out)
	o.done("tmpfile", t, st)
	return st
}

func (o *observedFS) Open(cancel <-chan struct{}, in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	t := time.Now()
	st := o.RawFileSystem.Open(cancel, in, out)
	o.done("open", t, st)
	return st
}

func (o *observedFS) Read(cancel <-chan struct{}, in *fuse.ReadIn, buf []byte) (fuse.ReadResult, fuse.Status) {
	t := time.Now()
	r, st := o.RawFileSystem.Read(cancel, in, buf)
	o.done("read", t, st)
	return r, st
}

func (o *observedFS) Lseek(cancel <-chan struct{}, in *fuse.LseekIn, out *fuse.LseekOut) fuse.Status {
	t := time.Now()
	st := o.RawFileSystem.Lseek(cancel, in, out)
	o.done("lseek", t, st)
	return st
}

func (o *observedFS) GetLk(cancel <-chan struct{}, in *fuse.LkIn, out *fuse.LkOut) fuse.Status {
	t := time.Now()
	st := o.RawFileSystem.GetLk(cancel, in, out)
	o.done("getlk", t, st)
	return st
}

func (o *observedFS) SetLk(cancel <-chan struct{}, in *fuse.LkIn) fuse.Status {
	t := time.Now()
	st := o.RawFileSystem.SetLk(cancel, in)
	o.done("setlk", t, st)
	return st
}

func (o *observedFS) SetLkw(cancel <-chan struct{}, in *fuse.LkIn) fuse.Status {
	t := time.Now()
	st := o.RawFileSystem.SetLkw(cancel, in)
	o.done("setlkw", t, st)
	return st
}

func (o *observedFS) Release(cancel <-chan struct{}, in *fuse.ReleaseIn) {
	t := time.Now()
	o.RawFileSystem.Release(cancel, in)
	o.done("release", t, fuse.OK)
}

func (o *observedFS) Write(cancel <-chan struct{}, in *fuse.WriteIn, data []byte) (uint32, fuse.Status) {
	t := time.Now()
	n, st := o.RawFileSystem.Write(cancel, in, data)
	o.done("write", t, st)
	return n, st
}

func (o *observedFS) Writev(cancel <-chan struct{}, in *fuse.WriteIn, data [][]byte) (uint32, fuse.Status) {
	t := time.Now()
	n, st := o.RawFileSystem.Writev(cancel, in, data)
	o.done("write", t, st)
	return n, st
}

func (o *observedFS) CopyFileRange(cancel <-chan struct{}, in *fuse.CopyFileRangeIn) (uint32, fuse.Status) {
	t := time.Now()
	n, st := o.RawFileSystem.CopyFileRange(cancel, in)
	o.done("copy_file_range", t, st)
	return n, st
}

func (o *observedFS) Ioctl(cancel <-chan struct{}, in *fuse.IoctlIn, inbuf []byte, out *fuse.IoctlOut, outbuf []byte) fuse.Status {
	t := time.Now()
	st := o.RawFileSystem.Ioctl(cancel, in, inbuf, out, outbuf)
	o.done("ioctl", t, st)
	return st
}

func (o *observedFS) Flush(cancel <-chan struct{}, in *fuse.FlushIn) fuse.Status {
	t := time.Now()
	st := o.RawFileSystem.Flush(cancel, in)
	o.done("flush", t, st)
	return st
}

func (o *observedFS) Fsync(cancel <-chan struct{}, in *fuse.FsyncIn) fuse.Status {
	t := time.Now()
	st := o.RawFileSystem.Fsync(cancel, in)
	o.done("fsync", t, st)
	return st
}

func (o *observedFS) Fallocate(cancel <-chan struct{}, in *fuse.FallocateIn) fuse.Status {
	t := time.Now()
	st := o.RawFileSystem.Fallocate(cancel, in)
	o.done("fallocate", t, st)
	return st
}

func (o *observedFS) OpenDir(cancel <-chan struct{}, in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	t := time.Now()
	st := o.RawFileSystem.OpenDir(cancel, in, out)
	o.done("opendir", t, st)
	return st
}

func (o *observedFS) ReadDir(cancel <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	t := time.Now()
	st := o.RawFileSystem.ReadDir(cancel, in, out)
	o.done("readdir", t, st)
	return st
}

func (o *observedFS) ReadDirPlus(cancel <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	t := time.Now()
	st := o.RawFileSystem.ReadDirPlus(cancel, in, out)
	o.done("readdirplus", t, st)
	return st
}

func (o *observedFS) ReleaseDir(in *fuse.ReleaseIn) {
	t := time.Now()
	o.RawFileSystem.ReleaseDir(in)
	o.done("releasedir", t, fuse.OK)
}

func (o *observedFS) FsyncDir(cancel <-chan struct{}, in *fuse.FsyncIn) fuse.Status {
	t := time.Now()
	st := o.RawFileSystem.FsyncDir(cancel, in)
	o.done("fsyncdir", t, st)
	return st
}

func (o *observedFS) StatFs(cancel <-chan struct{}, h *fuse.InHeader, out *fuse.StatfsOut) fuse.Status {
	t := time.Now()
	st := o.RawFileSystem.StatFs(cancel, h, out)
	o.done("statfs", t, st)
	return st
}

func (o *observedFS) Statx(cancel <-chan struct{}, in *fuse.StatxIn, out *fuse.StatxOut) fuse.Status {
	t := time.Now()
	st := o.RawFileSystem.Statx(cancel, in, out)
	o.done("statx", t, st)
	return st
}
