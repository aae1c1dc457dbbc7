package sse

import (
	"fmt"
	"io"
)

// Layout is where an object's streams lie: one per PUT, one per part of
// a multipart object, back to back in the stored data.
type Layout struct {
	streams []span
}

type span struct {
	cOff, cLen int64 // in the stored (encrypted) data
	pOff, pLen int64 // in the plaintext
}

// NewLayout maps stored stream sizes (the object's size, or its parts'
// sizes in order) to their plaintext; ErrCorrupt when one is no stream's
// size.
func NewLayout(storedSizes []int64) (Layout, error) {
	var l Layout
	var c, p int64
	for i, sz := range storedSizes {
		n, ok := PlainSize(sz)
		if !ok {
			return Layout{}, fmt.Errorf("%w: stream %d has %d bytes", ErrCorrupt, i, sz)
		}
		l.streams = append(l.streams, span{cOff: c, cLen: sz, pOff: p, pLen: n})
		c += sz
		p += n
	}
	return l, nil
}

// Size is the plaintext size.
func (l Layout) Size() int64 {
	if len(l.streams) == 0 {
		return 0
	}
	last := l.streams[len(l.streams)-1]
	return last.pOff + last.pLen
}

// PartSizes are the plaintext sizes of the streams.
func (l Layout) PartSizes() []int64 {
	out := make([]int64, len(l.streams))
	for i, s := range l.streams {
		out[i] = s.pLen
	}
	return out
}

// batch is how many packages one read of the stored data fetches.
const batch = 16

// Reader decrypts a plaintext range of an object whose stored data ra
// reads. It authenticates every package it reads; a package that does not
// authenticate fails the read with ErrCorrupt.
type Reader struct {
	ra        io.ReaderAt
	key       []byte
	l         Layout
	pos, end  int64 // plaintext
	cur       int   // stream index
	curStream *openStream
	buf       []byte
	out       []byte
}

type openStream struct {
	idx    int
	header [HeaderSize]byte
	aead   interface {
		Open(dst, nonce, ciphertext, additionalData []byte) ([]byte, error)
	}
	count int64
}

// NewReader reads plaintext bytes [off, off+n) of the object laid out by
// l from ra, decrypting under objectKey.
func NewReader(ra io.ReaderAt, objectKey []byte, l Layout, off, n int64) (*Reader, error) {
	if off < 0 || n < 0 || off+n > l.Size() {
		return nil, fmt.Errorf("sse: range %d+%d outside %d bytes", off, n, l.Size())
	}
	return &Reader{ra: ra, key: objectKey, l: l, pos: off, end: off + n}, nil
}

// Read implements io.Reader.
func (r *Reader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if len(r.out) == 0 {
			if r.pos >= r.end {
				break
			}
			if err := r.fill(); err != nil {
				if n > 0 {
					return n, nil // the error comes back on the next read
				}
				return 0, err
			}
		}
		c := copy(p[n:], r.out)
		r.out = r.out[c:]
		n += c
	}
	if n == 0 && r.pos >= r.end {
		return 0, io.EOF
	}
	return n, nil
}

// WriteTo implements io.WriterTo, sparing a copy.
func (r *Reader) WriteTo(w io.Writer) (int64, error) {
	var total int64
	for {
		if len(r.out) == 0 {
			if r.pos >= r.end {
				return total, nil
			}
			if err := r.fill(); err != nil {
				return total, err
			}
		}
		m, err := w.Write(r.out)
		total += int64(m)
		r.out = r.out[m:]
		if err != nil {
			return total, err
		}
	}
}

// fill decrypts the packages holding the next plaintext bytes (up to
// batch of them, within one stream) into r.out.
func (r *Reader) fill() error {
	for r.cur < len(r.l.streams) && r.pos >= r.l.streams[r.cur].pOff+r.l.streams[r.cur].pLen {
		r.cur++
	}
	if r.cur == len(r.l.streams) {
		return io.ErrUnexpectedEOF
	}
	s := r.l.streams[r.cur]
	if r.curStream == nil || r.curStream.idx != r.cur {
		os := &openStream{idx: r.cur, count: packages(s.pLen)}
		if _, err := r.ra.ReadAt(os.header[:], s.cOff); err != nil {
			return fmt.Errorf("sse: read stream header: %w", err)
		}
		aead, err := streamCipher(r.key, os.header[:])
		if err != nil {
			return err
		}
		os.aead = aead
		r.curStream = os
	}
	os := r.curStream
	rel := r.pos - s.pOff
	first := rel / PackageSize
	endRel := min(r.end-s.pOff, s.pLen)
	last := (endRel - 1) / PackageSize // inclusive
	if endRel <= 0 {
		last = first
	}
	last = min(last, first+batch-1, os.count-1)
	cStart := s.cOff + HeaderSize + first*sealedSize
	cEnd := s.cOff + HeaderSize + (last+1)*sealedSize
	cEnd = min(cEnd, s.cOff+s.cLen)
	need := int(cEnd - cStart)
	if cap(r.buf) < need {
		r.buf = make([]byte, need, max(need, batch*sealedSize))
	}
	b := r.buf[:need]
	if m, err := r.ra.ReadAt(b, cStart); m < need {
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return fmt.Errorf("sse: read packages %d-%d: %w", first, last, err)
	}
	var nb [12]byte
	plain := b[:0]
	for i := first; i <= last; i++ {
		o := int((i - first) * sealedSize)
		e := min(o+sealedSize, len(b))
		pt, err := os.aead.Open(b[o:o], nonce(&nb, i, i == os.count-1), b[o:e], os.header[:])
		if err != nil {
			return fmt.Errorf("%w: stream %d package %d", ErrCorrupt, r.cur, i)
		}
		plain = append(plain, pt...) // in place: pt starts at o >= len(plain)
	}
	skip := rel - first*PackageSize
	want := min(int64(len(plain))-skip, r.end-r.pos)
	if want <= 0 {
		return fmt.Errorf("%w: stream %d is shorter than its size", ErrCorrupt, r.cur)
	}
	r.out = plain[skip : skip+want]
	r.pos += want
	return nil
}
