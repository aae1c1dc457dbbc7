package main

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/rs/zerolog"
	"github.com/spf13/pflag"
	"golang.org/x/sys/unix"

	"github.com/cairnstore/cairn/frontends/s3"
	"github.com/cairnstore/cairn/objstore"
	"github.com/cairnstore/cairn/objstore/meta/etcd"
)

// invocation is one parsed command line.
type invocation struct {
	// name is the command path ("serve", "admin fsck", ...), used in messages.
	name string
	// opts is one command's options struct (serveOptions, fsckOptions, ...)
	// or helpOptions; main dispatches on its type.
	opts any
	// logLevel is the --log-level of commands that have one, else info.
	// (The zero zerolog.Level is debug, so it must always be set.)
	logLevel zerolog.Level
}

// helpOptions is text for stdout: what -h, --help, "cairn help" and
// "cairn completion SHELL" print.
type helpOptions struct {
	text string
}

// storeFlags are the flags that locate and shape a store; serve, fsck and
// heal share them.
type storeFlags struct {
	Data   string
	Drives int
	Drive  []string
	Parity int
	// Meta is the index's URL: empty for bbolt in the data directory,
	// or etcd://HOST:PORT[,HOST:PORT...]/PREFIX[?options].
	Meta string
	// Node is the name a node registers under with an etcd index; empty
	// means the host's name.
	Node string
}

func (s *storeFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&s.Data, "data", "", "data `directory` (index, drives/, tmp/); required")
	fs.IntVar(&s.Drives, "drives", 0, "number of drives under DIR/drives (0: as recorded, or 4 for a new directory)")
	fs.StringArrayVar(&s.Drive, "drive", nil, "explicit drive `path`; repeat once per drive (instead of --drives)")
	fs.IntVar(&s.Parity, "parity", -1, "parity shards per block (-1: the default for the drive count)")
	fs.StringVar(&s.Meta, "meta", "", "the index: empty for bbolt in the data directory, or an etcd cluster as `etcd://HOST:2379[,HOST:2379...]/PREFIX` (docs/operations/cluster.md)")
	fs.StringVar(&s.Node, "node", "", "with --meta: the `name` this node registers under and leads background jobs as (default: the host's name)")
}

// check validates what can be judged without touching the disk.
func (s *storeFlags) check(cmd string) error {
	switch {
	case s.Data == "":
		return usageErrorf(cmd, "--data is required")
	case s.Drives < 0:
		return usageErrorf(cmd, "--drives must not be negative, got %d", s.Drives)
	case s.Drives > 0 && len(s.Drive) > 0:
		return usageErrorf(cmd, "give either --drives or --drive, not both")
	case s.Parity < -1:
		return usageErrorf(cmd, "--parity must be -1 (default) or more, got %d", s.Parity)
	}
	for _, d := range s.Drive {
		if d == "" {
			return usageErrorf(cmd, "--drive must not be empty")
		}
	}
	if s.Meta != "" {
		if _, err := etcd.ParseURL(s.Meta); err != nil {
			return usageErrorf(cmd, "--meta: %v", err)
		}
	}
	return nil
}

// options builds the store options; the logger is attached by the caller.
func (s storeFlags) options(log zerolog.Logger) objstore.Options {
	return objstore.Options{
		Dir:        s.Data,
		Drives:     s.Drive,
		DriveCount: s.Drives,
		Parity:     s.Parity,
		Logger:     log,
		// Lifecycle size filters see an encrypted object's plaintext
		// size, the one S3 shows.
		ShownSize: s3.PlainSize,
	}
}

// logFlags holds --log-level.
type logFlags struct {
	Level string
}

func (l *logFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&l.Level, "log-level", "info", "log `level`: debug, info, warn or error")
}

func (l logFlags) level(cmd string) (zerolog.Level, error) {
	lvl, err := parseLevel(l.Level)
	if err != nil {
		return zerolog.NoLevel, usageErrorf(cmd, "%v", err)
	}
	return lvl, nil
}

// readCacheFlag holds --read-cache, the block cache of serve and mount.
type readCacheFlag struct {
	Size string
}

// maxAutoReadCache caps the cache "auto" picks.
const maxAutoReadCache = 4 << 30

func (c *readCacheFlag) register(fs *pflag.FlagSet) {
	fs.StringVar(&c.Size, "read-cache", "auto", "memory `size` kept for blocks of large objects read more than once (e.g. 2GiB; 0: off; auto: an eighth of the RAM, at most 4GiB)")
}

// bytes is the cache size asked for; a usage error names cmd.
func (c readCacheFlag) bytes(cmd string) (int64, error) {
	if c.Size == "auto" {
		return min(memoryLimit()/8, maxAutoReadCache), nil
	}
	n, err := parseSize(c.Size)
	if err != nil {
		return 0, usageErrorf(cmd, "--read-cache %q: want a size such as 512MiB or 2GiB, 0 or auto", c.Size)
	}
	return n, nil
}

// memoryLimit is the memory this process may use: the machine's RAM, or
// its cgroup's limit when lower (the cache's memory is charged to the
// cgroup and cannot be swapped out). Zero when neither can be read.
func memoryLimit() int64 {
	var si unix.Sysinfo_t
	var ram int64
	if unix.Sysinfo(&si) == nil {
		ram = int64(si.Totalram) * int64(si.Unit)
	}
	cg, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return ram
	}
	if lim, ok := cgroupLimit(string(cg), func(p string) ([]byte, error) { return os.ReadFile(p) }); ok && lim < ram {
		return lim
	}
	return ram
}

// cgroupLimit finds the memory limit of the cgroup named in a
// /proc/self/cgroup text (v2's "0::/path" or v1's "N:memory:/path"),
// reading the limit files with read; ok is false when there is none.
func cgroupLimit(procCgroup string, read func(string) ([]byte, error)) (int64, bool) {
	for _, line := range strings.Split(procCgroup, "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		var file string
		switch {
		case parts[0] == "0" && parts[1] == "":
			file = "/sys/fs/cgroup" + parts[2] + "/memory.max"
		case slices.Contains(strings.Split(parts[1], ","), "memory"):
			file = "/sys/fs/cgroup/memory" + parts[2] + "/memory.limit_in_bytes"
		default:
			continue
		}
		b, err := read(filepath.Clean(file))
		if err != nil {
			continue
		}
		v := strings.TrimSpace(string(b))
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && n > 0 && n < 1<<60 {
			return n, true
		}
	}
	return 0, false
}
