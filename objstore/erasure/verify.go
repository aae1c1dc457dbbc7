package erasure

import (
	"context"
	"fmt"
	"io"
)

// ShardState is fsck's verdict on one shard file.
type ShardState int

const (
	// ShardOK: header matches, every block checksum matches, size is exact.
	ShardOK ShardState = iota
	// ShardMissing: no source was given for the shard.
	ShardMissing
	// ShardCorrupt: unreadable, bad or foreign header, a block checksum
	// mismatch, or a file too short or too long.
	ShardCorrupt
)

func (s ShardState) String() string {
	switch s {
	case ShardOK:
		return "ok"
	case ShardMissing:
		return "missing"
	case ShardCorrupt:
		return "corrupt"
	}
	return fmt.Sprintf("ShardState(%d)", int(s))
}

// Verify reads every shard in full and classifies it. The header must parse
// and match hdr's k, m, block size, size and data id with the shard's own
// index (bucket and key are not compared). Shards are checked concurrently.
// The error is for bad arguments or a cancelled ctx, not for bad shards.
func (c *Codec) Verify(ctx context.Context, hdr Header, srcs []io.ReaderAt) ([]ShardState, error) {
	if err := c.checkArgs(hdr, len(srcs)); err != nil {
		return nil, err
	}
	s := newSources(hdr, srcs)
	states := make([]ShardState, len(srcs))
	idx := make([]int, len(srcs))
	for i := range idx {
		idx[i] = i
	}
	forEach(idx, true, func(i int) { states[i] = c.verifyShard(ctx, s, i) })
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return states, nil
}

func (c *Codec) verifyShard(ctx context.Context, s *sources, i int) ShardState {
	if s.s[i].r == nil {
		return ShardMissing
	}
	if s.checkHeader(i) != nil {
		return ShardCorrupt
	}
	nb := s.hdr.BlockCount()
	chunk := make([]byte, c.stride)
	for b := range nb {
		if ctx.Err() != nil {
			return ShardCorrupt // the result is discarded
		}
		if s.readChunk(i, b, chunk[:checksumLen+s.hdr.ShardSize(b)]) != nil {
			return ShardCorrupt
		}
	}
	var one [1]byte
	if n, _ := s.s[i].r.ReadAt(one[:], s.dataOffset(i, nb)); n > 0 {
		return ShardCorrupt // trailing bytes
	}
	return ShardOK
}
