package objstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sync"
	"time"

	"github.com/cairnstore/cairn/objstore/drive"
	"github.com/cairnstore/cairn/objstore/meta"
)

// Small data objects are not given a shard file per drive: their shard
// records (the same header and blocks a shard file holds) are appended to
// the active pack segment, at one offset shared by every drive. A small
// put then costs a few pwrites into files already open and shares one
// fdatasync per drive with its batch, where a file per shard would cost
// an inode, a directory entry and a journal commit per drive.

// packs holds the open pack segment files and the append position.
type packs struct {
	mu     sync.Mutex                  // protects the following
	active uint64                      // segment appended to; 0 before the first small write
	next   uint64                      // id of the next segment to create
	off    int64                       // next free offset in active
	files  map[uint64][]drive.PackFile // open segment files by drive; nil where unavailable
}

// packFile returns the open file of segment seg on drive i, opening it
// (creating it when create) on first use.
func (s *Store) packFile(ctx context.Context, i int, seg uint64, create bool) (drive.PackFile, error) {
	s.packs.mu.Lock()
	defer s.packs.mu.Unlock()
	return s.packFileLocked(ctx, i, seg, create)
}

func (s *Store) packFileLocked(ctx context.Context, i int, seg uint64, create bool) (drive.PackFile, error) {
	fs := s.packs.files[seg]
	if fs == nil {
		fs = make([]drive.PackFile, len(s.drives))
		s.packs.files[seg] = fs
	}
	if fs[i] != nil {
		return fs[i], nil
	}
	f, err := s.drives[i].OpenPack(ctx, seg, create)
	if err != nil {
		return nil, err
	}
	fs[i] = f
	return f, nil
}

// dropPackFile forgets the open file of a segment on one drive (after heal
// replaced it, or when the segment is removed); the next use reopens it.
func (s *Store) dropPackFile(i int, seg uint64) {
	s.packs.mu.Lock()
	defer s.packs.mu.Unlock()
	if fs := s.packs.files[seg]; fs != nil && fs[i] != nil {
		_ = fs[i].Close()
		fs[i] = nil
	}
}

func (s *Store) closePacks() {
	s.packs.mu.Lock()
	defer s.packs.mu.Unlock()
	for seg, fs := range s.packs.files {
		for _, f := range fs {
			if f != nil {
				_ = f.Close()
			}
		}
		delete(s.packs.files, seg)
	}
}

// packAppend writes one shard record per drive (nil: that shard failed)
// at a fresh offset of the active segment. It returns the segment, the
// offset, the drives that took their record and the errors of the others.
func (s *Store) packAppend(ctx context.Context, recs [][]byte, size int64) (seg uint64, off int64, shards []int, failed error) {
	s.packs.mu.Lock()
	if s.packs.active == 0 || s.packs.off+size > s.opt.PackSegmentSize {
		s.packs.active, s.packs.next, s.packs.off = s.packs.next, s.packs.next+1, 0
	}
	seg, off = s.packs.active, s.packs.off
	s.packs.off += size
	files := make([]drive.PackFile, len(s.drives))
	for i := range s.drives {
		if recs[i] == nil {
			continue
		}
		f, err := s.packFileLocked(ctx, i, seg, true)
		if err != nil {
			s.log.Warn().Err(err).Int("drive", i).Uint64("pack", seg).Msg("cannot open pack segment")
			s.noteDriveErr(i, err)
			failed = errors.Join(failed, err)
			continue
		}
		files[i] = f
	}
	s.packs.mu.Unlock()
	for i, f := range files {
		if f == nil {
			continue
		}
		if _, err := f.WriteAt(recs[i], off); err != nil {
			s.log.Warn().Err(err).Int("drive", i).Uint64("pack", seg).Msg("pack write failed")
			s.noteDriveErr(i, err)
			failed = errors.Join(failed, fmt.Errorf("drive %d: %w", i, err))
			continue
		}
		s.driveWritten.Add(int64(len(recs[i])))
		shards = append(shards, i)
	}
	return seg, off, shards, failed
}

