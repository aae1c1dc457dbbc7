package sse

import (
	"fmt"
	"io"
)

// Piece is the part of a plaintext range that lies in one stream, as the
// stored bytes to fetch for it: a GET streams COff..COff+CLen (whole
// packages) through a PieceWriter, which lets the store serve them from
// its block cache rather than through ReadAt.
type Piece struct {
	HeaderOff  int64 // where the stream's header is in the stored data
	COff, CLen int64 // the packages holding the range
	first      int64 // the first of them
	count      int64 // the stream's packages
	skip, n    int64 // plaintext to drop from the first package, then to give
}

// Pieces splits plaintext bytes [off, off+n) into the streams they lie in.
func (l Layout) Pieces(off, n int64) ([]Piece, error) {
	if off < 0 || n < 0 || off+n > l.Size() {
		return nil, fmt.Errorf("sse: range %d+%d outside %d bytes", off, n, l.Size())
	}
	var out []Piece
	end := off + n
	for _, s := range l.streams {
		lo, hi := max(off, s.pOff), min(end, s.pOff+s.pLen)
		if lo >= hi && (n != 0 || lo != s.pOff) {
			continue
		}
		rel, relEnd := lo-s.pOff, hi-s.pOff
		first := rel / PackageSize
		last := max(relEnd-1, rel) / PackageSize
		cs := s.cOff + HeaderSize + first*sealedSize
		ce := min(s.cOff+HeaderSize+(last+1)*sealedSize, s.cOff+s.cLen)
		out = append(out, Piece{HeaderOff: s.cOff, COff: cs, CLen: ce - cs, first: first, count: packages(s.pLen),
			skip: rel - first*PackageSize, n: relEnd - rel})
		if n == 0 {
			break
		}
	}
	return out, nil
}

// PieceWriter decrypts a Piece's packages written to it in order and
// writes the plaintext of the range to w (NewPieceWriter), or hands it
// to the writing goroutine of a WriteAhead (Ahead.PieceWriter).
type PieceWriter struct {
	sink sink
	p    Piece
	aead interface {
		Open(dst, nonce, ct, ad []byte) ([]byte, error)
	}
	header [HeaderSize]byte
	nonce  [12]byte // not on the stack, where it would escape (an allocation a package)
	buf    []byte   // one sealed package being filled
	out    []byte   // plaintext not yet given to the sink (nil: no buffer taken yet)
	next   int64    // the number of the next package to open
	skip   int64
	left   int64 // plaintext still to give
}

// sink is where a PieceWriter's plaintext goes, a buffer at a time: it
// decrypts into a buffer from buffer (capacity at least PackageSize, so
// that a package always fits) and gives it back, filled, to send.
type sink interface {
	buffer() ([]byte, error)
	send(b []byte) error
}

// writerSink writes to w from one buffer of its own.
type writerSink struct {
	w io.Writer
	b []byte
}

func (s *writerSink) buffer() ([]byte, error) { return s.b[:0], nil }

func (s *writerSink) send(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	_, err := s.w.Write(b)
	return err
}

// NewPieceWriter decrypts p's packages under objectKey; header is the
// stream's header (the HeaderSize bytes at p.HeaderOff).
func NewPieceWriter(w io.Writer, objectKey, header []byte, p Piece) (*PieceWriter, error) {
	// The plaintext of up to batch packages is written at once: one
	// write to w per package (64 KiB) costs a system call each on a
	// socket.
	outCap := int(min(batch, p.CLen/sealedSize+1)) * PackageSize
	return newPieceWriter(&writerSink{w: w, b: make([]byte, 0, outCap)}, objectKey, header, p)
}

func newPieceWriter(s sink, objectKey, header []byte, p Piece) (*PieceWriter, error) {
	pw := &PieceWriter{sink: s, p: p, next: p.first, skip: p.skip, left: p.n, buf: make([]byte, 0, sealedSize)}
	copy(pw.header[:], header)
	aead, err := streamCipher(objectKey, header)
	if err != nil {
		return nil, err
	}
	pw.aead = aead
	return pw, nil
}

// Write implements io.Writer.
func (pw *PieceWriter) Write(b []byte) (int, error) {
	n := len(b)
	for len(b) > 0 {
		if len(pw.buf) == 0 && len(b) >= sealedSize {
			// A whole package in b: open it from there, sparing a copy.
			if err := pw.open(b[:sealedSize]); err != nil {
				return n - len(b), err
			}
			b = b[sealedSize:]
			continue
		}
		c := min(len(b), sealedSize-len(pw.buf))
		pw.buf = append(pw.buf, b[:c]...)
		b = b[c:]
		if len(pw.buf) == sealedSize {
			if err := pw.open(pw.buf); err != nil {
				return n - len(b), err
			}
		}
	}
	return n, nil
}

// Close opens the last, shorter package and gives out the plaintext
// still held; it fails when the piece's bytes did not all arrive.
func (pw *PieceWriter) Close() error {
	if len(pw.buf) > 0 {
		if err := pw.open(pw.buf); err != nil {
			return err
		}
	}
	if err := pw.flush(); err != nil {
		return err
	}
	if pw.left > 0 {
		return fmt.Errorf("%w: %d bytes of the range are missing", ErrCorrupt, pw.left)
	}
	return nil
}

// open opens one sealed package (in pw.buf, or in the caller's buffer,
// which it must not change), appending its plaintext in the range to
// pw.out, which it gives to the sink once another package might not fit.
func (pw *PieceWriter) open(sealed []byte) error {
	if pw.out == nil {
		b, err := pw.sink.buffer()
		if err != nil {
			return err
		}
		pw.out = b[:0]
	}
	start := len(pw.out)
	pt, err := pw.aead.Open(pw.out[start:start], nonce(&pw.nonce, pw.next, pw.next == pw.p.count-1), sealed, pw.header[:])
	if err != nil {
		return fmt.Errorf("%w: package %d", ErrCorrupt, pw.next)
	}
	pw.next++
	pw.buf = pw.buf[:0]
	if pw.skip >= int64(len(pt)) {
		pw.skip -= int64(len(pt))
		return nil
	}
	if pw.skip > 0 {
		pt = pt[:copy(pt, pt[pw.skip:])]
		pw.skip = 0
	}
	pt = pt[:min(int64(len(pt)), pw.left)]
	pw.left -= int64(len(pt))
	pw.out = pw.out[:start+len(pt)]
	if cap(pw.out)-len(pw.out) < PackageSize {
		return pw.flush()
	}
	return nil
}

// flush gives the plaintext held to the sink, with its buffer.
func (pw *PieceWriter) flush() error {
	if pw.out == nil {
		return nil
	}
	b := pw.out
	pw.out = nil
	return pw.sink.send(b)
}
