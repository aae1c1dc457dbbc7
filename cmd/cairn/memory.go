package main

import (
	"github.com/spf13/pflag"
	"os"
	"runtime/debug"
)

// memoryFlags holds serve's --write-buffers and --memory-limit: the bound
// on the erasure block buffers of the writes in flight, and the Go
// runtime's soft memory limit.
type memoryFlags struct {
	WriteBuffers string
	Limit        string
}

const (
	defaultWriteBuffers = "64MiB"
	// autoLimitBase is what "auto" allows beyond twice the write buffers
	// (buffers, the shard files' staging buffers they keep busy, and the
	// garbage between collections): the rest of the heap, GET buffers,
	// goroutine stacks. With serverGCPercent the heap goal is five times
	// the live heap; the limit makes the collector run sooner once that
	// would pass it, and stays out of the way of a small heap.
	autoLimitBase = 256 << 20
)

func (m *memoryFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&m.WriteBuffers, "write-buffers", defaultWriteBuffers, "memory `size` the block buffers all writes hand to the drives share; each write also fills one buffer of its own (0: no bound)")
	fs.StringVar(&m.Limit, "memory-limit", "auto", "the Go runtime's soft memory `limit` (0: none; auto: 256MiB plus twice --write-buffers, or none when they are unbounded; GOMEMLIMIT in the environment wins)")
}

// writeBuffers is objstore.Options.WriteBuffers: negative for no bound.
func (m memoryFlags) writeBuffers(cmd string) (int64, error) {
	n, err := parseSize(m.WriteBuffers)
	if err != nil {
		return 0, usageErrorf(cmd, "--write-buffers %q: want a size such as 64MiB, or 0", m.WriteBuffers)
	}
	if n == 0 {
		return -1, nil
	}
	return n, nil
}

// limit is the soft memory limit asked for; zero means none.
func (m memoryFlags) limit(cmd string) (int64, error) {
	if m.Limit == "auto" {
		wb, err := m.writeBuffers(cmd)
		if err != nil || wb < 0 {
			return 0, err
		}
		return autoLimitBase + 2*wb, nil
	}
	n, err := parseSize(m.Limit)
	if err != nil {
		return 0, usageErrorf(cmd, "--memory-limit %q: want a size such as 512MiB, 0 or auto", m.Limit)
	}
	return n, nil
}

// check validates both flags.
func (m memoryFlags) check(cmd string) error {
	if _, err := m.writeBuffers(cmd); err != nil {
		return err
	}
	_, err := m.limit(cmd)
	return err
}

// applyLimit sets the runtime's soft memory limit (checked flags) unless
// GOMEMLIMIT is set in the environment.
func (m memoryFlags) applyLimit() {
	if _, set := os.LookupEnv("GOMEMLIMIT"); set {
		return
	}
	if n, _ := m.limit("serve"); n > 0 {
		debug.SetMemoryLimit(n)
	}
}
