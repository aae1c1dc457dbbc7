package objstore

import (
	"bytes"
	"context"
	"fmt"

	"github.com/cairnstore/cairn/objstore/erasure"
	"github.com/cairnstore/cairn/objstore/meta"
)

// maxIndexProblems caps the index problems one fsck lists: a damaged
// index can break an invariant for every record.
const maxIndexProblems = 1000

// checkIndex counts the versions, reports the version and part segments
// naming data that is not live (Dangling), and checks the invariants
// meta/doc.go states, as bbolt's Tx.Check does for its pages, so that a
// space leak or a lost update fails fsck (and with it every test that
// opens a store):
//
//   - objects holds exactly the newest version of each key, unless that
//     is a delete marker, in which case the key is absent;
//   - a data record's Refs equals the version, chunk and part segments
//     naming it (garbage is named by none: such a segment is Dangling);
//   - every chunk record is named by exactly one version, whose
//     reference states its length and segment count, and a chunked
//     version's chunks cover its size;
//   - no data id is in data and garbage at once;
//   - a pack segment's Live sums the Len of its data records, live or
//     garbage; packdata lists exactly those records; every record's
//     segment has a packs entry.
func (s *Store) checkIndex(ctx context.Context, rep *FsckReport) error {
	return s.idx.View(ctx, func(tx meta.Tx) error {
		c := &indexCheck{rep: rep, refs: map[string]int64{}, chunks: map[uint64]string{}}
		for _, step := range []func(meta.Tx) error{c.objects, c.segments, c.chunkRecords, c.data, c.packs} {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := step(tx); err != nil {
				return err
			}
		}
		return nil
	})
}

type indexCheck struct {
	rep    *FsckReport
	refs   map[string]int64  // data id -> segments naming it
	namers []namer           // every segment, in index order, for Dangling
	chunks map[uint64]string // chunk id -> the version naming it
	// packed: data records (live or garbage) per pack segment.
	packed map[uint64]map[erasure.DataID]int64
}

// namer is one segment of a version or part.
type namer struct{ where, data string }

func (c *indexCheck) problem(format string, args ...any) {
	if len(c.rep.Index) < maxIndexProblems {
		c.rep.Index = append(c.rep.Index, fmt.Sprintf(format, args...))
	}
}

