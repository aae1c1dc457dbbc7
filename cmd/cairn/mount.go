package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/cairnstore/cairn/frontends/control"
	cairnfs "github.com/cairnstore/cairn/fs"
	"github.com/cairnstore/cairn/objstore"
)

// mountFlags are the flags of the mount, shared by serve --mount and mount.
type mountFlags struct {
	AttrTimeout time.Duration
	Debug       bool
	NoPass      bool
}

func (m *mountFlags) register(fs *pflag.FlagSet) {
	fs.DurationVar(&m.AttrTimeout, "attr-timeout", time.Second, "how long the kernel caches attributes and entries of the mount; the store's change feed invalidates them sooner")
	fs.BoolVar(&m.Debug, "fuse-debug", false, "log every FUSE request")
	fs.BoolVar(&m.NoPass, "no-passthrough", false, "send every write through cairn instead of letting the kernel write large files straight to their staging file")
}

// mountOptions are the flags of "cairn mount".
type mountOptions struct {
	Store      storeFlags
	Mount      mountFlags
	Mountpoint string
	Log        logFlags
}

func mountCommand(done func(invocation)) *cobra.Command {
	var o mountOptions
	c := leafCommand("mount MOUNTPOINT", "Mount a store (without serving it) until interrupted or unmounted",
		`  cairn mount --data /var/lib/cairn /mnt/cairn
  cairn mount /mnt/cairn --data /var/lib/cairn --attr-timeout 10s`,
		func(c *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErrorf("mount", "want exactly one mount point, got %d", len(args))
			}
			o.Mountpoint = args[0]
			if err := o.Store.check("mount"); err != nil {
				return err
			}
			if o.Mount.AttrTimeout <= 0 {
				return usageErrorf("mount", "--attr-timeout must be positive")
			}
			lvl, err := o.Log.level("mount")
			if err != nil {
				return err
			}
			done(invocation{name: "mount", opts: o, logLevel: lvl})
			return nil
		})
	fs := c.Flags()
	o.Store.register(fs)
	o.Mount.register(fs)
	o.Log.register(fs)
	return c
}

// runMount mounts the store alone until SIGINT/SIGTERM or an unmount.
func runMount(ctx context.Context, o mountOptions, d deps) (err error) {
	logger := d.log
	sopt := o.Store.options(logger.With().Str("component", "objstore").Logger())
	// No read cache: only the S3 face sends from it, and cairn mount has none.
	if err := sopt.Validate(); err != nil {
		return err
	}
	if err := o.Store.checkDataDir("mount"); err != nil {
		return err
	}
	if err := checkMountpoint("mount", "MOUNTPOINT", o.Mountpoint); err != nil {
		return err
	}
	sopt, unlock, err := o.Store.withMeta(ctx, sopt)
	if err != nil {
		return err
	}
	defer unlock()
	if err := refuseCluster(ctx, "mount", o.Store, sopt); err != nil {
		_ = sopt.Index.Close()
		return err
	}
	st, err := d.open(ctx, sopt)
	if err != nil {
		return fmt.Errorf("open store %s: %w", sopt.Dir, err)
	}
	defer func() {
		if cerr := st.Close(); cerr != nil {
			err = errors.Join(err, fmt.Errorf("close store: %w", cerr))
		}
	}()
	m, err := startMount(ctx, st, sopt.Dir, o.Mountpoint, o.Mount, control.StoreTree(st), logger)
	if err != nil {
		return err
	}
	unmounted := make(chan struct{})
	go func() {
		m.Wait()
		close(unmounted)
	}()
	select {
	case <-ctx.Done():
		return m.Unmount()
	case <-unmounted:
		logger.Info().Str("mountpoint", o.Mountpoint).Msg("unmounted from outside")
		return nil
	}
}

// startMount mounts st at dir with the control tree under .cairn/.
func startMount(ctx context.Context, st *objstore.Store, dataDir, dir string, mf mountFlags, tree *control.Dir, logger zerolog.Logger, opts ...func(*cairnfs.Options)) (*cairnfs.FS, error) {
	if fi, err := os.Stat("/dev/fuse"); err != nil || fi.Mode()&os.ModeDevice == 0 {
		return nil, fmt.Errorf("mount %s: /dev/fuse is not usable here: %w", dir, errors.Join(err, objstore.ErrInvalidArgument))
	}
	fo := cairnfs.Options{
		TmpDir:        filepath.Join(dataDir, "tmp", "mount"),
		AttrTimeout:   mf.AttrTimeout,
		Control:       tree,
		UID:           uint32(os.Getuid()),
		GID:           uint32(os.Getgid()),
		Logger:        logger.With().Str("component", "fs").Logger(),
		Debug:         mf.Debug,
		NoPassthrough: mf.NoPass,
	}
	for _, f := range opts {
		f(&fo)
	}
	return cairnfs.Mount(ctx, st, dir, fo)
}
