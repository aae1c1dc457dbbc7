package objstore

import (
	"fmt"

	"github.com/cairnstore/cairn/objstore/meta"
)

// Chunked versions. A version of more than Options.ChunkSegments
// segments keeps them in chunk records (the chunks table) that its record
// names (meta.Version.Chunks) instead of in one list, so that a patch
// rewrites only the chunks its changes fall in (patchplan.go). A chunk
// record belongs to exactly one version: a version made from another one
// (a copy, a rename, new metadata) copies the chunk records under new ids,
// except for a patch that replaces the null version it was made from,
// which takes over that version's untouched chunks. So a chunk is deleted
// with its version, and its segments count in their data's references
// once each, as a flat version's do.

// defaultChunkSegments is Options.ChunkSegments' default.
const defaultChunkSegments = 64

// maxChunks bounds a version's chunk list: a patch whose list would pass
// it cuts the whole list into full chunks again (chunks that shrank are
// not merged as patches go; the segment compactor's rewrite re-cuts them
// too).
const maxChunks = 1 << 16

// loadChunk reads chunk id's segments.
func loadChunk(tx meta.Tx, id uint64) ([]meta.Segment, error) {
	raw, err := tx.Get(meta.Chunks, meta.ChunkKey(id))
	if err != nil {
		return nil, err
	}
	if raw == nil {
		return nil, fmt.Errorf("%w: chunk %d is not in the index", meta.ErrCorruptRecord, id)
	}
	var c meta.Chunk
	if err := meta.Decode(raw, &c); err != nil {
		return nil, err
	}
	return c.Segments, nil
}

// versionSegments is v's segment list, its chunks' read in order when
// it is chunked.
func versionSegments(tx meta.Tx, v *meta.Version) ([]meta.Segment, error) {
	if len(v.Chunks) == 0 {
		return v.Segments, nil
	}
	segs := make([]meta.Segment, 0, v.SegmentCount())
	for _, c := range v.Chunks {
		cs, err := loadChunk(tx, c.ID)
		if err != nil {
			return nil, err
		}
		segs = append(segs, cs...)
	}
	return segs, nil
}

// putChunk writes segs as a new chunk record and counts their data
// references; its reference for a version's list.
func putChunk(tx meta.Tx, segs []meta.Segment) (meta.ChunkRef, error) {
	if err := addRefs(tx, segs); err != nil {
		return meta.ChunkRef{}, err
	}
	return writeChunk(tx, segs)
}

// writeChunk writes segs as a new chunk record, their references
// counted by the caller.
func writeChunk(tx meta.Tx, segs []meta.Segment) (meta.ChunkRef, error) {
	id, err := tx.NextSeq()
	if err != nil {
		return meta.ChunkRef{}, err
	}
	if err := tx.Put(meta.Chunks, meta.ChunkKey(id), meta.Encode(&meta.Chunk{Segments: segs})); err != nil {
		return meta.ChunkRef{}, err
	}
	return meta.ChunkRef{ID: id, Length: segmentsLength(segs), Segs: len(segs)}, nil
}

// deleteChunk deletes a chunk record whose segments are segs and drops
// their data references.
func deleteChunk(tx meta.Tx, id uint64, segs []meta.Segment) error {
	if err := dropRefs(tx, segs); err != nil {
		return err
	}
	return tx.Delete(meta.Chunks, meta.ChunkKey(id))
}

// chunkRun is how many segments a chunk is cut to when a list is chunked
// anew or a rewritten chunk grows past max: three quarters of it, so
// that a chunk takes a few more changes before it splits again.
func chunkRun(limit int) int { return max(1, limit*3/4) }

// writeChunks writes segs as new chunk records of chunkRun(limit)
// segments (the last one shorter), their references counted by the
// caller.
func writeChunks(tx meta.Tx, segs []meta.Segment, limit int) ([]meta.ChunkRef, error) {
	per := chunkRun(limit)
	refs := make([]meta.ChunkRef, 0, (len(segs)+per-1)/per)
	for len(segs) > 0 {
		n := min(per, len(segs))
		ref, err := writeChunk(tx, segs[:n])
		if err != nil {
			return nil, err
		}
		refs = append(refs, ref)
		segs = segs[n:]
	}
	return refs, nil
}

// setSegments gives v (not yet installed) the list segs, whose
// references the caller counts: flat up to chunkMax segments, chunked
// past it (chunkMax 0: never).
func (s *Store) setSegments(tx meta.Tx, v *meta.Version, segs []meta.Segment) error {
	v.Segments, v.Chunks = nil, nil
	if s.chunkMax == 0 || len(segs) <= s.chunkMax {
		v.Segments = segs
		return nil
	}
	refs, err := writeChunks(tx, segs, s.chunkMax)
	if err != nil {
		return err
	}
	v.Chunks = refs
	return nil
}

// shareData makes v, a copy of another version's record about to be
// installed as a version of its own, hold its data references: its
// segments are counted again and, when it is chunked, its chunk records
// are copied under new ids (a chunk belongs to one version).
func shareData(tx meta.Tx, v *meta.Version) error {
	if len(v.Chunks) == 0 {
		return addRefs(tx, v.Segments)
	}
	refs := make([]meta.ChunkRef, len(v.Chunks))
	for i, c := range v.Chunks {
		segs, err := loadChunk(tx, c.ID)
		if err != nil {
			return err
		}
		if refs[i], err = putChunk(tx, segs); err != nil {
			return err
		}
	}
	v.Chunks = refs
	return nil
}

// dropVersionRefs drops the data references of v, a version leaving the
// index, and deletes its chunk records.
func dropVersionRefs(tx meta.Tx, v *meta.Version) error {
	if len(v.Chunks) == 0 {
		return dropRefs(tx, v.Segments)
	}
	for _, c := range v.Chunks {
		segs, err := loadChunk(tx, c.ID)
		if err != nil {
			return err
		}
		if err := deleteChunk(tx, c.ID, segs); err != nil {
			return err
		}
	}
	return nil
}

// segmentsLength is the bytes segs cover.
func segmentsLength(segs []meta.Segment) int64 {
	var n int64
	for _, sg := range segs {
		n += sg.Length
	}
	return n
}
