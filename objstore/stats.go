package objstore

import (
	"io"
	"sync/atomic"
)

// Stats are the store's running counters, from Open on.
type Stats struct {
	// DriveBytesWritten counts the shard bytes written to the drives:
	// data and parity shards with their headers and block checksums, for
	// new data (shard files and pack records), pack compaction's copies,
	// segment compaction's rewrites and healed shards. Index writes are not counted. A write of n new
	// bytes costs about n × (k+m)/k; a copy, rename, UploadPartCopy or
	// the reused part of an append costs nothing here.
	DriveBytesWritten int64
	// SegmentCompactions counts the versions whose segment lists the
	// segment compactor (CompactSegments) rewrote shorter.
	SegmentCompactions int64
}

// Stats returns the store's counters.
func (s *Store) Stats() Stats {
	return Stats{DriveBytesWritten: s.driveWritten.Load(), SegmentCompactions: s.segCompactions.Load()}
}

// countWrites wraps a shard sink so that what it takes is counted in
// Stats.DriveBytesWritten.
func (s *Store) countWrites(w io.WriterAt) io.WriterAt {
	return countingWriterAt{w: w, n: &s.driveWritten}
}

type countingWriterAt struct {
	w io.WriterAt
	n *atomic.Int64
}

func (c countingWriterAt) WriteAt(p []byte, off int64) (int, error) {
	n, err := c.w.WriteAt(p, off)
	c.n.Add(int64(n))
	return n, err
}
