package objstore

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cairnstore/cairn/objstore/meta"
)

// maxPendingPuts bounds the asynchronous puts in flight: PutAsync blocks
// when that many wait for their commit, so memory and queued work stay
// bounded however fast a writer is.
const maxPendingPuts = 512

// Pending is an asynchronous put on its way to the index.
type Pending struct {
	set         *pendingSet
	bucket, key string
	// prev is the earlier pending put of the same key, committed first;
	// cleared once this one is done, so that a key's done puts are not
	// kept in a chain behind its newest.
	prev atomic.Pointer[Pending]
	seq  uint64 // order of registration in the set, for tests
	// inBurst: its commit is queued by its burst's writer, in order
	// (FromBytes); only burst writers, one at a time, touch it.
	inBurst bool
	done    chan struct{}
	info    ObjectInfo
	err     error
	// onWait is PutOptions.OnWait, called once (waited) when something
	// first waits for the put.
	onWait func()
	waited sync.Once
	// patched is where a patch's commit leaves its plan, for Rebase;
	// nil for other puts.
	patched **patchPlan
}

// kick tells p, and the puts of its key it waits for, that something
// waits for them (PutOptions.OnWait).
func (p *Pending) kick() {
	for q := p; q != nil; q = q.prev.Load() {
		select {
		case <-q.done:
			return // and so are the ones before it
		default:
		}
		q.waited.Do(func() {
			if f := q.onWait; f != nil {
				go f()
			}
		})
	}
}

// Done is closed once the put has committed or failed.
func (p *Pending) Done() <-chan struct{} { return p.done }

// Wait waits for the put's commit and returns its outcome. When ctx ends
// first it returns ctx's error; the put goes on regardless.
func (p *Pending) Wait(ctx context.Context) (ObjectInfo, error) {
	select {
	case <-p.done:
		return p.info, p.err
	default:
		p.kick()
		if p.set != nil {
			p.set.hurry()
		}
	}
	select {
	case <-p.done:
		return p.info, p.err
	case <-ctx.Done():
		return ObjectInfo{}, ctx.Err()
	}
}

// pendingSet tracks the asynchronous puts not yet committed, so that every
// operation touching their keys waits for them first (the store reads its
// own writes) and so that their number stays bounded.
type pendingSet struct {
	n     atomic.Int32 // entries in byKey, read without the lock on the fast path
	mu    sync.Mutex   // protects byKey and seq
	byKey map[string]*Pending
	seq   uint64
	slots chan struct{}
	kick  chan struct{} // see hurry
	burst launcher      // starts the operations' goroutines

	runMu    sync.RWMutex // new work takes it shared to check draining and join running
	draining bool
	running  sync.WaitGroup // asynchronous operations in flight
}

// start joins an asynchronous operation to the running ones, unless the
// store is closing.
func (ps *pendingSet) start() error {
	ps.runMu.RLock()
	defer ps.runMu.RUnlock()
	if ps.draining {
		return ErrClosed
	}
	ps.running.Add(1)
	return nil
}

// drain refuses new asynchronous operations and waits for those running.
func (ps *pendingSet) drain() {
	ps.runMu.Lock()
	ps.draining = true
	ps.runMu.Unlock()
	ps.mu.Lock()
	for _, p := range ps.byKey {
		p.kick()
	}
	ps.mu.Unlock()
	ps.burst.fire()
	ps.running.Wait()
}

func pendingKey(bucket, key string) string { return bucket + "\x00" + key }

func (ps *pendingSet) init() {
	ps.byKey = map[string]*Pending{}
	ps.slots = make(chan struct{}, maxPendingPuts)
	ps.kick = make(chan struct{}, 1)
	ps.burst.delay = burstDelay
}

// hurry tells the committer that somebody waits for a pending operation,
// so that a batch of background commits stops lingering, and starts the
// operations still waiting for their burst.
func (ps *pendingSet) hurry() {
	ps.burst.fire()
	select {
	case ps.kick <- struct{}{}:
	default:
	}
}

