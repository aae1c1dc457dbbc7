package fs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/rs/zerolog"
	"golang.org/x/sys/unix"

	"github.com/cairnstore/cairn/frontends/control"
	"github.com/cairnstore/cairn/objstore"
)

// Options configure a mount.
type Options struct {
	// TmpDir holds the staging files of files being written. It should be
	// on the data directory's filesystem (the data directory's tmp/).
	TmpDir string
	// AttrTimeout is how long the kernel may cache attributes and
	// directory entries (default 1 s). The store's Watch invalidates them
	// sooner when S3 changes a key.
	AttrTimeout time.Duration
	// Control, when set, is mounted under the root-only .cairn/ directory.
	Control *control.Dir
	// UID and GID own the objects that carry no owner (written over S3).
	UID, GID uint32
	Logger   zerolog.Logger
	// Debug logs every FUSE request.
	Debug bool
	// NoPassthrough keeps every write going through the mount instead
	// of letting the kernel write large files straight to their staging
	// file (FUSE passthrough, Linux 6.9+, root).
	NoPassthrough bool
	// Ops, when set, is told of every request the mount answers
	// (metrics.go).
	Ops OpObserver
}

// FS is a mounted store.
type FS struct {
	store  *objstore.Store
	opt    Options
	log    zerolog.Logger
	server *fuse.Server
	root   *rootNode
	owner  owner
	dir    string

	stopWatch context.CancelFunc
	watchDone chan struct{}
	self      selfEvents

	stages stagePool
	// smallRun counts the files created in a row that ended small
	// (write.go, smallRunMin): new files then skip passthrough.
	smallRun atomic.Int64
	// directMmap: the kernel lets files opened with direct I/O be mapped
	// shared (CAP_DIRECT_IO_ALLOW_MMAP), so small-run files may use it.
	directMmap atomic.Bool
	// killprivV2: the kernel leaves clearing set-ID bits to the mount
	// (CAP_HANDLE_KILLPRIV_V2) rather than chmodding in a writer's name.
	killprivV2 atomic.Bool

	creds credCache // the groups and capabilities of callers (perm.go)

	roomMu sync.Mutex // protects room and roomAt
	room   bool       // the staging directory had room (roomToStage)
	roomAt time.Time
}

// Mount mounts st on dir and serves it until Unmount. A stale mount left
// on dir by a crashed process is cleared first.
func Mount(ctx context.Context, st *objstore.Store, dir string, opt Options) (*FS, error) {
	if opt.AttrTimeout <= 0 {
		opt.AttrTimeout = time.Second
	}
	if opt.TmpDir == "" {
		return nil, fmt.Errorf("%w: mount: no staging directory", objstore.ErrInvalidArgument)
	}
	if err := os.MkdirAll(opt.TmpDir, 0o700); err != nil {
		return nil, fmt.Errorf("mount: staging directory: %w", err)
	}
	if err := ClearStale(dir); err != nil {
		return nil, err
	}
	f := &FS{store: st, opt: opt, log: opt.Logger, owner: owner{opt.UID, opt.GID}, dir: dir}
	f.stages.dir = opt.TmpDir
	f.stages.start()
	f.self.init()
	f.root = &rootNode{fsys: f}
	timeout := opt.AttrTimeout
	negative := time.Duration(0)
	mo := &gofs.Options{
		EntryTimeout:    &timeout,
		AttrTimeout:     &timeout,
		NegativeTimeout: &negative,
		NullPermissions: true,
		UID:             opt.UID,
		GID:             opt.GID,
		MountOptions: fuse.MountOptions{
			FsName:            "cairn",
			Name:              "cairn",
			AllowOther:        true,
			DirectMountStrict: true,
			MaxWrite:          1 << 20,
			MaxReadAhead:      readAhead,
			// Reads answer with a buffer: go-fuse would copy it into a
			// pipe to splice it, which fails for a 1 MiB read (the
			// pipe's limit) and logs each failure.
			DisableSplice: true,
			// Files of a small-file run are written with direct I/O
			// (handle.directOK); shared mappings of them stay possible.
			// The mount clears set-ID bits on writes, truncations and
			// chowns itself (HANDLE_KILLPRIV_V2, dropSetIDLocked), so
			// the kernel need not ask for security.capability before
			// every passthrough write(2).
			ExtraCapabilities: fuse.CAP_DIRECT_IO_ALLOW_MMAP | fuse.CAP_HANDLE_KILLPRIV_V2,
			// No default_permissions: the mount checks modes itself
			// (perm.go), which saves a GETATTR per file created.
			Debug: opt.Debug,
		},
	}
	server, err := mountServer(dir, f.root, mo, opt.Ops)
	if err != nil {
		return nil, fmt.Errorf("mount %s: %w", dir, err)
	}
	f.server = server
	f.directMmap.Store(server.KernelSettings().Flags64()&fuse.CAP_DIRECT_IO_ALLOW_MMAP != 0)
	f.killprivV2.Store(server.KernelSettings().Flags64()&fuse.CAP_HANDLE_KILLPRIV_V2 != 0)
	if err := setReadAhead(dir, readAhead); err != nil {
		f.log.Warn().Err(err).Str("mountpoint", dir).Msg("kernel readahead left at its default: sequential reads take more, smaller requests")
	}
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	f.stopWatch = cancel
	f.watchDone = make(chan struct{})
	go f.watch(wctx)
	f.log.Info().Str("mountpoint", dir).Dur("attr_timeout", timeout).Msg("mounted")
	return f, nil
}

