package meta_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/cairnstore/cairn/objstore/meta"
	"github.com/cairnstore/cairn/objstore/meta/indextest"
)

// TestIndexConformance runs the meta.Index suite against every engine.
func TestIndexConformance(t *testing.T) {
	t.Run("bolt", func(t *testing.T) {
		indextest.Run(t, indextest.Factory{
			Open: func(t *testing.T, limits meta.Limits) (meta.Index, bool) {
				if limits != (meta.Limits{}) {
					return nil, false // bbolt bounds a transaction only by memory
				}
				return openBolt(t, filepath.Join(t.TempDir(), "index.db")), true
			},
			Reopen: func(t *testing.T, idx meta.Index) meta.Index {
				path := idx.(*meta.Bolt).Path()
				if err := idx.Close(); err != nil {
					t.Fatal(err)
				}
				return openBolt(t, path)
			},
		})
	})
	t.Run("mem", func(t *testing.T) {
		indextest.Run(t, indextest.Factory{
			Open: func(t *testing.T, limits meta.Limits) (meta.Index, bool) {
				return meta.NewMem(limits).Open(), true
			},
			Reopen: func(t *testing.T, idx meta.Index) meta.Index {
				if err := idx.Close(); err != nil {
					t.Fatal(err)
				}
				return idx.(*meta.MemIndex).DB().Open()
			},
		})
	})
}

func openBolt(t *testing.T, path string) *meta.Bolt {
	t.Helper()
	b, err := meta.OpenBolt(path, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}
