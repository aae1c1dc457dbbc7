package objstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairnstore/cairn/objstore/drive"
	"github.com/cairnstore/cairn/objstore/drive/faultdrive"
	"github.com/cairnstore/cairn/objstore/meta"
)

// TestPowerLoss runs a store over fault-injecting drives, cuts the power
// in the middle of concurrent writes (puts, multipart completes, patches
// that write only changed ranges, deletes; faultdrive.Crash drops every change
// to the drives that no flush covered, which a SIGKILL test cannot: the
// page cache outlives the process) and abandons the store. A fresh store
// on the same index and drive directories must then hold every
// acknowledged write byte for byte and keep every acknowledged delete,
// show an unacknowledged write whole or not at all, and have nothing fsck
// calls lost or dangling; heal then leaves fsck clean. Each round starts
// from what the previous one left, with another crash point.
func TestPowerLoss(t *testing.T) { powerLoss(t, 0) }

// TestPowerLossChunked is TestPowerLoss with chunks of two segments, so
// that the patches, copies and appends of the workload make chunked
// versions (chunks.go) and the crashes cut their commits.
func TestPowerLossChunked(t *testing.T) { powerLoss(t, 2) }

// powerLoss runs the power-loss rounds on a store whose chunks hold
// chunkSegments segments (zero: the default).
func powerLoss(t *testing.T, chunkSegments int) {
	rounds := 4
	if testing.Short() {
		rounds = 2
	}
	dir := t.TempDir()
	base := Options{Dir: dir, DriveCount: 4, Parity: 2, BlockSize: 64 << 10, MinPartSize: 1,
		PackSegmentSize: 512 << 10, CleanerInterval: 20 * time.Millisecond, ChunkSegments: chunkSegments}
	model := newPowerModel()
	for round := range rounds {
		t.Run(fmt.Sprintf("round%d", round), func(t *testing.T) {
			crashAfter := 8 + int(rand.New(rand.NewPCG(uint64(round), 7)).IntN(40))
			powerLossRound(t, base, model, round, crashAfter)
		})
		if t.Failed() {
			return
		}
	}
	if chunkSegments > 0 {
		chunks := 0
		err := withBolt(t, base).Index.View(context.Background(), func(tx meta.Tx) error {
			return meta.Scan(tx, meta.Chunks, nil, func(_, _ []byte) error { chunks++; return nil })
		})
		if err != nil || chunks == 0 {
			t.Fatalf("%d chunk records after the rounds (%v): the workload made no chunked version", chunks, err)
		}
		t.Logf("%d chunk records after the rounds", chunks)
	}
}

// powerState is one state of a key: absent, or these bytes.
type powerState struct {
	exists bool
	data   []byte
}

// powerModel is what each key may hold: the state its last acknowledged
// operation left, and the states of operations after it that were not
// acknowledged (each may have become durable or not).
type powerModel struct {
	mu    sync.Mutex
	acked map[string]powerState
	maybe map[string][]powerState
}

func newPowerModel() *powerModel {
	return &powerModel{acked: map[string]powerState{}, maybe: map[string][]powerState{}}
}

func (m *powerModel) record(key string, st powerState, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case err == nil:
		m.acked[key] = st
		delete(m.maybe, key)
		return
	case errors.Is(err, errNoEffect):
		return
	}
	m.maybe[key] = append(m.maybe[key], st)
}

// powerDrives returns an Options.OpenDrive that opens the local drive
// directories of base wrapped in fault drives, and the function listing
// the fault drives it opened.
func powerDrives(base Options) (func(ctx context.Context, set string, i int) (drive.Drive, bool, error), func() []*faultdrive.Drive) {
	var mu sync.Mutex
	var fds []*faultdrive.Drive
	open := func(ctx context.Context, set string, i int) (drive.Drive, bool, error) {
		d, created, err := drive.OpenDir(filepath.Join(base.Dir, "drives", fmt.Sprintf("d%d", i)), set, i)
		if err != nil {
			return nil, false, err
		}
		fd := faultdrive.New(d, faultdrive.Config{})
		mu.Lock()
		fds = append(fds, fd)
		mu.Unlock()
		return fd, created, nil
	}
	return open, func() []*faultdrive.Drive {
		mu.Lock()
		defer mu.Unlock()
		return fds
	}
}

