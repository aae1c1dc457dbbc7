package erasure

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"
)

const testBlockSize = 4096

// geometry is a k+m pair under test.
type geometry struct{ k, m int }

func (g geometry) String() string { return fmt.Sprintf("%d+%d", g.k, g.m) }

var testGeometries = []geometry{{1, 0}, {1, 1}, {2, 1}, {2, 2}, {3, 2}, {4, 4}}

// testSizes are the object sizes round-tripped for a block size.
func testSizes(bs int) []int {
	return []int{0, 1, 63, bs - 1, bs, bs + 1, 3*bs + 7}
}

func testData(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, uint64(n)))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func testID(seed byte) DataID {
	var id DataID
	for i := range id {
		id[i] = seed + byte(i)
	}
	return id
}

func newTestCodec(t testing.TB, g geometry, bs int) *Codec {
	t.Helper()
	c, err := NewCodec(g.k, g.m, bs)
	if err != nil {
		t.Fatalf("NewCodec(%d, %d, %d): %v", g.k, g.m, bs, err)
	}
	return c
}

// encode writes data through a Writer into fresh MemFiles and returns them
// with the header describing the object.
func encode(t testing.TB, c *Codec, data []byte) ([]*MemFile, Header) {
	t.Helper()
	hdr := Header{DataID: testID(1), Bucket: "bucket", Key: "dir/key.bin"}
	files := make([]*MemFile, c.K()+c.M())
	sinks := make([]io.WriterAt, len(files))
	for i := range files {
		files[i] = &MemFile{}
		sinks[i] = files[i]
	}
	w, err := c.NewWriter(context.Background(), hdr, sinks)
	if err != nil {
		t.Fatalf("NewWriter: %v", err)
	}
	// Odd-sized writes cross shard and block boundaries.
	for p := data; len(p) > 0; {
		n := min(len(p), 1000)
		if _, err := w.Write(p[:n]); err != nil {
			t.Fatalf("Write: %v", err)
		}
		p = p[n:]
	}
	if err := w.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if w.Size() != int64(len(data)) || len(w.Failed()) != 0 {
		t.Fatalf("Size %d Failed %v, want %d []", w.Size(), w.Failed(), len(data))
	}
	hdr.K, hdr.M, hdr.BlockSize, hdr.Size = c.K(), c.M(), c.BlockSize(), int64(len(data))
	return files, hdr
}

// readers returns files as sources, nil for the indices in drop.
func readers(files []*MemFile, drop ...int) []io.ReaderAt {
	srcs := make([]io.ReaderAt, len(files))
	for i, f := range files {
		if f != nil && !slices.Contains(drop, i) {
			srcs[i] = f
		}
	}
	return srcs
}

// clone deep-copies files.
func clone(files []*MemFile) []*MemFile {
	out := make([]*MemFile, len(files))
	for i, f := range files {
		out[i] = NewMemFile(f.Bytes())
	}
	return out
}

// flip xors one byte of f.
func flip(t testing.TB, f *MemFile, off int64) {
	t.Helper()
	var b [1]byte
	if _, err := f.ReadAt(b[:], off); err != nil {
		t.Fatalf("flip at %d: %v", off, err)
	}
	b[0] ^= 0x5a
	if _, err := f.WriteAt(b[:], off); err != nil {
		t.Fatal(err)
	}
}

// readBlocks decodes every block with ReadBlock and returns the bytes and
// the union of reported bad shards.
func readBlocks(c *Codec, hdr Header, srcs []io.ReaderAt) ([]byte, []int, error) {
	var out []byte
	var bad []int
	dst := make([]byte, c.BlockSize())
	for b := range hdr.BlockCount() {
		n, bb, err := c.ReadBlock(context.Background(), hdr, srcs, b, dst)
		for _, i := range bb {
			if !slices.Contains(bad, i) {
				bad = append(bad, i)
			}
		}
		if err != nil {
			return nil, bad, err
		}
		if n != hdr.BlockLen(b) {
			return nil, bad, fmt.Errorf("block %d: n=%d want %d", b, n, hdr.BlockLen(b))
		}
		out = append(out, dst[:n]...)
	}
	slices.Sort(bad)
	return out, bad, nil
}

func mustEqualBytes(t testing.TB, what string, got, want []byte) {
	t.Helper()
	if !bytes.Equal(got, want) {
		i := 0
		for i < min(len(got), len(want)) && got[i] == want[i] {
			i++
		}
		t.Fatalf("%s: bytes differ (len %d vs %d, first difference at %d)", what, len(got), len(want), i)
	}
}

// combinations returns every subset of 0..n-1 of size r.
func combinations(n, r int) [][]int {
	var out [][]int
	var rec func(start int, cur []int)
	rec = func(start int, cur []int) {
		if len(cur) == r {
			out = append(out, slices.Clone(cur))
			return
		}
		for i := start; i < n; i++ {
			rec(i+1, append(cur, i))
		}
	}
	rec(0, nil)
	return out
}

// flakySink is an io.WriterAt that fails every call after its first ok ones.
type flakySink struct {
	MemFile
	ok    int64
	calls atomic.Int64
}

var errSinkFailed = errors.New("test: sink failed")

func (s *flakySink) WriteAt(p []byte, off int64) (int, error) {
	if s.calls.Add(1) > s.ok {
		return 0, errSinkFailed
	}
	return s.MemFile.WriteAt(p, off)
}

// errReaderAt fails every read.
type errReaderAt struct{}

var errRead = errors.New("test: read failed")

func (errReaderAt) ReadAt([]byte, int64) (int, error) { return 0, errRead }

// discard is an io.WriterAt that drops everything.
type discard struct{}

func (discard) WriteAt(p []byte, _ int64) (int, error) { return len(p), nil }
