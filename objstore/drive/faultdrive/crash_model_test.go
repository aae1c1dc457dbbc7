package faultdrive_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/cairnstore/cairn/objstore/drive"
	"github.com/cairnstore/cairn/objstore/drive/faultdrive"
)

// TestCrashModel runs random changes and flushes against a fault drive
// and a model of what each flush made durable, crashes, and compares the
// inner drive with the model: the undo log must put back exactly the
// flushed state whatever the order of writes, overwrites, removes and
// flushes.
func TestCrashModel(t *testing.T) {
	seeds := 40
	if testing.Short() {
		seeds = 10
	}
	for seed := range seeds {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { crashModel(t, uint64(seed)) })
	}
}

// modelState maps a file (shard name or PackName) to its content.
type modelState map[string][]byte

func crashModel(t *testing.T, seed uint64) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(seed, 99))
	inner := newDir(t)
	d := faultdrive.New(inner, faultdrive.Config{})
	cur, durable := modelState{}, modelState{}
	shards := []string{"aa00", "aa01", "bb02"}
	segs := []uint64{1, 2}
	packs := map[uint64]drive.PackFile{}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	content := func() []byte {
		b := make([]byte, 1+rng.IntN(300))
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	pick := func(names []string) []string {
		var out []string
		for _, n := range names {
			if rng.IntN(2) == 0 {
				out = append(out, n)
			}
		}
		return out
	}
	for range 60 {
		name := shards[rng.IntN(len(shards))]
		seg := segs[rng.IntN(len(segs))]
		pname := drive.PackName(seg)
		switch op := rng.IntN(10); op {
		case 0, 1: // create a shard
			b := content()
			must(write(t, d, name, string(b)))
			cur[name] = b
		case 2: // remove a shard
			must(d.Remove(ctx, name))
			delete(cur, name)
		case 3, 4: // write into a segment, inside or past its end
			p := packs[seg]
			if p == nil {
				var err error
				p, err = d.OpenPack(ctx, seg, true)
				must(err)
				packs[seg] = p
				if cur[pname] == nil {
					cur[pname] = []byte{}
				}
			}
			b := content()
			off := rng.IntN(len(cur[pname]) + 50)
			_, err := p.WriteAt(b, int64(off))
			must(err)
			if n := off + len(b); n > len(cur[pname]) {
				cur[pname] = append(cur[pname], make([]byte, n-len(cur[pname]))...)
			}
			copy(cur[pname][off:], b)
		case 5: // remove a segment
			if p := packs[seg]; p != nil {
				_ = p.Close()
				delete(packs, seg)
			}
			must(d.RemovePack(ctx, seg))
			delete(cur, pname)
		case 6: // flush some shards
			var names []string
			for _, n := range pick(shards) {
				if cur[n] != nil {
					names = append(names, n)
				}
			}
			must(d.SyncFiles(ctx, names))
			for _, n := range names {
				durable[n] = slices.Clone(cur[n])
			}
		case 7: // flush some segments
			var list []uint64
			for _, s := range segs {
				if cur[drive.PackName(s)] != nil && rng.IntN(2) == 0 {
					list = append(list, s)
				}
			}
			must(d.SyncPacks(ctx, list))
			for _, s := range list {
				durable[drive.PackName(s)] = slices.Clone(cur[drive.PackName(s)])
			}
		case 8: // flush everything, now and then
			if rng.IntN(3) == 0 {
				must(d.Sync(ctx))
				durable = modelState{}
				for n, b := range cur {
					durable[n] = slices.Clone(b)
				}
			}
		case 9: // replace a shard through Stage and Commit, or abort
			st, err := d.Stage(ctx, name)
			must(err)
			b := content()
			_, err = st.WriteAt(b, 0)
			must(err)
			if rng.IntN(3) == 0 {
				st.Abort()
				continue
			}
			must(st.Commit())
			cur[name] = b
			durable[name] = slices.Clone(b)
		}
	}
	must(d.Crash(ctx))

	got := modelState{}
	must(inner.Walk(ctx, func(n string) error {
		b, err := read(inner, n)
		got[n] = []byte(b)
		return err
	}))
	list, err := inner.Packs(ctx)
	must(err)
	for _, s := range list {
		p, err := inner.OpenPack(ctx, s, false)
		must(err)
		b, err := io.ReadAll(io.NewSectionReader(p, 0, 1<<30))
		_ = p.Close()
		must(err)
		got[drive.PackName(s)] = b
	}
	for n, want := range durable {
		if g, ok := got[n]; !ok || !bytes.Equal(g, want) {
			t.Errorf("%s after crash: %d bytes (present %v), want the %d flushed", n, len(g), ok, len(want))
		}
	}
	for n := range got {
		if _, ok := durable[n]; !ok {
			t.Errorf("%s survived the crash but was never flushed", n)
		}
	}
	if _, err := inner.Open(ctx, "zz99"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
}