func powerLossRound(t *testing.T, base Options, model *powerModel, round, crashAfter int) {
	ctx := context.Background()
	const bucket = "power"
	opt := base
	open, drives := powerDrives(base)
	opt.OpenDrive = open
	s, err := Open(ctx, withBolt(t, opt))
	if err != nil {
		t.Fatal(err)
	}
	if len(drives()) != 4 {
		t.Fatalf("%d fault drives opened, want 4", len(drives()))
	}
	if round == 0 {
		mustBucket(t, s, bucket)
	}

	const workers, keysEach, opsEach = 4, 4, 30
	var acks atomic.Int64
	var stop atomic.Bool
	trigger := make(chan struct{})
	var once sync.Once
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(round), uint64(w)))
			for i := 0; i < opsEach && !stop.Load(); i++ {
				key := fmt.Sprintf("w%d/k%d", w, rng.IntN(keysEach))
				seed := uint64(round)<<32 | uint64(w)<<16 | uint64(i)
				st, err := powerOp(ctx, s, rng, bucket, key, seed)
				model.record(key, st, err)
				if err == nil && acks.Add(1) == int64(crashAfter) {
					once.Do(func() { close(trigger) })
				}
			}
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-trigger:
	case <-done: // every op done before the crash point: crash at the end
	}
	if err := faultdrive.Crash(ctx, drives()...); err != nil {
		t.Fatalf("crash: %v", err)
	}
	stop.Store(true)
	atCrash := acks.Load()
	<-done
	// Abandon the store: its drives refuse everything now, so closing it
	// flushes nothing more to them; the index is durable at each commit.
	_ = s.Close()
	t.Logf("round %d: crashed after %d acknowledged operations (%d in all)", round, atCrash, acks.Load())

	// What the power left, before a store sweeps or heals anything.
	plain := base
	plain.Parity = -1
	plain.NoBackground = true
	rep, err := Fsck(ctx, withBolt(t, plain), nil)
	if err != nil {
		t.Fatalf("fsck: %v", err)
	}
	if len(rep.LostData)+len(rep.Dangling) != 0 {
		t.Errorf("fsck after the crash: lost %v, dangling %v", rep.LostData, rep.Dangling)
	}
	t.Logf("fsck after the crash: %d data, %d orphans, %d missing, %d corrupt shards",
		rep.DataObjects, len(rep.OrphanShards), len(rep.MissingShards), len(rep.CorruptShards))

	s2, err := Open(ctx, withBolt(t, plain))
	if err != nil {
		t.Fatal(err)
	}
	model.check(t, s2, bucket)
	if err := s2.Close(); err != nil {
		t.Fatal(err)
	}
	hrep, err := Heal(ctx, withBolt(t, plain), nil)
	if err != nil || !hrep.OK() {
		t.Fatalf("heal: %+v %v", hrep, err)
	}
	rep, err = Fsck(ctx, withBolt(t, plain), nil)
	if err != nil || !rep.Clean() {
		t.Fatalf("fsck after heal: %+v %v", rep, err)
	}
}

// errNoEffect marks an operation that failed before it could change its
// key (a multipart upload whose part failed).
var errNoEffect = errors.New("failed before taking effect")

// powerOp does one random operation on key and returns the state it
// leaves when it takes effect.
func powerOp(ctx context.Context, s *Store, rng *rand.Rand, bucket, key string, seed uint64) (powerState, error) {
	put := func(n int) (powerState, error) {
		b := randBytes(n, seed)
		_, err := s.Put(ctx, bucket, key, bytes.NewReader(b), int64(n), PutOptions{})
		return powerState{exists: true, data: b}, err
	}
	switch p := rng.IntN(100); {
	case p < 30: // small: packed
		return put(1 + rng.IntN(100<<10))
	case p < 40: // tiny
		return put(1 + rng.IntN(2<<10))
	case p < 65: // large: shard files, several blocks
		return put(150<<10 + rng.IntN(450<<10))
	case p < 80: // multipart, parts packed or not
		id, err := s.CreateMultipartUpload(ctx, bucket, key, PutOptions{})
		if err != nil {
			return powerState{}, fmt.Errorf("%w: %w", errNoEffect, err)
		}
		var all []byte
		var parts []CompletePart
		for n := 1; n <= 2+rng.IntN(2); n++ {
			b := randBytes(1+rng.IntN(200<<10), seed+uint64(n)<<48)
			pi, err := s.PutPart(ctx, bucket, key, id, n, bytes.NewReader(b), int64(len(b)), PartOptions{})
			if err != nil {
				return powerState{}, fmt.Errorf("%w: %w", errNoEffect, err)
			}
			all = append(all, b...)
			parts = append(parts, CompletePart{Number: n, ETag: pi.ETag})
		}
		_, err = s.CompleteMultipartUpload(ctx, bucket, key, id, parts, PutOptions{})
		return powerState{exists: true, data: all}, err
	case p < 90: // a patch of the current version: only what changed is written
		return powerPatch(ctx, s, rng, bucket, key, seed)
	default:
		_, err := s.Delete(ctx, bucket, key, DeleteOptions{})
		if errors.Is(err, ErrNoSuchKey) {
			err = nil // deleting an absent key is done too
		}
		return powerState{}, err
	}
}

