package erasure

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
)

func TestRebuild(t *testing.T) {
	for _, g := range testGeometries {
		if g.m == 0 {
			continue
		}
		for _, size := range []int{0, 63, testBlockSize, 3*testBlockSize + 7} {
			t.Run(fmt.Sprintf("%v/%d", g, size), func(t *testing.T) {
				c := newTestCodec(t, g, testBlockSize)
				data := testData(size, 12)
				orig, hdr := encode(t, c, data)
				n := g.k + g.m
				for r := 1; r <= g.m; r++ {
					for _, lost := range combinations(n, r) {
						for _, how := range []string{"missing", "corrupt"} {
							files := clone(orig)
							srcs := readers(files, lost...)
							if how == "corrupt" && size > 0 {
								srcs = readers(files)
								for _, i := range lost {
									flip(t, files[i], hdr.ShardFileSize()-1)
								}
							}
							targets := map[int]io.WriterAt{}
							rebuilt := map[int]*MemFile{}
							for _, i := range lost {
								rebuilt[i] = &MemFile{}
								targets[i] = rebuilt[i]
							}
							if err := c.Rebuild(context.Background(), hdr, srcs, targets); err != nil {
								t.Fatalf("%s %v: %v", how, lost, err)
							}
							for i, f := range rebuilt {
								mustEqualBytes(t, fmt.Sprintf("%s %v shard %d", how, lost, i), f.Bytes(), orig[i].Bytes())
								files[i] = f
							}
							checkStates(t, c, hdr, readers(files), nil)
						}
					}
				}
				if size == 0 {
					return
				}
				lost := make([]int, g.m+1)
				targets := map[int]io.WriterAt{}
				for i := range lost {
					lost[i] = i
					targets[i] = &MemFile{}
				}
				if err := c.Rebuild(context.Background(), hdr, readers(orig), targets); !errors.Is(err, ErrReadQuorum) {
					t.Fatalf("rebuild %v: %v, want ErrReadQuorum", lost, err)
				}
			})
		}
	}
}

func TestRebuildArgs(t *testing.T) {
	c := newTestCodec(t, geometry{2, 1}, testBlockSize)
	files, hdr := encode(t, c, testData(5000, 13))
	ctx := context.Background()
	for _, targets := range []map[int]io.WriterAt{{3: &MemFile{}}, {-1: &MemFile{}}, {0: nil}} {
		if err := c.Rebuild(ctx, hdr, readers(files), targets); err == nil {
			t.Errorf("targets %v accepted", targets)
		}
	}
	if err := c.Rebuild(ctx, hdr, readers(files), nil); err != nil {
		t.Errorf("no targets: %v", err)
	}
	fs := &flakySink{ok: 1}
	if err := c.Rebuild(ctx, hdr, readers(files, 1), map[int]io.WriterAt{1: fs}); !errors.Is(err, errSinkFailed) {
		t.Errorf("failing sink: %v", err)
	}
}

func TestVerify(t *testing.T) {
	c := newTestCodec(t, geometry{3, 2}, testBlockSize)
	orig, hdr := encode(t, c, testData(3*testBlockSize+7, 14))
	tests := []struct {
		name  string
		mod   func(files []*MemFile, srcs []io.ReaderAt)
		state map[int]ShardState
	}{
		{"healthy", func([]*MemFile, []io.ReaderAt) {}, nil},
		{"missing", func(_ []*MemFile, s []io.ReaderAt) { s[1], s[4] = nil, nil },
			map[int]ShardState{1: ShardMissing, 4: ShardMissing}},
		{"block data", func(f []*MemFile, _ []io.ReaderAt) { flip(t, f[2], hdr.BlockOffset(2)+100) },
			map[int]ShardState{2: ShardCorrupt}},
		{"block checksum", func(f []*MemFile, _ []io.ReaderAt) { flip(t, f[3], hdr.BlockOffset(3)) },
			map[int]ShardState{3: ShardCorrupt}},
		{"header", func(f []*MemFile, _ []io.ReaderAt) { flip(t, f[0], 20) },
			map[int]ShardState{0: ShardCorrupt}},
		{"truncated", func(f []*MemFile, _ []io.ReaderAt) { _ = f[0].Truncate(hdr.ShardFileSize() - 1) },
			map[int]ShardState{0: ShardCorrupt}},
		{"trailing byte", func(f []*MemFile, _ []io.ReaderAt) { _ = f[4].Truncate(hdr.ShardFileSize() + 1) },
			map[int]ShardState{4: ShardCorrupt}},
		{"swapped", func(_ []*MemFile, s []io.ReaderAt) { s[0], s[1] = s[1], s[0] },
			map[int]ShardState{0: ShardCorrupt, 1: ShardCorrupt}},
		{"unreadable", func(_ []*MemFile, s []io.ReaderAt) { s[2] = errReaderAt{} },
			map[int]ShardState{2: ShardCorrupt}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := clone(orig)
			srcs := readers(files)
			tt.mod(files, srcs)
			checkStates(t, c, hdr, srcs, tt.state)
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Verify(ctx, hdr, readers(orig)); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	if _, err := c.Verify(context.Background(), hdr, readers(orig)[:3]); !errors.Is(err, ErrGeometry) {
		t.Errorf("short srcs: %v", err)
	}
}

func TestShardStateString(t *testing.T) {
	for s, want := range map[ShardState]string{ShardOK: "ok", ShardMissing: "missing", ShardCorrupt: "corrupt", 7: "ShardState(7)"} {
		if s.String() != want {
			t.Errorf("%d: %q", int(s), s.String())
		}
	}
}
