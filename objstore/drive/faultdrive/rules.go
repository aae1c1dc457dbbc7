package faultdrive

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"
)

// Op names a Drive operation, or a handle's, for rules.
type Op string

// The operations a Rule can match. OpWrite and OpRead cover the handles of
// shard files, staged files and pack segments alike.
const (
	OpCreate     Op = "create"
	OpWrite      Op = "write"
	OpClose      Op = "close" // ShardWriter.Close
	OpOpen       Op = "open"
	OpRead       Op = "read"
	OpRemove     Op = "remove"
	OpStage      Op = "stage"
	OpCommit     Op = "commit" // StagedFile.Commit
	OpWalk       Op = "walk"
	OpOpenPack   Op = "openpack"
	OpRemovePack Op = "removepack"
	OpPacks      Op = "packs"
	OpSync       Op = "sync"
	OpSyncFiles  Op = "syncfiles"
	OpSyncPacks  Op = "syncpacks"
)

// ErrInjected is wrapped by every error a rule injects (together with the
// rule's own Err).
var ErrInjected = errors.New("faultdrive: injected fault")

// ErrCrashed is returned by every operation after Crash.
var ErrCrashed = errors.New("faultdrive: drive crashed")

// Rule injects one kind of fault into the calls it matches.
type Rule struct {
	// Op is the operation to match; empty matches every one.
	Op Op
	// Name is the file to match: a shard name, or drive.PackName(seg) for
	// a pack segment; empty matches any. SyncFiles and SyncPacks match
	// when any file they flush matches; Walk, Packs and Sync only match
	// an empty Name.
	Name string
	// After is how many matching calls pass before the rule fires.
	After int
	// Times is how many calls it fires for; zero means every matching
	// call from then on.
	Times int
	// Delay is slept before the call (latency); with a nil Err and no
	// Short, the call then goes ahead.
	Delay time.Duration
	// Err is the error the call fails with, wrapped with ErrInjected:
	// syscall.ENOSPC for a full drive, syscall.EIO for a bad one.
	Err error
	// Short makes a write store the first half of its bytes and then fail
	// with Err (io.ErrShortWrite when Err is nil); other calls fail whole.
	Short bool
}

// Config configures a Drive.
type Config struct {
	// Rules are tried in order; the first that fires decides the call.
	Rules []Rule
}

// ruleSet holds the rules and how many calls each has matched.
type ruleSet struct {
	mu    sync.Mutex // protects rules and seen
	rules []Rule
	seen  []int
}

func (rs *ruleSet) set(rules []Rule) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.rules = slices.Clone(rules)
	rs.seen = make([]int, len(rules))
}

// fault is what a call must do: sleep, then fail (or write short).
type fault struct {
	delay time.Duration
	err   error
	short bool
}

// match counts the call against every rule that matches it and returns
// the fault of the first that fires (the zero fault when none).
func (rs *ruleSet) match(op Op, names ...string) fault {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	var f fault
	fired := false
	for i, r := range rs.rules {
		if r.Op != "" && r.Op != op {
			continue
		}
		if r.Name != "" && !slices.Contains(names, r.Name) {
			continue
		}
		n := rs.seen[i]
		rs.seen[i]++
		if fired || n < r.After || (r.Times > 0 && n >= r.After+r.Times) {
			continue
		}
		fired = true
		f.delay = r.Delay
		if r.Err != nil || r.Short {
			err := r.Err
			if err == nil {
				err = io.ErrShortWrite
			}
			f.err = fmt.Errorf("%w: %s %v: %w", ErrInjected, op, names, err)
			f.short = r.Short
		}
	}
	return f
}

// apply sleeps for the fault's delay and returns its error. Writes check
// short first: a short fault fails any other call whole.
func (f fault) apply() error {
	if f.delay > 0 {
		time.Sleep(f.delay)
	}
	return f.err
}
