package erasure

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
)

// sinkQueueDepth is how many chunks may wait for each sink. With one block
// being filled and one being written, it bounds a Writer's memory to about
// sinkQueueDepth+2 block buffers.
const sinkQueueDepth = 2

// Writer streams an object's bytes into k+m shard files. It is not safe for
// concurrent use. Close must be called, even after an error, to stop its
// goroutines (cancelling the Writer's context also stops them).
type Writer struct {
	c      *Codec
	ctx    context.Context // from NewWriter: the write is one I/O call spread over methods
	hdr    Header          // Index and Size are set per use
	sinks  []io.WriterAt
	hdrLen int64
	queues []chan sinkJob // nil for a sink unavailable from the start
	wg     sync.WaitGroup
	obs    []chan obsJob // one per HashWith or TeeBlocks, each with its goroutine
	obsWG  sync.WaitGroup
	hashed bool    // HashWith was called
	inline bool    // chunks are written on the caller's goroutine (NewInlineWriter)
	budget *Budget // nil: buffers are not counted (UseBudget)

	mu     sync.Mutex // protects the following
	failed []bool
	errs   []error

	// Owned by the caller's goroutine.
	buf      *[]byte // block being filled, nil if none (never from the budget)
	fill     int     // object bytes in buf
	block    int64   // index of the block being filled
	size     int64
	err      error // sticky
	closed   bool
	closeErr error
}

// sinkJob is one WriteAt for a sink's worker.
type sinkJob struct {
	off  int64
	data []byte
	seal bool      // compute data's checksum into its first 4 bytes first
	buf  *inflight // released after the job, if not nil
}

// obsJob is one block's object bytes for an observer (HashWith, TeeBlocks).
type obsJob struct {
	block int64
	parts [][]byte
	buf   *inflight
}

// inflight is a block buffer shared by the sink workers writing it.
type inflight struct {
	c      *Codec
	buf    *[]byte
	budget *Budget // given cost back once the buffer is free, if not nil
	cost   int64
	refs   atomic.Int32
}

func (f *inflight) release() {
	if f.refs.Add(-1) == 0 {
		f.c.putBuf(f.buf)
		if f.budget != nil {
			f.budget.release(f.cost)
		}
	}
}

// NewWriter starts writing an object to sinks, one per shard (k+m; nil for a
// shard unavailable from the start). hdr supplies DataID, Bucket and Key; the
// codec sets K, M and BlockSize, and Index is set per shard. Each header is
// written at offset 0 first with size 0 and rewritten by Close with the final
// size.
//
// A sink whose WriteAt fails is marked failed and skipped from then on. The
// write goes on while at least WriteQuorum(k, m) sinks are healthy; below
// that Write, ReadFrom and Close fail wrapping ErrWriteQuorum. If ctx is
// done, they return ctx.Err().
func (c *Codec) NewWriter(ctx context.Context, hdr Header, sinks []io.WriterAt) (*Writer, error) {
	return c.newWriter(ctx, hdr, sinks, false)
}

// NewInlineWriter is NewWriter for sinks that do not block (in-memory
// records of a small object): every chunk and header is written on the
// caller's goroutine as it is ready, so a small write starts no goroutine
// and hands nothing over between threads.
func (c *Codec) NewInlineWriter(ctx context.Context, hdr Header, sinks []io.WriterAt) (*Writer, error) {
	return c.newWriter(ctx, hdr, sinks, true)
}

