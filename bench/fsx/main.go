// Command fsx is a file-system exerciser in the spirit of fsx (Avadis
// Tevanian's, later Apple's and xfstests'): random operations with a
// fixed seed on ONE file, every byte read back checked against an
// in-memory model of what the file must hold.
//
//	fsx [-ops 200000] [-maxlen 10485760] [-seed 1] [-reopen 8] [-fsync-every 0] [-op-timeout 2m] -file PATH
//
// The file is created (or truncated) at the start. Each operation is one
// of: a write of 1 byte to 64 KiB at a random offset below -maxlen
// (past the end of the file it leaves a hole, which must read as zeros);
// a read of a random range within the file, every byte compared; a
// truncation to a smaller size; an extension (a truncation to a larger
// size), whose new bytes are read back at once and must be zeros. Every
// -reopen operations the file is closed and opened again (O_RDWR, no
// O_TRUNC) and its size checked against the model: on a mount that
// commits a version at close, each of those is a close of a modified
// existing file. -fsync-every N calls fsync every N operations (0:
// never). At the end the file is closed, reopened and read whole against
// the model.
//
// It prints one machine-readable line,
//
//	fsx ops=200000 seconds=12.345 ops_per_s=16201
//
// (seconds: from the first operation to the end of the final check),
// and exits 1 at the first mismatch or I/O error with a message naming
// the operation, the offset of the first differing byte, the bytes
// expected and found, and the last operations done, or when one operation
// takes longer than -op-timeout; 2 on a usage error.
// bench/patchcompare.sh runs it on Cairn's mount and on go-fuse's
// loopback.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand"
	"os"
	"strings"
	"sync/atomic"
	"time"
)

// Operation kinds.
const (
	opWrite = iota
	opRead
	opShrink
	opExtend
)

// maxIO is the largest write or read.
const maxIO = 64 << 10

type config struct {
	path       string
	ops        int
	maxLen     int64
	seed       int64
	reopen     int // close and reopen every reopen operations; 0: never
	fsyncEvery int // 0: never
	// afterOp, when set (tests only), runs after operation op (1-based)
	// succeeded: a test corrupts the file behind the exerciser's back.
	afterOp func(op int, path string) error
	// progress, when set, is stored the operation about to start (the
	// final check is ops+1).
	progress *atomic.Int64
}

type result struct {
	ops     int
	elapsed time.Duration
	counts  map[string]int // operations done, by kind (write, read, truncate, extend, fsync, reopen)
}

// logEntry is one operation done, kept for the failure message.
type logEntry struct {
	op       int
	kind     string
	off, len int64
	size     int64 // the file's size after it
}

func (e logEntry) String() string {
	switch e.kind {
	case "write", "read":
		return fmt.Sprintf("op %d %s off=%d len=%d (size %d)", e.op, e.kind, e.off, e.len, e.size)
	case "reopen", "fsync":
		return fmt.Sprintf("op %d %s (size %d)", e.op, e.kind, e.size)
	default:
		return fmt.Sprintf("op %d %s %d -> %d", e.op, e.kind, e.off, e.size)
	}
}

type exerciser struct {
	cfg    config
	f      *os.File
	model  []byte // the file's bytes; len(model) is its size, and model[len:cap] stays zero
	rng    *rand.Rand
	buf    []byte
	data   []byte
	log    [16]logEntry
	nlog   int
	counts map[string]int
}

func (x *exerciser) note(e logEntry) {
	x.counts[e.kind]++
	x.log[x.nlog%len(x.log)] = e
	x.nlog++
}

// recent lists the last operations done, oldest first.
func (x *exerciser) recent() string {
	var b strings.Builder
	n := min(x.nlog, len(x.log))
	for i := x.nlog - n; i < x.nlog; i++ {
		fmt.Fprintf(&b, "\n  %s", x.log[i%len(x.log)])
	}
	return b.String()
}

func (x *exerciser) fail(op int, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if op > 0 {
		msg = fmt.Sprintf("op %d: %s", op, msg)
	}
	if x.nlog > 0 {
		msg += "\nlast operations done:" + x.recent()
	}
	return errors.New(msg)
}

// check reads [off, off+n) and compares it with want.
func (x *exerciser) check(op int, what string, off int64, want []byte) error {
	got := x.buf[:len(want)]
	m, err := x.f.ReadAt(got, off)
	if m < len(want) {
		if err == nil || err == io.EOF {
			return x.fail(op, "%s off=%d len=%d: short read, %d bytes (the model's size is %d)",
				what, off, len(want), m, len(x.model))
		}
		return x.fail(op, "%s off=%d len=%d: %v", what, off, len(want), err)
	}
	if bytes.Equal(got, want) {
		return nil
	}
	i := 0
	for got[i] == want[i] {
		i++
	}
	diff := 0
	for j := i; j < len(want); j++ {
		if got[j] != want[j] {
			diff++
		}
	}
	end := min(i+8, len(want))
	return x.fail(op, "%s off=%d len=%d: mismatch at file offset %d: got %#02x, expected %#02x "+
		"(%d of the %d bytes differ; from there got % x, expected % x)",
		what, off, len(want), off+int64(i), got[i], want[i], diff, len(want), got[i:end], want[i:end])
}

