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
func (s *Store) Clean(ctx context.Context) (int, error) {
	var ids []erasure.DataID
	s.pinGate.Lock()
	err := s.idx.View(ctx, func(tx meta.Tx) error {
		c := tx.Cursor(meta.Garbage)
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			var id erasure.DataID
			copy(id[:], k)
			if !s.pinned(id.String()) {
				ids = append(ids, id)
			}
		}
		return nil
	})
	s.pinGate.Unlock()
	if err != nil || len(ids) == 0 {
		return 0, err
	}
	// Any reader pinning these from now on would have had to look them up
	// in a transaction that started after they became garbage, where no
	// version references them.
	for _, id := range ids {
		for _, d := range s.drives {
			if err := d.Remove(ctx, id.String()); err != nil {
				s.log.Warn().Err(err).Str("data", id.String()).Msg("cannot remove shard")
			}
		}
	}
	err = s.commit(ctx, nil, 0, func(tx meta.Tx) error {
		for _, id := range ids {
			if err := tx.Delete(meta.Garbage, meta.DataKey(id)); err != nil {
				return err
			}
		}
		return nil
	})
	return len(ids), err
}

func (s *Store) runCleaner(ctx context.Context) {
	t := time.NewTicker(s.opt.CleanerInterval)
	defer t.Stop()
	for {
		if _, err := s.Clean(ctx); err != nil && ctx.Err() == nil {
			s.log.Error().Err(err).Msg("cleaner")
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-s.cleanWake:
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
