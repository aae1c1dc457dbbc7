package objstore

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/cairnstore/cairn/objstore/meta"
)

var (
	// errNotRebased: Rebase cannot derive the reader; Open the version.
	errNotRebased = errors.New("objstore: the version cannot be rebased on")
	// errRebasedReader: a read through a reader Rebase took over.
	errRebasedReader = errors.New("objstore: read through a reader whose state a Rebase took over")
)

// Rebase returns a reader of the version pend committed, a patch made
// over r (PatchAsync or PatchFuncAsync with r as the Patch's Base), built
// from r and the patch's plan instead of read again from the index: it
// costs what the patch changed, not the version's length. The rebased
// reader takes over r's pins and open shards: r must not be read after a
// successful Rebase, and closing it releases only the data the new
// version no longer names. ErrInvalidArgument when pend is not done, did
// not commit a patch over r, or its version is gone or changed since (r
// is then untouched: Open the version instead). ctx bounds the reads made
// through the new reader.
func (s *Store) Rebase(ctx context.Context, r *ObjectReader, pend *Pending) (*ObjectReader, error) {
	select {
	case <-pend.Done():
	default:
		return nil, fmt.Errorf("%w: %w: the patch is not committed yet", ErrInvalidArgument, errNotRebased)
	}
	var pl *patchPlan
	if pend.patched != nil {
		pl = *pend.patched
	}
	if pend.err != nil || pl == nil || pl.base != r || pl.committed == nil {
		return nil, fmt.Errorf("%w: %w: not a committed patch over this reader", ErrInvalidArgument, errNotRebased)
	}
	// The data of the new runs that r does not hold: pinned in the
	// lookup's critical section, as Open pins.
	need := map[string]bool{}
	for _, run := range pl.added {
		for _, sg := range run.segs {
			if r.datas[sg.Data] == nil {
				need[sg.Data] = true
			}
		}
	}
	info := pend.info
	datas := make(map[string]meta.Data, len(need))
	s.pinGate.RLock()
	err := s.idx.View(ctx, func(tx meta.Tx) error {
		v, latest, err := lookupVersion(tx, info.Bucket, info.Key, info.VersionID)
		if err != nil {
			return err
		}
		if v.DeleteMarker || !sameList(v, pl.committed) {
			return fmt.Errorf("%w: %w: %s %s changed since its commit", ErrInvalidArgument, errNotRebased, info.Key, info.VersionID)
		}
		info = toInfo(info.Bucket, info.Key, v, latest)
		for id := range need {
			d, err := loadData(tx, id)
			if err != nil {
				return err
			}
			datas[id] = d
		}
		return nil
	})
	if err == nil {
		s.pin(maps.All(datas))
	}
	s.pinGate.RUnlock()
	if err != nil {
		return nil, err
	}
	fresh := make(map[string]*dataReader, len(datas))
	for id, d := range datas {
		dr, err := s.newDataReader(ctx, id, d)
		if err != nil {
			for _, dr := range fresh {
				dr.close()
			}
			s.unpin(maps.All(datas))
			return nil, err
		}
		fresh[id] = dr
	}

	// From here on r's state moves to the new reader.
	if r.uses == nil {
		r.uses = make(map[string]int, len(r.datas))
		for _, run := range r.runs {
			for _, sg := range run.segs {
				r.uses[sg.Data]++
			}
		}
	}
	nr := &ObjectReader{s: s, ctx: ctx, info: info, datas: r.datas, uses: r.uses}
	for id, dr := range fresh {
		nr.datas[id] = dr
	}
	for _, run := range pl.added {
		for _, sg := range run.segs {
			nr.uses[sg.Data]++
		}
	}
	removed := pl.removed()
	for _, run := range removed {
		for _, sg := range run.segs {
			nr.uses[sg.Data]--
		}
	}
	dropped := map[string]*dataReader{}
	for _, run := range removed {
		for _, sg := range run.segs {
			if dr := nr.datas[sg.Data]; dr != nil && nr.uses[sg.Data] <= 0 {
				dropped[sg.Data] = dr
				delete(nr.datas, sg.Data)
				delete(nr.uses, sg.Data)
			}
		}
	}
	nr.setRuns(pl.committed)
	r.datas, r.uses = dropped, nil
	r.runs, r.rends = nil, nil
	return nr, nil
}

// sameList reports whether v's segment list is runs.
func sameList(v *meta.Version, runs []*segRun) bool {
	if len(v.Chunks) > 0 {
		return sameRuns(v.Chunks, runs)
	}
	return len(runs) == 1 && runs[0].ref.ID == 0 && slices.Equal(runs[0].segs, v.Segments)
}
