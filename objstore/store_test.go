package objstore

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

func TestPutGetSizes(t *testing.T) {
	s, _ := newTestStore(t, 4, 2)
	mustBucket(t, s, "bkt")
	for i, n := range []int{0, 1, 4096, 64<<10 - 1, 64 << 10, 64<<10 + 1, 1<<20 + 1} {
		data := randBytes(n, uint64(i))
		key := "obj/" + string(rune('a'+i))
		info := mustPut(t, s, "bkt", key, data)
		if info.Size != int64(n) {
			t.Fatalf("size %d, want %d", info.Size, n)
		}
		if got := readAll(t, s, "bkt", key, GetOptions{}); !bytes.Equal(got, data) {
			t.Fatalf("%d bytes: read back differs", n)
		}
		h, err := s.Head(context.Background(), "bkt", key, GetOptions{})
		if err != nil || h.ETag != info.ETag || h.Size != int64(n) {
			t.Fatalf("head %+v %v", h, err)
		}
	}
}

func countShards(t testing.TB, opt Options) int {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(opt.Dir, "drives", "d*", "data", "*", "*"))
	if err != nil {
		t.Fatal(err)
	}
	return len(files)
}

// A reader pins its version: an overwrite and a cleaner pass while it is
// open do not take its bytes away; once closed, the cleaner frees them.
func TestPinnedReaderSurvivesOverwrite(t *testing.T) {
	ctx := context.Background()
	s, opt := newTestStore(t, 4, 2)
	mustBucket(t, s, "bkt")
	old := randBytes(300<<10, 1)
	mustPut(t, s, "bkt", "k", old)
	r, err := s.Open(ctx, "bkt", "k", GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	mustPut(t, s, "bkt", "k", []byte("new"))
	if n, err := s.Clean(ctx); err != nil || n != 0 {
		t.Fatalf("clean freed %d (%v) while pinned", n, err)
	}
	got, err := io.ReadAll(r)
	if err != nil || !bytes.Equal(got, old) {
		t.Fatalf("pinned read: %v", err)
	}
	if c := countShards(t, opt); c != 8 {
		t.Fatalf("%d shard files, want 8 (old pinned + new)", c)
	}
	r.Close()
	if n, err := s.Clean(ctx); err != nil || n != 1 {
		t.Fatalf("clean freed %d (%v), want 1", n, err)
	}
	if c := countShards(t, opt); c != 4 {
		t.Fatalf("%d shard files after clean, want 4", c)
	}
	if got := readAll(t, s, "bkt", "k", GetOptions{}); string(got) != "new" {
		t.Fatalf("current = %q", got)
	}
}

// Concurrent writers share group commits and each sees its own write.
func TestConcurrentPuts(t *testing.T) {
	s, _ := newTestStore(t, 4, 2)
	mustBucket(t, s, "bkt")
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				key := fmt.Sprintf("w%d/%d", w, i)
				data := randBytes(4096+i, uint64(w*100+i))
				if _, err := s.Put(context.Background(), "bkt", key, bytes.NewReader(data), int64(len(data)), PutOptions{}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for w := 0; w < 16; w++ {
		for i := 0; i < 20; i++ {
			key := fmt.Sprintf("w%d/%d", w, i)
			if got := readAll(t, s, "bkt", key, GetOptions{}); !bytes.Equal(got, randBytes(4096+i, uint64(w*100+i))) {
				t.Fatalf("%s differs", key)
			}
		}
	}
}

// Orphan shard files (a write that never committed) are swept at open.
func TestSweepOrphans(t *testing.T) {
	ctx := context.Background()
	s, opt := newTestStore(t, 4, 2)
	mustBucket(t, s, "bkt")
	mustPut(t, s, "bkt", "k", []byte("keep me"))
	d, _, err := s.writeData(ctx, "bkt", "ghost", bytes.NewReader(make([]byte, 5000)), 5000, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	_ = d
	s.Close()
	rep, err := Fsck(ctx, withBolt(t, opt), nil)
	if err != nil || len(rep.OrphanShards) != 4 {
		t.Fatalf("fsck should see 4 orphans: %+v %v", rep, err)
	}
	s2, err := Open(ctx, withBolt(t, opt))
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if c := countShards(t, opt); c != 4 {
		t.Fatalf("%d shard files after sweep, want 4", c)
	}
	if got := readAll(t, s2, "bkt", "k", GetOptions{}); string(got) != "keep me" {
		t.Fatalf("got %q", got)
	}
}

// A delete or an overwrite wakes the background cleaner: the shards of
// what they made garbage go at once, not at the cleaner's next tick (an
// hour here), so that space (and the page cache holding them) is freed
// when the mount's rm returns, as on a local filesystem.
func TestCleanerWokenByGarbage(t *testing.T) {
	ctx := context.Background()
	s, opt := newTestStore(t, 4, 2, func(o *Options) { o.NoBackground, o.CleanerInterval = false, time.Hour })
	mustBucket(t, s, "bkt")
	mustPut(t, s, "bkt", "a", randBytes(300<<10, 1))
	mustPut(t, s, "bkt", "b", randBytes(300<<10, 2))
	waitShards := func(what string, want int) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for countShards(t, opt) != want {
			if time.Now().After(deadline) {
				t.Fatalf("%s: %d shard files after 10 s, want %d", what, countShards(t, opt), want)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	// The hourly tick ran once at start; nothing since.
	waitShards("two objects", 8)
	if _, err := s.Delete(ctx, "bkt", "a", DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitShards("after a delete", 4)
	mustPut(t, s, "bkt", "b", randBytes(300<<10, 3))
	waitShards("after an overwrite", 4)
}
