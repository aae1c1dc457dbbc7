package objstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"

	"github.com/cairnstore/cairn/objstore/erasure"
	"github.com/cairnstore/cairn/objstore/meta"
)

// Health is the store's background state for operators (metrics, the
// admin status API). Its JSON form is part of the operator contract: the
// names are stable.
type Health struct {
	// DegradedObjects counts the data objects this process found with a
	// shard missing or bad (a degraded read, a write that missed a drive)
	// and has not healed yet: healing failed, is queued, or the queue was
	// full (fsck and `cairn admin heal` find those).
	DegradedObjects int `json:"degraded_objects"`
	// HealQueue is the number of data ids waiting for the healer.
	HealQueue int `json:"heal_queue"`
	// CleanerBacklog counts data objects no version references and the
	// cleaner has not freed yet (pinned by a reader, in their grace
	// period, or waiting for the next pass).
	CleanerBacklog int `json:"cleaner_backlog"`
	// CompactionBacklog counts pack segments less than half live, which
	// the cleaner's compaction will rewrite (the active one excluded).
	CompactionBacklog int `json:"compaction_backlog"`
	// SegmentBacklog counts the versions queued for the segment
	// compactor (segqueue.go), or being compacted: versions whose segment
	// lists appends or patches made long.
	SegmentBacklog int `json:"segment_backlog"`
	// PendingPuts counts the asynchronous puts (the mount's closes) not
	// yet committed.
	PendingPuts int `json:"pending_puts"`
}

// Health reports the store's background state. The degraded set, the
// heal queue, the segment compactor's queue and the pending puts are
// counters kept as the store runs;
// the two backlogs are counted by scanning the garbage and pack tables,
// in time proportional to their size (small next to the object count),
// so callers polling it often keep its answer for a few seconds.
func (s *Store) Health(ctx context.Context) (Health, error) {
	if err := s.checkOpen(); err != nil {
		return Health{}, err
	}
	h := Health{
		HealQueue:      len(s.healq),
		PendingPuts:    len(s.pending.slots),
		SegmentBacklog: s.segq.backlog(),
	}
	degraded := s.degraded.list()
	s.packs.mu.Lock()
	active := s.packs.active
	s.packs.mu.Unlock()
	var freed []string
	err := s.idx.View(ctx, func(tx meta.Tx) error {
		// A degraded id whose data was freed since (deleted, overwritten)
		// is not degraded any more: dropped here, as the healer would
		// when it came to it, so the gauge does not stay up for ever.
		for _, name := range degraded {
			id, err := erasure.ParseDataID(name)
			if err == nil {
				raw, gerr := tx.Get(meta.DataTable, meta.DataKey(id))
				if gerr != nil {
					return gerr
				}
				if raw != nil {
					h.DegradedObjects++
					continue
				}
			}
			freed = append(freed, name)
		}
		err := meta.Scan(tx, meta.Garbage, nil, func(_, _ []byte) error {
			h.CleanerBacklog++
			if h.CleanerBacklog%4096 == 0 {
				return ctx.Err()
			}
			return nil
		})
		if err != nil {
			return err
		}
		return meta.Scan(tx, meta.Packs, nil, func(k, v []byte) error {
			seg, _ := meta.ParsePackKey(k)
			var p meta.PackInfo
			if err := meta.Decode(v, &p); err != nil {
				return err
			}
			if seg != active && p.Live > 0 && float64(p.Live) < compactBelow*float64(p.End) {
				h.CompactionBacklog++
			}
			return nil
		})
	})
	if err != nil {
		return Health{}, fmt.Errorf("health: %w", err)
	}
	for _, name := range freed {
		s.degraded.removeIfIdle(name)
	}
	return h, nil
}

// DriveStatuses reports the state of every drive as Status does, without
// Status's walk of the index: a directory listing and a statfs per drive.
func (s *Store) DriveStatuses(ctx context.Context) ([]DriveStatus, error) {
	if err := s.checkOpen(); err != nil {
		return nil, err
	}
	out := make([]DriveStatus, 0, len(s.drives))
	for i, d := range s.drives {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		ds := DriveStatus{Index: d.Index(), Path: d.String()}
		fsst, err := probeDrive(ctx, d)
		switch {
		case err == nil:
			ds.Online = true
			ds.TotalBytes, ds.FreeBytes, ds.AvailableBytes = fsst.total, fsst.free, fsst.avail
		case errors.Is(err, errNotLocal):
			ds.Online = true
		default:
			ds.Error = err.Error()
			ds.Online = !errors.Is(err, errDriveUnreadable)
		}
		if i < len(s.driveErrs) {
			ds.IOErrors = s.driveErrs[i].io.Load()
			ds.ChecksumFailures = s.driveErrs[i].checksum.Load()
		}
		out = append(out, ds)
	}
	return out, nil
}

// driveErrCounts are one drive's error counters since Open.
type driveErrCounts struct {
	io       atomic.Uint64 // reads and writes that failed (not: shard absent)
	checksum atomic.Uint64 // shard blocks or headers that failed verification
}

// errShardWrite marks a shard write the erasure writer gave up on.
var errShardWrite = errors.New("shard write failed")

// noteDriveErr counts err against drive i: a checksum failure (a block
// whose CRC does not match, a header that is not the shard's), or an I/O
// error. An absent shard file (a drive that lost it, or was replaced) is
// not an I/O error: heal restores it and the degraded count shows it;
// neither is a cancelled request.
func (s *Store) noteDriveErr(i int, err error) {
	if i < 0 || i >= len(s.driveErrs) {
		return
	}
	switch shardFault(err) {
	case faultChecksum:
		s.driveErrs[i].checksum.Add(1)
	case faultIO:
		s.driveErrs[i].io.Add(1)
	}
}

// Kinds of a shard's failure (shardFault).
const (
	faultNone     = iota // no error, an absent file, a cancelled request
	faultChecksum        // content that does not verify
	faultIO              // the drive failed (I/O error, peer out of reach)
)

// shardFault classifies the error of a shard's read or write.
func shardFault(err error) int {
	switch {
	case err == nil, errors.Is(err, os.ErrNotExist), errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return faultNone
	case errors.Is(err, erasure.ErrCorrupt), errors.Is(err, erasure.ErrBadHeader):
		return faultChecksum
	}
	return faultIO
}

// degradedSet holds the data ids seen degraded and not healed since,
// each with whether it waits in the heal queue (so that a degraded object
// read a thousand times is queued once).
type degradedSet struct {
	mu  sync.Mutex // protects ids
	ids map[string]bool
}

// add notes id as degraded and reports whether it should be queued: it
// is not waiting in the queue already.
func (d *degradedSet) add(id string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ids == nil {
		d.ids = map[string]bool{}
	}
	if d.ids[id] {
		return false
	}
	d.ids[id] = true
	return true
}

// dequeued notes that the healer took id off the queue (it stays
// degraded until healed).
func (d *degradedSet) dequeued(id string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.ids[id]; ok {
		d.ids[id] = false
	}
}

func (d *degradedSet) remove(id string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.ids, id)
}

// list returns the ids in the set.
func (d *degradedSet) list() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]string, 0, len(d.ids))
	for id := range d.ids {
		out = append(out, id)
	}
	return out
}

// removeIfIdle removes id unless it waits in the heal queue (the healer
// removes it then).
func (d *degradedSet) removeIfIdle(id string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if queued, ok := d.ids[id]; ok && !queued {
		delete(d.ids, id)
	}
}
