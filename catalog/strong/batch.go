package strong

import (
	"context"
	"errors"
	"fmt"

	"github.com/cairnstore/cairn/catalog"
)

// A mutation waiting for the warehouse's next publish.
type pending struct {
	fn   func(*snapshot) error
	done chan error // buffered: receives the outcome once
}

// mutate applies fn to a copy of the warehouse's current state, checks
// quarantine, picks the format, encodes, runs the full decoder on the
// bytes and publishes them with a compare-and-swap. A lost swap re-reads
// and re-applies fn, which re-evaluates the record conditions on the new
// state.
//
// Group commit: concurrent mutations of one warehouse share a publish.
// Each caller queues its fn, then takes the warehouse lock; whoever holds
// it runs every queued fn, in order, each on the state the previous ones
// left (so each sees the others' writes and its record conditions are
// evaluated against them), and publishes once. A fn that fails leaves no
// trace in that state and gets its own error; the others' outcome is the
// publish's. Each fn gets its own generation, so every written record
// still gets a version no other write had.
func (b *Backing) mutate(ctx context.Context, wh string, fn func(*snapshot) error) error {
	w := b.warehouse(wh)
	p := &pending{fn: fn, done: make(chan error, 1)}
	w.qmu.Lock()
	w.queue = append(w.queue, p)
	w.qmu.Unlock()
	w.mu.Lock()
	select {
	case err := <-p.done: // a previous holder ran it
		w.mu.Unlock()
		return err
	default:
	}
	w.qmu.Lock()
	batch := w.queue
	w.queue = nil
	w.qmu.Unlock()
	// The batch carries other callers' writes: one caller giving up must
	// not fail them, so the I/O ignores this caller's cancellation.
	errs := b.runBatchLocked(context.WithoutCancel(ctx), w, batch)
	w.mu.Unlock()
	for i, q := range batch {
		q.done <- errs[i]
	}
	return <-p.done
}

// runBatchLocked applies and publishes a batch; it returns each
// mutation's outcome.
func (b *Backing) runBatchLocked(ctx context.Context, w *warehouse, batch []*pending) []error {
	errs := make([]error, len(batch))
	fail := func(err error, which []bool) []error {
		for i := range batch {
			if which == nil || which[i] {
				errs[i] = err
			}
		}
		return errs
	}
	for range maxAttempts {
		cur, err := b.refreshLocked(ctx, w)
		if err != nil {
			return fail(err, nil)
		}
		next := cur
		applied := make([]bool, len(batch))
		changed := false
		for i, p := range batch {
			trial := next.clone()
			trial.Generation++
			err := p.fn(trial)
			if errors.Is(err, errNoChange) {
				errs[i] = nil
				continue
			}
			if err == nil {
				err = collisionRule(w.name, next, trial)
			}
			if errs[i] = err; err != nil {
				continue
			}
			next, applied[i], changed = trial, true, true
		}
		if !changed {
			return errs
		}
		next.Format = max(cur.Format, b.opt.configuredFormat(), w.hwm)
		if len(collisions(next)) > 0 {
			if w.hwm >= formatV2 {
				return fail(fmt.Errorf("%w: %q: cannot persist identifier collisions after format 2", ErrQuarantined, w.name), applied)
			}
			next.Format = formatV1 // stays v1 until cleanup is complete
		}
		_, err = b.installLocked(ctx, w, next)
		if errors.Is(err, errLostCAS) {
			continue // re-read and re-apply every mutation
		}
		if err != nil {
			return fail(err, applied)
		}
		return errs
	}
	return fail(fmt.Errorf("%w: %q: gave up after %d lost snapshot swaps", catalog.ErrConflict, w.name, maxAttempts), nil)
}

// collisionRule checks one mutation from before to after: in quarantine a
// write must shrink the collision set; outside, it must not create one.
func collisionRule(wh string, before, after *snapshot) error {
	cb, ca := collisions(before), collisions(after)
	switch {
	case len(cb) > 0 && !strictSubset(ca, cb):
		return fmt.Errorf("%w: %q: only writes that remove table/view collisions are allowed (%d left)", ErrQuarantined, wh, len(cb))
	case len(cb) == 0 && len(ca) > 0:
		return fmt.Errorf("%w: %q: identifier %q would be both a table and a view", catalog.ErrConflict, wh, ca[0])
	}
	return nil
}
