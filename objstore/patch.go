package objstore

import (
	"context"
	"crypto/md5"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"sort"
	"time"

	"github.com/cairnstore/cairn/objstore/meta"
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
// bytes elsewhere below its size, zeros past it. Only what changed is
// written: one new data object holds the changed ranges (and the zeros
// of an extension past the base), and the new version's other segments
// are slices of the base's, shared as a copy shares them. The data is
// flushed before the index names it and the version is installed in one
// transaction, so a crash leaves the previous version whole and at most
// unreferenced data for the sweep. The base's data stays pinned by
// p.Base until Pending.Done, so the patch holds even if the base version
// is overwritten or deleted meanwhile (its data is taken back from the
// garbage, as a pinned copy's is).
//
// The new version's ETag is opaque, in the multipart form ("<hex>-1":
// the MD5 of the base's ETag and of each changed range's place and
// bytes), since the MD5 of the whole would cost reading the whole. Errors
// of p come at once, the others from Pending.Wait, whose ObjectInfo is
// the new version's.
func (s *Store) PatchAsync(ctx context.Context, bucket, key string, p Patch, opt PutOptions) (*Pending, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	p.Dirty = append([]Range(nil), p.Dirty...)
	if p.Base == nil || p.Base.Size() == 0 {
		// Nothing to share: the whole content is new.
		return s.PutAsync(ctx, bucket, key, FromFunc(func(context.Context) (io.Reader, int64, error) {
			return io.NewSectionReader(p, 0, p.Size), p.Size, nil
		}), opt)
	}
	if err := s.checkBackgroundPut(ctx, key, opt); err != nil {
		return nil, err
	}
	res := new(*patchPlan)
	pend := s.runAsync(ctx, bucket, key, func(ctx context.Context) (ObjectInfo, error) {
		return s.patch(ctx, bucket, key, p, opt, res)
	})
	pend.patched = res
	return pend, nil
}

// PatchFuncAsync is PatchAsync with a patch that src gives on the
// background goroutine, once the key's earlier pending puts are done: the
// put is pending (its key's readers wait for it) from the call on, and
// src may wait until the content is final, as FromFunc's open may. The
// mount registers a file's commit at its close this way and takes what
// the file holds only when the commit runs, so that closes in quick
// succession make one version (see PutOptions.OnWait for readers that
// should not wait long). A patch src gives without a base is written
// whole. Errors of src and of its patch come from Pending.Wait.
func (s *Store) PatchFuncAsync(ctx context.Context, bucket, key string, src func(context.Context) (Patch, error), opt PutOptions) (*Pending, error) {
	if err := s.checkBackgroundPut(ctx, key, opt); err != nil {
		return nil, err
	}
	res := new(*patchPlan)
	pend := s.runAsyncHook(ctx, bucket, key, opt.OnWait, func(ctx context.Context) (ObjectInfo, error) {
		p, err := src(ctx)
		if err != nil {
			return ObjectInfo{}, err
		}
		if err := p.check(); err != nil {
			return ObjectInfo{}, err
		}
		if p.Base == nil || p.Base.Size() == 0 {
			return s.writeAndCommit(ctx, bucket, key, io.NewSectionReader(p, 0, p.Size), p.Size, opt)
		}
		return s.patch(ctx, bucket, key, p, opt, res)
	})
	pend.patched = res
	return pend, nil
}

// patchPackMax is the largest patch whose new data goes to the pack
// segments rather than to a shard file per drive (unless packing is
// off): a file fsynced every few writes (a database, fio's 64 writes of
// 4 KiB) then appends to the open segments instead of creating and
// flushing four new files at every fsync. Bounded because a read of a
// packed object reads its whole record on each drive it needs.
const patchPackMax = 512 << 10

// patch writes a patch's new bytes and commits its version.
func (s *Store) patch(ctx context.Context, bucket, key string, p Patch, opt PutOptions, res **patchPlan) (ObjectInfo, error) {
	fills := p.fills()
	pl := s.planPatch(p, fills)
	if len(pl.runs) > maxChunks {
		// Chunks that shrank are not merged as they go: cut the whole
		// list into full chunks again (O(list), rare).
		pl = s.planList(p.Base, p.segments("", fills))
	}
	if s.chunkMax == 0 && pl.segments() > s.opt.MaxSegments {
		// The hard bound of flat lists: the crowded windows are
		// rewritten with the changes (read from the base), down to half
		// the bound.
		segs := p.segments("", fills)
		fills = unionRanges(fills, planSegmentCompaction(segs, p.Size, segWindow, s.opt.MaxSegments/2, 0))
		pl = s.planPatch(p, fills)
	}
	var total int64
	for _, r := range fills {
		total += r.Length
	}
	// Not hashed: the ETag is opaque, and an MD5 of the fills cost a
	// fifth of the CPU of fio's random writes, mostly in the windows the
	// hard bound rewrites.
	d, _, err := s.writeDataPacking(ctx, bucket, key, &fillReader{p: p, fills: fills}, total, nil, true, max(s.opt.PackMaxSize, patchPackMax))
	if err != nil {
		return ObjectInfo{}, err
	}
	var nonce [16]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		s.discard(d)
		return ObjectInfo{}, fmt.Errorf("patch ETag: %w", err)
	}
	var id string
	if d != nil {
		id = d.id.String()
	}
	pl.name(id)
	base := p.Base.Info()
	v := &meta.Version{
		ETag:        patchETag(base.ETag, p.Size, fills, nonce[:]),
		ModTime:     time.Now().UTC(),
		ContentType: opt.ContentType,
		Meta:        opt.Meta,
		Attrs:       opt.Attrs,
		Size:        p.Size,
	}
	if opt.FinalMeta != nil {
		v.Meta = maps.Clone(opt.Meta)
		if v.Meta == nil {
			v.Meta = map[string]string{}
		}
		opt.FinalMeta(v.Meta)
	}
	err = s.commitData(ctx, d, func(tx meta.Tx) error {
		b, err := getBucket(tx, bucket)
		if err != nil {
			return err
		}
		return pl.commitPlan(tx, b, key, v)
	})
	if err != nil {
		return ObjectInfo{}, err
	}
	s.noteSegments(bucket, key, v.VersionID, pl.segments())
	if res != nil {
		*res = pl
	}
	return toInfo(bucket, key, v, true), nil
}

