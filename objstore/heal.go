package objstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/cairnstore/cairn/objstore/drive"
	"github.com/cairnstore/cairn/objstore/erasure"
	"github.com/cairnstore/cairn/objstore/meta"
)

// HealReport says what Heal did.
type HealReport struct {
	Healed         []ShardRef // shards rewritten
	OrphansRemoved int64      // shard files no committed write referenced
	Unrecoverable  []ShardRef // data with fewer than k good shards (Drive -1)
}

// OK reports whether everything is healthy after the heal.
func (r HealReport) OK() bool { return len(r.Unrecoverable) == 0 }

// Heal checks every data object of the offline data directory and
// rewrites its missing or corrupt shards from the good ones, then removes
// orphan shard files. The directory must not be served meanwhile.
func Heal(ctx context.Context, opt Options, progress func(Progress)) (HealReport, error) {
	opt.NoBackground = true
	s, err := open(ctx, opt)
	if err != nil {
		return HealReport{}, err
	}
	defer func() { _ = s.Close() }()
	rep, err := s.healAll(ctx, progress)
	if err != nil {
		return rep, err
	}
	packs, err := s.initPacks(ctx, true)
	if err != nil {
		return rep, err
	}
	n, err := s.sweepCount(ctx)
	rep.OrphansRemoved = n + int64(len(packs))
	return rep, err
}

type dataItem struct {
	id      erasure.DataID
	rec     meta.Data
	garbage bool // waiting for the cleaner, which may have removed some shards already
}

