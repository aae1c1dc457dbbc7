package objstore

import (
	"bytes"
	"context"
	"errors"
	"sort"
	"strings"
	"sync"
	"testing"
)

// applyPatch is the model: what base becomes under dirty ranges of src
// and a new size.
func applyPatch(base []byte, size int64, dirty []Range, src []byte) []byte {
	out := make([]byte, size)
	copy(out, base)
	for _, r := range dirty {
		copy(out[r.Offset:r.End()], src[r.Offset:r.End()])
	}
	return out
}

// patchOf opens bucket/key as the base of a patch of src's dirty ranges.
func patchOf(t *testing.T, s *Store, bucket, key string, size int64, dirty []Range, src []byte) Patch {
	t.Helper()
	r, err := s.Open(context.Background(), bucket, key, GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return Patch{Base: r, Size: size, Dirty: dirty, Src: bytes.NewReader(src)}
}

// TestPatch commits patches of many shapes over a stored version and
// checks the content, that only the changed bytes reached the drives
// (O(changed × (k+m)/k)), that the version shares the base's data, and
// that a reader of the base keeps its bytes.
func TestPatch(t *testing.T) {
	t.Parallel()
	const block = 64 << 10
	const baseSize = 40 * block // 2.5 MiB
	for _, tc := range []struct {
		name      string
		versioned bool
		size      int64
		dirty     []Range
	}{
		{"overwrite-4k-middle", false, baseSize, []Range{{baseSize / 2, 4096}}},
		{"overwrite-unaligned", false, baseSize, []Range{{block - 7, 100}}},
		{"append-4k", false, baseSize + 4096, []Range{{baseSize, 4096}}},
		{"shrink", false, baseSize - block - 3, nil},
		{"shrink-to-zero", false, 0, nil},
		{"extend-zeros", false, baseSize + 3*block + 5, nil},
		{"sparse-write-past-end", false, baseSize + 10*block, []Range{{baseSize + 5*block, 10}}},
		{"many-ranges", false, baseSize, []Range{{0, 1}, {4096, 4096}, {block, block}, {baseSize - 1, 1}}},
		{"shrink-and-write", false, baseSize / 2, []Range{{baseSize/2 - 100, 100}}},
		{"everything", false, baseSize, []Range{{0, baseSize}}},
		{"versioned-overwrite", true, baseSize, []Range{{12345, 6789}}},
		{"versioned-append", true, baseSize + 1, []Range{{baseSize, 1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s, _ := newTestStore(t, 4, 2)
			mustBucket(t, s, "bkt")
			if tc.versioned {
				if err := s.SetVersioning(ctx, "bkt", VersioningEnabled); err != nil {
					t.Fatal(err)
				}
			}
			base := randBytes(baseSize, 1)
			old := mustPut(t, s, "bkt", "f", base)
			reader, err := s.Open(ctx, "bkt", "f", GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer reader.Close()

			src := randBytes(int(max(tc.size, 1)), 2)
			want := applyPatch(base, tc.size, tc.dirty, src)
			changed := int64(0)
			for _, r := range tc.dirty {
				changed += r.Length
			}
			if tc.size > baseSize {
				changed += tc.size - baseSize // zeros of the extension, at most
			}
			before := s.Stats().DriveBytesWritten
			p, err := s.PatchAsync(ctx, "bkt", "f", patchOf(t, s, "bkt", "f", tc.size, tc.dirty, src), PutOptions{ContentType: "text/x-test", Meta: map[string]string{"k": "v"}})
			if err != nil {
				t.Fatal(err)
			}
			info, err := p.Wait(ctx)
			if err != nil {
				t.Fatal(err)
			}
			wrote := s.Stats().DriveBytesWritten - before
			if limit := shardCost(changed, 2, 2, block); wrote > limit {
				t.Errorf("the patch wrote %d bytes to the drives, want at most %d (%d changed)", wrote, limit, changed)
			}
			if info.Size != tc.size || !strings.HasSuffix(info.ETag, "-1") || info.ETag == old.ETag {
				t.Errorf("info %+v: want size %d and an opaque new ETag", info, tc.size)
			}
			if got := readAll(t, s, "bkt", "f", GetOptions{}); !bytes.Equal(got, want) {
				t.Fatalf("content after the patch differs from the model (%d bytes, want %d)", len(got), len(want))
			}
			head, err := s.Head(ctx, "bkt", "f", GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if head.ETag != info.ETag || head.ContentType != "text/x-test" || head.Meta["k"] != "v" {
				t.Errorf("head %+v does not match the patch's %+v", head, info)
			}
			got := make([]byte, baseSize)
			if _, err := reader.ReadAt(got, 0); err != nil || !bytes.Equal(got, base) {
				t.Fatalf("a reader opened before the patch: %v, or its bytes changed", err)
			}
			if tc.versioned {
				if got := readAll(t, s, "bkt", "f", GetOptions{VersionID: old.VersionID}); !bytes.Equal(got, base) {
					t.Fatal("the older version changed")
				}
			}
			_ = reader.Close()
			if _, err := s.Clean(ctx); err != nil {
				t.Fatal(err)
			}
			if got := readAll(t, s, "bkt", "f", GetOptions{}); !bytes.Equal(got, want) {
				t.Fatal("content after Clean differs from the model")
			}
		})
	}
}

// TestPatchChain patches one object many times, each over the last, as
// a file fsynced again and again is, and checks the content against a
// model after each, and that the segment list stays merged.
func TestPatchChain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := newTestStore(t, 3, 1, func(o *Options) { o.PackMaxSize = 0 })
	mustBucket(t, s, "bkt")
	model := randBytes(1<<20, 3)
	mustPut(t, s, "bkt", "f", model)
	rng := uint64(7)
	next := func(n int64) int64 {
		rng = rng*6364136223846793005 + 1442695040888963407
		return int64((rng >> 33) % uint64(n))
	}
	for i := range 60 {
		size := int64(len(model))
		switch i % 5 {
		case 3:
			size = max(size-next(50000), 1)
		case 4:
			size += next(70000)
		}
		var dirty []Range
		for pos := int64(0); pos < size; {
			off := pos + next(200000)
			if off >= size {
				break
			}
			n := min(1+next(9000), size-off)
			dirty = append(dirty, Range{off, n})
			pos = off + n + 1
		}
		src := randBytes(int(size), uint64(100+i))
		p, err := s.PatchAsync(ctx, "bkt", "f", patchOf(t, s, "bkt", "f", size, dirty, src), PutOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Wait(ctx); err != nil {
			t.Fatal(err)
		}
		model = applyPatch(model, size, dirty, src)
		if got := readAll(t, s, "bkt", "f", GetOptions{}); !bytes.Equal(got, model) {
			t.Fatalf("patch %d: content differs from the model", i)
		}
	}
	if _, err := s.Clean(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestPatchBaseGone: the base version is deleted and its data freed as
// far as the cleaner may while the patch's reader pins it; the patch
// still commits, taking the data back from the garbage.
func TestPatchBaseGone(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := newTestStore(t, 4, 2)
	mustBucket(t, s, "bkt")
	base := randBytes(300<<10, 4)
	mustPut(t, s, "bkt", "f", base)
	src := randBytes(300<<10, 5)
	dirty := []Range{{1000, 2000}}
	p := patchOf(t, s, "bkt", "f", int64(len(base)), dirty, src)
	if _, err := s.Delete(ctx, "bkt", "f", DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Clean(ctx); err != nil {
		t.Fatal(err)
	}
	pend, err := s.PatchAsync(ctx, "bkt", "f", p, PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pend.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	_ = p.Base.Close()
	if _, err := s.Clean(ctx); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, s, "bkt", "f", GetOptions{}); !bytes.Equal(got, applyPatch(base, int64(len(base)), dirty, src)) {
		t.Fatal("content differs from the model")
	}
}

// TestPatchRefused: malformed patches fail at once, and leave the object
// as it was.
func TestPatchRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := newTestStore(t, 2, 1)
	mustBucket(t, s, "bkt")
	base := randBytes(5000, 6)
	mustPut(t, s, "bkt", "f", base)
	src := bytes.NewReader(make([]byte, 10000))
	for _, tc := range []struct {
		name string
		p    Patch
		opt  PutOptions
	}{
		{"negative-size", Patch{Size: -1}, PutOptions{}},
		{"range-past-size", Patch{Size: 100, Dirty: []Range{{90, 20}}, Src: src}, PutOptions{}},
		{"empty-range", Patch{Size: 100, Dirty: []Range{{10, 0}}, Src: src}, PutOptions{}},
		{"overlapping", Patch{Size: 100, Dirty: []Range{{10, 10}, {15, 10}}, Src: src}, PutOptions{}},
		{"unordered", Patch{Size: 100, Dirty: []Range{{50, 10}, {10, 10}}, Src: src}, PutOptions{}},
		{"no-source", Patch{Size: 100, Dirty: []Range{{10, 10}}}, PutOptions{}},
		{"conditional", Patch{Size: 100}, PutOptions{IfMatch: "*"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.p.Base = patchOf(t, s, "bkt", "f", 0, nil, nil).Base
			if _, err := s.PatchAsync(ctx, "bkt", "f", tc.p, tc.opt); !errors.Is(err, ErrInvalidArgument) {
				t.Fatalf("PatchAsync: %v, want ErrInvalidArgument", err)
			}
		})
	}
	if got := readAll(t, s, "bkt", "f", GetOptions{}); !bytes.Equal(got, base) {
		t.Fatal("a refused patch changed the object")
	}
}

// TestPatchSegmentBound: with flat lists (chunking off, as on an index
// with transaction limits), patches of scattered small changes, past
// Options.MaxSegments, rewrite the most crowded windows with the changes
// (read from the base) so that the list stays under the bound, and the
// content stays right.
func TestPatchSegmentBound(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const limit = 60
	s, _ := newTestStore(t, 3, 1, func(o *Options) { o.MaxSegments = limit; o.PackMaxSize = 0; o.ChunkSegments = -1 })
	mustBucket(t, s, "bkt")
	model := randBytes(3<<20, 8)
	mustPut(t, s, "bkt", "f", model)
	rewrote := false
	for i := range 40 {
		var dirty []Range
		for j := range 4 {
			dirty = append(dirty, Range{int64((i*4+j)*19_001) % (3<<20 - 100), 100})
		}
		sort.Slice(dirty, func(a, b int) bool { return dirty[a].Offset < dirty[b].Offset })
		src := randBytes(len(model), uint64(200+i))
		before := s.Stats().DriveBytesWritten
		p, err := s.PatchAsync(ctx, "bkt", "f", patchOf(t, s, "bkt", "f", int64(len(model)), dirty, src), PutOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Wait(ctx); err != nil {
			t.Fatalf("patch %d: %v", i, err)
		}
		if s.Stats().DriveBytesWritten-before > 1<<20 {
			rewrote = true
		}
		model = applyPatch(model, int64(len(model)), dirty, src)
		r, err := s.Open(ctx, "bkt", "f", GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		n := len(r.segments())
		_ = r.Close()
		if n > limit {
			t.Fatalf("patch %d: %d segments, over the bound %d", i, n, limit)
		}
		if got := readAll(t, s, "bkt", "f", GetOptions{}); !bytes.Equal(got, model) {
			t.Fatalf("patch %d: content differs from the model", i)
		}
	}
	if !rewrote {
		t.Fatal("no patch rewrote crowded windows: the bound was never reached")
	}
}

// TestPatchFuncHeld: a PatchFuncAsync is pending from the call on, so a
// reader of its key waits for it; that reader's wait calls OnWait once,
// which gives the patch; a read by version with Committed does not wait
// and sees the version before it.
func TestPatchFuncHeld(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := newTestStore(t, 4, 2)
	mustBucket(t, s, "bkt")
	base := randBytes(300<<10, 6)
	info := mustPut(t, s, "bkt", "f", base)
	src := randBytes(300<<10, 7)
	dirty := []Range{{5000, 100}, {200 << 10, 4096}}
	p := patchOf(t, s, "bkt", "f", int64(len(base)), dirty, src)
	release := make(chan struct{})
	calls := 0
	var mu sync.Mutex
	pend, err := s.PatchFuncAsync(ctx, "bkt", "f", func(ctx context.Context) (Patch, error) {
		select {
		case <-release:
			return p, nil
		case <-ctx.Done():
			return Patch{}, ctx.Err()
		}
	}, PutOptions{OnWait: func() {
		mu.Lock()
		calls++
		mu.Unlock()
		close(release)
	}})
	if err != nil {
		t.Fatal(err)
	}
	// The committed version is still the base, readable without a wait.
	r, err := s.Open(ctx, "bkt", "f", GetOptions{VersionID: info.VersionID, Committed: true})
	if err != nil {
		t.Fatal(err)
	}
	if r.Info().ETag != info.ETag {
		t.Fatalf("a committed read found ETag %s, want the base's %s", r.Info().ETag, info.ETag)
	}
	_ = r.Close()
	select {
	case <-pend.Done():
		t.Fatal("the held patch ran before anything waited for it")
	default:
	}
	// A reader of the key waits for it, and its wait lets it go.
	if got := readAll(t, s, "bkt", "f", GetOptions{}); !bytes.Equal(got, applyPatch(base, int64(len(base)), dirty, src)) {
		t.Fatal("content differs from the model")
	}
	if _, err := pend.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if calls != 1 {
		t.Fatalf("OnWait called %d times, want once", calls)
	}
}
