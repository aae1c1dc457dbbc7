package objstore

import (
	"context"
	"errors"
	"io/fs"
	"time"

	"github.com/cairnstore/cairn/objstore/erasure"
	"github.com/cairnstore/cairn/objstore/meta"
)

// Online heal of whole drives.
//
// A drive on another node is out while its node is down or cut off, and
// the writes made meanwhile leave its shards out (they commit on a write
// quorum). Reads that find a shard missing queue their data object for
// the healer, but data nobody reads would stay degraded. So, with
// Options.HealProbe set, the leader of the "heal" job probes every drive
// that often, and records in the index (Settings "heal-pending") that a
// drive was seen out; once every drive answers, it heals every data
// object of the store, as the offline Heal does, and clears the record.
// The record outlives the leader: the next one finds it and finishes the
// pass. RequestHealIn sets it by hand (cairn admin heal --online).

// healPendingKey is the Settings key of the heal record: the time, in
// RFC 3339, since when a pass is due.
var healPendingKey = []byte("heal-pending")

// probeName is a shard name no data object has (data ids are random), for
// probing a drive: a drive that answers "not there" is up.
const probeName = "00000000000000000000000000000000"

// probeTimeout bounds one probe of a drive.
const probeTimeout = 5 * time.Second

// healAll heals every live data object, reporting progress, and returns
// what it rewrote and what it could not. It stops at the first error
// other than a data object past repair.
func (s *Store) healAll(ctx context.Context, progress func(Progress)) (HealReport, error) {
	var rep HealReport
	datas, err := s.allData(ctx)
	if err != nil {
		return rep, err
	}
	for i, d := range datas {
		if progress != nil {
			progress(Progress{Phase: "heal", Done: int64(i), Total: int64(len(datas))})
		}
		if d.garbage {
			continue
		}
		healed, err := s.healData(ctx, d.id, d.rec)
		for _, idx := range healed {
			rep.Healed = append(rep.Healed, s.shardRef(d.id, idx, d.rec))
		}
		if errors.Is(err, ErrDataCorrupt) {
			rep.Unrecoverable = append(rep.Unrecoverable, s.shardRef(d.id, -1, d.rec))
			continue
		}
		if err != nil {
			return rep, err
		}
	}
	if progress != nil {
		progress(Progress{Phase: "heal", Done: int64(len(datas)), Total: int64(len(datas))})
	}
	return rep, nil
}

// HealPending reports since when a whole-store heal is due, if one is.
func (s *Store) HealPending(ctx context.Context) (since time.Time, pending bool, err error) {
	return HealDue(ctx, s.idx)
}

// HealDue reads from the index of a store, served or not, since when a
// whole-store heal is due, if one is (cairn admin cluster status).
func HealDue(ctx context.Context, idx meta.Index) (since time.Time, due bool, err error) {
	err = idx.View(ctx, func(tx meta.Tx) error {
		since, due, err = readHealPending(tx)
		return err
	})
	return since, due, err
}

// RequestHealIn records in the index of a served store that it should be
// healed whole (cairn admin heal on a cluster): its heal leader runs the
// pass once every drive answers.
func RequestHealIn(ctx context.Context, idx meta.Index) error {
	now := time.Now()
	return idx.Update(ctx, func(tx meta.Tx) error { return putHealPending(tx, now) })
}

// putHealPending records a due pass as of now, keeping an earlier one.
func putHealPending(tx meta.Tx, now time.Time) error {
	if _, pending, err := readHealPending(tx); pending || err != nil {
		return err
	}
	return tx.Put(meta.Settings, healPendingKey, []byte(now.UTC().Format(time.RFC3339Nano)))
}

func readHealPending(tx meta.Tx) (time.Time, bool, error) {
	raw, err := tx.Get(meta.Settings, healPendingKey)
	if raw == nil || err != nil {
		return time.Time{}, false, err
	}
	t, err := time.Parse(time.RFC3339Nano, string(raw))
	if err != nil {
		return time.Time{}, true, nil // due all the same; the time is only shown
	}
	return t, true, nil
}

// setHealPending records a due pass, keeping an earlier time.
func (s *Store) setHealPending(ctx context.Context, now time.Time) error {
	return s.commit(ctx, nil, 0, func(tx meta.Tx) error { return putHealPending(tx, now) })
}