func (c *Codec) newWriter(ctx context.Context, hdr Header, sinks []io.WriterAt, inline bool) (*Writer, error) {
	n := c.k + c.m
	if len(sinks) != n {
		return nil, fmt.Errorf("%w: %d sinks given, want %d", ErrGeometry, len(sinks), n)
	}
	hdr.K, hdr.M, hdr.BlockSize, hdr.Index, hdr.Size = c.k, c.m, c.blockSize, 0, 0
	if err := hdr.validate(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	w := &Writer{
		c: c, ctx: ctx, hdr: hdr, sinks: sinks,
		hdrLen: int64(hdr.EncodedLen()),
		queues: make([]chan sinkJob, n),
		failed: make([]bool, n),
		errs:   make([]error, n),
		inline: inline,
	}
	for i, s := range sinks {
		if s == nil {
			w.failed[i] = true
			continue
		}
		if inline {
			continue
		}
		w.queues[i] = make(chan sinkJob, sinkQueueDepth)
		w.wg.Add(1)
		go w.run(i, w.queues[i])
	}
	err := w.dispatch(func(i int) sinkJob {
		b, _ := w.headerBytes(i, 0) // validated above
		return sinkJob{data: b}
	}, nil, 0)
	if err != nil {
		w.err = err
		_ = w.Close()
		return nil, err
	}
	return w, nil
}

// UseBudget makes the Writer take each full block's buffer from b before
// handing it to the sinks, waiting while b is spent (Write, ReadFrom and
// Close then return ctx.Err() if the Writer's context ends first), and
// give it back once the block is written. The one buffer a Writer is
// filling is outside b. Call it before the first Write; later calls are
// ignored.
func (w *Writer) UseBudget(b *Budget) {
	if w.size > 0 || w.buf != nil {
		return
	}
	w.budget = b
}

// HashWith makes the Writer pass every object byte, in order, to h (an
// ETag's MD5, say) on a goroutine of its own, a block at a time as blocks
// are encoded, so hashing overlaps reading the body and writing the
// shards. h has seen every byte once Close returns. Call it before the
// first Write; later calls are ignored.
func (w *Writer) HashWith(h io.Writer) {
	if w.hashed {
		return
	}
	w.hashed = true
	w.observe(func(_ int64, parts [][]byte) {
		for _, p := range parts {
			_, _ = h.Write(p)
		}
	})
}

// TeeBlocks makes the Writer pass each block's object bytes (as
// consecutive parts, in block order) to fn once it is encoded, on a
// goroutine of its own. fn must not keep parts after it returns. fn has
// seen every block once Close returns. Call it before the first Write.
func (w *Writer) TeeBlocks(fn func(block int64, parts [][]byte)) {
	w.observe(fn)
}

// observe starts a goroutine that passes every block to fn; nothing once
// writing has begun.
func (w *Writer) observe(fn func(block int64, parts [][]byte)) {
	if w.size > 0 {
		return
	}
	q := make(chan obsJob, sinkQueueDepth)
	w.obs = append(w.obs, q)
	w.obsWG.Add(1)
	go func() {
		defer w.obsWG.Done()
		for {
			select {
			case j, ok := <-q:
				if !ok {
					return
				}
				fn(j.block, j.parts)
				j.buf.release()
			case <-w.ctx.Done():
				return
			}
		}
	}()
}

// headerBytes encodes shard i's header for an object of size bytes.
func (w *Writer) headerBytes(i int, size int64) ([]byte, error) {
	h := w.hdr
	h.Index, h.Size = i, size
	return h.MarshalBinary()
}

// run is sink i's worker: it writes the chunks queued for it.
func (w *Writer) run(i int, q <-chan sinkJob) {
	defer w.wg.Done()
	for {
		select {
		case j, ok := <-q:
			if !ok {
				return
			}
			w.exec(i, j)
		case <-w.ctx.Done():
			return
		}
	}
}

// exec writes one queued chunk to sink i.
func (w *Writer) exec(i int, j sinkJob) {
	if !w.isFailed(i) {
		if j.seal {
			sealChunk(j.data)
		}
		if _, err := w.sinks[i].WriteAt(j.data, j.off); err != nil {
			w.fail(i, err)
		}
	}
	if j.buf != nil {
		j.buf.release()
	}
}

func (w *Writer) isFailed(i int) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.failed[i]
}

func (w *Writer) fail(i int, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.failed[i] = true
	w.errs[i] = fmt.Errorf("shard %d: %w", i, err)
}

// healthy returns the shards not failed so far, or an error wrapping
// ErrWriteQuorum if they are too few.
func (w *Writer) healthy() ([]int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var ok []int
	for i, f := range w.failed {
		if !f {
			ok = append(ok, i)
		}
	}
	if q := WriteQuorum(w.c.k, w.c.m); len(ok) < q {
		err := fmt.Errorf("%w: %d of %d shards healthy, need %d", ErrWriteQuorum, len(ok), len(w.failed), q)
		if cause := errors.Join(w.errs...); cause != nil {
			err = fmt.Errorf("%w: %w", err, cause)
		}
		return ok, err
	}
	return ok, nil
}

