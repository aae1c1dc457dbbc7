package erasure

import (
	"context"
	"sync/atomic"

	"golang.org/x/sync/semaphore"
)

// Budget bounds the bytes of block buffers that Writers sharing it have
// handed to their sinks at once: a Writer takes a full block buffer's size
// from the budget before it encodes and queues the block, and gives it
// back once every shard of the block is written (and every observer has
// seen it). When the budget is spent, the next Writer with a full block
// waits, in arrival order, so many concurrent writes share a bounded set
// of buffers with back-pressure instead of each holding its own pipeline
// of them. The buffer a Writer is still filling is not counted: a client
// sending its body slowly holds that one buffer, never the budget.
//
// Handed-over buffers are freed without taking more, so waiting never
// deadlocks. A buffer larger than the whole budget takes the whole budget.
// A Budget is safe for concurrent use; the zero value is not usable (see
// NewBudget).
type Budget struct {
	sem     *semaphore.Weighted
	size    int64
	inUse   atomic.Int64
	peak    atomic.Int64
	waiting atomic.Int64
}

// NewBudget returns a budget of size bytes; size must be positive.
func NewBudget(size int64) *Budget {
	return &Budget{sem: semaphore.NewWeighted(size), size: size}
}

// Size returns the budget's size in bytes.
func (b *Budget) Size() int64 { return b.size }

// InUse returns the bytes taken from the budget now.
func (b *Budget) InUse() int64 { return b.inUse.Load() }

// Peak returns the most bytes ever taken from the budget at once. It
// never exceeds Size.
func (b *Budget) Peak() int64 { return b.peak.Load() }

// Waiting returns the number of callers waiting for the budget now.
func (b *Budget) Waiting() int64 { return b.waiting.Load() }

// acquire takes n bytes (at most Size) from the budget, waiting for them
// unless ctx is done first. It returns the bytes taken, which release
// must give back.
func (b *Budget) acquire(ctx context.Context, n int64) (int64, error) {
	n = min(n, b.size)
	if !b.sem.TryAcquire(n) {
		b.waiting.Add(1)
		err := b.sem.Acquire(ctx, n)
		b.waiting.Add(-1)
		if err != nil {
			return 0, err
		}
	}
	cur := b.inUse.Add(n)
	for p := b.peak.Load(); cur > p && !b.peak.CompareAndSwap(p, cur); p = b.peak.Load() {
	}
	return n, nil
}

// release gives back n bytes taken by acquire.
func (b *Budget) release(n int64) {
	b.inUse.Add(-n)
	b.sem.Release(n)
}