// clearHealPending drops the record if it is still the one the pass
// started from (a request made during the pass asks for another).
func (s *Store) clearHealPending(ctx context.Context, since time.Time) error {
	return s.commit(ctx, nil, 0, func(tx meta.Tx) error {
		t, pending, err := readHealPending(tx)
		if !pending || err != nil || t.After(since) {
			return err
		}
		return tx.Delete(meta.Settings, healPendingKey)
	})
}

// probeDrives reports which drives answer.
func (s *Store) probeDrives(ctx context.Context) []bool {
	up := make([]bool, len(s.drives))
	for i, d := range s.drives {
		pctx, cancel := context.WithTimeout(ctx, probeTimeout)
		r, err := d.Open(pctx, probeName)
		cancel()
		if err == nil {
			_ = r.Close()
		}
		up[i] = err == nil || errors.Is(err, fs.ErrNotExist)
	}
	return up
}

// WaitDrives waits until every drive answers, or, once allFor has
// passed, a write quorum of them, probing them every interval and
// logging, at most every 10 s, which do not yet: a node of a cluster
// starting beside its peers waits for them before it writes, so that
// what it writes first is whole. It returns at once when the drives are
// all local.
func (s *Store) WaitDrives(ctx context.Context, interval, allFor time.Duration) error {
	if err := s.checkOpen(); err != nil {
		return err
	}
	if allLocal(s.drives) {
		return nil
	}
	k, m, _ := s.geometry()
	need := erasure.WriteQuorum(k, m)
	var logged time.Time
	start := time.Now()
	for {
		up := s.probeDrives(ctx)
		var n int
		var missing []string
		for i, ok := range up {
			if ok {
				n++
			} else {
				missing = append(missing, s.drives[i].String())
			}
		}
		if n == len(up) || (n >= need && time.Since(start) >= allFor) {
			if len(missing) > 0 {
				s.log.Warn().Strs("out", missing).Int("up", n).Int("drives", len(up)).Msg("some drives do not answer; serving on the others, and healing them when they are back")
			}
			return nil
		}
		if time.Since(logged) >= 10*time.Second {
			logged = time.Now()
			s.log.Warn().Strs("waiting_for", missing).Int("up", n).Int("need", need).Msg("waiting for enough drives to answer before serving (are the other nodes started?)")
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(interval):
		}
	}
}

// runHealScan is the heal leader's loop (see above).
func (s *Store) runHealScan(ctx context.Context) {
	t := time.NewTicker(s.opt.HealProbe)
	defer t.Stop()
	out := make([]bool, len(s.drives)) // drives seen out and not back yet
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		up := s.probeDrives(ctx)
		down := 0
		for i, ok := range up {
			switch {
			case !ok && !out[i]:
				out[i] = true
				s.log.Warn().Str("drive", s.drives[i].String()).Msg("drive does not answer; writes go on without it, and it is healed when it is back")
			case ok && out[i]:
				out[i] = false
				s.log.Info().Str("drive", s.drives[i].String()).Msg("drive answers again")
			}
			if !ok {
				down++
			}
		}
		if ctx.Err() != nil {
			return
		}
		if down > 0 {
			if err := s.setHealPending(ctx, time.Now()); err != nil && ctx.Err() == nil {
				s.log.Warn().Err(err).Msg("cannot record a due heal; trying again")
			}
			continue
		}
		since, pending, err := s.HealPending(ctx)
		if err != nil || !pending {
			continue
		}
		s.log.Info().Time("due_since", since).Msg("healing the store: every drive answers")
		rep, err := s.healAll(ctx, nil)
		if err != nil {
			if ctx.Err() == nil {
				s.log.Warn().Err(err).Int("healed", len(rep.Healed)).Msg("heal pass stopped; it starts again")
			}
			continue
		}
		if err := s.clearHealPending(ctx, since); err != nil && ctx.Err() == nil {
			s.log.Warn().Err(err).Msg("cannot clear the due heal; the pass runs again")
			continue
		}
		s.log.Info().Int("healed", len(rep.Healed)).Int("unrecoverable", len(rep.Unrecoverable)).Msg("heal pass done")
	}
}
