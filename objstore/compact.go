package objstore

import (
	"context"
	"errors"
	"io"
	"sync"

	"github.com/cairnstore/cairn/objstore/erasure"
	"github.com/cairnstore/cairn/objstore/meta"
)

// Pack segments are append-only, so a freed small object leaves dead
// space. Compaction copies the live records of a segment that is mostly
// dead to the active segment, byte for byte, and repoints their data
// records in one transaction each; the emptied segment is then removed
// like any dead one, once the readers that pinned it are done.

const (
	// compactBelow: a segment is compacted when less than this fraction of
	// its bytes is live.
	compactBelow = 0.5
	// compactBudget bounds the record bytes moved in one cleaner pass.
	compactBudget = 64 << 20
)

// tidyPacks compacts mostly-dead segments and removes dead ones.
func (s *Store) tidyPacks(ctx context.Context) error {
	if err := s.compactPacks(ctx); err != nil {
		return err
	}
	return s.freeDeadPacks(ctx)
}

type packMove struct {
	id  erasure.DataID
	rec meta.Data
}

// compactPacks moves the live records out of mostly-dead segments, up to
// compactBudget bytes.
func (s *Store) compactPacks(ctx context.Context) error {
	s.packs.mu.Lock()
	active := s.packs.active
	s.packs.mu.Unlock()
	var moves []packMove
	err := s.idx.View(ctx, func(tx meta.Tx) error {
		var budget int64 = compactBudget
		return meta.Scan(tx, meta.Packs, nil, func(k, v []byte) error {
			if budget <= 0 {
				return meta.ErrStop
			}
			seg, _ := meta.ParsePackKey(k)
			var p meta.PackInfo
			if err := meta.Decode(v, &p); err != nil {
				return err
			}
			if seg == active || !s.ownsSeg(seg) || p.Live <= 0 || float64(p.Live) >= compactBelow*float64(p.End) {
				return nil
			}
			return meta.Scan(tx, meta.PackData, meta.PackKey(seg), func(dk, _ []byte) error {
				if budget <= 0 {
					return meta.ErrStop
				}
				var id erasure.DataID
				copy(id[:], dk[8:])
				raw, err := tx.Get(meta.DataTable, meta.DataKey(id))
				if raw == nil || err != nil {
					return err // nil: garbage, the cleaner frees it
				}
				var d meta.Data
				if err := meta.Decode(raw, &d); err != nil {
					return err
				}
				if d.Pack == seg {
					moves = append(moves, packMove{id: id, rec: d})
					budget -= d.Len
				}
				return nil
			})
		})
	})
	if err != nil || len(moves) == 0 {
		return err
	}
	// Move concurrently so the moves share group commits.
	sem := make(chan struct{}, 16)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for _, mv := range moves {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := s.movePacked(ctx, mv); err != nil {
				mu.Lock()
				first = errors.Join(first, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return first
}

// movePacked copies one data object's records to the active segment and
// repoints its data record, unless it was freed or moved meanwhile.
func (s *Store) movePacked(ctx context.Context, mv packMove) error {
	old := mv.rec
	recs := make([][]byte, len(s.drives))
	good := 0
	for i := range s.drives {
		f, err := s.drives[i].OpenPack(ctx, old.Pack, false)
		if err != nil {
			continue
		}
		b := make([]byte, old.Len)
		_, err = f.ReadAt(b, old.Off)
		_ = f.Close()
		if err != nil && !errors.Is(err, io.EOF) {
			continue
		}
		if err == nil {
			recs[i] = b
			good++
		}
	}
	quorum := erasure.WriteQuorum(old.K, old.M)
	if good < quorum {
		// Too degraded to move safely: heal first (fsck reports it).
		s.queueHeal(mv.id.String())
		return nil
	}
	seg, off, shards, _ := s.packAppend(ctx, recs, old.Len)
	if len(shards) < quorum {
		return nil // dead space; try again next pass
	}
	moved := old
	moved.Pack, moved.Off = seg, off
	return s.enqueue(ctx, &commitReq{shards: shards, quorum: quorum, packSeg: seg, fn: func(tx meta.Tx) error {
		raw, err := tx.Get(meta.DataTable, meta.DataKey(mv.id))
		if raw == nil || err != nil {
			return err // nil: freed meanwhile, the copy is dead space
		}
		var cur meta.Data
		if err := meta.Decode(raw, &cur); err != nil {
			return err
		}
		if cur.Pack != old.Pack || cur.Off != old.Off {
			return nil
		}
		cur.Pack, cur.Off = moved.Pack, moved.Off
		if err := tx.Put(meta.DataTable, meta.DataKey(mv.id), meta.Encode(cur)); err != nil {
			return err
		}
		if err := tx.Delete(meta.PackData, meta.PackDataKey(old.Pack, mv.id)); err != nil {
			return err
		}
		if err := tx.Put(meta.PackData, meta.PackDataKey(seg, mv.id), nil); err != nil {
			return err
		}
		if err := adjustPackLive(tx, old.Pack, -old.Len, 0); err != nil {
			return err
		}
		return adjustPackLive(tx, seg, old.Len, off+old.Len)
	}})
}
