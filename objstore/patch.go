package objstore

import (
	"context"
	"fmt"
	"io"
	"sort"
)

// Range is a byte range [Offset, Offset+Length) of an object.
type Range struct {
	Offset, Length int64
}

// End is the offset just past the range.
func (r Range) End() int64 { return r.Offset + r.Length }

// Patch describes a version made from another one by changing some of its
// byte ranges: what a file rewritten in place on the mount becomes.
type Patch struct {
	// Base is the version the unchanged bytes come from, open (and so
	// pinned) for the whole patch; nil: there is none, and every byte is
	// Dirty or zero.
	Base *ObjectReader
	// Size is the new version's size.
	Size int64
	// Dirty are the changed ranges, sorted, disjoint and inside
	// [0, Size): their bytes are read from Src at the same offsets.
	Dirty []Range
	// Src holds the changed bytes. It is read in the background, until
	// Pending.Done: the caller must leave those ranges alone until then.
	Src io.ReaderAt
}

// check says whether p is well formed.
func (p Patch) check() error {
	if p.Size < 0 {
		return fmt.Errorf("%w: patch size %d is negative", ErrInvalidArgument, p.Size)
	}
	if len(p.Dirty) > 0 && p.Src == nil {
		return fmt.Errorf("%w: a patch with changed ranges needs their source", ErrInvalidArgument)
	}
	if p.Base != nil && Encrypted(p.Base.Info()) {
		return fmt.Errorf("%w: %s is encrypted (its ciphertext is keyed to the whole object); write it whole with a put", ErrNotAppendable, p.Base.Info().Key)
	}
	end := int64(0)
	for i, r := range p.Dirty {
		if r.Offset < end || r.Length <= 0 || r.End() > p.Size {
			return fmt.Errorf("%w: changed range %d (%d+%d) is empty, out of order or past the size %d", ErrInvalidArgument, i, r.Offset, r.Length, p.Size)
		}
		end = r.End()
	}
	return nil
}

// PatchAsync commits, as PutAsync with a FromFunc source, a new version of
// bucket/key made of p: the bytes of p.Dirty read from p.Src, the base's
// bytes elsewhere below its size, zeros past it. Errors of p come at once,
// the others from Pending.Wait, whose ObjectInfo is the new version's.
func (s *Store) PatchAsync(ctx context.Context, bucket, key string, p Patch, opt PutOptions) (*Pending, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	dirty := append([]Range(nil), p.Dirty...)
	p.Dirty = dirty
	return s.PutAsync(ctx, bucket, key, FromFunc(func(context.Context) (io.Reader, int64, error) {
		return io.NewSectionReader(patchReader{p}, 0, p.Size), p.Size, nil
	}), opt)
}

// patchReader reads the content a patch describes.
type patchReader struct{ p Patch }

// ReadAt implements io.ReaderAt.
func (pr patchReader) ReadAt(b []byte, off int64) (int, error) {
	p := pr.p
	if off >= p.Size {
		return 0, io.EOF
	}
	n := 0
	for len(b) > 0 && off < p.Size {
		want := min(int64(len(b)), p.Size-off)
		// The first dirty range that ends past off.
		i := sort.Search(len(p.Dirty), func(i int) bool { return p.Dirty[i].End() > off })
		var m int
		var err error
		switch {
		case i < len(p.Dirty) && p.Dirty[i].Offset <= off:
			m, err = p.Src.ReadAt(b[:min(want, p.Dirty[i].End()-off)], off)
		default:
			stop := off + want
			if i < len(p.Dirty) {
				stop = min(stop, p.Dirty[i].Offset)
			}
			m, err = p.readBase(b[:stop-off], off)
		}
		n += m
		b, off = b[m:], off+int64(m)
		if err != nil && err != io.EOF {
			return n, err
		}
		if m == 0 {
			return n, io.ErrUnexpectedEOF
		}
	}
	if len(b) > 0 {
		return n, io.EOF
	}
	return n, nil
}

// readBase reads b at off from the base, zeros past its end.
func (p Patch) readBase(b []byte, off int64) (int, error) {
	size := int64(0)
	if p.Base != nil {
		size = p.Base.Size()
	}
	if off >= size {
		clear(b)
		return len(b), nil
	}
	in := b[:min(int64(len(b)), size-off)]
	m, err := p.Base.ReadAt(in, off)
	if m < len(in) {
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return m, err
	}
	clear(b[len(in):])
	return len(b), nil
}
