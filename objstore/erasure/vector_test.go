package erasure

import (
	"fmt"
	"io"
	"slices"
	"testing"
)

// vecFile is a MemFile read through VectorReaderAt, as shard files are.
type vecFile struct {
	*MemFile
	calls *int
}

func (v vecFile) ReadVAt(bufs [][]byte, off int64) (int, error) {
	*v.calls++
	total := 0
	for _, b := range bufs {
		n, err := v.ReadAt(b, off+int64(total))
		total += n
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

func vreaders(files []*MemFile, calls *int) []io.ReaderAt {
	srcs := make([]io.ReaderAt, len(files))
	for i, f := range files {
		srcs[i] = vecFile{f, calls}
	}
	return srcs
}

// TestVectoredReads: blocks read straight into the destination (all data
// shards good) equal the data, sizes not multiple of k included; a
// corrupt data shard makes the direct read give way to the general path,
// which reports the shard and reconstructs.
func TestVectoredReads(t *testing.T) {
	for _, g := range testGeometries {
		for _, size := range testSizes(testBlockSize) {
			t.Run(fmt.Sprintf("%v/%d", g, size), func(t *testing.T) {
				c := newTestCodec(t, g, testBlockSize)
				data := testData(size, 9)
				orig, hdr := encode(t, c, data)
				calls := 0
				got, bad, err := readBlocks(c, hdr, vreaders(orig, &calls))
				if err != nil || len(bad) != 0 {
					t.Fatalf("healthy: bad %v, %v", bad, err)
				}
				if want := int(hdr.BlockCount()) * g.k; calls != want {
					t.Errorf("healthy: %d vectored reads, want %d (one per data shard and block)", calls, want)
				}
				mustEqualBytes(t, "healthy", got, data)
				if g.m == 0 || size == 0 {
					return
				}
				for name, off := range corruptions(hdr) {
					for i := range g.k {
						files := clone(orig)
						flip(t, files[i], off)
						got, bad, err := readBlocks(c, hdr, vreaders(files, &calls))
						if err != nil {
							t.Fatalf("%s data shard %d: %v", name, i, err)
						}
						mustEqualBytes(t, fmt.Sprintf("%s data shard %d", name, i), got, data)
						if !slices.Equal(bad, []int{i}) {
							t.Fatalf("%s data shard %d: bad %v", name, i, bad)
						}
					}
				}
			})
		}
	}
}
