package main

import (
	"context"
	"fmt"
	"time"

	"github.com/cairnstore/cairn/objstore"
	"github.com/cairnstore/cairn/objstore/meta"
)

// indexLockTimeout is how long opening the index waits for another
// process holding it (a second cairn on the same data directory).
const indexLockTimeout = 2 * time.Second

// withIndex opens the default index, bbolt in the data directory, as
// opt.Index; the store that opt opens closes it.
func withIndex(opt objstore.Options) (objstore.Options, error) {
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
	if err := needStore("admin fsck", opt.Dir); err != nil {
		return objstore.FsckReport{}, err
	}
	opt, err := withIndex(opt)
	if err != nil {
		return objstore.FsckReport{}, err
	}
	return objstore.Fsck(ctx, opt, progress)
}

// healStore is objstore.Heal on the default index.
func healStore(ctx context.Context, opt objstore.Options, progress func(objstore.Progress)) (objstore.HealReport, error) {
	if err := needStore("admin heal", opt.Dir); err != nil {
		return objstore.HealReport{}, err
	}
	opt, err := withIndex(opt)
	if err != nil {
		return objstore.HealReport{}, err
	}
	return objstore.Heal(ctx, opt, progress)
}
