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
	s.pinGate.Lock()
	err := s.idx.View(ctx, func(tx meta.Tx) error {
		return meta.Scan(tx, meta.Garbage, nil, func(k, v []byte) error {
			var id erasure.DataID
			copy(id[:], k)
			if s.pinned(id.String()) {
				return nil
			}
			var g meta.GarbageEntry
			if err := meta.Decode(v, &g); err != nil {
				return err
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
	err = s.commit(ctx, nil, 0, func(tx meta.Tx) error {
		for i, id := range ids {
			if err := tx.Delete(meta.Garbage, meta.DataKey(id)); err != nil {
				return err
			}
			if recs[i].Pack != 0 {
				if err := tx.Delete(meta.PackData, meta.PackDataKey(recs[i].Pack, id)); err != nil {
					return err
				}
				if err := adjustPackLive(tx, recs[i].Pack, -recs[i].Len, 0); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return len(ids), s.maybeTidy(ctx, tidy)
}

func (s *Store) maybeTidy(ctx context.Context, tidy bool) error {
	if !tidy {
		return nil
	}
	return s.tidyPacks(ctx)
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
	for _, run := range []func(context.Context){s.runCleaner, s.runHealer, s.runLifecycle} {
		s.bg.Add(1)
		go func() {
			defer s.bg.Done()
			run(ctx)
		}()
	}
}
