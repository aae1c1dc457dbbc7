package objstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/cairnstore/cairn/objstore/meta"
)

func withPacks(segment int64) func(*Options) {
	return func(o *Options) {
		o.PackMaxSize = 0 // the default, 128 KiB
		o.PackSegmentSize = segment
	}
}

func packFiles(t testing.TB, opt Options) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(opt.Dir, "drives", "d*", "packs", "*"))
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func TestPackedPutGet(t *testing.T) {
	s, opt := newTestStore(t, 4, 2, withPacks(0))
	mustBucket(t, s, "bkt")
	for i, n := range []int{1, 100, 4 << 10, 64<<10 + 1, 128 << 10, 128<<10 + 1} {
		data := randBytes(n, uint64(i))
		key := fmt.Sprintf("k%d", n)
		mustPut(t, s, "bkt", key, data)
		if got := readAll(t, s, "bkt", key, GetOptions{}); !bytes.Equal(got, data) {
			t.Fatalf("%d bytes differ", n)
		}
	}
	// Everything up to 128 KiB is in one segment per drive; only the
	// larger object has shard files.
	if n := len(packFiles(t, opt)); n != 4 {
		t.Fatalf("%d pack files, want 4", n)
	}
	if n := countShards(t, opt); n != 4 {
		t.Fatalf("%d shard files, want 4", n)
	}
}

