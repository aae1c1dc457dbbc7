package objstore

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/cairnstore/cairn/objstore/meta"
)

// readerBytesAll reads the whole of r.
func readerBytesAll(t *testing.T, r *ObjectReader) []byte {
	t.Helper()
	b, err := io.ReadAll(io.NewSectionReader(r, 0, r.Size()))
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	return b
}

// chunkRoot is the chunk list of bucket/key's version vid.
func chunkRoot(t *testing.T, s *Store, bucket, key, vid string) []meta.ChunkRef {
	t.Helper()
	var root []meta.ChunkRef
	err := s.idx.View(context.Background(), func(tx meta.Tx) error {
		v, err := findVersion(tx, bucket, key, vid)
		if err == nil {
			root = v.Chunks
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// TestPatchChunkedChain commits a chain of random patches (scattered
// writes, truncations, extensions) over a chunked version, each over the
// reader Rebase derived from the one before, as the mount does, in each
// versioning mode. After every commit the rebased reader, a fresh Open and
// the model agree; a patch writes only the chunks its changes fall in
// (the new ids in the root) however long the list; a reader opened early
// keeps its bytes; older versions keep theirs; fsck (at cleanup) finds
// every reference count right.
func TestPatchChunkedChain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, mode := range []string{"", VersioningEnabled, VersioningSuspended} {
		t.Run("versioning="+mode, func(t *testing.T) {
			t.Parallel()
			s, _ := newTestStore(t, 3, 1, func(o *Options) { o.ChunkSegments = 8 })
			mustBucket(t, s, "bkt")
			if mode != "" {
				if err := s.SetVersioning(ctx, "bkt", mode); err != nil {
					t.Fatal(err)
				}
			}
			rng := rand.New(rand.NewPCG(7, uint64(len(mode))))
			model := randBytes(1<<20, 3)
			mustPut(t, s, "bkt", "f", model)
			base, err := s.Open(ctx, "bkt", "f", GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = base.Close() }()
			var early *ObjectReader
			var earlyModel []byte
			versions := map[string][]byte{}
			rebased := 0
			for i := range 120 {
				size := int64(len(model))
				switch rng.IntN(10) {
				case 0:
					size = size * int64(70+rng.IntN(30)) / 100
				case 1:
					size += int64(rng.IntN(100_000))
				}
				var dirty []Range
				end := int64(0)
				for range 1 + rng.IntN(6) {
					off := end + int64(rng.IntN(int(size/8)+1))
					n := int64(1 + rng.IntN(5000))
					if off+n > size {
						break
					}
					dirty = append(dirty, Range{off, n})
					end = off + n + 1
				}
				src := randBytes(int(size), uint64(1000+i))
				rootBefore := map[uint64]bool{}
				for _, c := range chunkRoot(t, s, "bkt", "f", base.Info().VersionID) {
					rootBefore[c.ID] = true
				}
				pend, err := s.PatchAsync(ctx, "bkt", "f", Patch{Base: base, Size: size, Dirty: dirty, Src: bytes.NewReader(src)}, PutOptions{})
				if err != nil {
					t.Fatalf("patch %d: %v", i, err)
				}
				info, err := pend.Wait(ctx)
				if err != nil {
					t.Fatalf("patch %d: %v", i, err)
				}
				model = applyPatch(model, size, dirty, src)
				versions[info.VersionID] = model
				root := chunkRoot(t, s, "bkt", "f", info.VersionID)
				written := 0
				for _, c := range root {
					if !rootBefore[c.ID] {
						written++
					}
				}
				// Over an inherited root, a patch writes the chunks its
				// ranges (and a truncation or extension) touch, each split
				// in two at most; a versioned one writes every chunk anew.
				if mode == "" && len(rootBefore) > 0 && len(root) > 0 && written > 2*(len(dirty)+1)*2 {
					t.Fatalf("patch %d of %d ranges wrote %d of %d chunks", i, len(dirty), written, len(root))
				}
				if i == 10 {
					if early, err = s.Open(ctx, "bkt", "f", GetOptions{}); err != nil {
						t.Fatal(err)
					}
					earlyModel = model
				}
				next, err := s.Rebase(ctx, base, pend)
				if err != nil {
					t.Fatalf("rebase %d: %v", i, err)
				}
				rebased++
				_ = base.Close()
				base = next
				if got := readerBytesAll(t, base); !bytes.Equal(got, model) {
					t.Fatalf("patch %d: the rebased reader differs from the model", i)
				}
				if i%10 == 0 {
					if got := readAll(t, s, "bkt", "f", GetOptions{}); !bytes.Equal(got, model) {
						t.Fatalf("patch %d: a fresh read differs from the model", i)
					}
				}
			}
			if len(chunkRoot(t, s, "bkt", "f", base.Info().VersionID)) < 4 {
				t.Fatal("the chain never made a chunked version: nothing was tested")
			}
			if got := readerBytesAll(t, early); !bytes.Equal(got, earlyModel) {
				t.Fatal("a reader opened early lost its bytes")
			}
			_ = early.Close()
			if mode == VersioningEnabled {
				for vid, want := range versions {
					if got := readAll(t, s, "bkt", "f", GetOptions{VersionID: vid}); !bytes.Equal(got, want) {
						t.Fatalf("version %s lost its bytes", vid)
					}
				}
			}
			if rebased == 0 {
				t.Fatal("no rebase")
			}
		})
	}
}

// TestRebaseRefused: Rebase refuses a pending patch, another reader's
// patch and a version replaced since, and leaves the reader usable.
func TestRebaseRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := newTestStore(t, 3, 1, func(o *Options) { o.ChunkSegments = 4 })
	mustBucket(t, s, "bkt")
	model := randBytes(256<<10, 5)
	mustPut(t, s, "bkt", "f", model)
	p := patchOf(t, s, "bkt", "f", int64(len(model)), []Range{{100, 10}, {50_000, 10}}, randBytes(len(model), 6))
	other := patchOf(t, s, "bkt", "f", int64(len(model)), nil, nil)
	pend, err := s.PatchAsync(ctx, "bkt", "f", p, PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pend.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Rebase(ctx, other.Base, pend); err == nil {
		t.Fatal("rebased a reader the patch was not made over")
	}
	mustPut(t, s, "bkt", "f", []byte("replaced"))
	if _, err := s.Rebase(ctx, p.Base, pend); err == nil {
		t.Fatal("rebased on a replaced version")
	}
	if got := readerBytesAll(t, p.Base); !bytes.Equal(got, model) {
		t.Fatal("a refused rebase changed the reader")
	}
}
