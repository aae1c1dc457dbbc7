package objstore

import (
	"context"
	"fmt"

	"github.com/cairnstore/cairn/objstore/erasure"
	"github.com/cairnstore/cairn/objstore/meta"
)

// ShardRef names one shard file (or, with Drive -1, a whole data object).
type ShardRef struct {
	DataID string `json:"data_id"`
	Drive  int    `json:"drive"`
	Path   string `json:"path,omitempty"`
	Bucket string `json:"bucket,omitempty"`
	Key    string `json:"key,omitempty"`
}

// FsckReport is what Fsck found.
type FsckReport struct {
	Versions      int64      `json:"versions"`
	DataObjects   int64      `json:"data_objects"`
	ShardFiles    int64      `json:"shard_files"`
	OrphanShards  []ShardRef `json:"orphan_shards"`  // shard files and pack segments the index does not reference
	MissingShards []ShardRef `json:"missing_shards"` // referenced shards absent from their drive
	CorruptShards []ShardRef `json:"corrupt_shards"` // bad header, size or block checksum
	LostData      []ShardRef `json:"lost_data"`      // data with fewer than k good shards (Drive -1)
	Dangling      []string   `json:"dangling"`       // versions or parts naming data the index lacks
	Index         []string   `json:"index"`          // broken index invariants (meta/doc.go): leaks, lost updates
}

// Clean reports whether nothing is wrong.
func (r FsckReport) Clean() bool {
	return len(r.OrphanShards)+len(r.MissingShards)+len(r.CorruptShards)+len(r.LostData)+len(r.Dangling)+len(r.Index) == 0
}

// Fsck checks an offline data directory and changes nothing: every shard
// of every data object (header and block checksums), every version's and
// part's data references, and shard files nothing references.
func Fsck(ctx context.Context, opt Options, progress func(Progress)) (FsckReport, error) {
	opt.NoBackground = true
	s, err := open(ctx, opt)
	if err != nil {
		return FsckReport{}, err
	}
	defer func() { _ = s.Close() }()
	return s.fsck(ctx, progress)
}

func (s *Store) fsck(ctx context.Context, progress func(Progress)) (FsckReport, error) {
	var rep FsckReport
	datas, err := s.allData(ctx)
	if err != nil {
		return rep, err
	}
	known := map[string]bool{}
	for i, d := range datas {
		if progress != nil {
			progress(Progress{Phase: "verify", Done: int64(i), Total: int64(len(datas))})
		}
		known[d.id.String()] = true
		if d.garbage {
			continue // being freed: shards may be partly gone already
		}
		rep.DataObjects++
		codec, err := s.codec(d.rec.K, d.rec.M, d.rec.BlockSize)
		if err != nil {
			return rep, err
		}
		srcs, closeAll := s.openShards(ctx, d.id.String(), d.rec)
		states, err := codec.Verify(ctx, dataHeader(d.id, d.rec), srcs)
		closeAll()
		if err != nil {
			return rep, err
		}
		good := 0
		for idx, st := range states {
			switch st {
			case erasure.ShardOK:
				good++
			case erasure.ShardMissing:
				rep.MissingShards = append(rep.MissingShards, s.shardRef(d.id, idx, d.rec))
			default:
				rep.CorruptShards = append(rep.CorruptShards, s.shardRef(d.id, idx, d.rec))
			}
		}
		if good < d.rec.K {
			rep.LostData = append(rep.LostData, s.shardRef(d.id, -1, d.rec))
		}
	}
	if progress != nil {
		progress(Progress{Phase: "verify", Done: int64(len(datas)), Total: int64(len(datas))})
	}
	if err := s.checkIndex(ctx, &rep); err != nil {
		return rep, err
	}
	packs, err := s.initPacks(ctx, false)
	if err != nil {
		return rep, err
	}
	rep.OrphanShards = append(rep.OrphanShards, packs...)
	for i, d := range s.drives {
		err := d.Walk(ctx, func(name string) error {
			rep.ShardFiles++
			if !known[name] {
				rep.OrphanShards = append(rep.OrphanShards, ShardRef{DataID: name, Drive: i, Path: s.shardDesc(i, name)})
			}
			return nil
		})
		if err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// sweep removes the shard files no committed write references.
func (s *Store) sweep(ctx context.Context) error {
	packs, err := s.initPacks(ctx, true)
	if err != nil {
		return err
	}
	if len(packs) > 0 {
		s.log.Info().Int("files", len(packs)).Msg("removed orphan pack segments")
	}
	n, err := s.sweepCount(ctx)
	if n > 0 {
		s.log.Info().Int64("shards", n).Msg("removed orphan shard files")
	}
	return err
}

// sweepCount removes this writer's shard files that the index does not
// know and returns how many. With several writers, a drive that cannot be
// reached is passed over with a warning, as in initPacks.
func (s *Store) sweepCount(ctx context.Context) (int64, error) {
	var removed int64
	for _, d := range s.drives {
		var orphans []string
		err := s.idx.View(ctx, func(tx meta.Tx) error {
			return d.Walk(ctx, func(name string) error {
				id, err := erasure.ParseDataID(name)
				if err != nil || !s.ownsData(id) {
					return nil // not a shard name (left for an operator), or another writer's
				}
				known, err := dataKnown(tx, meta.DataKey(id))
				if err == nil && !known {
					orphans = append(orphans, name)
				}
				return err
			})
		})
		if err != nil && s.opt.WriterID != 0 && ctx.Err() == nil {
			s.log.Warn().Err(err).Str("drive", d.String()).Msg("cannot sweep orphan shards; passing over the drive")
			continue
		}
		if err != nil {
			return removed, fmt.Errorf("sweep drive %d: %w", d.Index(), err)
		}
		for _, name := range orphans {
			if err := d.Remove(ctx, name); err != nil {
				return removed, err
			}
			removed++
		}
	}
	return removed, nil
}

// dataKnown reports whether the index holds data id key, live or garbage.
func dataKnown(tx meta.Tx, key []byte) (bool, error) {
	if ok, err := meta.Has(tx, meta.DataTable, key); ok || err != nil {
		return ok, err
	}
	return meta.Has(tx, meta.Garbage, key)
}
