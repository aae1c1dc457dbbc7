package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/cairnstore/cairn/objstore"
	"github.com/cairnstore/cairn/objstore/meta"
	"github.com/cairnstore/cairn/objstore/meta/etcd"
)

// Open opens a store for a test of any package and, when the test ends,
// closes it and runs fsck on what it left: every test that opens a store
// ends with a consistency check (bbolt's btesting habit). opt.Index nil
// means the bbolt index of opt.Dir, as cmd/ opens it; opt.Dir empty means
// a temporary directory. A test that closes the store itself may; the
// check still runs.
func Open(t testing.TB, opt objstore.Options) *objstore.Store {
	t.Helper()
	if opt.Dir == "" {
		opt.Dir = t.TempDir()
	}
	if opt.Index == nil {
		opt.Index = OpenBolt(t, opt.Dir)
	}
	reopen := Reopener(t, opt.Index)
	s, err := objstore.Open(context.Background(), opt)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close store: %v", err)
		}
		if t.Failed() {
			return // the check would only add noise to the first failure
		}
		Check(t, opt, reopen())
	})
	return s
}

// Check runs fsck on a closed store's data (opt) over idx, which it
// closes, and fails the test unless the report is clean.
func Check(t testing.TB, opt objstore.Options, idx meta.Index) {
	t.Helper()
	opt.Index = idx
	opt.Parity = -1 // the layout's parity: fsck changes nothing
	opt.NoBackground = true
	rep, err := objstore.Fsck(context.Background(), opt, nil)
	if err != nil {
		t.Errorf("fsck after test: %v", err)
		return
	}
	if !rep.Clean() {
		t.Errorf("fsck after test found damage: %+v", rep)
	}
}

// OpenBolt opens the bbolt index of data directory dir, closed at the end
// of the test unless a store closed it first.
func OpenBolt(t testing.TB, dir string) *meta.Bolt {
	t.Helper()
	idx, err := meta.OpenBolt(meta.BoltPath(dir), 5*time.Second)
	if err != nil {
		t.Fatalf("open index: %v", err)
	}
	t.Cleanup(func() { _ = idx.Close() })
	return idx
}

// Reopener returns a function that opens idx's database again once it is
// closed (a store closes its index): bbolt at the same path, the
// in-memory index as a new handle on the same data, etcd as a new
// connection to the same cluster and key prefix.
func Reopener(t testing.TB, idx meta.Index) func() meta.Index {
	t.Helper()
	switch x := idx.(type) {
	case *meta.Bolt:
		path := x.Path()
		return func() meta.Index {
			b, err := meta.OpenBolt(path, 5*time.Second)
			if err != nil {
				t.Fatalf("reopen index: %v", err)
			}
			t.Cleanup(func() { _ = b.Close() })
			return b
		}
	case *meta.MemIndex:
		db := x.DB()
		return func() meta.Index { return db.Open() }
	case *etcd.Index:
		cfg := x.Config()
		return func() meta.Index {
			y, err := etcd.Open(context.Background(), cfg)
			if err != nil {
				t.Fatalf("reopen index: %v", err)
			}
			t.Cleanup(func() { _ = y.Close() })
			return y
		}
	}
	t.Fatalf("storetest: cannot reopen an index of type %T", idx)
	return nil
}
