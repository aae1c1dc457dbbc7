package peer

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"strconv"
	"sync/atomic"

	"github.com/cairnstore/cairn/objstore/drive"
)

// HeaderEOF, on a read's answer, says the peer's ReadAt reached the end
// of the file (it returned io.EOF).
const HeaderEOF = "Cairn-Peer-Eof"

// reader reads a shard file or a pack segment by ranged GETs, each run in
// ctx (the opener's context for a shard, without its cancellation for a
// segment) and bounded by the timeout. It holds nothing open on the peer.
type reader struct {
	d      *Drive
	ctx    context.Context
	sub    string
	closed atomic.Bool
}

var _ drive.ShardReader = (*reader)(nil)

// ReadAt implements io.ReaderAt: reads of more than maxIO bytes are split,
// and a read that reaches the end of the file returns io.EOF with the
// bytes before it.
func (r *reader) ReadAt(p []byte, off int64) (int, error) {
	if r.closed.Load() {
		return 0, fs.ErrClosed
	}
	if off < 0 {
		return 0, fmt.Errorf("%s: read at negative offset %d", r.d.desc, off)
	}
	n := 0
	for n < len(p) {
		at := off + int64(n)
		if at >= maxOffset {
			return n, io.EOF // no file is that large: writes past it are refused
		}
		chunk := p[n : n+int(min(int64(len(p)-n), maxIO, maxOffset-at))]
		got, eof, err := r.readOnce(chunk, at)
		n += got
		if err != nil {
			return n, err
		}
		if eof {
			if n < len(p) {
				return n, io.EOF
			}
			break
		}
	}
	return n, nil
}

// readOnce is one ranged GET into p. eof reports that the peer's read
// reached the end of the file; without it, the answer fills p.
func (r *reader) readOnce(p []byte, off int64) (n int, eof bool, err error) {
	if err := r.ctx.Err(); err != nil {
		return 0, false, err
	}
	ctx, cancel := r.d.withTimeout(r.ctx)
	defer cancel()
	q := url.Values{"off": {strconv.FormatInt(off, 10)}, "len": {strconv.Itoa(len(p))}}
	req, err := r.d.newRequest(ctx, http.MethodGet, r.sub, q, nil)
	if err != nil {
		return 0, false, err
	}
	resp, err := r.d.do(ctx, req)
	if err != nil {
		return 0, false, err
	}
	defer func() { _ = resp.Body.Close() }()
	eof = resp.Header.Get(HeaderEOF) == "1"
	if resp.ContentLength < 0 || resp.ContentLength > int64(len(p)) || (!eof && resp.ContentLength != int64(len(p))) {
		return 0, false, r.d.badAnswer("read of %d bytes answered with %d (end of file: %v)", len(p), resp.ContentLength, eof)
	}
	n, err = io.ReadFull(resp.Body, p[:resp.ContentLength])
	r.d.stats.received.Add(uint64(n))
	if err != nil {
		return n, false, r.d.transportErr(ctx, err)
	}
	return n, eof, nil
}

// Close implements io.Closer; the peer holds nothing to release.
func (r *reader) Close() error {
	if r.closed.Swap(true) {
		return fs.ErrClosed
	}
	return nil
}

// packFile is a PackFile on a peer: ReadAt is a ranged GET, WriteAt a
// ranged PUT of at most maxIO bytes each, Size a GET of the size. The
// peer opens the segment for each call and never creates it there.
type packFile struct {
	reader
}

var _ drive.PackFile = (*packFile)(nil)

// WriteAt implements io.WriterAt. A write of more than maxIO bytes is
// split into several PUTs, so that only its pieces are atomic.
func (p *packFile) WriteAt(b []byte, off int64) (int, error) {
	if p.closed.Load() {
		return 0, fs.ErrClosed
	}
	if off < 0 {
		return 0, fmt.Errorf("%s: write at negative offset %d", p.d.desc, off)
	}
	n := 0
	for n < len(b) {
		at := off + int64(n)
		chunk := b[n:min(len(b), n+maxIO)]
		if at > maxOffset-int64(len(chunk)) {
			return n, fmt.Errorf("%s: write of %d bytes at %d is past the largest file", p.d.desc, len(chunk), at)
		}
		q := url.Values{"off": {strconv.FormatInt(at, 10)}}
		if err := p.d.call(p.ctx, http.MethodPut, p.sub, q, chunk, nil); err != nil {
			return n, err
		}
		n += len(chunk)
	}
	return n, nil
}

// sizeAnswer is the answer to GET packs/{seg}?op=size.
type sizeAnswer struct {
	Size int64 `json:"size"`
}

// Size implements drive.PackFile.
func (p *packFile) Size() (int64, error) {
	if p.closed.Load() {
		return 0, fs.ErrClosed
	}
	var out sizeAnswer
	if err := p.d.call(p.ctx, http.MethodGet, p.sub, url.Values{"op": {"size"}}, nil, &out); err != nil {
		return 0, err
	}
	if out.Size < 0 {
		return 0, p.d.badAnswer("size %d", out.Size)
	}
	return out.Size, nil
}