// powerPatch patches key's current version (or puts it, when absent):
// a few changed ranges, and the size shrunk or grown at times.
func powerPatch(ctx context.Context, s *Store, rng *rand.Rand, bucket, key string, seed uint64) (powerState, error) {
	r, err := s.Open(ctx, bucket, key, GetOptions{})
	if errors.Is(err, ErrNoSuchKey) {
		b := randBytes(200<<10+rng.IntN(200<<10), seed)
		_, err := s.Put(ctx, bucket, key, bytes.NewReader(b), int64(len(b)), PutOptions{})
		return powerState{exists: true, data: b}, err
	}
	if err != nil {
		return powerState{}, fmt.Errorf("%w: %w", errNoEffect, err)
	}
	defer r.Close()
	base := make([]byte, r.Size())
	if _, err := r.ReadAt(base, 0); err != nil && !errors.Is(err, io.EOF) {
		return powerState{}, fmt.Errorf("%w: %w", errNoEffect, err)
	}
	size := int64(len(base))
	switch rng.IntN(4) {
	case 0:
		size = max(size-int64(rng.IntN(50<<10)), 1)
	case 1:
		size += int64(rng.IntN(100 << 10))
	}
	src := randBytes(int(size), seed)
	var dirty []Range
	for off := int64(rng.IntN(30 << 10)); off < size; off += int64(1 + rng.IntN(100<<10)) {
		n := min(int64(1+rng.IntN(20<<10)), size-off)
		dirty = append(dirty, Range{off, n})
		off += n
	}
	want := make([]byte, size)
	copy(want, base)
	for _, d := range dirty {
		copy(want[d.Offset:d.End()], src[d.Offset:d.End()])
	}
	pend, err := s.PatchAsync(ctx, bucket, key, Patch{Base: r, Size: size, Dirty: dirty, Src: bytes.NewReader(src)}, PutOptions{})
	if err != nil {
		return powerState{}, fmt.Errorf("%w: %w", errNoEffect, err)
	}
	_, err = pend.Wait(ctx)
	return powerState{exists: true, data: want}, err
}

// check reads every key the model knows and matches it against the
// states allowed, then makes what it found the acknowledged state.
func (m *powerModel) check(t *testing.T, s *Store, bucket string) {
	t.Helper()
	ctx := context.Background()
	m.mu.Lock()
	defer m.mu.Unlock()
	keys := map[string]bool{}
	for k := range m.acked {
		keys[k] = true
	}
	for k := range m.maybe {
		keys[k] = true
	}
	var lostAcked, unackedWon, unackedLost int
	for key := range keys {
		var got powerState
		r, err := s.Open(ctx, bucket, key, GetOptions{})
		switch {
		case errors.Is(err, ErrNoSuchKey):
		case err != nil:
			t.Errorf("%s: open: %v", key, err)
			continue
		default:
			b, err := io.ReadAll(r)
			_ = r.Close()
			if err != nil {
				t.Errorf("%s: read: %v (torn?)", key, err)
				continue
			}
			got = powerState{exists: true, data: b}
		}
		allowed := append([]powerState{m.acked[key]}, m.maybe[key]...)
		ok := false
		for i, st := range allowed {
			if st.exists == got.exists && bytes.Equal(st.data, got.data) {
				ok = true
				if i > 0 {
					unackedWon++
				} else if len(allowed) > 1 {
					unackedLost++
				}
				break
			}
		}
		if !ok {
			lostAcked++
			a := m.acked[key]
			t.Errorf("%s: found exists=%v, %d bytes; acknowledged exists=%v, %d bytes (%d unacknowledged states allowed)",
				key, got.exists, len(got.data), a.exists, len(a.data), len(m.maybe[key]))
		}
		m.acked[key] = got
	}
	clear(m.maybe)
	t.Logf("%d keys: %d show an unacknowledged write that became durable, %d the acknowledged state under one that did not",
		len(keys), unackedWon, unackedLost)
	if lostAcked > 0 {
		t.Errorf("%d of %d keys lost their acknowledged state", lostAcked, len(keys))
	}
}
