package objectbacked_test

import (
	"context"
	"testing"

	"github.com/cairnstore/cairn/catalog"
	"github.com/cairnstore/cairn/catalog/backingtest"
	"github.com/cairnstore/cairn/catalog/objectbacked"
	"github.com/cairnstore/cairn/objstore"
	"github.com/cairnstore/cairn/objstore/storetest"
)

func newBacking(t *testing.T) *objectbacked.Backing {
	t.Helper()
	ctx := context.Background()
	st := storetest.Open(t, objstore.Options{Dir: t.TempDir(), DriveCount: 1, BlockSize: 64 << 10, NoBackground: true})
	t.Cleanup(func() { _ = st.Close() })
	b, err := objectbacked.New(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestBacking runs the Backing conformance suite.
func TestBacking(t *testing.T) {
	backingtest.Run(t, func(t *testing.T) catalog.Backing { return newBacking(t) })
}

// TestBatch runs the BatchBacking conformance suite.
func TestBatch(t *testing.T) {
	backingtest.RunBatch(t, func(t *testing.T) catalog.BatchBacking { return newBacking(t) })
}
