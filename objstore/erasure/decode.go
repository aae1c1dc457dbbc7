package erasure

import (
	"context"
	"fmt"
	"io"
	"slices"
)

// ReadBlock decodes block b of the object described by hdr into dst, which
// must hold at least hdr.BlockLen(b) bytes, and returns that length.
// srcs holds one reader per shard (k+m of them), nil for a missing shard.
//
// It reads data shards first and, for each one missing, short, unreadable,
// with a rejected header or a failed checksum, reads a parity shard instead,
// then reconstructs. bad lists, sorted, the shards found missing or bad
// (shards it had no need to read are not checked); callers queue them for
// healing. With fewer than k good shards the error wraps ErrReadQuorum.
// Shards of 64 KiB or more are read concurrently.
//
// Every call re-reads the headers of the shards it uses; NewReader checks
// them once per object.
func (c *Codec) ReadBlock(ctx context.Context, hdr Header, srcs []io.ReaderAt, b int64, dst []byte) (n int, bad []int, err error) {
	if err := c.checkArgs(hdr, len(srcs)); err != nil {
		return 0, nil, err
	}
	return c.readBlock(ctx, newSources(hdr, srcs), b, dst)
}

func (c *Codec) readBlock(ctx context.Context, s *sources, b int64, dst []byte) (int, []int, error) {
	if nb := s.hdr.BlockCount(); b < 0 || b >= nb {
		return 0, nil, fmt.Errorf("erasure: block %d out of range [0, %d)", b, nb)
	}
	l := s.hdr.BlockLen(b)
	if len(dst) < l {
		return 0, nil, fmt.Errorf("erasure: destination holds %d bytes, block %d has %d", len(dst), b, l)
	}
	if err := ctx.Err(); err != nil {
		return 0, nil, err
	}
	if c.readBlockDirect(ctx, s, b, dst, l) {
		return l, nil, nil
	}
	bufp := c.getBuf()
	defer c.putBuf(bufp)
	shards, bad, err := c.gather(ctx, s, b, *bufp, nil)
	if err != nil {
		return 0, bad, err
	}
	for i := range c.k {
		if len(shards[i]) == 0 {
			if err := c.enc.ReconstructData(shards); err != nil {
				return 0, bad, fmt.Errorf("%w: block %d: %w", ErrReadQuorum, b, err)
			}
			break
		}
	}
	n := 0
	for i := range c.k {
		n += copy(dst[n:l], shards[i])
	}
	return l, bad, nil
}

// gather reads good chunks of block b into buf until it has k of them,
// preferring data shards, and skipping shards for which skip returns true.
// It returns the shard slices for the encoder: good ones full, the others
// empty with capacity for reconstruction.
func (c *Codec) gather(ctx context.Context, s *sources, b int64, buf []byte, skip func(int) bool) ([][]byte, []int, error) {
	n := c.k + c.m
	ss := s.hdr.ShardSize(b)
	var bad []int
	order := make([]int, 0, n)
	for i := range n {
		switch {
		case skip != nil && skip(i):
		case s.knownBad(i):
			bad = append(bad, i)
		default:
			order = append(order, i)
		}
	}
	shards := make([][]byte, n)
	errs := make([]error, n)
	var firstErr error
	good := 0
	for good < c.k && len(order) > 0 {
		batch := order[:min(c.k-good, len(order))]
		order = order[len(batch):]
		forEach(batch, ss >= concurrentIOSize, func(i int) {
			errs[i] = s.readChunk(i, b, c.chunk(buf, i, ss))
		})
		if err := ctx.Err(); err != nil {
			return nil, bad, err
		}
		for _, i := range batch {
			if errs[i] != nil {
				bad = append(bad, i)
				if firstErr == nil {
					firstErr = errs[i]
				}
				continue
			}
			shards[i] = c.chunk(buf, i, ss)[checksumLen:]
			good++
		}
	}
	slices.Sort(bad)
	if good < c.k {
		if firstErr == nil {
			firstErr = errMissing
		}
		return nil, bad, fmt.Errorf("%w: block %d: %d of %d needed shards good, bad %v: %w",
			ErrReadQuorum, b, good, c.k, bad, firstErr)
	}
	for i := range shards {
		if shards[i] == nil {
			shards[i] = c.chunk(buf, i, ss)[checksumLen:checksumLen]
		}
	}
	return shards, bad, nil
}
