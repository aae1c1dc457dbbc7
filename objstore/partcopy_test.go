package objstore

import (
	"bytes"
	"context"
	"testing"
)

// TestCopyPartByReference: UploadPartCopy of ranges of a source (one
// data object, or an appended one of several) writes nothing to the
// drives; the completed object reads back right, and still does once
// the source is deleted and the cleaner has run.
func TestCopyPartByReference(t *testing.T) {
	t.Parallel()
	const block = 64 << 10
	type rng struct{ off, n int64 }
	for _, tc := range []struct {
		name     string
		appended bool // the source is a put followed by appends
		ranges   []rng
	}{
		{"block-aligned", false, []rng{{block, 2 * block}, {0, block}, {4 * block, -1}}},
		{"unaligned", false, []rng{{17, 3*block + 5}, {3 * block, block - 1}}},
		{"whole", false, []rng{{0, -1}}},
		{"appended source", true, []rng{{0, 2 * block}, {2*block + 100, -1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s, _ := newTestStore(t, 4, 2)
			mustBucket(t, s, "src")
			mustBucket(t, s, "dst")
			src := randBytes(5*block+1234, 7)
			if tc.appended {
				mustPut(t, s, "src", "obj", src[:block+10])
				for off := int64(block + 10); off < int64(len(src)); off += block {
					end := min(off+block, int64(len(src)))
					if _, err := s.Append(ctx, "src", "obj", off, bytes.NewReader(src[off:end]), end-off, AppendOptions{}); err != nil {
						t.Fatal(err)
					}
				}
			} else {
				mustPut(t, s, "src", "obj", src)
			}
			id := mustCreateUpload(t, s, "dst", "out", PutOptions{})
			before := s.Stats().DriveBytesWritten
			var want []byte
			var parts []CompletePart
			for i, r := range tc.ranges {
				p, err := s.CopyPart(ctx, "dst", "out", id, i+1, "src", "obj", "", r.off, r.n)
				if err != nil {
					t.Fatalf("copy part %d: %v", i+1, err)
				}
				end := int64(len(src))
				if r.n >= 0 {
					end = r.off + r.n
				}
				piece := src[r.off:end]
				if p.Size != int64(len(piece)) || p.ETag != md5hex(piece) {
					t.Fatalf("part %d: %+v, want %d bytes, ETag %s", i+1, p, len(piece), md5hex(piece))
				}
				want = append(want, piece...)
				parts = append(parts, CompletePart{Number: i + 1, ETag: p.ETag})
			}
			if wrote := s.Stats().DriveBytesWritten - before; wrote != 0 {
				t.Fatalf("UploadPartCopy wrote %d bytes to the drives, want none", wrote)
			}
			if _, err := s.CompleteMultipartUpload(ctx, "dst", "out", id, parts, PutOptions{}); err != nil {
				t.Fatal(err)
			}
			if wrote := s.Stats().DriveBytesWritten - before; wrote != 0 {
				t.Fatalf("complete wrote %d bytes to the drives, want none", wrote)
			}
			if got := readAll(t, s, "dst", "out", GetOptions{}); !bytes.Equal(got, want) {
				t.Fatalf("completed object: %d bytes differ from the %d copied", len(got), len(want))
			}
			if _, err := s.Delete(ctx, "src", "obj", DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Clean(ctx); err != nil {
				t.Fatal(err)
			}
			if got := readAll(t, s, "dst", "out", GetOptions{}); !bytes.Equal(got, want) {
				t.Fatal("completed object differs once its source is deleted and cleaned")
			}
		})
	}
}
