package objstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"

	"github.com/cairnstore/cairn/objstore/meta"
)

// Segment compaction bounds the fragmentation of a version's segment
// list. Appends, and the mount's in-place patches, make versions whose
// segments are many small slices of many data objects; a read of such a
// version opens a data object per slice, and each small data object costs
// its shard files or pack records. The compactor rewrites the crowded
// stretches of the file into one new data object and flips the version's
// segment list in one transaction that checks the version is unchanged,
// as a pack compaction does for records. The version keeps its id, ETag,
// size, times, metadata and attributes: only where its bytes live
// changes.

const (
	// segWindow is the width of the file windows the planner counts
	// segments in, and the unit it rewrites.
	segWindow = 1 << 20
	// segPassBudget bounds the bytes one background compaction of a
	// version rewrites: a file changed at random all over (4 KiB writes
	// into 1 GiB) crowds every window at once, and rewriting them all at
	// each pass would cost far more than the writes; the list shrinks
	// over several passes instead (the queue waits Options.SegmentCompactDelay
	// between them), and MaxSegments stays the hard bound.
	segPassBudget = 32 << 20
)

// planSegmentCompaction returns the byte ranges of a version (segments
// segs, size bytes) to rewrite so that its list shrinks to target
// segments, sorted and disjoint; nothing while it has target or fewer.
// The file is cut into windows of window bytes (the last one shorter);
// rewriting a window in which n segments start leaves about 2 where they
// were (the new data's slice, and the cut end of a segment running on
// into the next window), so the windows are taken most crowded first,
// those where more than 2 start, until the list would be down to target
// or budget bytes are chosen (budget 0: no bound). Adjacent chosen
// windows make one range. A list whose lengths do not add up to size
// (which fsck reports) gets no plan.
func planSegmentCompaction(segs []meta.Segment, size, window int64, target int, budget int64) []Range {
	if window <= 0 || size <= 0 || len(segs) <= target {
		return nil
	}
	starts := map[int64]int{}
	var pos int64
	for _, sg := range segs {
		if sg.Length < 0 {
			return nil
		}
		if sg.Length == 0 {
			continue
		}
		starts[pos/window]++
		pos += sg.Length
	}
	if pos != size {
		return nil
	}
	type crowd struct {
		w int64
		n int
	}
	var crowds []crowd
	for w, n := range starts {
		if n > 2 {
			crowds = append(crowds, crowd{w, n})
		}
	}
	sort.Slice(crowds, func(i, j int) bool {
		if crowds[i].n != crowds[j].n {
			return crowds[i].n > crowds[j].n
		}
		return crowds[i].w < crowds[j].w
	})
	excess := len(segs) - target
	var chosen []int64
	var picked int64
	for _, c := range crowds {
		if excess <= 0 || (budget > 0 && picked >= budget) {
			break
		}
		chosen = append(chosen, c.w)
		picked += window
		excess -= c.n - 2
	}
	slices.Sort(chosen)
	var out []Range
	for _, w := range chosen {
		start, end := w*window, min((w+1)*window, size)
		if len(out) > 0 && out[len(out)-1].End() == start {
			out[len(out)-1].Length = end - out[len(out)-1].Offset
			continue
		}
		out = append(out, Range{Offset: start, Length: end - start})
	}
	return out
}

// compactedSegments is the segment list of segs once the bytes of ranges
// (sorted, disjoint, inside the version) are rewritten, in order, into
// one new data object named data: segments outside the ranges are kept,
// cut where a range cuts them; each range is the matching slice of the
// new data; and neighbours that are contiguous slices of one data object
// are merged.
func compactedSegments(segs []meta.Segment, ranges []Range, data string) []meta.Segment {
	return compactedSegmentsAt(segs, ranges, data, 0)
}