// dispatch queues mk(i) for every healthy sink i. f's references are set
// to the number of jobs plus extra. On error the references of the jobs
// not queued and the extra ones are dropped, so that f is freed once the
// queued jobs are done.
func (w *Writer) dispatch(mk func(i int) sinkJob, f *inflight, extra int) error {
	drop := func(n int) {
		for range n {
			f.release()
		}
	}
	ok, err := w.healthy()
	if err != nil {
		if f != nil {
			f.refs.Store(1)
			f.release()
		}
		return err
	}
	if f != nil {
		f.refs.Store(int32(len(ok) + extra))
	}
	if w.inline {
		for _, i := range ok {
			w.exec(i, mk(i))
		}
		return nil
	}
	for n, i := range ok {
		select {
		case w.queues[i] <- mk(i):
		case <-w.ctx.Done():
			if f != nil {
				drop(len(ok) - n + extra)
			}
			return w.ctx.Err()
		}
	}
	return nil
}

// usable returns the error that stops further writes, if any.
func (w *Writer) usable() error {
	switch {
	case w.closed:
		return errors.New("erasure: write to closed Writer")
	case w.err != nil:
		return w.err
	}
	if err := w.ctx.Err(); err != nil {
		w.err = err
		return err
	}
	return nil
}

// space returns where the next object bytes of the current block go: the
// rest of the current data shard. Full blocks are laid out in place. The
// buffer being filled is the Writer's own, outside the budget: a body that
// arrives slowly holds that one buffer and never the budget, so stalled
// uploads cannot stop the others (flush takes the budget).
func (w *Writer) space() ([]byte, error) {
	if w.buf == nil {
		w.buf = w.c.getBuf()
	}
	c := w.c
	j, pos := w.fill/c.shardSize, w.fill%c.shardSize
	avail := min(c.shardSize-pos, c.blockSize-w.fill)
	off := j*c.stride + checksumLen + pos
	return (*w.buf)[off : off+avail], nil
}

// dropBuf frees the block being filled, when it will not be written.
func (w *Writer) dropBuf() {
	if w.buf == nil {
		return
	}
	w.c.putBuf(w.buf)
	w.buf, w.fill = nil, 0
}

// advance accounts for n bytes copied into space() and ships a full block.
func (w *Writer) advance(n int) error {
	w.fill += n
	w.size += int64(n)
	if w.fill < w.c.blockSize {
		return nil
	}
	if err := w.flush(); err != nil {
		w.err = err
		return err
	}
	return nil
}

// Write implements io.Writer.
func (w *Writer) Write(p []byte) (int, error) {
	if err := w.usable(); err != nil {
		return 0, err
	}
	n := 0
	for n < len(p) {
		sp, err := w.space()
		if err != nil {
			return n, err
		}
		c := copy(sp, p[n:])
		n += c
		if err := w.advance(c); err != nil {
			return n, err
		}
	}
	return n, nil
}

// ReadFrom implements io.ReaderFrom, reading straight into block buffers.
// Errors from r are returned as they are and do not spoil the Writer.
func (w *Writer) ReadFrom(r io.Reader) (int64, error) {
	var total int64
	for {
		if err := w.usable(); err != nil {
			return total, err
		}
		sp, err := w.space()
		if err != nil {
			return total, err
		}
		n, rerr := r.Read(sp)
		total += int64(n)
		if err := w.advance(n); err != nil {
			return total, err
		}
		switch {
		case errors.Is(rerr, io.EOF):
			return total, nil
		case rerr != nil:
			return total, rerr
		}
	}
}

