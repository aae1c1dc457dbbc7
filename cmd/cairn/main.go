package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/mattn/go-isatty"
	"github.com/rs/zerolog"

	"github.com/cairnstore/cairn/objstore"
)

// deps is everything a command touches beyond its options. main builds the
// real one; tests build their own.
type deps struct {
	stdout io.Writer
	stderr io.Writer
	tty    bool // stderr is a terminal: pretty logs and progress bars
	log    zerolog.Logger

	open func(context.Context, objstore.Options) (*objstore.Store, error)
	fsck func(context.Context, objstore.Options, func(objstore.Progress)) (objstore.FsckReport, error)
	heal func(context.Context, objstore.Options, func(objstore.Progress)) (objstore.HealReport, error)
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		// After the first signal, a second one kills the process the
		// default way instead of waiting for a clean shutdown.
		<-ctx.Done()
		stop()
	}()
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr, isTerminal(os.Stderr))
	stop()
	os.Exit(code)
}

// run parses args, runs the command and returns the process exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, tty bool) int {
	inv, err := parseArgs(args)
	if err != nil {
		return exit(stderr, "", err)
	}
	d := deps{
		stdout: stdout,
		stderr: stderr,
		tty:    tty,
		log:    newLogger(stderr, tty, inv.logLevel),
		open:   openStore,
		fsck:   fsckStore,
		heal:   healStore,
	}
	return exit(stderr, inv.name, dispatch(ctx, inv, d))
}

// dispatch runs the command inv names.
func dispatch(ctx context.Context, inv invocation, d deps) error {
	switch o := inv.opts.(type) {
	case serveOptions:
		return runServe(ctx, o, d)
	case mountOptions:
		return runMount(ctx, o, d)
	case fsckOptions:
		return runFsck(ctx, o, d)
	case healOptions:
		return runHeal(ctx, o, d)
	case userOptions:
		return runUser(ctx, o, d)
	case statusOptions:
		return runStatus(ctx, o, d)
	case clusterStatusOptions:
		return runClusterStatus(ctx, o, d)
	case doctorOptions:
		return runDoctor(ctx, o, d)
	case tokenKeyOptions:
		return runCatalogRotateTokenKey(ctx, o, d)
	case tableBucketOptions:
		return runTableBucket(ctx, o, d)
	case catalogOptions:
		return runCatalog(ctx, o, d)
	case sparkConfOptions:
		return runSparkConf(o, d)
	case benchOptions:
		return runBench(ctx, o, d)
	case versionOptions:
		return runVersion(d.stdout, o)
	case helpOptions:
		_, err := io.WriteString(d.stdout, o.text)
		return err
	default:
		return fmt.Errorf("internal error: no runner for %T", inv.opts)
	}
}

// isTerminal reports whether f is a terminal (or a Cygwin/MSYS pty).
func isTerminal(f *os.File) bool {
	return isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())
}