// compactedSegmentsAt is compactedSegments where the ranges' bytes start
// at dataOff in data.
func compactedSegmentsAt(segs []meta.Segment, ranges []Range, data string, dataOff int64) []meta.Segment {
	type piece struct {
		at  int64 // file offset
		seg meta.Segment
	}
	var pieces []piece
	for _, r := range ranges {
		pieces = append(pieces, piece{at: r.Offset, seg: meta.Segment{Data: data, Offset: dataOff, Length: r.Length}})
		dataOff += r.Length
	}
	ri := 0
	var pos int64
	for _, sg := range segs {
		start, end := pos, pos+sg.Length
		for cur := start; cur < end; {
			for ri < len(ranges) && ranges[ri].End() <= cur {
				ri++
			}
			if ri < len(ranges) && ranges[ri].Offset <= cur {
				cur = min(end, ranges[ri].End())
				continue
			}
			stop := end
			if ri < len(ranges) {
				stop = min(end, ranges[ri].Offset)
			}
			pieces = append(pieces, piece{at: cur, seg: meta.Segment{Data: sg.Data, Offset: sg.Offset + cur - start, Length: stop - cur}})
			cur = stop
		}
		pos = end
	}
	sort.SliceStable(pieces, func(i, j int) bool { return pieces[i].at < pieces[j].at })
	out := make([]meta.Segment, 0, len(pieces))
	for _, p := range pieces {
		if n := len(out); n > 0 && out[n-1].Data == p.seg.Data && out[n-1].Offset+out[n-1].Length == p.seg.Offset {
			out[n-1].Length += p.seg.Length
			continue
		}
		out = append(out, p.seg)
	}
	return out
}

// errSegmentsChanged ends a segment compaction whose version changed (or
// went) between the plan and the commit.
var errSegmentsChanged = errors.New("objstore: version changed during segment compaction")

// CompactSegments rewrites the crowded stretches of one version's segment
// list (planSegmentCompaction, down to half Options.SegmentCompactMin
// within segPassBudget bytes a call) into one new data object and reports
// whether it did. The bytes are read through an ObjectReader of the
// version and the new list is committed in one transaction that checks
// the version is unchanged (same sequence number and segments): a version
// changed, replaced or removed meanwhile is left alone and the new data
// discarded, with false and no error. The version keeps its id, ETag,
// size, modification time, metadata and attributes; the data only it
// referenced becomes garbage, which the cleaner frees once the readers
// that pinned it are done. No event is sent: the content is the same.
func (s *Store) CompactSegments(ctx context.Context, bucket, key, versionID string) (bool, error) {
	p, err := s.planSegments(ctx, bucket, key, versionID)
	if p == nil || err != nil {
		return false, err
	}
	return s.applySegPlan(ctx, p)
}

// segPlan is a planned segment compaction of version v of bucket/key.
type segPlan struct {
	bucket, key string
	v           *meta.Version
	old         []meta.Segment // v's segments
	ranges      []Range        // the bytes to rewrite
	segs        []meta.Segment // the new list, the new data's id left empty
}

// planSegments plans the segment compaction of a version; nil when there
// is nothing to do (or no such version).
func (s *Store) planSegments(ctx context.Context, bucket, key, versionID string) (*segPlan, error) {
	if err := s.checkOpen(); err != nil {
		return nil, err
	}
	var v *meta.Version
	var old []meta.Segment
	err := s.idx.View(ctx, func(tx meta.Tx) error {
		if err := requireBucket(tx, bucket); err != nil {
			return err
		}
		var err error
		if v, err = findVersion(tx, bucket, key, versionID); err != nil || v.DeleteMarker {
			return err
		}
		old, err = versionSegments(tx, v)
		return err
	})
	if gone(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("segment compaction of %s/%s %s: %w", bucket, key, versionID, err)
	}
	if v.DeleteMarker {
		return nil, nil
	}
	ranges := planSegmentCompaction(old, v.Size, segWindow, s.opt.SegmentCompactMin/2, segPassBudget)
	if len(ranges) == 0 {
		return nil, nil
	}
	segs := compactedSegments(old, ranges, "")
	if len(segs) >= len(old) {
		return nil, nil
	}
	return &segPlan{bucket: bucket, key: key, v: v, old: old, ranges: ranges, segs: segs}, nil
}