// flush encodes the current block and queues its chunks. The block's
// buffer is taken from the budget first, if there is one: waiting there is
// the back-pressure that bounds what all Writers hand to their sinks.
func (w *Writer) flush() error {
	var cost int64
	if w.budget != nil {
		var err error
		if cost, err = w.budget.acquire(w.ctx, int64(w.c.bufLen())); err != nil {
			return err
		}
	}
	c := w.c
	buf := *w.buf
	l := w.fill
	ss := ceilDiv(l, c.k)
	if ss != c.shardSize {
		c.relayout(buf, l, ss)
	}
	shards := make([][]byte, c.k+c.m)
	for i := range shards {
		shards[i] = c.chunk(buf, i, ss)[checksumLen:]
		if i < c.k { // zero the padding past the object bytes
			clear(shards[i][max(0, min(ss, l-i*ss)):])
		}
	}
	if c.enc != nil {
		if err := c.enc.Encode(shards); err != nil {
			if w.budget != nil {
				w.budget.release(cost)
			}
			return fmt.Errorf("erasure: encode block %d: %w", w.block, err)
		}
	}
	off := w.hdrLen + w.block*int64(c.stride) // every earlier block was full
	f := &inflight{c: c, buf: w.buf, budget: w.budget, cost: cost}
	block := w.block
	w.buf, w.fill = nil, 0
	w.block++
	extra := len(w.obs)
	err := w.dispatch(func(i int) sinkJob {
		return sinkJob{off: off, data: c.chunk(buf, i, ss), seal: true, buf: f}
	}, f, extra)
	if err != nil || len(w.obs) == 0 {
		return err
	}
	parts := make([][]byte, 0, c.k)
	for i := 0; i < c.k && i*ss < l; i++ {
		parts = append(parts, shards[i][:min(ss, l-i*ss)])
	}
	for n, q := range w.obs {
		select {
		case q <- obsJob{block: block, parts: parts, buf: f}:
		case <-w.ctx.Done():
			for range len(w.obs) - n {
				f.release()
			}
			return w.ctx.Err()
		}
	}
	return nil
}

// relayout moves the l object bytes of a short last block, written with the
// full-block shard size, to shards of ss bytes.
func (c *Codec) relayout(buf []byte, l, ss int) {
	tmp := make([]byte, 0, l)
	for j := 0; len(tmp) < l; j++ {
		s := c.chunk(buf, j, c.shardSize)[checksumLen:]
		tmp = append(tmp, s[:min(len(s), l-len(tmp))]...)
	}
	for j := 0; j*ss < l; j++ {
		copy(c.chunk(buf, j, ss)[checksumLen:], tmp[j*ss:])
	}
}

// Close writes the last partial block, waits for all chunks to be written and
// rewrites the headers with the final size. It does not sync. It returns an
// error wrapping ErrWriteQuorum if too few shards were written, or ctx.Err()
// if the context was cancelled. Later calls return the same result.
func (w *Writer) Close() error {
	if w.closed {
		return w.closeErr
	}
	err := w.err
	if err == nil {
		err = w.ctx.Err()
	}
	if err == nil && w.fill > 0 {
		err = w.flush()
	}
	w.dropBuf() // a block not flushed: after an error, or with nothing in it
	w.closed = true
	for _, q := range w.queues {
		if q != nil {
			close(q)
		}
	}
	for _, q := range w.obs {
		close(q)
	}
	w.obsWG.Wait()
	w.wg.Wait()
	w.drainQueues()
	if err == nil {
		err = w.ctx.Err()
	}
	if err == nil {
		err = w.finish()
	}
	w.closeErr = err
	return err
}

// drainQueues frees the buffers of jobs left in the (closed) queues by
// goroutines that stopped early, their context done.
func (w *Writer) drainQueues() {
	for _, q := range w.queues {
		if q == nil {
			continue // a sink unavailable from the start, or an inline Writer
		}
		for j := range q {
			if j.buf != nil {
				j.buf.release()
			}
		}
	}
	for _, q := range w.obs {
		for j := range q {
			j.buf.release()
		}
	}
}

// finish rewrites the headers of the healthy shards with the final size.
func (w *Writer) finish() error {
	ok, err := w.healthy()
	if err != nil {
		return err
	}
	hdrs := make([][]byte, len(w.sinks))
	for _, i := range ok {
		if hdrs[i], err = w.headerBytes(i, w.size); err != nil {
			return err
		}
	}
	forEach(ok, !w.inline, func(i int) {
		if _, err := w.sinks[i].WriteAt(hdrs[i], 0); err != nil {
			w.fail(i, err)
		}
	})
	_, err = w.healthy()
	return err
}

// Size returns the number of object bytes accepted so far.
func (w *Writer) Size() int64 { return w.size }

// Failed returns, sorted, the shards whose sink failed or was nil.
func (w *Writer) Failed() []int {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []int
	for i, f := range w.failed {
		if f {
			out = append(out, i)
		}
	}
	return out
}
