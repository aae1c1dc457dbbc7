package fs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/rs/zerolog"

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

	tmpMu  sync.Mutex // protects tmpSeq
	tmpSeq uint64
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
			MaxReadAhead:      1 << 20,
			Options:           []string{"default_permissions"},
			Debug:             opt.Debug,
		},
	}
	server, err := gofs.Mount(dir, f.root, mo)
	if err != nil {
		return nil, fmt.Errorf("mount %s: %w", dir, err)
	}
	f.server = server
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
	var err error
	for range 50 {
		if err = f.server.Unmount(); err == nil || !errors.Is(err, syscall.EBUSY) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		// A process still has the mount busy: detach it lazily rather
		// than leave a dead mount behind.
		if derr := syscall.Unmount(f.dir, syscall.MNT_DETACH); derr != nil {
			return fmt.Errorf("unmount %s: %w", f.dir, err)
		}
	}
	f.server.Wait()
	f.log.Info().Str("mountpoint", f.dir).Msg("unmounted")
	return nil
}

// Wait blocks until the filesystem is unmounted (also from outside, with
// umount).
func (f *FS) Wait() { f.server.Wait() }

// ClearStale unmounts dir when it is a FUSE mount whose server is gone
// (stat fails with ENOTCONN), as a crash leaves it.
func ClearStale(dir string) error {
	_, err := os.Stat(dir)
	if err == nil || !errors.Is(err, syscall.ENOTCONN) {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("mount point %s: %w", dir, err)
		}
		return nil
	}
	if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
		return fmt.Errorf("clear stale mount on %s: %w", dir, err)
	}
	return nil
}

// stageFile creates an empty staging file.
func (f *FS) stageFile() (*os.File, error) {
	f.tmpMu.Lock()
	f.tmpSeq++
	n := f.tmpSeq
	f.tmpMu.Unlock()
	name := filepath.Join(f.opt.TmpDir, fmt.Sprintf("stage-%d-%d", os.Getpid(), n))
	file, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("staging file: %w", err)
	}
	// Unlinked at once: the open descriptor keeps the bytes, and a crash
	// leaves nothing to sweep.
	if err := os.Remove(name); err != nil {
		_ = file.Close()
		return nil, fmt.Errorf("staging file: %w", err)
	}
	return file, nil
}

// location is where a node lives in the store.
func location(n *gofs.Inode) (bucket, key string) {
	return splitPath(n.Path(nil))
}
