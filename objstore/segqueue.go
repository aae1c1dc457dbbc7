package objstore

import (
	"bytes"
	"context"
	"sync"
	"time"

	"github.com/cairnstore/cairn/objstore/meta"
)

// The segment compactor's schedule: writes that commit a version with
// many segments note it (noteSegments), the background compactor takes
// the notes Options.SegmentCompactDelay (1 s) after the first of a burst (repeated
// notes of one version in the meantime count once) and compacts each
// version (CompactSegments) once its key has not been noted for that
// long: a file patched all along (a database, fio) is compacted after
// the burst, not under it, where every compaction would find its version
// changed at the commit. The queue is in memory: Open's scan of the
// versions table queues again every version past SegmentCompactMin, so a
// crash loses no candidate for ever.

const (
	// segQueueMax bounds the queue; notes past it are dropped (the next
	// note of the version, or the next Open's scan, queues it again).
	segQueueMax = 1 << 16
	// segScanChunk is how many versions records one transaction of
	// Open's scan reads.
	segScanChunk = 4096
	// minSegmentBytes is the fewest bytes a segment takes in a version
	// record (a binary record: the data id and two varints), so that the
	// scan decodes only records long enough to hold many segments.
	minSegmentBytes = 16
)

// segNote is a version queued for segment compaction. current: it was
// noted as the key's new current version, and is skipped if it is no
// longer current when its turn comes (a newer one was noted: an
// appender's every version need not be compacted).
type segNote struct {
	bucket, key, versionID string
	current                bool
}

// keyID names n's key in segQueue.noted.
func (n segNote) keyID() string { return n.bucket + "\x00" + n.key }

// segCount is a version's segment count, noted after its commit
// (noteSegments).
type segCount struct {
	key, versionID string
	n              int
}

// segQueue holds the versions waiting for the segment compactor.
type segQueue struct {
	mu    sync.Mutex // protects the following
	set   map[segNote]bool
	order []segNote
	busy  int                  // taken by the compactor and not yet done
	noted map[string]time.Time // by bucket "\x00" key: when a write last noted it

	wake chan struct{} // nudges the compactor
}

func newSegQueue() segQueue {
	return segQueue{set: map[segNote]bool{}, noted: map[string]time.Time{}, wake: make(chan struct{}, 1)}
}

// add queues n unless it is queued already or the queue is full, and
// notes that its key was written now.
func (q *segQueue) add(n segNote) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.noted[n.keyID()] = time.Now()
	q.queueLocked(n)
}

// requeue queues n again, leaving its key's time alone.
func (q *segQueue) requeue(n segNote) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.queueLocked(n)
}

// quiet reports whether n's key was last noted at least d ago, and
// forgets the time when it was.
func (q *segQueue) quiet(n segNote, d time.Duration) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	k := n.keyID()
	if t, ok := q.noted[k]; ok && time.Since(t) < d {
		return false
	}
	delete(q.noted, k)
	return true
}

func (q *segQueue) queueLocked(n segNote) {
	if q.set[n] || len(q.order) >= segQueueMax {
		return
	}
	q.set[n] = true
	q.order = append(q.order, n)
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// take returns everything queued; the caller calls done once per note.
func (q *segQueue) take() []segNote {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := q.order
	q.order = nil
	clear(q.set)
	q.busy += len(out)
	return out
}

func (q *segQueue) done() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.busy--
}

// backlog is the number of versions queued or being compacted.
func (q *segQueue) backlog() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.order) + q.busy
}

// noteSegments queues for segment compaction version versionID of
// bucket/key, just committed as the key's current version with n
// segments, when n passes Options.SegmentCompactMin, from which the
// planner wants it. Cheap: call it
// after every commit that makes a version of many segments.
func (s *Store) noteSegments(bucket, key, versionID string, n int) {
	if n <= s.opt.SegmentCompactMin {
		return
	}
	s.segq.add(segNote{bucket: bucket, key: key, versionID: versionID, current: true})
}

// runSegCompactor is the segment compactor's goroutine: it queues the
// versions Open's scan finds, then compacts what is queued, waiting
// Options.SegmentCompactDelay after each wake so that notes gather.
func (s *Store) runSegCompactor(ctx context.Context) {
	if err := s.scanSegments(ctx); err != nil && ctx.Err() == nil {
		s.log.Error().Err(err).Msg("segment compactor: scan of the versions")
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.segq.wake:
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(s.opt.SegmentCompactDelay):
		}
		s.compactQueued(withBackground(ctx), s.opt.SegmentCompactDelay)
	}
}

// compactQueued compacts every version queued whose key was not noted
// within the last minQuiet (those are queued again) and returns how many
// it compacted.
func (s *Store) compactQueued(ctx context.Context, minQuiet time.Duration) int {
	done := 0
	for _, n := range s.segq.take() {
		if !s.segq.quiet(n, minQuiet) {
			s.segq.requeue(n) // written to lately: after the burst
			s.segq.done()
			continue
		}
		ok, err := s.compactNoted(ctx, n)
		s.segq.done()
		switch {
		case err != nil && ctx.Err() == nil:
			s.log.Warn().Err(err).Str("bucket", n.bucket).Str("key", n.key).Str("version", n.versionID).Msg("segment compaction")
		case ok:
			done++
		}
	}
	return done
}

// compactNoted compacts one queued version, unless it was queued as the
// current version and is not any more.
func (s *Store) compactNoted(ctx context.Context, n segNote) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	if n.current {
		still := false
		err := s.idx.View(ctx, func(tx meta.Tx) error {
			cur, err := currentVersion(tx, n.bucket, n.key)
			still = cur != nil && cur.VersionID == n.versionID
			return err
		})
		if err != nil || !still {
			return false, err
		}
	}
	return s.CompactSegments(ctx, n.bucket, n.key, n.versionID)
}

// scanSegments queues every version with more than SegmentCompactMin
// segments, reading the versions table segScanChunk records per
// transaction.
func (s *Store) scanSegments(ctx context.Context) error {
	least := s.opt.SegmentCompactMin
	var after []byte
	for {
		var last []byte
		var found []segNote // queued once the transaction is over: it takes no store lock
		err := s.idx.View(ctx, func(tx meta.Tx) error {
			last, found = nil, nil
			c := tx.Cursor(meta.Versions)
			k, raw := c.Seek(after)
			if after != nil && bytes.Equal(k, after) {
				k, raw = c.Next()
			}
			for n := 0; k != nil && n < segScanChunk; k, raw = c.Next() {
				n++
				last = bytes.Clone(k)
				if len(raw) < least*minSegmentBytes && !meta.IsChunked(raw) {
					continue
				}
				var v meta.Version
				if err := meta.Decode(raw, &v); err != nil {
					return err
				}
				if v.SegmentCount() <= least {
					continue
				}
				bucket, key, _, ok := meta.SplitVersionKey(k)
				if ok {
					found = append(found, segNote{bucket: bucket, key: key, versionID: v.VersionID})
				}
			}
			return c.Err()
		})
		if err != nil {
			return err
		}
		for _, n := range found {
			s.segq.add(n)
		}
		if last == nil {
			return nil
		}
		after = last
	}
}
