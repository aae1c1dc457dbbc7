package objstore

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// withCache gives a test store a block cache of the given number of
// blocks (the test block size is 64 KiB).
func withCache(blocks int) func(*Options) {
	return func(o *Options) { o.ReadCacheSize = int64(blocks) * 64 << 10 }
}

// copyRange reads [off, off+n) of bucket/key with CopyRange into w.
func copyRange(t *testing.T, s *Store, key string, off, n int64, w io.Writer) {
	t.Helper()
	r, err := s.Open(context.Background(), "bkt", key, GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got, err := r.CopyRange(w, off, n, make([]byte, 64<<10))
	if err != nil || got != n {
		t.Fatalf("CopyRange(%d, %d) = %d, %v", off, n, got, err)
	}
}

// plainWriter hides any ReadFrom, so CopyRange copies through its buffer.
type plainWriter struct{ io.Writer }

func TestCopyRange(t *testing.T) {
	s, _ := newTestStore(t, 4, 2, withCache(64))
	mustBucket(t, s, "bkt")
	data := randBytes(5*64<<10+1234, 1) // a short last block
	mustPut(t, s, "bkt", "k", data)
	out := filepath.Join(t.TempDir(), "out")
	for _, tc := range []struct{ off, n int64 }{
		{0, int64(len(data))},
		{100, 10},                 // inside one block
		{64<<10 - 5, 10},          // across a block boundary
		{3 * 64 << 10, 64 << 10},  // one whole block
		{int64(len(data)) - 1, 1}, // the last byte
		{7, 0},
	} {
		want := data[tc.off : tc.off+tc.n]
		var buf bytes.Buffer
		copyRange(t, s, "k", tc.off, tc.n, plainWriter{&buf})
		if !bytes.Equal(buf.Bytes(), want) {
			t.Errorf("[%d, +%d) through the buffer: wrong bytes", tc.off, tc.n)
		}
		// An *os.File is an io.ReaderFrom: cached blocks go as file ranges.
		f, err := os.Create(out)
		if err != nil {
			t.Fatal(err)
		}
		copyRange(t, s, "k", tc.off, tc.n, f)
		_ = f.Close()
		if got, _ := os.ReadFile(out); !bytes.Equal(got, want) {
			t.Errorf("[%d, +%d) as file ranges: wrong bytes", tc.off, tc.n)
		}
	}
	st, ok := s.CacheStats()
	if !ok || st.Hits == 0 || st.Misses != 0 || st.Admitted != 6 {
		t.Fatalf("a fresh object's blocks should all be cached by its put: %+v", st)
	}
	// A buffer smaller than a block: hits are copied through it.
	var small bytes.Buffer
	r0, _ := s.Open(context.Background(), "bkt", "k", GetOptions{})
	if n, err := r0.CopyRange(plainWriter{&small}, 10, int64(len(data))-10, make([]byte, 1000)); err != nil || n != int64(len(data))-10 || !bytes.Equal(small.Bytes(), data[10:]) {
		t.Fatalf("CopyRange through a 1000-byte buffer: %d, %v", n, err)
	}
	_ = r0.Close()
	// Data smaller than a block takes no slot.
	mustPut(t, s, "bkt", "tiny", data[:1000])
	var tiny bytes.Buffer
	copyRange(t, s, "tiny", 0, 1000, &tiny)
	if !bytes.Equal(tiny.Bytes(), data[:1000]) {
		t.Fatal("tiny: wrong bytes")
	}
	if st2, _ := s.CacheStats(); st2.Admitted != st.Admitted {
		t.Fatalf("an object smaller than a block went into the cache: %+v", st2)
	}
	r, _ := s.Open(context.Background(), "bkt", "k", GetOptions{})
	defer r.Close()
	for _, tc := range []struct{ off, n int64 }{{-1, 1}, {0, int64(len(data)) + 1}, {int64(len(data)), 1}} {
		if _, err := r.CopyRange(io.Discard, tc.off, tc.n, make([]byte, 64<<10)); err == nil {
			t.Errorf("CopyRange(%d, %d) accepted", tc.off, tc.n)
		}
	}
}

// TestCopyRangeDegraded: a block no longer cached is read from its
// shards, rebuilt around a corrupt one, and what goes back into the cache
// is the object's bytes.
func TestCopyRangeDegraded(t *testing.T) {
	s, opt := newTestStore(t, 4, 2, withCache(4))
	mustBucket(t, s, "bkt")
	data := randBytes(3*64<<10, 2)
	mustPut(t, s, "bkt", "k", data)
	mustPut(t, s, "bkt", "other", randBytes(4*64<<10, 3)) // pushes k's blocks out
	files, _ := filepath.Glob(filepath.Join(opt.Dir, "drives", "d0", "data", "*", "*"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		good := bytes.Clone(b)
		t.Cleanup(func() { _ = os.WriteFile(f, good, 0o644) }) // before the closing fsck
		for i := len(b) / 2; i < len(b); i += 4096 {
			b[i] ^= 0xff
		}
		if err := os.WriteFile(f, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for round := range 2 { // from the shards, then from the cache
		var buf bytes.Buffer
		copyRange(t, s, "k", 0, int64(len(data)), plainWriter{&buf})
		if !bytes.Equal(buf.Bytes(), data) {
			t.Fatalf("round %d: wrong bytes", round)
		}
	}
	if st, _ := s.CacheStats(); st.Hits < 3 {
		t.Fatalf("second read not served from the cache: %+v", st)
	}
}

// TestCopyRangeNoCache: without a cache CopyRange copies through the
// buffer.
func TestCopyRangeNoCache(t *testing.T) {
	s, _ := newTestStore(t, 2, 1)
	mustBucket(t, s, "bkt")
	data := randBytes(2*64<<10+7, 4)
	mustPut(t, s, "bkt", "k", data)
	var buf bytes.Buffer
	copyRange(t, s, "k", 5, int64(len(data))-5, &buf)
	if !bytes.Equal(buf.Bytes(), data[5:]) {
		t.Fatal("wrong bytes")
	}
	if _, ok := s.CacheStats(); ok {
		t.Fatal("a store without ReadCacheSize reports a cache")
	}
}