// fills are the ranges the patch's new data holds, in order: the changed
// ranges, and the parts past the base's size that no changed range
// covers (zeros), merged where they touch.
func (p Patch) fills() []Range {
	baseSize := min(p.Base.Size(), p.Size)
	var out []Range
	add := func(r Range) {
		if r.Length <= 0 {
			return
		}
		if n := len(out); n > 0 && out[n-1].End() == r.Offset {
			out[n-1].Length += r.Length
			return
		}
		out = append(out, r)
	}
	pos := baseSize // past the base, what is not dirty is a zero fill
	for _, r := range p.Dirty {
		if r.Offset > pos {
			add(Range{pos, r.Offset - pos})
		}
		add(r)
		pos = max(pos, r.End())
	}
	if pos < p.Size {
		add(Range{pos, p.Size - pos})
	}
	return out
}

// unionRanges merges two sorted lists of disjoint ranges into one,
// ranges that overlap or touch made one.
func unionRanges(a, b []Range) []Range {
	out := make([]Range, 0, len(a)+len(b))
	for len(a) > 0 || len(b) > 0 {
		var r Range
		if len(b) == 0 || (len(a) > 0 && a[0].Offset <= b[0].Offset) {
			r, a = a[0], a[1:]
		} else {
			r, b = b[0], b[1:]
		}
		if n := len(out); n > 0 && out[n-1].End() >= r.Offset {
			out[n-1].Length = max(out[n-1].End(), r.End()) - out[n-1].Offset
			continue
		}
		out = append(out, r)
	}
	return out
}

// segments is the new version's segment list: the base's segments
// below the new size, with the fills rewritten into data id (which holds
// them one after another), as a segment compaction would
// (compactedSegments).
func (p Patch) segments(id string, fills []Range) []meta.Segment {
	return compactedSegments(sliceSegments(p.Base.segments(), 0, min(p.Base.Size(), p.Size)), fills, id)
}

// patchETag is a patched version's ETag: the MD5 of the base's ETag, the
// size, each fill's place and a random nonce (the fills' bytes are not
// hashed), in the multipart form, so that no client takes it for the MD5
// of the whole; the nonce makes it unique to the write.
func patchETag(baseETag string, size int64, fills []Range, nonce []byte) string {
	h := md5.New()
	_, _ = fmt.Fprintf(h, "%s\x00%d", baseETag, size)
	for _, r := range fills {
		_, _ = fmt.Fprintf(h, "\x00%d+%d", r.Offset, r.Length)
	}
	h.Write(nonce)
	return hex.EncodeToString(h.Sum(nil)) + "-1"
}

// fillReader reads a patch's fills one after another: the bytes of its
// new data object.
type fillReader struct {
	p     Patch
	fills []Range
	off   int64 // within fills[0]
}

// Read implements io.Reader.
func (f *fillReader) Read(b []byte) (int, error) {
	for len(f.fills) > 0 && f.off == f.fills[0].Length {
		f.fills, f.off = f.fills[1:], 0
	}
	if len(f.fills) == 0 {
		return 0, io.EOF
	}
	r := f.fills[0]
	b = b[:min(int64(len(b)), r.Length-f.off)]
	n, err := f.p.ReadAt(b, r.Offset+f.off)
	f.off += int64(n)
	if err == io.EOF && n == len(b) {
		err = nil
	}
	return n, err
}

// ReadAt reads the content p describes (io.ReaderAt): the bytes of
// p.Dirty from p.Src, the base's elsewhere below its size, zeros past it.
// The mount reads a file being patched through it.
func (p Patch) ReadAt(b []byte, off int64) (int, error) {
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
