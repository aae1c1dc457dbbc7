package peer

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"

	"github.com/cairnstore/cairn/objstore/drive"
)

// errSuperseded fails a shard stream whose file a newer Create (or a
// staged file's Commit) of the same name took over.
var errSuperseded = errors.New("a newer create or commit of the shard took it over")

// shardStates tracks the shard names that write streams are writing, so
// that a stream's writes, its removal of a cut file and a newer Create or
// Commit of the same name never interleave: each holds the name's
// shardState.mu, and a stream whose generation is no longer the name's
// stops touching the file.
type shardStates struct {
	mu sync.Mutex // protects m and each state's refs
	m  map[shardKey]*shardState
}

type shardKey struct {
	slot int
	name string
}

// shardState is one shard name's lock.
type shardState struct {
	mu   sync.Mutex // held across each local call on the name's file by a stream
	gen  uint64     // bumped by each Create and Commit of the name; guarded by mu
	refs int        // streams holding the state; guarded by shardStates.mu
}

// acquire returns the state of k, held until release.
func (ss *shardStates) acquire(k shardKey) *shardState {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	st := ss.m[k]
	if st == nil {
		st = &shardState{}
		ss.m[k] = st
	}
	st.refs++
	return st
}

func (ss *shardStates) release(k shardKey, st *shardState) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if st.refs--; st.refs == 0 {
		delete(ss.m, k)
	}
}

// frameBuf is a stream's buffer for frame data, from the server's pool.
type frameBuf struct {
	pool *bufPool
	b    *[]byte
}

func (f *frameBuf) get(n int) []byte {
	if f.b == nil || cap(*f.b) < n {
		f.release()
		f.b = f.pool.get(n)
	}
	return (*f.b)[:n]
}

func (f *frameBuf) release() {
	if f.b != nil {
		f.pool.put(f.b)
		f.b = nil
	}
}

// bodyReader returns a buffered reader of r's body from the server's
// pool; the caller puts it back.
func (s *Server) bodyReader(r *http.Request) *bufio.Reader {
	br, ok := s.readers.Get().(*bufio.Reader)
	if !ok {
		return bufio.NewReaderSize(r.Body, 64<<10)
	}
	br.Reset(r.Body)
	return br
}

// receiveShard runs a Create stream: it creates the file before reading
// the body (so that a refusal goes out before the client's 100-continue
// wait ends), applies the W frames in order, and at a C frame closes the
// file and answers 204 once its Close returned. An A frame, a cut or
// malformed stream, or a failed write or Close aborts the file and
// removes it, unless a newer Create or Commit of the name took it over,
// so that no half-written shard stays behind looking like a whole one.
func (s *Server) receiveShard(ctx context.Context, w http.ResponseWriter, r *http.Request, d drive.Drive, rt route) {
	k := shardKey{rt.slot, rt.name}
	st := s.shards.acquire(k)
	defer s.shards.release(k, st)

	st.mu.Lock()
	st.gen++
	gen := st.gen
	sw, err := d.Create(ctx, rt.name)
	st.mu.Unlock()
	if err != nil {
		writeError(w, err)
		return
	}
	buf := frameBuf{pool: &s.bufs}
	defer buf.release()
	br := s.bodyReader(r)
	defer s.readers.Put(br)
	commit, applyErr, err := readStream(br, buf.get, func(p []byte, off int64) error {
		st.mu.Lock()
		defer st.mu.Unlock()
		if st.gen != gen {
			return errSuperseded
		}
		_, err := sw.WriteAt(p, off)
		return err
	})
	err = errors.Join(applyErr, err)

	st.mu.Lock()
	defer st.mu.Unlock()
	if st.gen != gen {
		sw.Abort()
		writeError(w, errors.Join(err, errSuperseded))
		return
	}
	if err == nil && commit {
		if err = sw.Close(); err == nil {
			w.WriteHeader(http.StatusNoContent)
			return
		}
	} else {
		sw.Abort()
	}
	// The client's context is likely gone; the removal must happen anyway.
	if rerr := d.Remove(context.WithoutCancel(ctx), rt.name); rerr != nil {
		err = errors.Join(err, fmt.Errorf("removing the unfinished shard: %w", rerr))
	}
	if err == nil { // the client aborted
		w.WriteHeader(http.StatusNoContent)
		return
	}
	writeError(w, err)
}

// receiveStaged runs a Stage stream: W frames go to the staged file, a C
// frame commits it (answered once the Commit returned, durable), anything
// else aborts it, which leaves the shard as it was.
func (s *Server) receiveStaged(ctx context.Context, w http.ResponseWriter, r *http.Request, d drive.Drive, rt route) {
	sf, err := d.Stage(ctx, rt.name)
	if err != nil {
		writeError(w, err)
		return
	}
	buf := frameBuf{pool: &s.bufs}
	defer buf.release()
	br := s.bodyReader(r)
	defer s.readers.Put(br)
	commit, applyErr, err := readStream(br, buf.get, func(p []byte, off int64) error {
		_, err := sf.WriteAt(p, off)
		return err
	})
	err = errors.Join(applyErr, err)
	switch {
	case err != nil:
		sf.Abort()
		writeError(w, err)
	case !commit:
		sf.Abort()
		w.WriteHeader(http.StatusNoContent)
	default:
		k := shardKey{rt.slot, rt.name}
		st := s.shards.acquire(k)
		st.mu.Lock()
		st.gen++
		err := sf.Commit()
		st.mu.Unlock()
		s.shards.release(k, st)
		if err != nil {
			writeError(w, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}
}
