package peer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/cairnstore/cairn/objstore/drive"
)

// Server serves local drives to the peers' Drives. It is an http.Handler
// for the paths below /peer/v1/ (mount it there, or serve it alone); every
// request must carry a valid MAC (auth.go) before anything else is looked
// at. It is safe for concurrent use.
type Server struct {
	secret  []byte
	drives  map[int]drive.Drive
	now     func() time.Time
	bufs    bufPool
	readers sync.Pool // *bufio.Reader of stream bodies
	shards  shardStates
}

var _ http.Handler = (*Server)(nil)

// NewServer returns a Server of cfg's drives.
func NewServer(cfg ServerConfig) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Server{
		secret: bytes.Clone(cfg.Secret),
		drives: make(map[int]drive.Drive, len(cfg.Drives)),
		now:    cfg.Now,
		shards: shardStates{m: map[shardKey]*shardState{}},
	}
	if s.now == nil {
		s.now = time.Now
	}
	for _, d := range cfg.Drives {
		s.drives[d.Index()] = d
	}
	return s, nil
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := r.URL.EscapedPath()
	if !verify(s.secret, r.Method, path, r.URL.RawQuery, slotText(path), r.Header, s.now()) {
		writeErrorCode(w, codeAuth, http.StatusUnauthorized, authMessage)
		return
	}
	rt, err := parseRoute(r.Method, path, r.URL.RawQuery)
	if err != nil {
		writeError(w, err)
		return
	}
	d, ok := s.drives[rt.slot]
	if !ok {
		writeError(w, fmt.Errorf("%w: slot %d", errNoDrive, rt.slot))
		return
	}
	if err := s.serve(w, r, d, rt); err != nil {
		writeError(w, err)
	}
}

// serve runs one request. An error it returns is answered by ServeHTTP;
// it answers success itself.
func (s *Server) serve(w http.ResponseWriter, r *http.Request, d drive.Drive, rt route) error {
	ctx := r.Context()
	switch rt.op {
	case opWalk:
		s.walk(ctx, w, d)
		return nil
	case opOpen:
		f, err := d.Open(ctx, rt.name)
		if err != nil {
			return err
		}
		return noContent(w, f.Close())
	case opRead:
		f, err := d.Open(ctx, rt.name)
		if err != nil {
			return err
		}
		defer func() { _ = f.Close() }()
		return s.read(w, f, rt.off, rt.n)
	case opCreate:
		s.receiveShard(ctx, w, r, d, rt)
		return nil
	case opStage:
		s.receiveStaged(ctx, w, r, d, rt)
		return nil
	case opRemove:
		return noContent(w, d.Remove(ctx, rt.name))
	case opPacks:
		segs, err := d.Packs(ctx)
		if err != nil {
			return err
		}
		return writeJSON(w, packList{Segs: segs})
	case opPackOpen:
		f, err := d.OpenPack(ctx, rt.seg, rt.create)
		if err != nil {
			return err
		}
		return noContent(w, f.Close())
	case opPackRead:
		f, err := d.OpenPack(ctx, rt.seg, false)
		if err != nil {
			return err
		}
		defer func() { _ = f.Close() }()
		return s.read(w, f, rt.off, rt.n)
	case opPackSize:
		return packSize(ctx, w, d, rt.seg)
	case opPackWrite:
		return s.packWrite(ctx, w, r, d, rt)
	case opPackRemove:
		return noContent(w, d.RemovePack(ctx, rt.seg))
	case opSync:
		return noContent(w, d.Sync(ctx))
	case opSyncFiles:
		if r.ContentLength < 0 {
			return fmt.Errorf("%w: sync/files needs a Content-Length", errBadRequest)
		}
		names, err := readNameLines(r.Body)
		if err != nil {
			return err
		}
		return noContent(w, d.SyncFiles(ctx, names))
	case opSyncPacks:
		var l packList
		if err := readJSON(r, &l); err != nil {
			return err
		}
		if len(l.Segs) > maxSyncSegs {
			return fmt.Errorf("%w: more than %d segments", errTooLarge, maxSyncSegs)
		}
		return noContent(w, d.SyncPacks(ctx, l.Segs))
	}
	return fmt.Errorf("%w: no such operation", errBadRequest)
}

// noContent answers 204 when err is nil, and returns err.
func noContent(w http.ResponseWriter, err error) error {
	if err == nil {
		w.WriteHeader(http.StatusNoContent)
	}
	return err
}

func writeJSON(w http.ResponseWriter, v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	_, _ = w.Write(body)
	return nil
}

