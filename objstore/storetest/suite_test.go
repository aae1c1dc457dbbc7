package storetest_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/cairnstore/cairn/objstore/meta"
	"github.com/cairnstore/cairn/objstore/storetest"
)

// TestStoreConformance runs the store suite on every index engine: the
// in-memory index passes the same suite as bbolt, with and without the
// transaction bound of an etcd cluster.
func TestStoreConformance(t *testing.T) {
	for _, tc := range []struct {
		name string
		open storetest.Engine
	}{
		{"bolt", func(t *testing.T) meta.Index {
			idx, err := meta.OpenBolt(filepath.Join(t.TempDir(), "index.db"), time.Second)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = idx.Close() })
			return idx
		}},
		{"mem", func(t *testing.T) meta.Index { return meta.NewMem(meta.Limits{}).Open() }},
		{"mem-etcd-limits", func(t *testing.T) meta.Index {
			return meta.NewMem(meta.Limits{MaxWrites: 128, MaxBytes: 1536 << 10}).Open()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) { storetest.Run(t, tc.open) })
	}
}
