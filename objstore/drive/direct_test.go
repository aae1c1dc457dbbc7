package drive

import (
	"bytes"
	"context"
	"fmt"
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

// TestShardFileParksStage checks that a shard file keeps its staging
// buffer between appends only while the pool is not crowded, and that
// either way the file ends up with every byte.
func TestShardFileParksStage(t *testing.T) {
	for _, crowded := range []bool{false, true} {
		t.Run(fmt.Sprint("crowded=", crowded), func(t *testing.T) {
			ctx := context.Background()
			d, _, err := OpenDir(t.TempDir(), "s", 0)
			if err != nil {
				t.Fatal(err)
			}
			if crowded { // other files' stages, out for the whole test
				for range keptStages + 1 {
					b := d.stages.get()
					defer d.stages.put(b)
				}
			}
			f, err := d.CreateShard(ctx, "0ab")
			if err != nil {
				t.Fatal(err)
			}
			if f.df == nil {
				f.Abort()
				t.Skip("the filesystem refuses O_DIRECT: nothing is staged")
			}
			chunk := stageSize/2 + 4 // a 2+2 shard chunk of a 1 MiB block
			want := bytes.Repeat([]byte("cairn"), (5*chunk+100)/5)
			for off := 0; off < len(want); off += chunk {
				end := min(off+chunk, len(want))
				if _, err := f.WriteAt(want[off:end], int64(off)); err != nil {
					t.Fatal(err)
				}
				if parked := f.stage == f.small; parked != crowded {
					t.Fatalf("after the append at %d: stage parked %v, pool crowded %v", off, parked, crowded)
				}
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(d.Path("0ab"))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("file differs from what was written from byte %d", commonPrefix(got, want))
			}
		})
	}
}
