package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cairnstore/cairn/objstore"
	"github.com/cairnstore/cairn/objstore/meta"
	"github.com/cairnstore/cairn/objstore/meta/etcd"
)

// indexLockTimeout is how long opening the index waits for another
// process holding it (a second cairn on the same data directory).
const indexLockTimeout = 2 * time.Second

// withMeta opens the index --meta names (etcd) as opt.Index; without
// --meta it leaves opt alone, for withIndex to open bbolt. The store
// that opt opens closes the index; the caller calls unlock once that
// store is closed.
func (s storeFlags) withMeta(ctx context.Context, opt objstore.Options) (_ objstore.Options, unlock func(), err error) {
	if s.Meta == "" {
		return opt, func() {}, nil
	}
	cfg, err := etcd.ParseURL(s.Meta)
	if err != nil {
		return opt, nil, fmt.Errorf("--meta: %w", err)
	}
	cfg.Node = nodeName(s.Node)
	cfg.Log = opt.Logger.With().Str("component", "etcd").Logger()
	// bbolt's file lock keeps a second process off a data directory;
	// with the index elsewhere, a lock file does (its sweep would take
	// the first one's uncommitted shards for orphans). Held until the
	// store is closed.
	lock, err := lockDataDir(opt.Dir)
	if err != nil {
		return opt, nil, err
	}
	idx, err := etcd.Open(ctx, cfg)
	if err != nil {
		_ = lock.Close()
		return opt, nil, fmt.Errorf("open the index at %s: %w", cfg, err)
	}
	opt.Index = idx
	return opt, func() { _ = lock.Close() }, nil
}

// openEtcd opens the etcd index of --meta URL meta, for the commands
// that read or write it without a store (cluster status, heal --online).
func openEtcd(ctx context.Context, meta string) (*etcd.Index, error) {
	cfg, err := etcd.ParseURL(meta)
	if err != nil {
		return nil, err
	}
	idx, err := etcd.Open(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open the index at %s: %w", cfg, err)
	}
	return idx, nil
}

// dataDirLock is the lock file of a data directory whose index is not
// bbolt's.
const dataDirLock = "cairn.lock"

// lockDataDir takes dir's lock file (creating dir), or fails when
// another process holds it. Closing the file releases the lock.
func lockDataDir(dir string) (*os.File, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("data directory: %w", err)
	}
	path := filepath.Join(dir, dataDirLock)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("data directory lock: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("another cairn is using %s (%s is locked): stop it first: %w", dir, path, err)
	}
	return f, nil
}

// withIndex opens the default index, bbolt in the data directory, as
// opt.Index unless one is open already (withMeta); the store that opt
// opens closes it.
func withIndex(opt objstore.Options) (objstore.Options, error) {
	if opt.Index != nil {
		return opt, nil
	}
	if opt.Dir == "" {
		return opt, fmt.Errorf("%w: data directory is required", objstore.ErrInvalidArgument)
	}
	idx, err := meta.OpenBolt(meta.BoltPath(opt.Dir), indexLockTimeout)
	if err != nil {
		return opt, fmt.Errorf("open index (is another cairn using %s?): %w", opt.Dir, err)
	}
	opt.Index = idx
	return opt, nil
}

// openStore is objstore.Open on the default index.
func openStore(ctx context.Context, opt objstore.Options) (*objstore.Store, error) {
	opt, err := withIndex(opt)
	if err != nil {
		return nil, err
	}
	return objstore.Open(ctx, opt)
}

// fsckStore is objstore.Fsck on the default index.
func fsckStore(ctx context.Context, opt objstore.Options, progress func(objstore.Progress)) (objstore.FsckReport, error) {
	if opt.Index == nil {
		if err := needStore("admin fsck", opt.Dir); err != nil {
			return objstore.FsckReport{}, err
		}
	}
	opt, err := withIndex(opt)
	if err != nil {
		return objstore.FsckReport{}, err
	}
	return objstore.Fsck(ctx, opt, progress)
}

// healStore is objstore.Heal on the default index.
func healStore(ctx context.Context, opt objstore.Options, progress func(objstore.Progress)) (objstore.HealReport, error) {
	if opt.Index == nil {
		if err := needStore("admin heal", opt.Dir); err != nil {
			return objstore.HealReport{}, err
		}
	}
	opt, err := withIndex(opt)
	if err != nil {
		return objstore.HealReport{}, err
	}
	return objstore.Heal(ctx, opt, progress)
}
