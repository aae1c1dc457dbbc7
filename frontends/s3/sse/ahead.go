package sse

import (
	"context"
	"errors"
	"fmt"
	"io"
)

// errHalted is what a producer's buffer or send returns once the writing
// side of WriteAhead has stopped.
var errHalted = errors.New("sse: the response's writer has stopped")

// Ahead is the reading side of one WriteAhead: the PieceWriters it makes
// decrypt into the WriteAhead's buffers, in turn, and hand each one,
// filled, to the writing side.
type Ahead struct {
	ctx  context.Context
	free chan []byte   // buffers to decrypt into
	full chan []byte   // filled buffers, in order; closed when produce returns
	stop chan struct{} // closed when the writing side gives up
	err  error         // produce's, set before full is closed
}

// PieceWriter decrypts p's packages under objectKey into the WriteAhead's
// buffers; header is the stream's header (the HeaderSize bytes at
// p.HeaderOff). Its Close hands over the last, partly filled buffer.
func (a *Ahead) PieceWriter(objectKey, header []byte, p Piece) (*PieceWriter, error) {
	return newPieceWriter(a, objectKey, header, p)
}

func (a *Ahead) buffer() ([]byte, error) {
	select {
	case <-a.stop:
		return nil, errHalted
	default:
	}
	select {
	case b := <-a.free:
		return b[:0], nil
	case <-a.stop:
		return nil, errHalted
	case <-a.ctx.Done():
		return nil, a.ctx.Err()
	}
}

// send never blocks: full has room for every buffer there is.
func (a *Ahead) send(b []byte) error {
	a.full <- b
	return nil
}

// WriteAhead writes to w the plaintext that produce's PieceWriters
// decrypt, while produce runs on a goroutine of its own: the decryption
// of the next buffers overlaps the write of the one before, up to
// len(bufs) buffers ahead. Every buffer must hold at least PackageSize
// bytes (cap); no other memory is taken for plaintext, and bufs are the
// caller's again once WriteAhead returns.
//
// WriteAhead returns once produce's goroutine has ended, so produce may
// use what the caller closes after (a store's reader): with produce's
// error after every buffer filled before it is written (a truncated
// response), or with the first write error or ctx's, after which
// produce's next buffer or send fails and produce's own error is dropped.
// produce must return once a PieceWriter's Write or Close fails.
func WriteAhead(ctx context.Context, w io.Writer, bufs [][]byte, produce func(*Ahead) error) error {
	if len(bufs) == 0 {
		return errors.New("sse: WriteAhead needs a buffer")
	}
	a := &Ahead{ctx: ctx, free: make(chan []byte, len(bufs)), full: make(chan []byte, len(bufs)), stop: make(chan struct{})}
	for _, b := range bufs {
		if cap(b) < PackageSize {
			return fmt.Errorf("sse: WriteAhead buffer of %d bytes holds no package", cap(b))
		}
		a.free <- b[:0]
	}
	go func() {
		defer close(a.full)
		defer func() {
			if v := recover(); v != nil {
				a.err = fmt.Errorf("sse: decrypting goroutine panicked: %v", v)
			}
		}()
		a.err = produce(a)
	}()
	halt := func(err error) error {
		close(a.stop)
		for range a.full { // wait for produce's goroutine to end
		}
		return err
	}
	for {
		if err := ctx.Err(); err != nil { // before the next write, even when a buffer is ready
			return halt(err)
		}
		select {
		case b, ok := <-a.full:
			if !ok {
				return a.err
			}
			if len(b) > 0 {
				if _, err := w.Write(b); err != nil {
					return halt(err)
				}
			}
			a.free <- b[:0]
		case <-ctx.Done():
			return halt(ctx.Err())
		}
	}
}
