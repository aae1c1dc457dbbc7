package erasure

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
)

// Reader is a view of a whole object over its shard sources, decoding block
// by block. ReadAt is safe for concurrent use (calls are serialised); Read
// and Seek share a position and are not.
type Reader struct {
	c     *Codec
	ctx   context.Context // from NewReader: a Reader serves one request
	onBad func(shards []int)
	err   error // argument error from NewReader

	mu       sync.Mutex // protects the following
	src      *sources
	cache    []byte // last decoded block
	cached   int64  // its index, -1 if none
	reported []bool // shards already passed to onBad

	pos int64 // Read/Seek position
}

var (
	_ io.ReaderAt   = (*Reader)(nil)
	_ io.ReadSeeker = (*Reader)(nil)
)

// NewReader returns a Reader of the object described by hdr over srcs (one
// per shard, nil for a missing one). Shard headers are checked once, when a
// shard is first used. onBad, if not nil, is called with the shards newly
// found missing or bad, each shard at most once per Reader, from the
// goroutine calling Read or ReadAt (never with the Reader's lock held).
// Argument errors are returned by the first read.
func (c *Codec) NewReader(ctx context.Context, hdr Header, srcs []io.ReaderAt, onBad func(shards []int)) *Reader {
	r := &Reader{c: c, ctx: ctx, onBad: onBad, cached: -1}
	r.err = c.checkArgs(hdr, len(srcs))
	r.src = newSources(hdr, srcs)
	r.reported = make([]bool, len(srcs))
	return r
}

// OnShardError asks the Reader to call f with every shard read that fails
// and every shard header or block that fails verification (ErrBadHeader,
// ErrCorrupt), from the goroutine reading (possibly several at once for
// one read: f must be safe for concurrent use). A read that fails to
// verify is reported again each time it is tried. Call it before the
// first read.
func (r *Reader) OnShardError(f func(shard int, err error)) {
	r.src.onErr = f
}

// Size returns the object size.
func (r *Reader) Size() int64 { return r.src.hdr.Size }

// ReadAt implements io.ReaderAt: it returns io.EOF when fewer than len(p)
// bytes remain from off.
func (r *Reader) ReadAt(p []byte, off int64) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	if off < 0 {
		return 0, fmt.Errorf("erasure: negative offset %d", off)
	}
	size := r.src.hdr.Size
	if off >= size {
		return 0, io.EOF
	}
	var newBad []int
	r.mu.Lock()
	n, err := r.readAtLocked(p, off, &newBad)
	r.mu.Unlock()
	if len(newBad) > 0 && r.onBad != nil {
		r.onBad(newBad)
	}
	if err == nil && n < len(p) {
		err = io.EOF
	}
	return n, err
}

func (r *Reader) readAtLocked(p []byte, off int64, newBad *[]int) (int, error) {
	bs := int64(r.c.blockSize)
	size := r.src.hdr.Size
	n := 0
	for n < len(p) && off < size {
		b, within := off/bs, int(off%bs)
		l := r.src.hdr.BlockLen(b)
		if within == 0 && len(p)-n >= l && r.cached != b {
			// A whole block: decode straight into p.
			if err := r.decode(b, p[n:], newBad); err != nil {
				return n, err
			}
			n += l
			off += int64(l)
			continue
		}
		if r.cached != b {
			if r.cache == nil {
				r.cache = make([]byte, min(bs, size))
			}
			r.cached = -1
			if err := r.decode(b, r.cache, newBad); err != nil {
				return n, err
			}
			r.cached = b
		}
		c := copy(p[n:], r.cache[within:l])
		n += c
		off += int64(c)
	}
	return n, nil
}

// decode decodes block b into dst and notes newly bad shards.
func (r *Reader) decode(b int64, dst []byte, newBad *[]int) error {
	_, bad, err := r.c.readBlock(r.ctx, r.src, b, dst)
	for _, i := range bad {
		if !r.reported[i] {
			r.reported[i] = true
			*newBad = append(*newBad, i)
		}
	}
	return err
}

// Read implements io.Reader.
func (r *Reader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	n, err := r.ReadAt(p, r.pos)
	r.pos += int64(n)
	if err == io.EOF && n > 0 {
		err = nil
	}
	return n, err
}

// Seek implements io.Seeker.
func (r *Reader) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += r.pos
	case io.SeekEnd:
		offset += r.Size()
	default:
		return 0, errors.New("erasure: invalid whence")
	}
	if offset < 0 {
		return 0, errors.New("erasure: negative position")
	}
	r.pos = offset
	return offset, nil
}