// Unmount unmounts the filesystem and waits for the server to stop.
// Files still open are released; their last writes were committed at
// their last flush.
func (f *FS) Unmount() error {
	f.stopWatch()
	<-f.watchDone
	// go-fuse retries a busy unmount for a moment itself.
	err := f.server.Unmount()
	if err != nil {
		// A process still has the mount busy: detach it lazily rather
		// than leave a dead mount behind. The kernel keeps serving the
		// open descriptors until they close, so do not wait for that:
		// when this process exits they fail with ENOTCONN.
		if derr := syscall.Unmount(f.dir, syscall.MNT_DETACH); derr != nil {
			return fmt.Errorf("unmount %s: %w", f.dir, err)
		}
		f.log.Warn().Str("mountpoint", f.dir).Msg("mount busy: detached lazily; files still open on it fail once cairn exits")
		return nil
	}
	f.server.Wait()
	f.stages.drain()
	f.log.Info().Str("mountpoint", f.dir).Msg("unmounted")
	return nil
}

// Wait blocks until the filesystem is unmounted (also from outside, with
// umount).
func (f *FS) Wait() { f.server.Wait() }

// ClearStale unmounts dir when it is a FUSE mount whose server is gone, as
// a crash leaves it. The kernel may answer stat from its caches for a
// while after the server died, so the mount table is read, and statfs,
// which the kernel always sends to the server, tells a dead mount
// (ENOTCONN) from a live one (left alone: mounting over it fails later
// with a clear error).
func ClearStale(dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("mount point %s: %w", dir, err)
	}
	mounted, err := isFUSEMount(abs)
	if err != nil {
		return err
	}
	var st unix.Statfs_t
	serr := unix.Statfs(abs, &st)
	if !mounted && !errors.Is(serr, syscall.ENOTCONN) {
		if errors.Is(serr, os.ErrNotExist) {
			return fmt.Errorf("mount point %s: %w", dir, serr)
		}
		return nil
	}
	if mounted && serr == nil {
		return fmt.Errorf("%w: %s is already mounted by a live FUSE server", objstore.ErrInvalidArgument, dir)
	}
	if err := syscall.Unmount(abs, syscall.MNT_DETACH); err != nil {
		return fmt.Errorf("clear stale mount on %s: %w", dir, err)
	}
	return nil
}

// location is where a node lives in the store.
func location(n *gofs.Inode) (bucket, key string) {
	return splitPath(n.Path(nil))
}
