package objstore

import (
	"context"
	"strings"
	"testing"

	"github.com/cairnstore/cairn/objstore/erasure"
	"github.com/cairnstore/cairn/objstore/meta"
)

// TestFsckCatchesIndexDamage breaks one index invariant at a time on
// purpose (a leaked reference count, leaked pack live bytes, a lost
// update of the objects table...) and checks that fsck reports it: a
// space leak or a lost write fails every store test, since each ends
// with fsck.
func TestFsckCatchesIndexDamage(t *testing.T) {
	for _, tc := range []struct {
		name   string
		damage func(tx meta.Tx, f fixture) error
		want   string
	}{
		{"leaked reference", func(tx meta.Tx, f fixture) error {
			return rewriteData(tx, f.plain, func(d *meta.Data) { d.Refs++ })
		}, "counts 2 references, 1 segments name it"},
		{"lost reference", func(tx meta.Tx, f fixture) error {
			return rewriteData(tx, f.packed, func(d *meta.Data) { d.Refs = 0 })
		}, "is not garbage"},
		{"leaked pack live bytes", func(tx meta.Tx, f fixture) error {
			raw, err := tx.Get(meta.Packs, meta.PackKey(f.seg))
			if err != nil {
				return err
			}
			var p meta.PackInfo
			if err := meta.Decode(raw, &p); err != nil {
				return err
			}
			p.Live += 100
			return tx.Put(meta.Packs, meta.PackKey(f.seg), meta.Encode(p))
		}, "live bytes, its records hold"},
		{"packdata record lost", func(tx meta.Tx, f fixture) error {
			return tx.Delete(meta.PackData, meta.PackDataKey(f.seg, f.packed))
		}, "packdata lists 1 records in segment 1, the index has 2"},
		{"objects out of date", func(tx meta.Tx, f fixture) error {
			return tx.Delete(meta.Objects, meta.ObjectKey("bkt", "plain"))
		}, "objects lacks bkt/plain"},
		{"objects survives a delete marker", func(tx meta.Tx, f fixture) error {
			raw, err := tx.Get(meta.Objects, meta.ObjectKey("bkt", "packed"))
			if err != nil {
				return err
			}
			return tx.Put(meta.Objects, meta.ObjectKey("bkt", "deleted"), raw)
		}, "is a delete marker"},
		{"live and garbage at once", func(tx meta.Tx, f fixture) error {
			raw, err := tx.Get(meta.DataTable, meta.DataKey(f.plain))
			if err != nil {
				return err
			}
			var d meta.Data
			if err := meta.Decode(raw, &d); err != nil {
				return err
			}
			return tx.Put(meta.Garbage, meta.DataKey(f.plain), meta.Encode(meta.GarbageEntry{Data: d}))
		}, "live and garbage at once"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			opt := Options{Dir: dir, DriveCount: 3, Parity: 1, BlockSize: 64 << 10, NoBackground: true}
			s, err := Open(ctx, withBolt(t, opt))
			if err != nil {
				t.Fatal(err)
			}
			f := makeFixture(t, s)
			if rep, err := s.fsck(ctx, nil); err != nil || !rep.Clean() {
				t.Fatalf("fsck before the damage: %+v %v", rep, err)
			}
			if err := s.idx.Update(ctx, func(tx meta.Tx) error { return tc.damage(tx, f) }); err != nil {
				t.Fatal(err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			rep, err := Fsck(ctx, withBolt(t, opt), nil)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Clean() || !strings.Contains(strings.Join(rep.Index, "\n"), tc.want) {
				t.Fatalf("fsck after %s: index problems %q, want one with %q", tc.name, rep.Index, tc.want)
			}
		})
	}
}

// fixture is what makeFixture wrote: a shard-file object, a packed one
// and a deleted key.
type fixture struct {
	plain, packed erasure.DataID
	seg           uint64
}

func makeFixture(t *testing.T, s *Store) fixture {
	t.Helper()
	ctx := context.Background()
	mustBucket(t, s, "bkt")
	if err := s.SetVersioning(ctx, "bkt", VersioningEnabled); err != nil {
		t.Fatal(err)
	}
	mustPut(t, s, "bkt", "plain", randBytes(300<<10, 1))
	mustPut(t, s, "bkt", "packed", randBytes(1000, 2))
	mustPut(t, s, "bkt", "deleted", randBytes(10, 3))
	if _, err := s.Delete(ctx, "bkt", "deleted", DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	var f fixture
	err := s.idx.View(ctx, func(tx meta.Tx) error {
		for key, id := range map[string]*erasure.DataID{"plain": &f.plain, "packed": &f.packed} {
			v, err := currentVersion(tx, "bkt", key)
			if err != nil {
				return err
			}
			if *id, err = erasure.ParseDataID(v.Segments[0].Data); err != nil {
				return err
			}
		}
		d, err := loadData(tx, f.packed.String())
		f.seg = d.Pack
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if f.seg == 0 {
		t.Fatal("the small object was not packed")
	}
	return f
}

func rewriteData(tx meta.Tx, id erasure.DataID, change func(*meta.Data)) error {
	d, err := loadData(tx, id.String())
	if err != nil {
		return err
	}
	change(&d)
	return tx.Put(meta.DataTable, meta.DataKey(id), meta.Encode(d))
}
