package erasure

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"testing"
)

func TestDegradedDrop(t *testing.T) {
	for _, g := range testGeometries {
		for _, size := range []int{1, testBlockSize + 1, 3*testBlockSize + 7} {
			t.Run(fmt.Sprintf("%v/%d", g, size), func(t *testing.T) {
				c := newTestCodec(t, g, testBlockSize)
				data := testData(size, 5)
				files, hdr := encode(t, c, data)
				n := g.k + g.m
				for r := 1; r <= g.m; r++ {
					for _, drop := range combinations(n, r) {
						got, bad, err := readBlocks(c, hdr, readers(files, drop...))
						if err != nil {
							t.Fatalf("drop %v: %v", drop, err)
						}
						if !slices.Equal(bad, drop) {
							t.Fatalf("drop %v: bad %v", drop, bad)
						}
						mustEqualBytes(t, fmt.Sprintf("drop %v", drop), got, data)
					}
				}
				for _, drop := range combinations(n, g.m+1) {
					if _, _, err := readBlocks(c, hdr, readers(files, drop...)); !errors.Is(err, ErrReadQuorum) {
						t.Fatalf("drop %v: %v, want ErrReadQuorum", drop, err)
					}
				}
			})
		}
	}
}

// corruptions returns offsets to flip in a shard file: the checksum and data
// of the first block, and the last byte of the last block.
func corruptions(hdr Header) map[string]int64 {
	last := hdr.BlockCount() - 1
	return map[string]int64{
		"crc0":      hdr.BlockOffset(0) + 1,
		"data0":     hdr.BlockOffset(0) + 4,
		"dataLast":  hdr.ShardFileSize() - 1,
		"crcLast":   hdr.BlockOffset(last),
		"dataLast0": hdr.BlockOffset(last) + 4,
	}
}

func TestDegradedCorrupt(t *testing.T) {
	for _, g := range testGeometries {
		if g.m == 0 {
			continue
		}
		for _, size := range []int{63, 3*testBlockSize + 7} {
			t.Run(fmt.Sprintf("%v/%d", g, size), func(t *testing.T) {
				c := newTestCodec(t, g, testBlockSize)
				data := testData(size, 6)
				orig, hdr := encode(t, c, data)
				n := g.k + g.m
				for name, off := range corruptions(hdr) {
					for i := range n {
						files := clone(orig)
						flip(t, files[i], off)
						got, bad, err := readBlocks(c, hdr, readers(files))
						if err != nil {
							t.Fatalf("%s shard %d: %v", name, i, err)
						}
						mustEqualBytes(t, fmt.Sprintf("%s shard %d", name, i), got, data)
						// Parity is read only when a data shard is bad.
						var want []int
						if i < g.k {
							want = []int{i}
						}
						if !slices.Equal(bad, want) {
							t.Fatalf("%s shard %d: bad %v, want %v", name, i, bad, want)
						}
						checkStates(t, c, hdr, readers(files), map[int]ShardState{i: ShardCorrupt})
						// Drop data shard 0 and the parity shards before i,
						// so the corrupt parity shard is read and detected.
						if i >= g.k && i-g.k <= g.m-2 {
							drop := []int{0}
							for p := g.k; p < i; p++ {
								drop = append(drop, p)
							}
							got, bad, err := readBlocks(c, hdr, readers(files, drop...))
							if err != nil {
								t.Fatalf("%s parity %d drop %v: %v", name, i, drop, err)
							}
							mustEqualBytes(t, "parity", got, data)
							if want := append(slices.Clone(drop), i); !slices.Equal(bad, want) {
								t.Fatalf("%s parity %d drop %v: bad %v want %v", name, i, drop, bad, want)
							}
						}
					}
				}
			})
		}
	}
}

// TestCorruptParityNeeded is the explicit case: a corrupt parity shard that
// must stand in for a missing data shard is detected and skipped.
func TestCorruptParityNeeded(t *testing.T) {
	c := newTestCodec(t, geometry{2, 2}, testBlockSize)
	data := testData(2*testBlockSize+5, 7)
	files, hdr := encode(t, c, data)
	flip(t, files[2], hdr.BlockOffset(1)+10)
	got, bad, err := readBlocks(c, hdr, readers(files, 0))
	if err != nil || !slices.Equal(bad, []int{0, 2}) {
		t.Fatalf("bad %v err %v", bad, err)
	}
	mustEqualBytes(t, "read", got, data)
	flip(t, files[3], hdr.BlockOffset(1)+10)
	if _, _, err := readBlocks(c, hdr, readers(files, 0)); !errors.Is(err, ErrReadQuorum) || !errors.Is(err, ErrCorrupt) {
		t.Fatalf("two corrupt + one missing: %v", err)
	}
}

// TestForeignShards feeds shards that belong elsewhere: another object,
// another index, an unfinished write, a truncated file, an unreadable one.
func TestForeignShards(t *testing.T) {
	c := newTestCodec(t, geometry{3, 2}, testBlockSize)
	data := testData(2*testBlockSize+9, 8)
	files, hdr := encode(t, c, data)

	other, _ := encode(t, c, testData(2*testBlockSize+9, 9))
	otherHdr := hdr
	otherHdr.DataID = testID(99)
	foreign := clone(other)
	for i, f := range foreign { // same geometry and size, another data id
		h := otherHdr
		h.Index = i
		b, _ := h.MarshalBinary()
		if _, err := f.WriteAt(b, 0); err != nil {
			t.Fatal(err)
		}
	}
	unfinished := clone(files)[1]
	h := hdr
	h.Index, h.Size = 1, 0
	b, _ := h.MarshalBinary()
	if _, err := unfinished.WriteAt(b, 0); err != nil {
		t.Fatal(err)
	}
	truncated := NewMemFile(files[0].Bytes()[:hdr.BlockOffset(1)+10])

	tests := []struct {
		name    string
		shard   int
		src     io.ReaderAt
		wantBad bool
	}{
		{"other data id", 0, foreign[0], true},
		{"other index", 1, files[2], true},
		{"unfinished write", 1, unfinished, true},
		{"truncated", 0, truncated, true},
		{"unreadable", 2, errReaderAt{}, true},
		{"empty", 0, &MemFile{}, true},
		{"garbage", 1, NewMemFile(testData(5000, 10)), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srcs := readers(files)
			srcs[tt.shard] = tt.src
			got, bad, err := readBlocks(c, hdr, srcs)
			if err != nil {
				t.Fatal(err)
			}
			mustEqualBytes(t, "read", got, data)
			if !slices.Equal(bad, []int{tt.shard}) {
				t.Fatalf("bad %v, want [%d]", bad, tt.shard)
			}
			checkStates(t, c, hdr, srcs, map[int]ShardState{tt.shard: ShardCorrupt})
		})
	}
}

// checkStates runs Verify and compares with want (unlisted shards are OK).
func checkStates(t *testing.T, c *Codec, hdr Header, srcs []io.ReaderAt, want map[int]ShardState) {
	t.Helper()
	states, err := c.Verify(context.Background(), hdr, srcs)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range states {
		if s != want[i] {
			t.Fatalf("Verify: shard %d %v, want %v (all %v)", i, s, want[i], states)
		}
	}
}