func (x *exerciser) open(flags int) error {
	f, err := os.OpenFile(x.cfg.path, flags, 0o644)
	if err != nil {
		return err
	}
	x.f = f
	return nil
}

// reopen closes the file, opens it again and checks its size.
func (x *exerciser) reopen(op int) error {
	if err := x.f.Close(); err != nil {
		return x.fail(op, "close: %v", err)
	}
	x.f = nil
	if err := x.open(os.O_RDWR); err != nil {
		return x.fail(op, "reopen: %v", err)
	}
	fi, err := x.f.Stat()
	if err != nil {
		return x.fail(op, "fstat after reopen: %v", err)
	}
	if fi.Size() != int64(len(x.model)) {
		return x.fail(op, "size after reopen is %d, expected %d", fi.Size(), len(x.model))
	}
	return nil
}

func (x *exerciser) step(op int) error {
	size := int64(len(x.model))
	kind := x.rng.Intn(100)
	switch {
	case kind < 40 || size == 0:
		kind = opWrite
	case kind < 75:
		kind = opRead
	case kind < 87:
		kind = opShrink
	default:
		kind = opExtend
		if size >= x.cfg.maxLen {
			kind = opShrink
		}
	}
	switch kind {
	case opWrite:
		off := x.rng.Int63n(x.cfg.maxLen)
		n := min(int64(1+x.rng.Intn(maxIO)), x.cfg.maxLen-off)
		d := x.data[:n]
		x.rng.Read(d)
		if _, err := x.f.WriteAt(d, off); err != nil {
			return x.fail(op, "write off=%d len=%d: %v", off, n, err)
		}
		if end := off + n; end > size {
			x.model = x.model[:end] // the bytes between size and off are zero already
		}
		copy(x.model[off:], d)
		x.note(logEntry{op: op, kind: "write", off: off, len: n, size: int64(len(x.model))})
	case opRead:
		off := x.rng.Int63n(size)
		n := min(int64(1+x.rng.Intn(maxIO)), size-off)
		x.note(logEntry{op: op, kind: "read", off: off, len: n, size: size})
		if err := x.check(op, "read", off, x.model[off:off+n]); err != nil {
			return err
		}
	case opShrink:
		to := x.rng.Int63n(size)
		if err := x.f.Truncate(to); err != nil {
			return x.fail(op, "truncate %d -> %d: %v", size, to, err)
		}
		clear(x.model[to:size])
		x.model = x.model[:to]
		x.note(logEntry{op: op, kind: "truncate", off: size, size: to})
	case opExtend:
		to := size + 1 + x.rng.Int63n(x.cfg.maxLen-size)
		if err := x.f.Truncate(to); err != nil {
			return x.fail(op, "extend %d -> %d: %v", size, to, err)
		}
		x.model = x.model[:to]
		x.note(logEntry{op: op, kind: "extend", off: size, size: to})
		// The new bytes must read as zeros, in reads of at most 1 MiB.
		for off := size; off < to; off += 1 << 20 {
			end := min(off+1<<20, to)
			if err := x.check(op, "extend's new bytes", off, x.model[off:end]); err != nil {
				return err
			}
		}
	}
	if x.cfg.fsyncEvery > 0 && op%x.cfg.fsyncEvery == 0 {
		if err := x.f.Sync(); err != nil {
			return x.fail(op, "fsync: %v", err)
		}
		x.note(logEntry{op: op, kind: "fsync", size: int64(len(x.model))})
	}
	if x.cfg.reopen > 0 && op%x.cfg.reopen == 0 {
		if err := x.reopen(op); err != nil {
			return err
		}
		x.note(logEntry{op: op, kind: "reopen", size: int64(len(x.model))})
	}
	if x.cfg.afterOp != nil {
		if err := x.cfg.afterOp(op, x.cfg.path); err != nil {
			return x.fail(op, "afterOp: %v", err)
		}
	}
	return nil
}