// readJSON decodes a request's JSON body of at most maxSyncBody bytes,
// whose length the request must give.
func readJSON(r *http.Request, v any) error {
	if r.ContentLength < 0 {
		return fmt.Errorf("%w: a JSON body needs a Content-Length", errBadRequest)
	}
	if r.ContentLength > maxSyncBody {
		return fmt.Errorf("%w: body of %d bytes", errTooLarge, r.ContentLength)
	}
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		return fmt.Errorf("%w: %w", errCut, err)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("%w: %v", errBadRequest, err)
	}
	return nil
}

// read answers n bytes of f at off, fewer with HeaderEOF set when f ends
// first.
func (s *Server) read(w http.ResponseWriter, f io.ReaderAt, off int64, n int) error {
	bp := s.bufs.get(n)
	defer s.bufs.put(bp)
	b := (*bp)[:n]
	got, err := f.ReadAt(b, off)
	eof := errors.Is(err, io.EOF)
	if err != nil && !eof {
		return err
	}
	h := w.Header()
	h.Set("Content-Type", "application/octet-stream")
	h.Set("Content-Length", strconv.Itoa(got))
	if eof {
		h.Set(HeaderEOF, "1")
	}
	_, _ = w.Write(b[:got])
	return nil
}

func packSize(ctx context.Context, w http.ResponseWriter, d drive.Drive, seg uint64) error {
	f, err := d.OpenPack(ctx, seg, false)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	size, err := f.Size()
	if err != nil {
		return err
	}
	return writeJSON(w, sizeAnswer{Size: size})
}

// packWrite writes the body, all of it or nothing, to an existing
// segment.
func (s *Server) packWrite(ctx context.Context, w http.ResponseWriter, r *http.Request, d drive.Drive, rt route) error {
	n := r.ContentLength
	if n < 1 || n > maxIO || rt.off > maxOffset-n {
		return fmt.Errorf("%w: pack write of %d bytes at %d", errBadRequest, n, rt.off)
	}
	bp := s.bufs.get(int(n))
	defer s.bufs.put(bp)
	b := (*bp)[:n]
	if _, err := io.ReadFull(r.Body, b); err != nil {
		return fmt.Errorf("%w: %w", errCut, err)
	}
	f, err := d.OpenPack(ctx, rt.seg, false)
	if err != nil {
		return err
	}
	if _, err := f.WriteAt(b, rt.off); err != nil {
		_ = f.Close()
		return err
	}
	return noContent(w, f.Close())
}

// walkFlushEvery is how often a walk's buffered lines are sent at the
// latest, so that a slow walk never looks stalled to the client.
const walkFlushEvery = time.Second

// walk streams the drive's shard names as lines (lines.go). Once the
// first line is out the status is sent, so a failure is an .err line.
func (s *Server) walk(ctx context.Context, w http.ResponseWriter, d drive.Drive) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	rc := http.NewResponseController(w)
	var count uint64
	var werr error // the client stopped reading
	line := make([]byte, 0, 512)
	flushed := time.Now()
	err := d.Walk(ctx, func(name string) error {
		count++
		line = nameLine(line[:0], name)
		if _, werr = w.Write(line); werr != nil {
			return werr
		}
		if time.Since(flushed) >= walkFlushEvery {
			_ = rc.Flush()
			flushed = time.Now()
		}
		return nil
	})
	switch {
	case werr != nil:
	case err != nil:
		code, _ := errorCode(err)
		_, _ = w.Write(errLine(code, err.Error()))
	default:
		_, _ = w.Write(endLine(count))
	}
}

// bufClasses are the sizes of the buffers bufPool hands out.
var bufClasses = [...]int{64 << 10, 1 << 20, maxIO}

// bufPool hands out buffers of bufClasses, so that reads, pack writes and
// stream frames of any size up to maxIO reuse memory.
type bufPool struct {
	classes [len(bufClasses)]sync.Pool
}

// get returns a buffer of at least n (<= maxIO) bytes.
func (p *bufPool) get(n int) *[]byte {
	for i, c := range bufClasses {
		if n <= c {
			if b, ok := p.classes[i].Get().(*[]byte); ok {
				return b
			}
			b := make([]byte, c)
			return &b
		}
	}
	b := make([]byte, n)
	return &b
}

func (p *bufPool) put(b *[]byte) {
	for i, c := range bufClasses {
		if cap(*b) == c {
			p.classes[i].Put(b)
			return
		}
	}
}
