package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/rs/zerolog"

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

func (m *mountFlags) register(fs *flag.FlagSet) {
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

func parseMount(args []string) (invocation, error) {
	var o mountOptions
	fs := flag.NewFlagSet("mount", flag.ContinueOnError)
	o.Store.register(fs)
	o.Mount.register(fs)
	o.Log.register(fs)
	// The mount point comes after the flags: "cairn mount --data DIR MNT".
	var pos []string
	rest := args
	for {
		if help, err := parseFlagsAllowArgs(fs, rest); help != nil || err != nil {
			return deref(help), err
		}
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	if len(pos) != 1 {
		return invocation{}, usageErrorf("mount", "want exactly one mount point, got %d", len(pos))
	}
	o.Mountpoint = pos[0]
	if err := o.Store.check("mount"); err != nil {
		return invocation{}, err
	}
	if o.Mount.AttrTimeout <= 0 {
		return invocation{}, usageErrorf("mount", "--attr-timeout must be positive")
	}
	lvl, err := o.Log.level("mount")
	if err != nil {
		return invocation{}, err
	}
	return invocation{name: "mount", opts: o, logLevel: lvl}, nil
}

// runMount mounts the store alone until SIGINT/SIGTERM or an unmount.
func runMount(ctx context.Context, o mountOptions, d deps) (err error) {
	logger := d.log
	sopt := o.Store.options(logger.With().Str("component", "objstore").Logger())
	// No read cache: only the S3 face sends from it, and cairn mount has none.
	if err := sopt.Validate(); err != nil {
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

// parseFlagsAllowArgs is parseFlags for commands that take positional
// arguments: it leaves them in fs.Args().
func parseFlagsAllowArgs(fs *flag.FlagSet, args []string) (help *invocation, err error) {
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return &invocation{name: "help", opts: helpOptions{text: flagUsage(fs)}, logLevel: zerolog.InfoLevel}, nil
		}
		return nil, usageErrorf(fs.Name(), "%v", err)
	}
	return nil, nil
}