// syncPacks flushes the given segments on every drive (SyncPacks), the
// drives in parallel, and returns per segment the per-drive errors.
func (s *Store) syncPacks(ctx context.Context, segs map[uint64]bool) map[uint64][]error {
	list := make([]uint64, 0, len(segs))
	out := map[uint64][]error{}
	for seg := range segs {
		list = append(list, seg)
		out[seg] = make([]error, len(s.drives))
	}
	var wg sync.WaitGroup
	for i, d := range s.drives {
		wg.Go(func() {
			// One segment at a time, so that one segment's error is not
			// charged to the others.
			for _, seg := range list {
				out[seg][i] = d.SyncPacks(ctx, []uint64{seg})
			}
		})
	}
	wg.Wait()
	return out
}

// initPacks picks the next segment id (above every segment of this
// writer on disk or in the index) and removes this writer's segment files
// the index does not know: written before a crash, never committed. With
// several writers, a drive that cannot be reached is passed over with a
// warning (its orphans wait for the next Open); a single writer's drives
// are all its own, and one that fails fails the call.
func (s *Store) initPacks(ctx context.Context, remove bool) (orphans []ShardRef, err error) {
	known := map[uint64]bool{}
	next := s.firstSeg(time.Now())
	err = s.idx.View(ctx, func(tx meta.Tx) error {
		return meta.Scan(tx, meta.Packs, nil, func(k, _ []byte) error {
			if seg, ok := meta.ParsePackKey(k); ok {
				known[seg] = true
				if s.ownsSeg(seg) {
					next = max(next, seg+1)
				}
			}
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	for i, d := range s.drives {
		segs, err := d.Packs(ctx)
		if err != nil && s.opt.WriterID != 0 {
			s.log.Warn().Err(err).Str("drive", d.String()).Msg("cannot list pack segments; passing over the drive")
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, seg := range segs {
			if !s.ownsSeg(seg) {
				continue // another writer's, perhaps being written
			}
			next = max(next, seg+1)
			if known[seg] {
				continue
			}
			orphans = append(orphans, ShardRef{Drive: i, Path: s.packDesc(i, seg)})
			if remove {
				if err := d.RemovePack(ctx, seg); err != nil {
					return nil, err
				}
			}
		}
	}
	s.packs.mu.Lock()
	s.packs.next = max(s.packs.next, next)
	s.packs.mu.Unlock()
	return orphans, nil
}

// freeDeadPacks removes the segments no longer written to whose data were
// all freed and that no reader pins.
func (s *Store) freeDeadPacks(ctx context.Context) error {
	var dead []uint64
	now := time.Now()
	err := s.idx.View(ctx, func(tx meta.Tx) error {
		leases, err := s.readLeases(tx, now)
		if err != nil {
			return err
		}
		return meta.Scan(tx, meta.Packs, nil, func(k, v []byte) error {
			seg, _ := meta.ParsePackKey(k)
			var p meta.PackInfo
			if err := meta.Decode(v, &p); err != nil {
				return err
			}
			if s.ownsSeg(seg) && p.Live <= 0 && !leases.segs[seg] && !s.inGrace(p.Dead, now) {
				dead = append(dead, seg)
			}
			return nil
		})
	})
	if err != nil || len(dead) == 0 {
		return err
	}
	s.packs.mu.Lock()
	active := s.packs.active
	s.packs.mu.Unlock()
	var freed []uint64
	for _, seg := range dead {
		if seg == active || s.segPinned(seg) {
			continue
		}
		for i, d := range s.drives {
			s.dropPackFile(i, seg)
			if err := d.RemovePack(ctx, seg); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
		freed = append(freed, seg)
	}
	if len(freed) == 0 {
		return nil
	}
	return s.commitChunks(ctx, len(freed), 1, func(tx meta.Tx, i int) error {
		return tx.Delete(meta.Packs, meta.PackKey(freed[i]))
	})
}

// adjustPackLive adds delta to a segment's live bytes and raises its end
// to at least end, creating its entry on first use.
func adjustPackLive(tx meta.Tx, seg uint64, delta, end int64) error {
	var p meta.PackInfo
	raw, err := tx.Get(meta.Packs, meta.PackKey(seg))
	if err != nil {
		return err
	}
	if raw != nil {
		if err := meta.Decode(raw, &p); err != nil {
			return err
		}
	} else if delta < 0 {
		return fmt.Errorf("%w: pack segment %x is not in the index", meta.ErrCorruptRecord, seg)
	} else {
		p.Created = time.Now().UTC()
	}
	p.Live += delta
	p.End = max(p.End, end)
	if p.Live <= 0 && delta < 0 {
		p.Dead = time.Now().UTC()
	}
	return tx.Put(meta.Packs, meta.PackKey(seg), meta.Encode(p))
}
