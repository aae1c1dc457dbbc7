package objstore

import (
	"sort"

	"github.com/cairnstore/cairn/objstore/meta"
)

// A patch's new segment list is planned outside the transaction from its
// base reader's runs: over a chunked base, only the runs (chunks) its
// fills fall in, or that its new size cuts, are rewritten; the others
// are the base's own, shared. The commit writes the new chunks and, when
// the new version replaces the base as the null version, takes over the
// untouched chunks and deletes the replaced ones: the cost of what
// changed, not of the list.

// patchPlan is the segment list of the version a patch makes.
type patchPlan struct {
	base *ObjectReader
	// runs is the new list in runs: the base's own where untouched
	// (fresh false), new ones (ref.ID zero until committed) elsewhere.
	runs  []*segRun
	fresh []bool
	// gone are the base's runs that are not in the new list.
	gone []*segRun
	// flat: the new version keeps its list in the record, runs[0].
	flat bool

	// Set by the commit (commitPlan), for Rebase: the list as committed
	// and its runs new to it.
	committed []*segRun
	added     []*segRun
	inherited bool
}

// chunked reports whether the reader's version is chunked.
func (r *ObjectReader) chunked() bool { return len(r.runs) > 0 && r.runs[0].ref.ID != 0 }

// planPatch plans the list of the version p makes, its new data (the
// fills, one after another) named "" until written.
func (s *Store) planPatch(p Patch, fills []Range) *patchPlan {
	if s.chunkMax == 0 || !p.Base.chunked() {
		return s.planList(p.Base, p.segments("", fills))
	}
	base := p.Base
	size := p.Size
	start := func(i int) int64 {
		if i == 0 {
			return 0
		}
		return base.rends[i-1]
	}
	// The runs that start below the new size stay (or are cut); the
	// others go.
	n := sort.Search(len(base.runs), func(i int) bool { return start(i) >= size })
	if n == 0 {
		return s.planList(base, nil)
	}
	touched := make([]bool, n)
	if base.rends[n-1] != size {
		touched[n-1] = true // cut by a truncation, or extended
	}
	dataAt := make([]int64, len(fills)) // where each fill starts in the new data
	var at int64
	for k, f := range fills {
		dataAt[k] = at
		at += f.Length
		for i := sort.Search(n, func(i int) bool { return base.rends[i] > f.Offset }); i < n && start(i) < f.End(); i++ {
			touched[i] = true
		}
	}
	pl := &patchPlan{base: base}
	for i := range n {
		run := base.runs[i]
		if !touched[i] {
			pl.runs = append(pl.runs, run)
			pl.fresh = append(pl.fresh, false)
			continue
		}
		pl.gone = append(pl.gone, run)
		lo := start(i)
		hi := base.rends[i]
		if i == n-1 {
			hi = size
		}
		local := sliceSegments(run.segs, 0, min(base.rends[i], hi)-lo)
		var ranges []Range
		var dataOff int64
		for k := sort.Search(len(fills), func(k int) bool { return fills[k].End() > lo }); k < len(fills) && fills[k].Offset < hi; k++ {
			a, b := max(fills[k].Offset, lo), min(fills[k].End(), hi)
			if len(ranges) == 0 {
				dataOff = dataAt[k] + a - fills[k].Offset
			}
			ranges = append(ranges, Range{Offset: a - lo, Length: b - a})
		}
		segs := compactedSegmentsAt(local, ranges, "", dataOff)
		for len(segs) > 0 {
			m := len(segs)
			if m > s.chunkMax {
				m = chunkRun(s.chunkMax)
			}
			pl.runs = append(pl.runs, newSegRun(meta.ChunkRef{}, segs[:m:m]))
			pl.fresh = append(pl.fresh, true)
			segs = segs[m:]
		}
	}
	pl.gone = append(pl.gone, base.runs[n:]...)
	total := 0
	for _, run := range pl.runs {
		total += len(run.segs)
	}
	if total <= s.chunkMax {
		segs := make([]meta.Segment, 0, total)
		for _, run := range pl.runs {
			segs = append(segs, run.segs...)
		}
		return s.planList(base, segs)
	}
	return pl
}

