package objstore

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// mustShowSizes are the object sizes issue 2 names: 0 B, 1 B, 4 KiB,
// 1 MiB + 1 and 64 MiB.
var mustShowSizes = []int{0, 1, 4 << 10, 1<<20 + 1, 64 << 20}

func putMustShow(t *testing.T, s *Store) map[string][]byte {
	t.Helper()
	mustBucket(t, s, "bkt")
	objs := map[string][]byte{}
	for i, n := range mustShowSizes {
		key := fmt.Sprintf("obj-%d", n)
		objs[key] = randBytes(n, uint64(i+1))
		mustPut(t, s, "bkt", key, objs[key])
	}
	return objs
}

func checkAll(t *testing.T, s *Store, objs map[string][]byte, when string) {
	t.Helper()
	for key, want := range objs {
		if got := readAll(t, s, "bkt", key, GetOptions{}); !bytes.Equal(got, want) {
			t.Fatalf("%s: %s read back differs (%d bytes, want %d)", when, key, len(got), len(want))
		}
	}
}

// shardSums maps every shard file and pack segment (relative path) to its
// SHA-256.
func shardSums(t *testing.T, dir string) map[string][32]byte {
	t.Helper()
	sums := map[string][32]byte{}
	files, _ := filepath.Glob(filepath.Join(dir, "drives", "d*", "data", "*", "*"))
	packs, _ := filepath.Glob(filepath.Join(dir, "drives", "d*", "packs", "*"))
	files = append(files, packs...)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(dir, f)
		sums[rel] = sha256.Sum256(b)
	}
	return sums
}

func healAndCompare(t *testing.T, opt Options, want map[string][32]byte, when string) {
	t.Helper()
	rep, err := Heal(context.Background(), withBolt(t, opt), nil)
	if err != nil || !rep.OK() {
		t.Fatalf("%s: heal: %+v %v", when, rep, err)
	}
	got := shardSums(t, opt.Dir)
	if len(got) != len(want) {
		t.Fatalf("%s: %d shard files after heal, want %d", when, len(got), len(want))
	}
	for f, sum := range want {
		if got[f] != sum {
			t.Fatalf("%s: shard %s differs after heal", when, f)
		}
	}
	fs, err := Fsck(context.Background(), withBolt(t, opt), nil)
	if err != nil || !fs.Clean() {
		t.Fatalf("%s: fsck after heal: %+v %v", when, fs, err)
	}
}

func TestDegradedReadAndHeal(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 64 MiB objects")
	}
	ctx := context.Background()
	opt := Options{Dir: t.TempDir(), DriveCount: 4, Parity: 2, NoBackground: true}
	s, err := Open(ctx, withBolt(t, opt))
	if err != nil {
		t.Fatal(err)
	}
	objs := putMustShow(t, s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	orig := shardSums(t, opt.Dir)
	// 1 B and 4 KiB share one pack segment per drive; the two large
	// objects have a shard file per drive each.
	if len(orig) != 4*3 {
		t.Fatalf("%d shard files and pack segments, want 12", len(orig))
	}

	for a := 0; a < 4; a++ {
		for b := a + 1; b < 4; b++ {
			when := fmt.Sprintf("drives d%d and d%d deleted", a, b)
			t.Run(fmt.Sprintf("lose-d%d-d%d", a, b), func(t *testing.T) {
				s, err := Open(ctx, withBolt(t, opt))
				if err != nil {
					t.Fatal(err)
				}
				// Delete the directories under the running store.
				for _, d := range []int{a, b} {
					if err := os.RemoveAll(filepath.Join(opt.Dir, "drives", fmt.Sprintf("d%d", d))); err != nil {
						t.Fatal(err)
					}
				}
				checkAll(t, s, objs, when+" (online)")
				s.Close()
				// And again after a restart, which formats them empty.
				s, err = Open(ctx, withBolt(t, opt))
				if err != nil {
					t.Fatal(err)
				}
				checkAll(t, s, objs, when+" (restarted)")
				s.Close()
				healAndCompare(t, opt, orig, when)
			})
		}
	}

	for rel := range orig {
		t.Run("flip-"+filepath.Base(filepath.Dir(filepath.Dir(filepath.Dir(rel))))+"-"+filepath.Base(rel)[:8], func(t *testing.T) {
			path := filepath.Join(opt.Dir, rel)
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			// One byte in the header and one deep in the data, in turn.
			for _, off := range []int{10, len(raw) - 1} {
				raw[off] ^= 0x5a
				if err := os.WriteFile(path, raw, 0o644); err != nil {
					t.Fatal(err)
				}
				raw[off] ^= 0x5a
				s, err := Open(ctx, withBolt(t, opt))
				if err != nil {
					t.Fatal(err)
				}
				checkAll(t, s, objs, fmt.Sprintf("byte %d of %s flipped", off, rel))
				s.Close()
				rep, err := Fsck(ctx, withBolt(t, opt), nil)
				if err != nil || len(rep.CorruptShards) != 1 {
					t.Fatalf("fsck should report the flipped shard: %+v %v", rep, err)
				}
				healAndCompare(t, opt, orig, "after flip at "+fmt.Sprint(off))
			}
		})
	}
}
