package drive

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"testing"
)

// TestShardFileWrites checks that what a ShardFile stages, holds back and
// writes directly ends up as the bytes written, for the erasure Writer's
// pattern (header, appends, header rewrite) and for other patterns.
func TestShardFileWrites(t *testing.T) {
	ctx := context.Background()
	d, _, err := OpenDir(t.TempDir(), "s", 0)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		name   string
		size   int
		random bool // a write out of order after the appends
	}{
		{"tiny", 100, false},
		{"one-page", directAlign, false},
		{"page-and-a-bit", directAlign + 7, false},
		{"stage", stageSize, false},
		{"stages", 3*stageSize + 12345, false},
		{"out-of-order", 2*stageSize + 99, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := make([]byte, tc.size)
			for i := range want {
				want[i] = byte(rng.Uint32())
			}
			f, err := d.CreateShard(ctx, "0a"+tc.name)
			if err != nil {
				t.Fatal(err)
			}
			hdr := min(60, tc.size)
			if _, err := f.WriteAt(make([]byte, hdr), 0); err != nil { // placeholder header
				t.Fatal(err)
			}
			for off := hdr; off < tc.size; {
				n := min(tc.size-off, 1+rng.IntN(700<<10))
				if _, err := f.WriteAt(want[off:off+n], int64(off)); err != nil {
					t.Fatal(err)
				}
				off += n
			}
			if tc.random {
				if _, err := f.WriteAt(want[stageSize/2:stageSize/2+10], stageSize/2); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := f.WriteAt(want[:hdr], 0); err != nil { // final header
				t.Fatal(err)
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(d.Path("0a" + tc.name))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("file has %d bytes, want %d; equal prefix %d", len(got), len(want), commonPrefix(got, want))
			}
		})
	}
}

func TestShardFileAbort(t *testing.T) {
	ctx := context.Background()
	d, _, err := OpenDir(t.TempDir(), "s", 0)
	if err != nil {
		t.Fatal(err)
	}
	f, err := d.CreateShard(ctx, "0ab")
	if err != nil {
		t.Fatal(err)
	}
	// Whole pages past the first reach the file as they are appended; the
	// held first page and the unaligned tail are what Abort must drop.
	p := bytes.Repeat([]byte{7}, 3*directAlign+100)
	if _, err := f.WriteAt(p, 0); err != nil {
		t.Fatal(err)
	}
	f.Abort()
	got, err := os.ReadFile(d.Path("0ab"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) > 3*directAlign {
		t.Fatalf("aborted file has %d bytes: the staged tail was written", len(got))
	}
	if n := min(len(got), directAlign); !bytes.Equal(got[:n], make([]byte, n)) {
		t.Fatal("aborted file: the held first page was written")
	}
}

func commonPrefix(a, b []byte) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}
