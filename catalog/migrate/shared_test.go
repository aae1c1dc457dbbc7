package migrate

import (
	"errors"
	"testing"
	"time"

	"github.com/cairnstore/cairn/catalog"
	"github.com/cairnstore/cairn/objstore/storetest"
)

// TestFencesOfTwoNodes: two Fences on one store, as two nodes of a
// cluster keep them: a fence put up (and taken down) through one holds
// (and is lifted) for writes entering through the other when the store
// is shared; on a store of one writer the other keeps what it loaded
// (the control case: the test can fail).
func TestFencesOfTwoNodes(t *testing.T) {
	for _, tc := range []struct {
		name   string
		writer uint16
		follow bool
	}{
		{"shared store", 1, true},
		{"one writer (control)", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			so := storeOptions(t.TempDir())
			so.WriterID = tc.writer
			st := storetest.Open(t, so)
			a, err := OpenFences(ctx, st)
			if err != nil {
				t.Fatal(err)
			}
			b, err := OpenFences(ctx, st)
			if err != nil {
				t.Fatal(err)
			}
			enter := func(wh string) error {
				release, err := b.Enter(ctx, wh)
				if err == nil {
					release()
				}
				return err
			}
			if err := enter("lake"); err != nil {
				t.Fatalf("a write before any fence: %v", err)
			}
			fc := &catalog.Fence{Version: fenceVersion, TableBucket: "lake", MigrationID: "1b4e28ba-2fa1-4d3b-8c1e-6f9a7b5c3d2e",
				Status: catalog.FenceStatusPreparing, Created: time.Now().UTC()}
			if err := a.putFence(ctx, "lake", fc); err != nil {
				t.Fatal(err)
			}
			if err := a.putGlobal(ctx, &GlobalFence{Version: fenceVersion, MigrationID: fc.MigrationID, Created: time.Now().UTC()}); err != nil {
				t.Fatal(err)
			}
			errWH, errReg := enter("lake"), enter("")
			if got := errors.Is(errWH, catalog.ErrFenced) && errors.Is(errReg, catalog.ErrFenced); got != tc.follow {
				t.Fatalf("writes through the other node with the fences up: %v, %v; fenced: %v, want %v", errWH, errReg, got, tc.follow)
			}
			if !tc.follow {
				return
			}
			if err := enter("sea"); err != nil {
				t.Fatalf("a write to another warehouse: %v", err)
			}
			if err := a.putFence(ctx, "lake", nil); err != nil {
				t.Fatal(err)
			}
			if err := a.putGlobal(ctx, nil); err != nil {
				t.Fatal(err)
			}
			if err := errors.Join(enter("lake"), enter("")); err != nil {
				t.Fatalf("writes through the other node after the fences came down: %v", err)
			}
		})
	}
}