// applySegPlan writes p's ranges as new data and commits p's list.
func (s *Store) applySegPlan(ctx context.Context, p *segPlan) (bool, error) {
	d, err := s.writeRanges(ctx, p.bucket, p.key, p.v, p.old, p.ranges)
	if d == nil || err != nil {
		if gone(err) || errors.Is(err, errSegmentsChanged) {
			err = nil
		}
		return false, err
	}
	segs := slices.Clone(p.segs)
	for i := range segs {
		if segs[i].Data == "" {
			segs[i].Data = d.id.String()
		}
	}
	err = s.commitData(ctx, d, func(tx meta.Tx) error {
		return s.replaceSegments(tx, p.bucket, p.key, p.v, segs)
	})
	if errors.Is(err, errSegmentsChanged) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("segment compaction of %s/%s %s: %w", p.bucket, p.key, p.v.VersionID, err)
	}
	s.segCompactions.Add(1)
	s.log.Debug().Str("bucket", p.bucket).Str("key", p.key).Str("version", p.v.VersionID).
		Int("before", len(p.old)).Int("after", len(segs)).Msg("compacted segments")
	return true, nil
}

// gone reports an error saying the bucket, key or version is not there.
func gone(err error) bool {
	return errors.Is(err, ErrNoSuchBucket) || errors.Is(err, ErrNoSuchKey) ||
		errors.Is(err, ErrNoSuchVersion) || errors.Is(err, ErrDeleteMarker)
}

// writeRanges writes the bytes of ranges of version v, read through an
// ObjectReader of it (whose pins keep its data while it reads), in order
// as one new data object. errSegmentsChanged when the version the reader
// found no longer holds the segments old.
func (s *Store) writeRanges(ctx context.Context, bucket, key string, v *meta.Version, old []meta.Segment, ranges []Range) (*newData, error) {
	r, err := s.Open(ctx, bucket, key, GetOptions{VersionID: v.VersionID})
	if err != nil {
		return nil, err
	}
	defer func() { _ = r.Close() }()
	if !slices.Equal(r.segments(), old) {
		return nil, errSegmentsChanged
	}
	parts := make([]io.Reader, len(ranges))
	var total int64
	for i, rg := range ranges {
		parts[i] = io.NewSectionReader(r, rg.Offset, rg.Length)
		total += rg.Length
	}
	d, _, err := s.writeData(ctx, bucket, key, io.MultiReader(parts...), total, nil, true)
	return d, err
}

// replaceSegments is CompactSegments' transaction: unless the version
// changed since it was planned (errSegmentsChanged), it counts the new
// segments, drops the old ones and rewrites the version record in place,
// and the key's current record when it is the current version.
func (s *Store) replaceSegments(tx meta.Tx, bucket, key string, old *meta.Version, segs []meta.Segment) error {
	raw, err := tx.Get(meta.Versions, meta.VersionKey(bucket, key, old.Seq))
	if err != nil {
		return err
	}
	if raw == nil {
		return errSegmentsChanged
	}
	var v meta.Version
	if err := meta.Decode(raw, &v); err != nil {
		return err
	}
	// Chunk records are immutable and never reused: the same chunk list
	// is the same segments.
	if v.VersionID != old.VersionID || !slices.Equal(v.Segments, old.Segments) || !slices.Equal(v.Chunks, old.Chunks) {
		return errSegmentsChanged
	}
	// Counted before dropped, so data in both lists never reaches zero.
	if err := addRefs(tx, segs); err != nil {
		return err
	}
	if err := dropVersionRefs(tx, &v); err != nil {
		return err
	}
	if err := s.setSegments(tx, &v, segs); err != nil {
		return err
	}
	rec := meta.Encode(&v)
	if err := tx.Put(meta.Versions, meta.VersionKey(bucket, key, v.Seq), rec); err != nil {
		return err
	}
	cur, err := currentVersion(tx, bucket, key)
	if err != nil {
		return err
	}
	if cur != nil && cur.Seq == v.Seq {
		return tx.Put(meta.Objects, meta.ObjectKey(bucket, key), rec)
	}
	return nil
}