// allData lists every data object the index knows, live or garbage.
func (s *Store) allData(ctx context.Context) ([]dataItem, error) {
	var out []dataItem
	err := s.idx.View(ctx, func(tx meta.Tx) error {
		for _, t := range []meta.Table{meta.DataTable, meta.Garbage} {
			err := meta.Scan(tx, t, nil, func(k, v []byte) error {
				it := dataItem{garbage: t == meta.Garbage}
				copy(it.id[:], k)
				if t == meta.Garbage {
					var g meta.GarbageEntry
					if err := meta.Decode(v, &g); err != nil {
						return err
					}
					it.rec = g.Data
				} else if err := meta.Decode(v, &it.rec); err != nil {
					return err
				}
				out = append(out, it)
				return nil
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	return out, err
}

// openShards opens the shards of a data object afresh (not through the
// pack file cache); nil for missing ones.
func (s *Store) openShards(ctx context.Context, id string, d meta.Data) ([]io.ReaderAt, func()) {
	srcs := make([]io.ReaderAt, d.K+d.M)
	var files []io.Closer
	for i := 0; i < len(srcs) && i < len(s.drives); i++ {
		var f interface {
			io.ReaderAt
			io.Closer
		}
		var err error
		if d.Pack != 0 {
			f, err = s.drives[i].OpenPack(ctx, d.Pack, false)
		} else {
			f, err = s.drives[i].Open(ctx, id)
		}
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				s.log.Warn().Err(err).Int("drive", i).Str("data", id).Msg("cannot open shard")
			}
			continue
		}
		srcs[i] = f
		if d.Pack != 0 {
			srcs[i] = io.NewSectionReader(f, d.Off, d.Len)
		}
		files = append(files, f)
	}
	return srcs, func() {
		for _, f := range files {
			_ = f.Close()
		}
	}
}

func dataHeader(id erasure.DataID, d meta.Data) erasure.Header {
	return erasure.Header{K: d.K, M: d.M, BlockSize: d.BlockSize, Size: d.Size, DataID: id, Bucket: d.Bucket, Key: d.Key}
}

// healData verifies one data object and rebuilds its bad shards. It
// returns the shard indices rewritten; ErrDataCorrupt when fewer than k
// shards are good.
func (s *Store) healData(ctx context.Context, id erasure.DataID, d meta.Data) ([]int, error) {
	codec, err := s.codec(d.K, d.M, d.BlockSize)
	if err != nil {
		return nil, err
	}
	name := id.String()
	hdr := dataHeader(id, d)
	srcs, closeAll := s.openShards(ctx, name, d)
	defer closeAll()
	states, err := codec.Verify(ctx, hdr, srcs)
	if err != nil {
		return nil, err
	}
	var bad []int
	good := 0
	for i, st := range states {
		if st == erasure.ShardOK {
			good++
		} else {
			bad = append(bad, i)
		}
	}
	if len(bad) == 0 {
		return nil, nil
	}
	if good < d.K {
		return nil, fmt.Errorf("%w: data %s has %d good shards of %d needed", ErrDataCorrupt, name, good, d.K)
	}
	for _, i := range bad {
		srcs[i] = nil // never read from a shard known bad
	}
	if d.Pack != 0 {
		return s.healPacked(ctx, codec, hdr, srcs, bad, d)
	}
	targets := map[int]io.WriterAt{}
	var staged []drive.StagedFile
	abort := func() {
		for _, st := range staged {
			st.Abort()
		}
	}
	var healed []int
	for _, i := range bad {
		if i >= len(s.drives) {
			continue
		}
		st, err := s.drives[i].Stage(ctx, name)
		if err != nil {
			s.log.Warn().Err(err).Int("drive", i).Str("data", name).Msg("cannot stage shard for heal")
			continue
		}
		staged = append(staged, st)
		targets[i] = s.countWrites(st)
		healed = append(healed, i)
	}
	if len(targets) == 0 {
		return nil, nil
	}
	if err := codec.Rebuild(ctx, hdr, srcs, targets); err != nil {
		abort()
		if errors.Is(err, erasure.ErrReadQuorum) {
			return nil, fmt.Errorf("%w: data %s: %v", ErrDataCorrupt, name, err)
		}
		return nil, err
	}
	for _, st := range staged {
		if err := st.Commit(); err != nil {
			abort()
			return nil, fmt.Errorf("heal data %s: %w", name, err)
		}
	}
	s.log.Info().Str("data", name).Ints("shards", healed).Msg("healed")
	return healed, nil
}

// healPacked rewrites the bad records of packed data in place, in each
// drive's segment file (created when the drive lost it), and makes the
// store reopen those files.
func (s *Store) healPacked(ctx context.Context, codec *erasure.Codec, hdr erasure.Header, srcs []io.ReaderAt, bad []int, d meta.Data) ([]int, error) {
	targets := map[int]io.WriterAt{}
	var files []drive.PackFile
	defer func() {
		for _, f := range files {
			_ = f.Close()
		}
	}()
	var healed []int
	for _, i := range bad {
		if i >= len(s.drives) {
			continue
		}
		f, err := s.drives[i].OpenPack(ctx, d.Pack, true)
		if err != nil {
			s.log.Warn().Err(err).Int("drive", i).Uint64("pack", d.Pack).Msg("cannot open pack segment for heal")
			continue
		}
		files = append(files, f)
		targets[i] = s.countWrites(io.NewOffsetWriter(f, d.Off))
		healed = append(healed, i)
	}
	if len(targets) == 0 {
		return nil, nil
	}
	if err := codec.Rebuild(ctx, hdr, srcs, targets); err != nil {
		if errors.Is(err, erasure.ErrReadQuorum) {
			return nil, fmt.Errorf("%w: data %s: %v", ErrDataCorrupt, hdr.DataID, err)
		}
		return nil, err
	}
	for _, i := range healed {
		if err := s.drives[i].SyncPacks(ctx, []uint64{d.Pack}); err != nil {
			return nil, fmt.Errorf("heal data %s: %w", hdr.DataID, err)
		}
	}
	for _, i := range healed {
		s.dropPackFile(i, d.Pack)
	}
	s.log.Info().Str("data", hdr.DataID.String()).Uint64("pack", d.Pack).Ints("shards", healed).Msg("healed")
	return healed, nil
}

// runHealer heals the data that reads found degraded.
func (s *Store) runHealer(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case name := <-s.healq:
			s.degraded.dequeued(name)
			id, err := erasure.ParseDataID(name)
			if err != nil {
				s.degraded.remove(name)
				continue
			}
			var d meta.Data
			found := false
			_ = s.idx.View(ctx, func(tx meta.Tx) error {
				raw, err := tx.Get(meta.DataTable, meta.DataKey(id))
				found = raw != nil && meta.Decode(raw, &d) == nil
				return err
			})
			if !found {
				s.degraded.remove(name)
				continue // freed meanwhile, or a write that never committed
			}
			_, err = s.healData(ctx, id, d)
			switch {
			case err == nil:
				s.degraded.remove(name)
			case ctx.Err() == nil:
				s.log.Error().Err(err).Str("data", name).Msg("heal")
			}
		}
	}
}

func (s *Store) shardRef(id erasure.DataID, drive int, d meta.Data) ShardRef {
	r := ShardRef{DataID: id.String(), Drive: drive, Bucket: d.Bucket, Key: d.Key}
	switch {
	case drive < 0 || drive >= len(s.drives):
	case d.Pack != 0:
		r.Path = fmt.Sprintf("%s@%d", s.packDesc(drive, d.Pack), d.Off)
	default:
		r.Path = s.shardDesc(drive, id.String())
	}
	return r
}
