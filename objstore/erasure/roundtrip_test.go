package erasure

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	for _, g := range testGeometries {
		for _, size := range testSizes(testBlockSize) {
			t.Run(fmt.Sprintf("%v/%d", g, size), func(t *testing.T) {
				c := newTestCodec(t, g, testBlockSize)
				data := testData(size, 1)
				files, hdr := encode(t, c, data)
				checkRoundTrip(t, c, hdr, files, data)
			})
		}
	}
}

func TestRoundTripLarge(t *testing.T) {
	const bs = 1 << 20
	for _, g := range []geometry{{2, 2}, {3, 2}} {
		t.Run(g.String(), func(t *testing.T) {
			c := newTestCodec(t, g, bs)
			data := testData(5*bs+12345, 2)
			files, hdr := encode(t, c, data)
			checkRoundTrip(t, c, hdr, files, data)
			got, bad, err := readBlocks(c, hdr, readers(files, 0, g.k))
			if err != nil || !slices.Equal(bad, []int{0, g.k}) {
				t.Fatalf("degraded: bad %v err %v", bad, err)
			}
			mustEqualBytes(t, "degraded", got, data)
		})
	}
}

// checkRoundTrip checks file sizes, headers, ReadBlock, Reader and Verify on
// a healthy encoding of data.
func checkRoundTrip(t *testing.T, c *Codec, hdr Header, files []*MemFile, data []byte) {
	t.Helper()
	for i, f := range files {
		h, _, err := ReadHeader(f)
		if err != nil {
			t.Fatalf("shard %d header: %v", i, err)
		}
		want := hdr
		want.Index = i
		if h != want {
			t.Fatalf("shard %d header %+v, want %+v", i, h, want)
		}
		if f.Size() != h.ShardFileSize() {
			t.Fatalf("shard %d: size %d, ShardFileSize %d", i, f.Size(), h.ShardFileSize())
		}
	}
	got, bad, err := readBlocks(c, hdr, readers(files))
	if err != nil || len(bad) != 0 {
		t.Fatalf("ReadBlock: bad %v err %v", bad, err)
	}
	mustEqualBytes(t, "ReadBlock", got, data)

	r := c.NewReader(context.Background(), hdr, readers(files), func(s []int) { t.Errorf("onBad(%v)", s) })
	all, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	mustEqualBytes(t, "Reader", all, data)
	if r.Size() != int64(len(data)) {
		t.Fatalf("Reader.Size %d", r.Size())
	}

	states, err := c.Verify(context.Background(), hdr, readers(files))
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range states {
		if s != ShardOK {
			t.Fatalf("Verify shard %d: %v", i, s)
		}
	}
}

// TestWriterPaths checks that Write, ReadFrom and io.Copy produce identical
// shard files, and that a data shard holds the object bytes in place.
func TestWriterPaths(t *testing.T) {
	c := newTestCodec(t, geometry{3, 2}, testBlockSize)
	data := testData(5*testBlockSize+100, 3)
	want, hdr := encode(t, c, data)
	for _, path := range []string{"ReadFrom", "Copy", "OneWrite"} {
		t.Run(path, func(t *testing.T) {
			files := make([]*MemFile, 5)
			sinks := make([]io.WriterAt, 5)
			for i := range files {
				files[i] = &MemFile{}
				sinks[i] = files[i]
			}
			w, err := c.NewWriter(context.Background(), Header{DataID: hdr.DataID, Bucket: hdr.Bucket, Key: hdr.Key}, sinks)
			if err != nil {
				t.Fatal(err)
			}
			switch path {
			case "ReadFrom":
				_, err = w.ReadFrom(bytes.NewReader(data))
			case "Copy":
				_, err = io.Copy(w, struct{ io.Reader }{bytes.NewReader(data)}) // hide WriterTo
			case "OneWrite":
				_, err = w.Write(data)
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			for i := range files {
				mustEqualBytes(t, fmt.Sprintf("shard %d", i), files[i].Bytes(), want[i].Bytes())
			}
		})
	}
	// Block 0 of data shard 1 is data[ss:2*ss], right after its checksum.
	ss := hdr.ShardSize(0)
	chunk := make([]byte, ss)
	if _, err := want[1].ReadAt(chunk, hdr.BlockOffset(0)+4); err != nil {
		t.Fatal(err)
	}
	mustEqualBytes(t, "systematic layout", chunk, data[ss:2*ss])
}

func TestReadBlockArgs(t *testing.T) {
	c := newTestCodec(t, geometry{2, 1}, testBlockSize)
	files, hdr := encode(t, c, testData(100, 4))
	ctx := context.Background()
	dst := make([]byte, testBlockSize)
	other := hdr
	other.M = 2
	if _, _, err := c.ReadBlock(ctx, other, readers(files), 0, dst); err == nil {
		t.Error("mismatched geometry accepted")
	}
	if _, _, err := c.ReadBlock(ctx, hdr, readers(files)[:2], 0, dst); err == nil {
		t.Error("short srcs accepted")
	}
	if _, _, err := c.ReadBlock(ctx, hdr, readers(files), 1, dst); err == nil {
		t.Error("block out of range accepted")
	}
	if _, _, err := c.ReadBlock(ctx, hdr, readers(files), 0, dst[:99]); err == nil {
		t.Error("short dst accepted")
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, _, err := c.ReadBlock(cctx, hdr, readers(files), 0, dst); err != context.Canceled {
		t.Errorf("cancelled: %v", err)
	}
	// The bucket and key are a hint: a renamed object still reads.
	renamed := hdr
	renamed.Bucket, renamed.Key = "other", "a much longer key than before"
	if n, bad, err := c.ReadBlock(ctx, renamed, readers(files), 0, dst); err != nil || n != 100 || len(bad) != 0 {
		t.Errorf("renamed: n %d bad %v err %v", n, bad, err)
	}
}