// objects checks the objects table against the newest versions.
func (c *indexCheck) objects(tx meta.Tx) error {
	var prev []byte // the object key of the versions key before
	err := meta.Scan(tx, meta.Versions, nil, func(k, v []byte) error {
		b, key, _, ok := meta.SplitVersionKey(k)
		if !ok {
			c.problem("versions key %q is malformed", k)
			return nil
		}
		ok2 := meta.ObjectKey(b, key)
		if bytes.Equal(ok2, prev) {
			return nil // an older version: versions sort newest first
		}
		prev = ok2
		var ver meta.Version
		if err := meta.Decode(v, &ver); err != nil {
			return err
		}
		cur, err := tx.Get(meta.Objects, ok2)
		if err != nil {
			return err
		}
		switch {
		case ver.DeleteMarker && cur != nil:
			c.problem("objects holds %s/%s, whose newest version %s is a delete marker", b, key, ver.VersionID)
		case !ver.DeleteMarker && cur == nil:
			c.problem("objects lacks %s/%s, whose newest version is %s", b, key, ver.VersionID)
		case !ver.DeleteMarker:
			// Compared decoded: an index of older builds holds JSON
			// versions, which removeVersion copies to objects re-encoded
			// in the binary form.
			var got meta.Version
			if err := meta.Decode(cur, &got); err != nil {
				return err
			}
			if !bytes.Equal(meta.Encode(got), meta.Encode(ver)) {
				c.problem("objects holds for %s/%s another record than its newest version %s", b, key, ver.VersionID)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return meta.Scan(tx, meta.Objects, nil, func(k, _ []byte) error {
		b, key, ok := meta.SplitObjectKey(k)
		if !ok {
			c.problem("objects key %q is malformed", k)
			return nil
		}
		any, err := meta.HasAny(tx, meta.Versions, meta.VersionPrefix(b, key))
		if err == nil && !any {
			c.problem("objects holds %s/%s, which has no version", b, key)
		}
		return err
	})
}

// segments counts the references of versions and parts.
func (c *indexCheck) segments(tx meta.Tx) error {
	count := func(where string, segs []meta.Segment) {
		for _, sg := range segs {
			c.refs[sg.Data]++
			c.namers = append(c.namers, namer{where, sg.Data})
		}
	}
	err := meta.Scan(tx, meta.Versions, nil, func(k, v []byte) error {
		c.rep.Versions++
		var ver meta.Version
		if err := meta.Decode(v, &ver); err != nil {
			return err
		}
		b, key, _, _ := meta.SplitVersionKey(k)
		where := fmt.Sprintf("%s/%s version %s", b, key, ver.VersionID)
		count(where, ver.Segments)
		return c.versionChunks(tx, where, &ver, count)
	})
	if err != nil {
		return err
	}
	return meta.Scan(tx, meta.Parts, nil, func(k, v []byte) error {
		var p meta.Part
		if err := meta.Decode(v, &p); err != nil {
			return err
		}
		count(fmt.Sprintf("upload part %q", k), p.Segments)
		return nil
	})
}

// versionChunks checks and counts the chunks of a chunked version.
func (c *indexCheck) versionChunks(tx meta.Tx, where string, ver *meta.Version, count func(string, []meta.Segment)) error {
	if len(ver.Chunks) == 0 {
		return nil
	}
	if len(ver.Segments) > 0 {
		c.problem("%s holds both chunks and %d segments of its own", where, len(ver.Segments))
	}
	var size int64
	for _, ref := range ver.Chunks {
		size += ref.Length
		if other, ok := c.chunks[ref.ID]; ok {
			c.problem("chunk %d is named by %s and by %s", ref.ID, other, where)
			continue
		}
		c.chunks[ref.ID] = where
		raw, err := tx.Get(meta.Chunks, meta.ChunkKey(ref.ID))
		if err != nil {
			return err
		}
		if raw == nil {
			c.problem("%s names chunk %d, which is not in the index", where, ref.ID)
			continue
		}
		var ch meta.Chunk
		if err := meta.Decode(raw, &ch); err != nil {
			c.problem("chunk %d of %s: %v", ref.ID, where, err)
			continue
		}
		if n := segmentsLength(ch.Segments); n != ref.Length || len(ch.Segments) != ref.Segs {
			c.problem("chunk %d holds %d segments of %d bytes, %s names %d of %d", ref.ID, len(ch.Segments), n, where, ref.Segs, ref.Length)
		}
		count(fmt.Sprintf("%s chunk %d", where, ref.ID), ch.Segments)
	}
	if size != ver.Size {
		c.problem("the chunks of %s cover %d bytes, its size is %d", where, size, ver.Size)
	}
	return nil
}

// chunkRecords reports chunk records no version names (a leak).
func (c *indexCheck) chunkRecords(tx meta.Tx) error {
	return meta.Scan(tx, meta.Chunks, nil, func(k, _ []byte) error {
		id, ok := meta.SplitChunkKey(k)
		switch {
		case !ok:
			c.problem("chunks key %x is malformed", k)
		case c.chunks[id] == "":
			c.problem("chunk %d is named by no version", id)
		}
		return nil
	})
}

// data checks reference counts and gathers the packed records.
func (c *indexCheck) data(tx meta.Tx) error {
	c.packed = map[uint64]map[erasure.DataID]int64{}
	live := map[string]bool{}
	note := func(id erasure.DataID, d meta.Data) {
		if d.Pack == 0 {
			return
		}
		if c.packed[d.Pack] == nil {
			c.packed[d.Pack] = map[erasure.DataID]int64{}
		}
		c.packed[d.Pack][id] = d.Len
	}
	err := meta.Scan(tx, meta.DataTable, nil, func(k, v []byte) error {
		var id erasure.DataID
		copy(id[:], k)
		var d meta.Data
		if err := meta.Decode(v, &d); err != nil {
			return err
		}
		if n := c.refs[id.String()]; d.Refs != n {
			c.problem("data %s counts %d references, %d segments name it", id, d.Refs, n)
		}
		if d.Refs <= 0 {
			c.problem("data %s with %d references is not garbage", id, d.Refs)
		}
		if g, err := tx.Get(meta.Garbage, k); err != nil {
			return err
		} else if g != nil {
			c.problem("data %s is live and garbage at once", id)
		}
		live[id.String()] = true
		note(id, d)
		return nil
	})
	if err != nil {
		return err
	}
	for _, n := range c.namers {
		if !live[n.data] {
			c.rep.Dangling = append(c.rep.Dangling, fmt.Sprintf("%s: data %s", n.where, n.data))
		}
	}
	return meta.Scan(tx, meta.Garbage, nil, func(k, v []byte) error {
		var id erasure.DataID
		copy(id[:], k)
		var g meta.GarbageEntry
		if err := meta.Decode(v, &g); err != nil {
			return err
		}
		note(id, g.Data)
		return nil
	})
}

// packs checks each segment's live bytes and records.
func (c *indexCheck) packs(tx meta.Tx) error {
	seen := map[uint64]bool{}
	err := meta.Scan(tx, meta.Packs, nil, func(k, v []byte) error {
		seg, ok := meta.ParsePackKey(k)
		if !ok {
			c.problem("packs key %x is malformed", k)
			return nil
		}
		seen[seg] = true
		var p meta.PackInfo
		if err := meta.Decode(v, &p); err != nil {
			return err
		}
		var live int64
		for _, n := range c.packed[seg] {
			live += n
		}
		if p.Live != live {
			c.problem("pack segment %x counts %d live bytes, its records hold %d", seg, p.Live, live)
		}
		listed := 0
		err := meta.Scan(tx, meta.PackData, meta.PackKey(seg), func(dk, _ []byte) error {
			if len(dk) != 24 {
				c.problem("packdata key %x is malformed", dk)
				return nil
			}
			var id erasure.DataID
			copy(id[:], dk[8:])
			if _, ok := c.packed[seg][id]; !ok {
				c.problem("packdata lists data %s in segment %x, which holds no record of it", id, seg)
			}
			listed++
			return nil
		})
		if err != nil {
			return err
		}
		if listed != len(c.packed[seg]) {
			c.problem("packdata lists %d records in segment %x, the index has %d", listed, seg, len(c.packed[seg]))
		}
		return nil
	})
	if err != nil {
		return err
	}
	for seg, recs := range c.packed {
		if !seen[seg] {
			c.problem("%d data records are in pack segment %x, which has no packs entry", len(recs), seg)
		}
	}
	return nil
}
