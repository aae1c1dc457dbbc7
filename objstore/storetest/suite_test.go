package storetest_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/cairnstore/cairn/objstore/drive"
	"github.com/cairnstore/cairn/objstore/drive/faultdrive"
	"github.com/cairnstore/cairn/objstore/meta"
	"github.com/cairnstore/cairn/objstore/storetest"
)

// TestStoreConformance runs the store suite on every index engine (the
// in-memory index passes the same suite as bbolt, with and without the
// transaction bound of an etcd cluster) and on drives that are not local
// (fault-injecting drives with no fault, so that the store's portable
// paths, without direct I/O, syncfs or paths, pass it too).
func TestStoreConformance(t *testing.T) {
	bolt := func(t *testing.T) meta.Index {
		idx, err := meta.OpenBolt(filepath.Join(t.TempDir(), "index.db"), time.Second)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = idx.Close() })
		return idx
	}
	for _, tc := range []struct {
		name string
		e    storetest.Engine
	}{
		{"bolt", storetest.Engine{Index: bolt}},
		{"mem", storetest.Engine{Index: func(t *testing.T) meta.Index { return meta.NewMem(meta.Limits{}).Open() }}},
		{"mem-etcd-limits", storetest.Engine{Index: func(t *testing.T) meta.Index {
			return meta.NewMem(meta.Limits{MaxWrites: 128, MaxBytes: 1536 << 10}).Open()
		}}},
		{"bolt-portable-drives", storetest.Engine{Index: bolt, OpenDrive: unfaulted}},
	} {
		t.Run(tc.name, func(t *testing.T) { storetest.Run(t, tc.e) })
	}
}

// unfaulted opens the local drive directories of dir wrapped in fault
// drives with no rule.
func unfaulted(dir string) func(ctx context.Context, set string, index int) (drive.Drive, bool, error) {
	return func(_ context.Context, set string, index int) (drive.Drive, bool, error) {
		d, created, err := drive.OpenDir(filepath.Join(dir, "drives", fmt.Sprintf("d%d", index)), set, index)
		if err != nil {
			return nil, false, err
		}
		return faultdrive.New(d, faultdrive.Config{}), created, nil
	}
}
