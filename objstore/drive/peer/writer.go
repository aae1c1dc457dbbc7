package peer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"time"

	"github.com/cairnstore/cairn/objstore/drive"
)

// errAnswered means the peer answered a write stream before it ended (it
// had refused it, which the answer itself says when it could be read).
var errAnswered = errors.New("peer answered before the write stream ended")

// errNotRewindable refuses a retry of a write stream whose frames the
// transport had begun to read (GetBody is asked for only then).
var errNotRewindable = errors.New("write stream cannot be replayed")

// stream is the client side of one write stream: a PUT whose body, an
// io.Pipe, carries the frames of each WriteAt in the order written (see
// frame.go), then a C frame at finish or an A frame at abort. The peer
// answers once it has finished (or aborted) its local file, so finish
// returns only after the peer's Close or Commit returned.
//
// A stream is used by one goroutine at a time; the goroutine running the
// exchange sets res and closes done.
type stream struct {
	d      *Drive
	pw     *io.PipeWriter
	cancel context.CancelCauseFunc // ends the exchange, with the cause
	done   chan struct{}           // closed once the exchange ended
	res    error                   // the exchange's result; read after done

	hdr    [frameWriteHdr]byte
	frames uint64 // W frames sent
	bytes  uint64 // their data bytes
	err    error  // sticky: the stream broke
	ended  bool   // finish or abort was called
}

// openStream starts the PUT of a write stream to sub (a path below the
// slot). The request goes out at once and the peer creates the file when
// it arrives; its refusal (a bad MAC or name, a full drive, a failed
// create) comes back at the first WriteAt or at the end.
func (d *Drive) openStream(ctx context.Context, sub string) (*stream, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := d.cooling(); err != nil {
		return nil, err
	}
	sctx, cancel := context.WithCancelCause(ctx)
	pr, pw := io.Pipe()
	req, err := d.newRequest(sctx, http.MethodPut, sub, nil, pr)
	if err != nil {
		cancel(err)
		return nil, err
	}
	req.ContentLength = -1
	// The peer refuses before reading (bad name, create failed) without
	// the body crossing the wire. A GetBody lets the transport retry a
	// request that failed on a stale keep-alive connection before any of
	// it was written: it then reuses the untouched pipe as it is, and asks
	// GetBody only for a body it read from (or closed), which cannot be.
	req.Header.Set("Expect", "100-continue")
	req.GetBody = func() (io.ReadCloser, error) { return nil, errNotRewindable }
	s := &stream{d: d, pw: pw, cancel: cancel, done: make(chan struct{})}
	d.stats.requests.Add(1)
	go func() {
		defer close(s.done)
		resp, err := d.hc.Do(req)
		if err != nil {
			s.res = d.transportErr(sctx, err)
		} else if resp.StatusCode/100 != 2 {
			d.stats.refused.Add(1)
			s.res = remoteError(d.desc, resp)
		} else {
			drainClose(resp)
		}
		pr.CloseWithError(orErr(s.res, errAnswered))
	}()
	return s, nil
}

func orErr(err, otherwise error) error {
	if err != nil {
		return err
	}
	return otherwise
}

// WriteAt sends p as W frames (of at most maxIO bytes each). It returns
// once the transport has taken the bytes, so p may be reused; an error
// means the stream is broken and only finish's or abort's call remains.
func (s *stream) WriteAt(p []byte, off int64) (int, error) {
	switch {
	case s.ended:
		return 0, fs.ErrClosed
	case s.err != nil:
		return 0, s.err
	case off < 0:
		return 0, fmt.Errorf("%s: write at negative offset %d", s.d.desc, off)
	}
	n := 0
	for n < len(p) {
		at := off + int64(n)
		chunk := p[n:min(len(p), n+maxIO)]
		if at > maxOffset-int64(len(chunk)) {
			return n, fmt.Errorf("%s: write of %d bytes at %d is past the largest file", s.d.desc, len(chunk), at)
		}
		putWriteHdr(s.hdr[:], at, len(chunk))
		if err := s.send(s.hdr[:], chunk); err != nil {
			return n, err
		}
		s.frames++
		s.bytes += uint64(len(chunk))
		s.d.stats.sent.Add(uint64(len(chunk)))
		n += len(chunk)
	}
	return n, nil
}

// send writes bufs to the pipe; when the peer takes none of it for
// Timeout, the exchange is ended as stalled.
func (s *stream) send(bufs ...[]byte) error {
	t := time.AfterFunc(s.d.timeout, func() { s.cancel(s.d.errStalled) })
	defer t.Stop()
	for _, b := range bufs {
		if _, err := s.pw.Write(b); err != nil {
			s.err = s.result(err)
			return s.err
		}
	}
	return nil
}

// result waits for the exchange to end and returns its error, or err
// when it ended without one.
func (s *stream) result(err error) error {
	t := time.AfterFunc(s.d.timeout, func() { s.cancel(s.d.errStalled) })
	defer t.Stop()
	<-s.done
	return orErr(s.res, err)
}

// end sends the end frame (C to finish, A to abort), ends the body and
// waits for the peer's answer.
func (s *stream) end(frame []byte) error {
	if s.ended {
		return fs.ErrClosed
	}
	s.ended = true
	defer s.cancel(nil)
	if s.err != nil {
		s.cancel(s.err)
		<-s.done
		return s.err
	}
	if err := s.send(frame); err != nil {
		return err
	}
	_ = s.pw.Close()
	return s.result(nil)
}

func (s *stream) finish() error { return s.end(commitFrame(s.frames, s.bytes)) }

func (s *stream) abort() { _ = s.end([]byte{frameAbort}) }

// shardWriter is a ShardWriter over a stream: Close returns once the
// peer's ShardWriter.Close returned; Abort once the peer aborted and
// removed the file.
type shardWriter struct{ *stream }

var _ drive.ShardWriter = (*shardWriter)(nil)

func (w *shardWriter) Close() error { return w.finish() }
func (w *shardWriter) Abort()       { w.abort() }

// stagedFile is a StagedFile over a stream: Commit returns once the
// peer's StagedFile.Commit returned (durable there); Abort once the peer
// dropped the staged file.
type stagedFile struct{ *stream }

var _ drive.StagedFile = (*stagedFile)(nil)

func (f *stagedFile) Commit() error { return f.finish() }
func (f *stagedFile) Abort()        { f.abort() }