// Overwrites roll segments; the cleaner frees each segment once all its
// records are garbage and no reader pins it.
func TestPackSegmentsFreed(t *testing.T) {
	ctx := context.Background()
	s, opt := newTestStore(t, 4, 2, withPacks(32<<10))
	mustBucket(t, s, "bkt")
	first := randBytes(4000, 99)
	mustPut(t, s, "bkt", "pinned", first)
	r, err := s.Open(ctx, "bkt", "pinned", GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var last [5][]byte
	for round := 0; round < 40; round++ {
		for k := range last {
			last[k] = randBytes(3000+k, uint64(round*10+k))
			mustPut(t, s, "bkt", fmt.Sprintf("k%d", k), last[k])
		}
		mustPut(t, s, "bkt", "pinned", randBytes(10, uint64(round)))
	}
	if _, err := s.Clean(ctx); err != nil {
		t.Fatal(err)
	}
	pinnedSeg := len(packFiles(t, opt))
	got, err := io.ReadAll(r)
	if err != nil || !bytes.Equal(got, first) {
		t.Fatalf("pinned packed read: %v", err)
	}
	_ = r.Close()
	if _, err := s.Clean(ctx); err != nil {
		t.Fatal(err)
	}
	after := len(packFiles(t, opt))
	// 40 rounds of ~15 KiB in 32 KiB segments made ~20 segments; the live
	// data fits in a few, and the pinned first segment went with Close.
	if after >= pinnedSeg || after > 4*4 {
		t.Fatalf("pack files: %d while pinned, %d after close (want fewer, at most 16)", pinnedSeg, after)
	}
	for k := range last {
		if got := readAll(t, s, "bkt", fmt.Sprintf("k%d", k), GetOptions{}); !bytes.Equal(got, last[k]) {
			t.Fatalf("k%d differs", k)
		}
	}
	_ = s.idx.View(ctx, func(tx meta.Tx) error {
		c := tx.Cursor(meta.Packs)
		for k, v := c.First(); k != nil; k, v = c.Next() {
			var p meta.PackInfo
			if err := meta.Decode(v, &p); err != nil || p.Live < 0 {
				t.Errorf("pack %x: live %d (%v)", k, p.Live, err)
			}
		}
		return nil
	})
}

// A pack segment written but never committed (a crash before the first
// commit) is an orphan: fsck reports it and Open removes it.
func TestOrphanPackSwept(t *testing.T) {
	ctx := context.Background()
	s, opt := newTestStore(t, 4, 2, withPacks(0))
	mustBucket(t, s, "bkt")
	mustPut(t, s, "bkt", "k", []byte("small"))
	_ = s.Close()
	for i := 0; i < 4; i++ {
		p := filepath.Join(opt.Dir, "drives", fmt.Sprintf("d%d", i), "packs", "00000000000000ff")
		if err := os.WriteFile(p, []byte("torn"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := Fsck(ctx, withBolt(t, opt), nil)
	if err != nil || len(rep.OrphanShards) != 4 {
		t.Fatalf("fsck: %+v %v", rep, err)
	}
	s2, err := Open(ctx, withBolt(t, opt))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s2.Close() }()
	if n := len(packFiles(t, opt)); n != 4 {
		t.Fatalf("%d pack files after sweep, want 4", n)
	}
	if got := readAll(t, s2, "bkt", "k", GetOptions{}); string(got) != "small" {
		t.Fatalf("got %q", got)
	}
	// New small writes go to a fresh segment above the swept one.
	mustPut(t, s2, "bkt", "k2", []byte("again"))
	if got := readAll(t, s2, "bkt", "k2", GetOptions{}); string(got) != "again" {
		t.Fatalf("got %q", got)
	}
}

// A few long-lived small objects spread over many segments keep each of
// them partly live; compaction moves them so the segments can go.
func TestPackCompaction(t *testing.T) {
	ctx := context.Background()
	s, opt := newTestStore(t, 4, 2, withPacks(32<<10))
	mustBucket(t, s, "bkt")
	keep := map[string][]byte{}
	for round := 0; round < 30; round++ {
		k := fmt.Sprintf("keep/%d", round)
		keep[k] = randBytes(2000, uint64(1000+round))
		mustPut(t, s, "bkt", k, keep[k])
		for j := 0; j < 6; j++ {
			mustPut(t, s, "bkt", fmt.Sprintf("churn/%d", j), randBytes(3000, uint64(round*10+j)))
		}
	}
	before := len(packFiles(t, opt))
	for i := 0; i < 3; i++ { // the first pass frees garbage, later ones compact
		if _, err := s.Clean(ctx); err != nil {
			t.Fatal(err)
		}
	}
	after := len(packFiles(t, opt))
	if after*2 > before {
		t.Fatalf("pack files: %d before cleaning, %d after; compaction should free most", before, after)
	}
	for k, want := range keep {
		if got := readAll(t, s, "bkt", k, GetOptions{}); !bytes.Equal(got, want) {
			t.Fatalf("%s differs after compaction", k)
		}
	}
	var live, end int64
	_ = s.idx.View(ctx, func(tx meta.Tx) error {
		c := tx.Cursor(meta.Packs)
		for k, v := c.First(); k != nil; k, v = c.Next() {
			var p meta.PackInfo
			_ = meta.Decode(v, &p)
			live += p.Live
			end += p.End
		}
		return nil
	})
	t.Logf("pack files %d -> %d; live %d of %d bytes", before, after, live, end)
}

// TestPackFlushNoSpace: when two of four drives (2+2, write quorum 3)
// have no room for a packed put, it fails with ErrQuorumLost carrying the
// drives' ENOSPC (which the faces map to their own "no space"), the key
// stays absent, and what was stored before stays readable.
func TestPackFlushNoSpace(t *testing.T) {
	ctx := context.Background()
	base := t.TempDir()
	full := filepath.Join(base, "tiny")
	if err := os.Mkdir(full, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", full, "tmpfs", 0, "size=32k"); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(full, syscall.MNT_DETACH) })
	drives := []string{filepath.Join(base, "d0"), filepath.Join(base, "d1"), filepath.Join(full, "d2"), filepath.Join(full, "d3")}
	s, _ := newTestStore(t, 0, 2, withPacks(0), func(o *Options) { o.Drives, o.DriveCount = drives, 0 })
	mustBucket(t, s, "bkt")
	mustPut(t, s, "bkt", "small", []byte("fits"))
	_, err := s.Put(ctx, "bkt", "big", bytes.NewReader(randBytes(100<<10, 1)), 100<<10, PutOptions{})
	if !errors.Is(err, ErrQuorumLost) || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("put of 100 KiB with two full drives: %v, want ErrQuorumLost with ENOSPC", err)
	}
	if _, err := s.Head(ctx, "bkt", "big", GetOptions{}); !errors.Is(err, ErrNoSuchKey) {
		t.Errorf("head of the failed put: %v, want ErrNoSuchKey", err)
	}
	if got := readAll(t, s, "bkt", "small", GetOptions{}); string(got) != "fits" {
		t.Errorf("small: %q", got)
	}
}