// run exercises cfg.path and returns the first mismatch or error.
func run(cfg config) (result, error) {
	if cfg.maxLen <= 0 || cfg.ops < 0 || cfg.reopen < 0 || cfg.fsyncEvery < 0 {
		return result{}, fmt.Errorf("maxlen must be positive, ops, reopen and fsync-every not negative")
	}
	x := &exerciser{
		cfg:    cfg,
		model:  make([]byte, 0, cfg.maxLen),
		rng:    rand.New(rand.NewSource(cfg.seed)),
		buf:    make([]byte, 1<<20),
		data:   make([]byte, maxIO),
		counts: map[string]int{},
	}
	if err := x.open(os.O_RDWR | os.O_CREATE | os.O_TRUNC); err != nil {
		return result{}, err
	}
	defer func() {
		if x.f != nil {
			_ = x.f.Close()
		}
	}()
	start := time.Now()
	for op := 1; op <= cfg.ops; op++ {
		if cfg.progress != nil {
			cfg.progress.Store(int64(op))
		}
		if err := x.step(op); err != nil {
			return result{ops: op - 1, elapsed: time.Since(start)}, err
		}
	}
	// The final check: close, reopen, the whole file against the model.
	if cfg.progress != nil {
		cfg.progress.Store(int64(cfg.ops + 1))
	}
	if err := x.reopen(0); err != nil {
		return result{ops: cfg.ops, elapsed: time.Since(start)}, fmt.Errorf("final check: %w", err)
	}
	size := int64(len(x.model))
	for off := int64(0); off < size; off += 1 << 20 {
		end := min(off+1<<20, size)
		if err := x.check(0, "final check", off, x.model[off:end]); err != nil {
			return result{ops: cfg.ops, elapsed: time.Since(start)}, err
		}
	}
	// Nothing past the model's end either.
	if m, err := x.f.ReadAt(x.buf[:1], size); m != 0 || (err != nil && err != io.EOF) {
		return result{ops: cfg.ops, elapsed: time.Since(start)},
			x.fail(0, "final check: read at the end (%d) gave %d bytes, %v", size, m, err)
	}
	err := x.f.Close()
	x.f = nil
	if err != nil {
		return result{ops: cfg.ops, elapsed: time.Since(start)}, x.fail(0, "final close: %v", err)
	}
	return result{ops: cfg.ops, elapsed: time.Since(start), counts: x.counts}, nil
}

func main() {
	var cfg config
	flag.StringVar(&cfg.path, "file", "", "the file to exercise (created or truncated); required")
	flag.IntVar(&cfg.ops, "ops", 200000, "number of operations")
	flag.Int64Var(&cfg.maxLen, "maxlen", 10<<20, "largest size of the file, bytes")
	flag.Int64Var(&cfg.seed, "seed", 1, "random seed")
	flag.IntVar(&cfg.reopen, "reopen", 8, "close and reopen the file every N operations (0: never)")
	flag.IntVar(&cfg.fsyncEvery, "fsync-every", 0, "fsync every N operations (0: never)")
	opTimeout := flag.Duration("op-timeout", 2*time.Minute, "fail if one operation (with its reopen and fsync) takes longer (0: no limit)")
	flag.Usage = func() {
		_, _ = fmt.Fprintf(flag.CommandLine.Output(), "usage: fsx [flags] -file PATH\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if cfg.path == "" || flag.NArg() != 0 {
		flag.Usage()
		os.Exit(2)
	}
	if *opTimeout > 0 {
		cfg.progress = new(atomic.Int64)
		go watchdog(cfg, *opTimeout)
	}
	res, err := run(cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "fsx: FAILED after %d operations (seed %d, maxlen %d, reopen %d, fsync-every %d): %v\n",
			res.ops, cfg.seed, cfg.maxLen, cfg.reopen, cfg.fsyncEvery, err)
		os.Exit(1)
	}
	secs := res.elapsed.Seconds()
	fmt.Printf("fsx ops=%d seconds=%.3f ops_per_s=%.0f\n", res.ops, secs, float64(res.ops)/max(secs, 1e-9))
}

// watchdog fails the run when one operation takes longer than limit: a
// system call that never returns (or is retried for ever, as Go retries
// EINTR) would otherwise hang the benchmark.
func watchdog(cfg config, limit time.Duration) {
	last, since := int64(-1), time.Now()
	for range time.Tick(time.Second) {
		op := cfg.progress.Load()
		if op != last {
			last, since = op, time.Now()
			continue
		}
		if time.Since(since) > limit {
			what := fmt.Sprintf("op %d", op)
			if op > int64(cfg.ops) {
				what = "the final check"
			}
			fmt.Fprintf(os.Stderr, "fsx: FAILED: %s has not finished in %v (seed %d, maxlen %d, reopen %d, fsync-every %d)\n",
				what, limit, cfg.seed, cfg.maxLen, cfg.reopen, cfg.fsyncEvery)
			os.Exit(1)
		}
	}
}