// add registers p as the newest pending put of its key.
func (ps *pendingSet) add(p *Pending) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	k := pendingKey(p.bucket, p.key)
	p.prev.Store(ps.byKey[k])
	ps.seq++
	p.seq = ps.seq
	ps.byKey[k] = p
	ps.n.Store(int32(len(ps.byKey)))
}

// remove forgets p once committed, unless a newer put of its key came.
func (ps *pendingSet) remove(p *Pending) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	k := pendingKey(p.bucket, p.key)
	if ps.byKey[k] == p {
		delete(ps.byKey, k)
	}
	ps.n.Store(int32(len(ps.byKey)))
}

// waitKey waits for the pending puts of bucket/key.
func (ps *pendingSet) waitKey(ctx context.Context, bucket, key string) error {
	if ps.n.Load() == 0 {
		return nil
	}
	ps.mu.Lock()
	p := ps.byKey[pendingKey(bucket, key)]
	ps.mu.Unlock()
	if p == nil {
		return nil
	}
	ps.hurry()
	_, err := p.Wait(ctx)
	if ctx.Err() != nil {
		return err
	}
	return nil
}

// waitPrefix waits for the pending puts of every key of bucket under
// prefix ("" for all of them).
func (ps *pendingSet) waitPrefix(ctx context.Context, bucket, prefix string) error {
	if ps.n.Load() == 0 {
		return nil
	}
	ps.mu.Lock()
	var wait []*Pending
	for _, p := range ps.byKey {
		if p.bucket == bucket && strings.HasPrefix(p.key, prefix) {
			wait = append(wait, p)
		}
	}
	ps.mu.Unlock()
	if len(wait) > 0 {
		ps.hurry()
	}
	for _, p := range wait {
		p.kick()
		select {
		case <-p.done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// Source is the body of an asynchronous put, and says when its bytes are
// written: build it with FromReader, FromFunc or FromBytes.
type Source struct {
	kind sourceKind
	r    io.Reader
	size int64
	open func(context.Context) (io.Reader, int64, error)
	data []byte
}

type sourceKind int

const (
	sourceReader sourceKind = iota + 1 // written before PutAsync returns
	sourceFunc                         // opened and written in the background
	sourceBytes                        // in memory, written in the background (in bursts when small)
)

// FromReader is a body of size bytes that PutAsync writes before it
// returns (not yet flushed): errors found while writing come at once, and
// only the commit is left to the background.
func FromReader(r io.Reader, size int64) Source {
	return Source{kind: sourceReader, r: r, size: size}
}

// FromFunc is a body that open gives, with its size (or -1), on the
// background goroutine, which calls it first; open may wait until the
// body is final (the key is pending, and its readers wait, from the call
// on). The caller must leave what open returns alone until Pending.Done.
// Every error, from a missing bucket to a full drive, comes from
// Pending.Wait. The mount uses it so that close(2) costs what it costs on
// a local filesystem, with the bytes on their way to the drives as dirty
// pages are there.
func FromFunc(open func(context.Context) (io.Reader, int64, error)) Source {
	return Source{kind: sourceFunc, open: open}
}

// FromBytes is a body already in memory, which the store keeps until the
// put is done (the caller must leave data alone), written in the
// background as FromFunc's. A body small enough to be packed is written
// in its burst, on the burst's goroutine, after the smaller puts queued
// before it (see launcher): many small files closed on the mount then
// cost no goroutine each.
func FromBytes(data []byte) Source { return Source{kind: sourceBytes, data: data} }

// PutAsync writes src like Put but does not wait for the commit, so a
// writer that does not need durability at once (a file closed on the
// mount) does not pay a flush per object, and concurrent asynchronous
// puts share their flushes. When the bytes are written depends on src
// (FromReader: before PutAsync returns; FromFunc and FromBytes: in the
// background, and then the put takes no conditions). The data is flushed
// before the index names it, as for Put, so a crash loses a pending put
// whole and never half. Until the commit completes, every store operation
// on the key (Head, Open, Delete, Copy, Rename, and List of a prefix
// holding it) waits for it, so readers of the store see their writes in
// order, and asynchronous operations on one key commit in the order they
// were made. Errors found before PutAsync returns are returned; the
// others come from Pending.Wait. At most maxPendingPuts are in flight;
// more block.
func (s *Store) PutAsync(ctx context.Context, bucket, key string, src Source, opt PutOptions) (*Pending, error) {
	switch src.kind {
	case sourceReader:
		return s.putAsyncNow(ctx, bucket, key, src.r, src.size, opt)
	case sourceFunc:
		return s.putBackground(ctx, bucket, key, src.open, opt)
	case sourceBytes:
		return s.putBackgroundBytes(ctx, bucket, key, src.data, opt)
	}
	return nil, fmt.Errorf("%w: an asynchronous put needs a Source from FromReader, FromFunc or FromBytes", ErrInvalidArgument)
}

// putAsyncNow is PutAsync of a FromReader source.
func (s *Store) putAsyncNow(ctx context.Context, bucket, key string, body io.Reader, size int64, opt PutOptions) (*Pending, error) {
	if err := s.acquireAsync(ctx); err != nil {
		return nil, err
	}
	if opt.IfMatch != "" || opt.IfNoneMatch != "" {
		if err := s.pending.waitKey(ctx, bucket, key); err != nil {
			s.releaseAsync()
			return nil, err
		}
	}
	if err := s.precheckWrite(ctx, bucket, key, opt.IfMatch, opt.IfNoneMatch); err != nil {
		s.releaseAsync()
		return nil, err
	}
	d, sum, err := s.writeData(ctx, bucket, key, body, size, opt.ContentMD5, opt.ETag != nil)
	if err != nil {
		s.releaseAsync()
		return nil, err
	}
	v, fn := s.putVersion(bucket, key, d, sum, opt)
	return s.startAsync(ctx, bucket, key, d, func(tx meta.Tx) (ObjectInfo, error) {
		return toInfo(bucket, key, v, true), fn(tx)
	}), nil
}

// putBackground is PutAsync of a FromFunc source.
func (s *Store) putBackground(ctx context.Context, bucket, key string, src func(context.Context) (io.Reader, int64, error), opt PutOptions) (*Pending, error) {
	if err := s.checkBackgroundPut(ctx, key, opt); err != nil {
		return nil, err
	}
	return s.runAsync(ctx, bucket, key, func(ctx context.Context) (ObjectInfo, error) {
		body, size, err := src(ctx)
		if err != nil {
			return ObjectInfo{}, err
		}
		return s.writeAndCommit(ctx, bucket, key, body, size, opt)
	}), nil
}

// putBackgroundBytes is PutAsync of a FromBytes source.
func (s *Store) putBackgroundBytes(ctx context.Context, bucket, key string, data []byte, opt PutOptions) (*Pending, error) {
	if int64(len(data)) > s.opt.PackMaxSize {
		return s.putBackground(ctx, bucket, key, func(context.Context) (io.Reader, int64, error) {
			return bytes.NewReader(data), int64(len(data)), nil
		}, opt)
	}
	if err := s.checkBackgroundPut(ctx, key, opt); err != nil {
		return nil, err
	}
	cctx := withBackground(context.WithoutCancel(ctx))
	write := func(ctx context.Context) (func() (ObjectInfo, error), error) {
		return s.writeAndQueue(ctx, bucket, key, bytes.NewReader(data), int64(len(data)), opt)
	}
	var p *Pending
	// Registered and queued in one step: puts of a key reach the burst
	// writer in the order their Pendings were chained.
	register := func() { p = s.newPending(bucket, key, true, nil) }
	s.pending.burst.addWrite(register, func() func() {
		if prev := p.prev.Load(); prev != nil && !prev.inBurst {
			select {
			case <-prev.done:
			default:
				// Its commit must come first and may be far off (a
				// large put): wait for it apart from the burst.
				p.inBurst = false // puts of the key after it wait too
				prev.kick()
				go func() {
					<-prev.done
					s.finishWrite(cctx, p, write)()
				}()
				return nil
			}
		}
		return s.finishWrite(cctx, p, write)
	})
	return p, nil
}

// finishWrite runs the write of a burst's small put and returns what
// waits for its commit and completes it.
func (s *Store) finishWrite(ctx context.Context, p *Pending, write func(context.Context) (func() (ObjectInfo, error), error)) func() {
	wait, err := write(ctx)
	if err != nil {
		return func() { s.finishAsync(p, ObjectInfo{}, err) }
	}
	return func() {
		info, err := wait()
		s.finishAsync(p, info, err)
	}
}

// checkBackgroundPut checks a background put's arguments and takes its slot.
func (s *Store) checkBackgroundPut(ctx context.Context, key string, opt PutOptions) error {
	if err := s.checkOpen(); err != nil {
		return err
	}
	if err := ValidateKey(key); err != nil {
		return err
	}
	if opt.IfMatch != "" || opt.IfNoneMatch != "" {
		return fmt.Errorf("%w: a background put (FromFunc, FromBytes) takes no conditions", ErrInvalidArgument)
	}
	return s.acquireAsync(ctx)
}

// SetMetaAsync gives bucket/key a new version with the same bytes and the
// given content type and metadata (as a copy onto itself with the REPLACE
// directive), without waiting for the commit; see PutAsync. When ifMatch
// is set the current version must have that ETag. A missing key fails the
// commit with ErrNoSuchKey.
func (s *Store) SetMetaAsync(ctx context.Context, bucket, key, contentType string, m map[string]string, ifMatch string) (*Pending, error) {
	if err := s.acquireAsync(ctx); err != nil {
		return nil, err
	}
	if err := s.precheckWrite(ctx, bucket, key, "", ""); err != nil {
		s.releaseAsync()
		return nil, err
	}
	segs := 0 // the new version's, for the segment compactor
	set := func(tx meta.Tx) (ObjectInfo, error) {
		b, err := getBucket(tx, bucket)
		if err != nil {
			return ObjectInfo{}, err
		}
		cur, err := currentVersion(tx, bucket, key)
		if err != nil {
			return ObjectInfo{}, err
		}
		if cur == nil {
			return ObjectInfo{}, fmt.Errorf("%w: %s/%s", ErrNoSuchKey, bucket, key)
		}
		if err := checkConds(cur, key, ifMatch, ""); err != nil {
			return ObjectInfo{}, err
		}
		v := *cur
		v.ModTime = time.Now().UTC()
		v.ContentType, v.Meta = contentType, m
		if err := shareData(tx, &v); err != nil {
			return ObjectInfo{}, err
		}
		if err := installVersion(tx, b, key, &v); err != nil {
			return ObjectInfo{}, err
		}
		segs = v.SegmentCount()
		return toInfo(bucket, key, &v, true), nil
	}
	return s.runAsync(ctx, bucket, key, func(ctx context.Context) (ObjectInfo, error) {
		var info ObjectInfo
		err := s.commitData(ctx, nil, func(tx meta.Tx) error {
			var err error
			info, err = set(tx)
			return err
		})
		if err == nil {
			s.noteSegments(bucket, key, info.VersionID, segs)
		}
		return info, err
	}), nil
}

func (s *Store) acquireAsync(ctx context.Context) error {
	if err := s.pending.start(); err != nil {
		return err
	}
	select {
	case s.pending.slots <- struct{}{}:
		return nil
	default:
		s.pending.hurry() // all taken: start what waits for its burst
	}
	select {
	case s.pending.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		s.pending.running.Done()
		return ctx.Err()
	}
}

func (s *Store) releaseAsync() {
	<-s.pending.slots
	s.pending.running.Done()
}

// startAsync commits fn (with the data d wrote, if any) as an
// asynchronous operation on bucket/key (see runAsync).
func (s *Store) startAsync(ctx context.Context, bucket, key string, d *newData, fn func(tx meta.Tx) (ObjectInfo, error)) *Pending {
	return s.runAsync(ctx, bucket, key, func(ctx context.Context) (ObjectInfo, error) {
		var info ObjectInfo
		err := s.commitData(ctx, d, func(tx meta.Tx) error {
			var err error
			info, err = fn(tx)
			return err
		})
		return info, err
	})
}

// runAsync registers a pending operation on bucket/key and runs work on
// a goroutine, with a background context, once the key's earlier pending
// operations are done; the key's readers wait for it meanwhile. It owns
// the slot acquireAsync took.
func (s *Store) runAsync(ctx context.Context, bucket, key string, work func(context.Context) (ObjectInfo, error)) *Pending {
	return s.runAsyncHook(ctx, bucket, key, nil, work)
}

// runAsyncHook is runAsync of a put with a PutOptions.OnWait hook.
func (s *Store) runAsyncHook(ctx context.Context, bucket, key string, onWait func(), work func(context.Context) (ObjectInfo, error)) *Pending {
	p := s.newPending(bucket, key, false, onWait)
	cctx := withBackground(context.WithoutCancel(ctx))
	s.pending.burst.add(func() {
		if prev := p.prev.Load(); prev != nil {
			prev.kick()
			<-prev.done
		}
		info, err := work(cctx)
		s.finishAsync(p, info, err)
	})
	return p
}

// newPending registers a pending operation on bucket/key.
func (s *Store) newPending(bucket, key string, inBurst bool, onWait func()) *Pending {
	p := &Pending{set: &s.pending, bucket: bucket, key: key, inBurst: inBurst, done: make(chan struct{}), onWait: onWait}
	s.pending.add(p)
	return p
}

// finishAsync completes p with its outcome and gives back its slot.
func (s *Store) finishAsync(p *Pending, info ObjectInfo, err error) {
	p.info, p.err = info, err
	if err != nil {
		s.log.Warn().Err(err).Str("bucket", p.bucket).Str("key", p.key).Msg("asynchronous write failed")
	} else {
		s.notify(Event{Op: OpPut, Bucket: p.bucket, Key: p.key})
	}
	s.pending.remove(p)
	p.prev.Store(nil)
	// A kick from now on finds p done and calls nothing; one under way
	// has read onWait already: drop what it holds (the mount's content).
	p.waited.Do(func() {})
	p.onWait = nil
	close(p.done)
	s.releaseAsync()
}

// Sync waits until the asynchronous puts of bucket/key issued so far are
// committed, and returns the error of the newest one.
func (s *Store) Sync(ctx context.Context, bucket, key string) error {
	if s.pending.n.Load() == 0 {
		return nil
	}
	s.pending.mu.Lock()
	p := s.pending.byKey[pendingKey(bucket, key)]
	s.pending.mu.Unlock()
	if p == nil {
		return nil
	}
	_, err := p.Wait(ctx)
	return err
}

// putVersion builds the version a put installs and the index mutation
// installing it.
func (s *Store) putVersion(bucket, key string, d *newData, sum []byte, opt PutOptions) (*meta.Version, func(tx meta.Tx) error) {
	v := &meta.Version{
		ETag:        hex.EncodeToString(sum),
		ModTime:     time.Now().UTC(),
		ContentType: opt.ContentType,
		Meta:        opt.Meta,
		Attrs:       opt.Attrs,
	}
	if opt.FinalMeta != nil {
		v.Meta = maps.Clone(opt.Meta)
		if v.Meta == nil {
			v.Meta = map[string]string{}
		}
		opt.FinalMeta(v.Meta)
	}
	if opt.ETag != nil {
		v.ETag = givenETag(opt.ETag, sum, d)
	}
	if d != nil {
		v.Size = d.rec.Size
		v.Segments = []meta.Segment{d.segment()}
	}
	return v, func(tx meta.Tx) error {
		b, err := getBucket(tx, bucket)
		if err != nil {
			return err
		}
		cur, err := currentVersion(tx, bucket, key)
		if err != nil {
			return err
		}
		if err := checkConds(cur, key, opt.IfMatch, opt.IfNoneMatch); err != nil {
			return err
		}
		if err := addRefs(tx, v.Segments); err != nil {
			return err
		}
		return installVersion(tx, b, key, v)
	}
}
