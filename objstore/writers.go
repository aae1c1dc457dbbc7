package objstore

import (
	"encoding/binary"
	"time"

	"github.com/cairnstore/cairn/objstore/erasure"
)

// Several writers on one index.
//
// The processes of a cluster (several nodes serving one store through
// one etcd index and each other's drives) all write. Three things a
// single writer owns alone are then split by Options.WriterID, so that
// no writer ever takes another's for its own:
//
//   - Data ids: a writer's new data ids end with its id (two bytes, big
//     endian; the rest stays random). The sweep at Open removes only the
//     orphan shard files of its own ids: another writer's uncommitted
//     shards may be in flight.
//   - Pack segments: a writer's segment numbers carry its id in their top
//     16 bits, and their low 48 bits count from the Unix time of its Open
//     (or past its highest segment in the index), so that two writers
//     never append to one segment and a restarted writer does not reuse
//     the number of a segment left on a drive it could not reach.
//   - Segment upkeep: each writer compacts and removes its own segments
//     (runPackTidy), since only it knows which one it is appending to.
//
// A writer whose node is gone for good leaves its orphans (uncommitted
// shards, dead segments) until a node with its id starts again; fsck
// reports them. WriterID zero is the single writer of a store of its
// own: every id and segment is its.

// Shared reports whether other processes write through this store's
// index and drives (it is one node of a cluster): what a face keeps in
// memory of the store may then change under it.
func (s *Store) Shared() bool { return s.opt.WriterID != 0 }

// writerShift places the writer id in a pack segment number.
const writerShift = 48

// newDataID returns a fresh data id of this writer.
func (s *Store) newDataID() erasure.DataID {
	id := erasure.NewDataID()
	if w := s.opt.WriterID; w != 0 {
		binary.BigEndian.PutUint16(id[len(id)-2:], w)
	}
	return id
}

// ownsData reports whether data id id was made by this writer.
func (s *Store) ownsData(id erasure.DataID) bool {
	w := s.opt.WriterID
	return w == 0 || binary.BigEndian.Uint16(id[len(id)-2:]) == w
}

// ownsSeg reports whether pack segment seg was made by this writer.
func (s *Store) ownsSeg(seg uint64) bool {
	w := s.opt.WriterID
	return w == 0 || seg>>writerShift == uint64(w)
}

// firstSeg is the lowest segment number this writer may start with at
// Open: one for a single writer; for several, the writer's range from
// the current Unix time, so that a number used before a crash, on a drive
// not reachable now, is not used again.
func (s *Store) firstSeg(now time.Time) uint64 {
	w := s.opt.WriterID
	if w == 0 {
		return 1
	}
	return uint64(w)<<writerShift | uint64(now.Unix())&(1<<writerShift-1)
}
