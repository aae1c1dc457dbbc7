package erasure

import (
	"bytes"
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
)

func FuzzParseHeader(f *testing.F) {
	for _, h := range []Header{
		{K: 1, BlockSize: 64},
		{K: 2, M: 2, Index: 3, BlockSize: 1 << 20, Size: 5 << 20, DataID: testID(1), Bucket: "bucket", Key: "a/b/c"},
		{K: 12, M: 4, Index: 15, BlockSize: 1 << 20, Size: 1, Key: strings.Repeat("k", 600)},
	} {
		b, err := h.MarshalBinary()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("CAIRNSHD"))
	f.Fuzz(func(t *testing.T, data []byte) {
		h, n, err := ParseHeader(data)
		rh, rn, rerr := ReadHeader(NewMemFile(data))
		if (err == nil) != (rerr == nil) || rh != h || rn != n {
			t.Fatalf("ParseHeader %+v %d %v; ReadHeader %+v %d %v", h, n, err, rh, rn, rerr)
		}
		if err != nil {
			if !errors.Is(err, ErrBadHeader) {
				t.Fatalf("error does not wrap ErrBadHeader: %v", err)
			}
			return
		}
		if n != h.EncodedLen() || n > len(data) {
			t.Fatalf("n %d, EncodedLen %d, input %d", n, h.EncodedLen(), len(data))
		}
		b, err := h.MarshalBinary()
		if err != nil {
			t.Fatalf("parsed header does not marshal: %v", err)
		}
		if !bytes.Equal(b, data[:n]) {
			t.Fatalf("round trip differs")
		}
		_ = h.ShardFileSize()
		_ = h.BlockOffset(h.BlockCount() - 1)
	})
}

// fuzzObject is the object whose genuine shards surround the fuzzed one.
func fuzzObject(tb testing.TB) (*Codec, Header, []*MemFile, []byte) {
	c := newTestCodec(tb, geometry{2, 2}, 256)
	data := testData(3*256+7, 18)
	files, hdr := encode(tb, c, data)
	return c, hdr, files, data
}

func FuzzReadBlock(f *testing.F) {
	c, hdr, files, data := fuzzObject(f) // read-only, shared by all inputs
	for i, file := range files {
		f.Add(file.Bytes(), uint8(i), uint8(0))
		f.Add(file.Bytes(), uint8(i), uint8(1<<((i+1)%4)))
	}
	for _, g := range []geometry{{1, 0}, {3, 1}} {
		c := newTestCodec(f, g, 4096)
		other, _ := encode(f, c, testData(5000, 19))
		f.Add(other[0].Bytes(), uint8(0), uint8(0))
	}
	f.Fuzz(func(t *testing.T, shard []byte, idx, drop uint8) {
		ctx := context.Background()
		i := int(idx % 4)

		// The fuzzed bytes stand in for shard i among genuine ones.
		srcs := readers(files)
		srcs[i] = NewMemFile(shard)
		for j := range srcs {
			if j != i && drop&(1<<j) != 0 {
				srcs[j] = nil
			}
		}
		dst := make([]byte, c.BlockSize())
		for b := range hdr.BlockCount() {
			n, bad, err := c.ReadBlock(ctx, hdr, srcs, b, dst)
			if err != nil {
				if !errors.Is(err, ErrReadQuorum) {
					t.Fatalf("block %d: %v", b, err)
				}
				continue
			}
			// Once the fuzzed shard is rejected, only genuine shards remain.
			off := b * int64(c.BlockSize())
			if slices.Contains(bad, i) && !bytes.Equal(dst[:n], data[off:off+int64(n)]) {
				t.Fatalf("block %d decoded wrongly with shard %d rejected", b, i)
			}
		}
		_, _ = io.Copy(io.Discard, c.NewReader(ctx, hdr, srcs, nil))
		if _, err := c.Verify(ctx, hdr, srcs); err != nil {
			t.Fatal(err)
		}

		// The fuzzed bytes as every shard of the object their header claims.
		fh, _, err := ParseHeader(shard)
		if err != nil || fh.BlockSize > 1<<16 || fh.K+fh.M > 16 {
			return
		}
		fc, err := NewCodec(fh.K, fh.M, fh.BlockSize)
		if err != nil {
			t.Fatalf("parsed header's geometry rejected: %v", err)
		}
		all := make([]io.ReaderAt, fh.K+fh.M)
		for j := range all {
			all[j] = NewMemFile(shard)
		}
		dst = make([]byte, fh.BlockSize)
		for _, b := range []int64{0, fh.BlockCount() - 1} {
			if b >= 0 {
				_, _, _ = fc.ReadBlock(ctx, fh, all, b, dst)
			}
		}
		_, _ = fc.Verify(ctx, fh, all)
		_ = fc.Rebuild(ctx, fh, all, map[int]io.WriterAt{fh.Index: discard{}})
	})
}
