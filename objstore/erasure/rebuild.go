package erasure

import (
	"context"
	"fmt"
	"io"
	"slices"
)

// Rebuild regenerates the shards in targets (shard index -> sink) for every
// block from any k good sources, writing the header and chunks exactly as a
// Writer would, so a rebuilt file is byte-identical to the original when hdr
// carries the original bucket and key. Target shards are never read, even if
// srcs has a reader for them. It does not sync. With fewer than k good
// sources for some block the error wraps ErrReadQuorum; a failing sink's
// error is returned wrapped.
func (c *Codec) Rebuild(ctx context.Context, hdr Header, srcs []io.ReaderAt, targets map[int]io.WriterAt) error {
	if err := c.checkArgs(hdr, len(srcs)); err != nil {
		return err
	}
	n := c.k + c.m
	isTarget := make([]bool, n)
	idx := make([]int, 0, len(targets))
	for i, w := range targets {
		if i < 0 || i >= n || w == nil {
			return fmt.Errorf("erasure: rebuild: invalid target shard %d (nil sink or out of 0..%d)", i, n-1)
		}
		isTarget[i] = true
		idx = append(idx, i)
	}
	if len(idx) == 0 {
		return nil
	}
	slices.Sort(idx)
	hdrLen := int64(hdr.EncodedLen())
	errs := make([]error, n)
	for _, i := range idx {
		h := hdr
		h.Index = i
		b, err := h.MarshalBinary()
		if err != nil {
			return err
		}
		if _, err := targets[i].WriteAt(b, 0); err != nil {
			return fmt.Errorf("erasure: rebuild shard %d header: %w", i, err)
		}
	}

	s := newSources(hdr, srcs)
	bufp := c.getBuf()
	defer c.putBuf(bufp)
	buf := *bufp
	for b := range hdr.BlockCount() {
		if err := ctx.Err(); err != nil {
			return err
		}
		shards, _, err := c.gather(ctx, s, b, buf, func(i int) bool { return isTarget[i] })
		if err != nil {
			return fmt.Errorf("erasure: rebuild: %w", err)
		}
		if c.enc == nil { // m == 0: gather only succeeds with no shard to make
			return fmt.Errorf("%w: rebuild without parity", ErrReadQuorum)
		}
		if err := c.enc.ReconstructSome(shards, isTarget); err != nil {
			return fmt.Errorf("%w: rebuild block %d: %w", ErrReadQuorum, b, err)
		}
		ss := hdr.ShardSize(b)
		off := hdrLen + hdr.blockRel(b)
		forEach(idx, ss >= concurrentIOSize, func(i int) {
			ch := c.chunk(buf, i, ss)
			sealChunk(ch)
			if _, err := targets[i].WriteAt(ch, off); err != nil {
				errs[i] = fmt.Errorf("erasure: rebuild shard %d block %d: %w", i, b, err)
			}
		})
		for _, i := range idx {
			if errs[i] != nil {
				return errs[i]
			}
		}
	}
	return nil
}
