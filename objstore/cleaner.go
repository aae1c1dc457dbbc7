package objstore

import (
	"context"
	"time"

	"github.com/cairnstore/cairn/objstore/erasure"
	"github.com/cairnstore/cairn/objstore/meta"
)

// Clean frees the shards of garbage data that no reader pins and returns
// how many data objects it freed. The background cleaner calls it; tests
// and tools may too.
func (s *Store) Clean(ctx context.Context) (int, error) { return s.clean(ctx, true) }

// clean is Clean; tidy says whether it also compacts pack segments (the
// passes woken by new garbage, some 100 ms after each delete or
// overwrite, only free it: compaction waits for the ticker).
func (s *Store) clean(ctx context.Context, tidy bool) (int, error) {
	s.cleanMu.Lock()
	defer s.cleanMu.Unlock()
	var ids []erasure.DataID
	var recs []meta.Data
	var leases leaseState
	now := time.Now()
	s.pinGate.Lock()
	err := s.idx.View(ctx, func(tx meta.Tx) error {
		var err error
		if leases, err = s.readLeases(tx, now); err != nil {
			return err
		}
		return meta.Scan(tx, meta.Garbage, nil, func(k, v []byte) error {
			var id erasure.DataID
			copy(id[:], k)
			if s.pinned(id.String()) || leases.data[id] {
				return nil
			}
			var g meta.GarbageEntry
			if err := meta.Decode(v, &g); err != nil {
				return err
			}
			if s.inGrace(g.Since, now) {
				return nil // another process may read it and not have leased it yet
			}
			ids = append(ids, id)
			recs = append(recs, g.Data)
			return nil
		})
	})
	s.pinGate.Unlock()
	if err != nil {
		return 0, err
	}
	if len(leases.expired) > 0 {
		// Their holders died without dropping them.
		err := s.commitChunks(ctx, len(leases.expired), 1, func(tx meta.Tx, i int) error {
			// Renewed meanwhile by a holder that was only late: keep it.
			raw, err := tx.Get(meta.Leases, leases.expired[i])
			if raw == nil || err != nil {
				return err
			}
			var l meta.Lease
			if err := meta.Decode(raw, &l); err != nil {
				return err
			}
			if l.Until.After(now) {
				return nil
			}
			return tx.Delete(meta.Leases, leases.expired[i])
		})
		if err != nil {
			return 0, err
		}
	}
	if len(ids) == 0 {
		return 0, s.maybeTidy(ctx, tidy)
	}
	// Any reader pinning these from now on would have had to look them up
	// in a transaction that started after they became garbage, where no
	// version references them.
	for i, id := range ids {
		if recs[i].Pack != 0 {
			continue // dead space in its segment until the segment dies
		}
		for _, d := range s.drives {
			if err := d.Remove(ctx, id.String()); err != nil {
				s.log.Warn().Err(err).Str("data", id.String()).Msg("cannot remove shard")
			}
		}
	}
	// Sent as requests of a few ids each, so that an index with bounded
	// transactions takes them; each id's writes stay in one request.
	err = s.commitChunks(ctx, len(ids), 3, func(tx meta.Tx, i int) error {
		id := ids[i]
		// Check before writing: the cleaner of another process sharing
		// the index may have freed it since the View (taking its pack
		// bytes off twice would let a live segment die).
		if ok, err := meta.Has(tx, meta.Garbage, meta.DataKey(id)); !ok || err != nil {
			return err
		}
		if err := tx.Delete(meta.Garbage, meta.DataKey(id)); err != nil {
			return err
		}
		if recs[i].Pack == 0 {
			return nil
		}
		if err := tx.Delete(meta.PackData, meta.PackDataKey(recs[i].Pack, id)); err != nil {
			return err
		}
		return adjustPackLive(tx, recs[i].Pack, -recs[i].Len, 0)
	})
	if err != nil {
		return 0, err
	}
	return len(ids), s.maybeTidy(ctx, tidy)
}

// maybeTidy tidies the pack segments after a cleaner pass when tidy, for
// a single writer; with several, each tidies its own (runPackTidy).
func (s *Store) maybeTidy(ctx context.Context, tidy bool) error {
	if !tidy || s.opt.WriterID != 0 {
		return nil
	}
	return s.tidyPacks(ctx)
}

// runPackTidy compacts and removes this writer's pack segments every
// cleaner interval, when several writers share the store: the cleaner
// runs on one of them, and a writer's active segment is known to it
// alone.
func (s *Store) runPackTidy(ctx context.Context) {
	s.every(ctx, s.opt.CleanerInterval, s.tidyPacks, "pack segment upkeep")
}

// every runs fn every interval until ctx ends, logging its errors with
// msg.
func (s *Store) every(ctx context.Context, interval time.Duration, fn func(context.Context) error, msg string) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := fn(ctx); err != nil && ctx.Err() == nil {
			s.log.Error().Err(err).Msg(msg)
		}
	}
}

func (s *Store) runCleaner(ctx context.Context) {
	t := time.NewTicker(s.opt.CleanerInterval)
	defer t.Stop()
	tidy := true
	for {
		if _, err := s.clean(ctx, tidy); err != nil && ctx.Err() == nil {
			s.log.Error().Err(err).Msg("cleaner")
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			tidy = true
		case <-s.cleanWake:
			tidy = false
			// Let a burst of overwrites gather before the next pass.
			select {
			case <-ctx.Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
}

func (s *Store) startBackground() {
	ctx, cancel := context.WithCancel(context.Background())
	s.stopBG = cancel
	runs := []func(context.Context){s.lead("cleaner", s.runCleaner), s.runHealer,
		s.lead("lifecycle", s.runLifecycle), s.lead("segment-compactor", s.runSegCompactor)}
	if s.opt.ReaderGrace > 0 {
		runs = append(runs, s.runLeaser)
	}
	if s.opt.WriterID != 0 {
		runs = append(runs, s.runPackTidy)
	}
	if s.opt.HealProbe > 0 {
		runs = append(runs, s.lead("heal", s.runHealScan))
	}
	if _, ok := s.idx.(meta.Watcher); ok {
		runs = append(runs, s.runForeignWatch)
	}
	for _, run := range runs {
		s.bg.Add(1)
		go func() {
			defer s.bg.Done()
			run(ctx)
		}()
	}
}

// RunLed runs run while this process leads job among those that share
// an index that elects (the nodes of a cluster: exactly one runs it at a
// time, and another takes over when it dies), and run itself otherwise,
// until ctx ends. A face's own background job (the catalog's maintenance
// scheduler) uses it.
func (s *Store) RunLed(ctx context.Context, job string, run func(context.Context)) {
	s.lead(job, run)(ctx)
}

// lead returns run to be run by one process at a time among those that
// share an index that elects (meta.Elector: etcd), and run itself
// otherwise: it waits for the lead of job, runs under it, and waits for
// the lead again when it was lost, until ctx ends.
func (s *Store) lead(job string, run func(context.Context)) func(context.Context) {
	el, ok := s.idx.(meta.Elector)
	if !ok {
		return run
	}
	return func(ctx context.Context) {
		for ctx.Err() == nil {
			lctx, release, err := el.Lead(ctx, job)
			if err != nil {
				if ctx.Err() == nil {
					s.log.Warn().Err(err).Str("job", job).Msg("cannot take the lead of a background job; trying again")
					select {
					case <-ctx.Done():
					case <-time.After(time.Second):
					}
				}
				continue
			}
			s.log.Info().Str("job", job).Msg("leading a background job")
			run(lctx)
			release()
		}
	}
}