// planList plans a new list made whole (the base's runs all go): flat up
// to chunkMax segments, else in new runs of chunkRun segments.
func (s *Store) planList(base *ObjectReader, segs []meta.Segment) *patchPlan {
	pl := &patchPlan{base: base, gone: base.runs}
	if s.chunkMax == 0 || len(segs) <= s.chunkMax {
		pl.runs, pl.fresh, pl.flat = []*segRun{newSegRun(meta.ChunkRef{}, segs)}, []bool{true}, true
		return pl
	}
	per := chunkRun(s.chunkMax)
	for len(segs) > 0 {
		m := min(per, len(segs))
		pl.runs = append(pl.runs, newSegRun(meta.ChunkRef{}, segs[:m:m]))
		pl.fresh = append(pl.fresh, true)
		segs = segs[m:]
	}
	return pl
}

// segments is how many segments the plan's list holds.
func (pl *patchPlan) segments() int {
	n := 0
	for _, run := range pl.runs {
		n += len(run.segs)
	}
	return n
}

// name gives the plan's new segments ("" so far) the data id written.
func (pl *patchPlan) name(id string) {
	for i, run := range pl.runs {
		if !pl.fresh[i] {
			continue
		}
		for j := range run.segs {
			if run.segs[j].Data == "" {
				run.segs[j].Data = id
			}
		}
	}
}

// commitPlan installs v, with the plan's list, as the newest version of
// key: in the transaction of a patch's commit. Over a chunked base that
// is still the key's null version, which v replaces, v takes over the
// untouched chunks and the replaced ones are deleted; otherwise every
// chunk of v is written anew (the base stays, or is someone else's to
// drop). New references are counted before old ones are dropped.
func (pl *patchPlan) commitPlan(tx meta.Tx, b *meta.Bucket, key string, v *meta.Version) error {
	pl.committed, pl.added, pl.inherited = nil, nil, false
	if pl.flat {
		v.Segments, v.Chunks = pl.runs[0].segs, nil
		if err := addRefs(tx, v.Segments); err != nil {
			return err
		}
		if err := installVersion(tx, b, key, v); err != nil {
			return err
		}
		pl.committed, pl.added = pl.runs, pl.runs
		return nil
	}
	var cur *meta.Version
	if pl.base.chunked() && b.Versioning != VersioningEnabled {
		var err error
		if cur, err = currentVersion(tx, b.Name, key); err != nil {
			return err
		}
		// Chunk ids are never reused and a chunk has one owner: the same
		// list is the base version itself.
		if cur != nil && (cur.VersionID != NullVersion || !sameRuns(cur.Chunks, pl.base.runs)) {
			cur = nil
		}
	}
	inherit := cur != nil
	committed := make([]*segRun, len(pl.runs))
	refs := make([]meta.ChunkRef, len(pl.runs))
	var added []*segRun
	var rd refDelta // one net change per data id: most of a rewritten chunk's segments are its old one's
	for i, run := range pl.runs {
		if inherit && !pl.fresh[i] {
			committed[i], refs[i] = run, run.ref
			continue
		}
		rd.add(run.segs, 1)
		ref, err := writeChunk(tx, run.segs)
		if err != nil {
			return err
		}
		committed[i], refs[i] = &segRun{ref: ref, segs: run.segs, ends: run.ends}, ref
		added = append(added, committed[i])
	}
	if inherit {
		for _, run := range pl.gone {
			rd.add(run.segs, -1)
			if err := tx.Delete(meta.Chunks, meta.ChunkKey(run.ref.ID)); err != nil {
				return err
			}
		}
	}
	if err := rd.apply(tx); err != nil {
		return err
	}
	v.Segments, v.Chunks = nil, refs
	if err := installVersionFrom(tx, b, key, v, cur); err != nil {
		return err
	}
	pl.committed, pl.added, pl.inherited = committed, added, inherit
	return nil
}

// removed is the base's runs that the committed list no longer holds.
func (pl *patchPlan) removed() []*segRun {
	if pl.inherited {
		return pl.gone
	}
	return pl.base.runs
}

// sameRuns reports whether a version's chunk list is the runs'.
func sameRuns(chunks []meta.ChunkRef, runs []*segRun) bool {
	if len(chunks) != len(runs) {
		return false
	}
	for i, c := range chunks {
		if runs[i].ref != c {
			return false
		}
	}
	return true
}
