package objstore

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestHealthCounters follows one object through a bad shard block, a
// lost shard file, the heal that repairs it and an overwrite that leaves
// garbage, checking what Health and DriveStatuses report at each step.
func TestHealthCounters(t *testing.T) {
	ctx := context.Background()
	s, opt := newTestStore(t, 4, 2)
	mustBucket(t, s, "bkt")
	data := randBytes(200<<10, 7)
	mustPut(t, s, "bkt", "obj", data)

	h, err := s.Health(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if h != (Health{}) {
		t.Fatalf("health of a fresh store: %+v, want all zero", h)
	}

	// Flip the last byte of drive 0's shard (a data shard): its last
	// block fails its checksum.
	shard := func(d int) string {
		files, _ := filepath.Glob(filepath.Join(opt.Dir, "drives", "d"+string(rune('0'+d)), "data", "*", "*"))
		if len(files) != 1 {
			t.Fatalf("drive %d holds %d shard files, want 1", d, len(files))
		}
		return files[0]
	}
	p0 := shard(0)
	raw, err := os.ReadFile(p0)
	if err != nil {
		t.Fatal(err)
	}
	raw[len(raw)-1] ^= 0x5a
	if err := os.WriteFile(p0, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	// And lose drive 1's shard file: missing, not an I/O error.
	if err := os.Remove(shard(1)); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, s, "bkt", "obj", GetOptions{}); string(got) != string(data) {
		t.Fatal("degraded read returned other bytes")
	}

	ds, err := s.DriveStatuses(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ds {
		wantSum := uint64(0)
		if d.Index == 0 {
			wantSum = 1
		}
		if d.ChecksumFailures != wantSum || d.IOErrors != 0 || !d.Online || d.TotalBytes == 0 {
			t.Errorf("drive %d: %+v, want online, sized, %d checksum failures, no I/O errors", d.Index, d, wantSum)
		}
	}
	h, err = s.Health(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if h.DegradedObjects != 1 || h.HealQueue != 1 {
		t.Fatalf("after a degraded read: %+v, want 1 degraded object, 1 queued", h)
	}

	// The healer repairs it and empties both.
	hctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); s.runHealer(hctx) }()
	for {
		if h, err = s.Health(ctx); err != nil {
			t.Fatal(err)
		}
		if h.DegradedObjects == 0 && h.HealQueue == 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	<-done

	// An overwrite leaves the old data as garbage until the cleaner runs.
	mustPut(t, s, "bkt", "obj", data[:1000])
	if h, err = s.Health(ctx); err != nil || h.CleanerBacklog != 1 {
		t.Fatalf("after an overwrite: %+v %v, want a cleaner backlog of 1", h, err)
	}
	if _, err := s.Clean(ctx); err != nil {
		t.Fatal(err)
	}
	if h, err = s.Health(ctx); err != nil || h.CleanerBacklog != 0 {
		t.Fatalf("after Clean: %+v %v, want no cleaner backlog", h, err)
	}
}

// TestHealthCompactionBacklog counts a pack segment mostly freed as
// compaction work, and none once compacted.
func TestHealthCompactionBacklog(t *testing.T) {
	ctx := context.Background()
	s, _ := newTestStore(t, 3, 1, func(o *Options) { o.PackMaxSize = 0 })
	mustBucket(t, s, "bkt")
	for i := range 8 {
		mustPut(t, s, "bkt", "k"+string(rune('a'+i)), randBytes(4<<10, uint64(i)))
	}
	// Close and reopen: the segment written is no longer the active one.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2, err := Open(ctx, withBolt(t, s.opt))
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	for i := range 6 {
		if _, err := s2.Delete(ctx, "bkt", "k"+string(rune('a'+i)), DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s2.clean(ctx, false); err != nil { // free, do not compact
		t.Fatal(err)
	}
	h, err := s2.Health(ctx)
	if err != nil || h.CompactionBacklog != 1 || h.CleanerBacklog != 0 {
		t.Fatalf("after freeing 6 of 8 packed objects: %+v %v, want a compaction backlog of 1", h, err)
	}
	if _, err := s2.Clean(ctx); err != nil { // frees and compacts
		t.Fatal(err)
	}
	if h, err = s2.Health(ctx); err != nil || h.CompactionBacklog != 0 {
		t.Fatalf("after compaction: %+v %v, want none", h, err)
	}
}

// TestHealthForgetsFreedData: an id seen degraded whose heal did not
// happen (the queue was full, or the heal failed) stops counting once its
// data is freed, instead of keeping the gauge up until a restart.
func TestHealthForgetsFreedData(t *testing.T) {
	ctx := context.Background()
	s, opt := newTestStore(t, 4, 2)
	mustBucket(t, s, "bkt")
	data := randBytes(200<<10, 9)
	mustPut(t, s, "bkt", "obj", data)
	files, _ := filepath.Glob(filepath.Join(opt.Dir, "drives", "d1", "data", "*", "*"))
	if len(files) != 1 {
		t.Fatalf("drive 1 holds %d shard files, want 1", len(files))
	}
	if err := os.Remove(files[0]); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, s, "bkt", "obj", GetOptions{}); string(got) != string(data) {
		t.Fatal("degraded read returned other bytes")
	}
	// Take it off the queue as a failed heal would leave it: still in
	// the degraded set, no longer queued.
	name := <-s.healq
	s.degraded.dequeued(name)
	if h, err := s.Health(ctx); err != nil || h.DegradedObjects != 1 || h.HealQueue != 0 {
		t.Fatalf("after a degraded read and a failed heal: %+v %v, want 1 degraded, none queued", h, err)
	}
	mustPut(t, s, "bkt", "obj", data[:100]) // frees the degraded data
	if h, err := s.Health(ctx); err != nil || h.DegradedObjects != 0 {
		t.Fatalf("after the degraded data was freed: %+v %v, want none degraded", h, err)
	}
	if got := s.degraded.list(); len(got) != 0 {
		t.Errorf("degraded set still holds %v", got)
	}
}
