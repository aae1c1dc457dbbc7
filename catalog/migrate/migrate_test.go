package migrate

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairnstore/cairn/catalog"
)

var tbl = catalog.Ident{Namespace: []string{"ns"}, Name: "t"}

func TestMaterializeFencesAndCopies(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	p, err := e.m.Preflight(ctx, "lake")
	if err != nil {
		t.Fatal(err)
	}
	if p.Status != catalog.StatusReadyToSnapshot || len(p.Blockers) != 0 || p.TableCount != 1 || p.ViewCount != 1 || !p.WarehouseIndexReady || p.Fence != nil {
		t.Fatalf("preflight: %+v", p)
	}
	if !slices.Contains(p.RecommendedActions, catalog.ActionSnapshot) {
		t.Errorf("actions %v", p.RecommendedActions)
	}
	res, err := e.m.Materialize(ctx, "lake")
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != catalog.StatusSnapshotMaterialized || res.TableCount != 1 || res.SourceFingerprint == "" || res.TargetSnapshotETag == "" || !res.ObjectBackedWritesFenced || res.ReadyToEnableDurableStrong {
		t.Fatalf("materialize: %+v", res)
	}
	// Object-backed writes to lake are fenced, naming the migration.
	err = setProp(ctx, e.svc, "lake", "k", "v")
	mustIs(t, err, catalog.ErrFenced, "commit while fenced")
	if !strings.Contains(err.Error(), res.MigrationID) {
		t.Errorf("fenced error does not name the migration: %v", err)
	}
	mustIs(t, e.svc.CreateNamespace(ctx, "lake", []string{"x"}, nil), catalog.ErrFenced, "namespace while fenced")
	_, err = e.svc.CreateWarehouse(ctx, "pond")
	mustIs(t, err, catalog.ErrFenced, "registry write while the global fence holds")
	// Reads and the other warehouse go on.
	if _, err := e.svc.LoadTable(ctx, "lake", tbl, ""); err != nil {
		t.Fatal(err)
	}
	if err := setProp(ctx, e.svc, "sea", "k", "v"); err != nil {
		t.Fatal(err)
	}
	p, err = e.m.Preflight(ctx, "lake")
	if err != nil {
		t.Fatal(err)
	}
	if p.Status != catalog.StatusSnapshotMaterialized || p.ReadyToEnableDurableStrong || !slices.Contains(p.RecommendedActions, catalog.ActionSnapshotRemaining) || p.Fence == nil || p.Fence.Status != catalog.FenceStatusMaterialized {
		t.Fatalf("preflight after materialize: %+v", p)
	}
	again, err := e.m.Materialize(ctx, "lake")
	if err != nil || again.Status != catalog.StatusAlreadyMaterialized || again.TargetSnapshotETag != res.TargetSnapshotETag {
		t.Fatalf("second materialize: %+v %v", again, err)
	}
	res2, err := e.m.Materialize(ctx, "sea")
	if err != nil {
		t.Fatal(err)
	}
	if !res2.ReadyToEnableDurableStrong || res2.MigrationID != res.MigrationID {
		t.Errorf("second warehouse: %+v", res2)
	}
	p, _ = e.m.Preflight(ctx, "lake")
	if !p.ReadyToEnableDurableStrong || !slices.Contains(p.RecommendedActions, catalog.ActionEnableDurableStrong) {
		t.Errorf("fleet not ready: %+v", p)
	}
	// A durable-strong server sees the same catalog.
	ss := e.strongService()
	whs, err := ss.ListWarehouses(ctx)
	if err != nil || len(whs) != 2 {
		t.Fatalf("strong warehouses: %v %v", whs, err)
	}
	got, err := ss.LoadTable(ctx, "sea", tbl, "")
	if err != nil || !strings.Contains(string(got.Metadata), `"k":"v"`) {
		t.Fatalf("strong load: %v %s", err, got.Metadata)
	}
	if _, err := ss.LoadView(ctx, "lake", catalog.Ident{Namespace: []string{"ns"}, Name: "v"}); err != nil {
		t.Fatal(err)
	}
	if err := setProp(ctx, ss, "lake", "after", "cutover"); err != nil {
		t.Fatal(err)
	}
}

func TestCancel(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	for _, wh := range []string{"lake", "sea"} {
		if _, err := e.m.Materialize(ctx, wh); err != nil {
			t.Fatal(err)
		}
	}
	c, err := e.m.Cancel(ctx, "lake")
	if err != nil || c.Status != catalog.StatusFenceReleased || !c.TargetRemoved || c.RegistryFenceReleased {
		t.Fatalf("cancel lake: %+v %v", c, err)
	}
	if err := setProp(ctx, e.svc, "lake", "k", "v"); err != nil {
		t.Fatalf("write after cancel: %v", err)
	}
	if _, err := e.svc.CreateWarehouse(ctx, "pond"); !errors.Is(err, catalog.ErrFenced) {
		t.Fatalf("registry must stay fenced while sea is: %v", err)
	}
	if etag, err := e.sb.SnapshotETag(ctx, "lake"); err != nil || etag != "" {
		t.Fatalf("lake target left: %q %v", etag, err)
	}
	c, err = e.m.Cancel(ctx, "sea")
	if err != nil || !c.RegistryFenceReleased {
		t.Fatalf("cancel sea: %+v %v", c, err)
	}
	if _, err := e.svc.CreateWarehouse(ctx, "pond"); err != nil {
		t.Fatalf("registry after the last cancel: %v", err)
	}
	c, err = e.m.Cancel(ctx, "sea")
	if err != nil || c.Status != catalog.StatusNoMigrationFence {
		t.Fatalf("cancel without fence: %+v %v", c, err)
	}
	// And it can be migrated again afterwards.
	if _, err := e.m.Materialize(ctx, "lake"); err != nil {
		t.Fatal(err)
	}
}

func TestCancelRefusedOnceTargetAdvanced(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	if _, err := e.m.Materialize(ctx, "lake"); err != nil {
		t.Fatal(err)
	}
	if err := setProp(ctx, e.strongService(), "lake", "k", "strong"); err != nil {
		t.Fatal(err)
	}
	e.reopen()
	_, err := e.m.Cancel(ctx, "lake")
	mustIs(t, err, catalog.ErrMigrationConflict, "cancel after the target advanced")
	if f, _ := e.fences.Fence("lake"); f == nil {
		t.Fatal("a refused cancel released the fence")
	}
	if etag, _ := e.sb.SnapshotETag(ctx, "lake"); etag == "" {
		t.Fatal("a refused cancel removed the target")
	}
	p, err := e.m.Preflight(ctx, "lake")
	if err != nil || p.Status != catalog.StatusManualReviewRequired || !slices.Contains(p.Blockers, catalog.BlockerSnapshotChanged) {
		t.Fatalf("preflight: %+v %v", p, err)
	}
}

func TestStagedCommitBlocksUntilRecovered(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.chooks.BeforePointerFlip = func(context.Context, catalog.Ident, string) error { return errors.New("crash") }
	e.reopen()
	mustIs(t, setProp(ctx, e.svc, "lake", "k", "v"), catalog.ErrCommitStateUnknown, "commit stopped before the flip")
	e.chooks = catalog.Hooks{}
	e.reopen() // Service.Recover is not run here: the staged commit stays
	p, err := e.m.Preflight(ctx, "lake")
	if err != nil || p.Status != catalog.StatusRecoveryRequired || !slices.Contains(p.Blockers, "COMMIT_RECOVERY_REQUIRED") {
		t.Fatalf("preflight: %+v %v", p, err)
	}
	_, err = e.m.Materialize(ctx, "lake")
	mustIs(t, err, catalog.ErrMigrationConflict, "materialize with a staged commit")
	if f, _ := e.fences.Fence("lake"); f != nil {
		t.Fatal("a refused materialize left a fence")
	}
	rep, err := e.svc.RecoverWarehouse(ctx, "lake", false)
	if err != nil || len(rep.Repaired) != 1 || rep.Repaired[0].Action != catalog.RecoverRollBack {
		t.Fatalf("recover: %+v %v", rep, err)
	}
	p, _ = e.m.Preflight(ctx, "lake")
	if p.Status != catalog.StatusReadyToSnapshot {
		t.Fatalf("after recovery: %+v", p)
	}
	if _, err := e.m.Materialize(ctx, "lake"); err != nil {
		t.Fatal(err)
	}
}

// TestCrashPoints stops a materialize at each failpoint, restarts, and
// checks that preflight is consistent and that both a cancel and a
// repeated materialize complete.
func TestCrashPoints(t *testing.T) {
	for _, point := range Points() {
		if point == PointCancelAfterTarget {
			continue
		}
		for _, then := range []string{"cancel", "materialize"} {
			t.Run(point+"/"+then, func(t *testing.T) {
				e := newEnv(t)
				ctx := context.Background()
				e.hooks.At = func(p string) error {
					if p == point {
						return errors.New("crash")
					}
					return nil
				}
				if _, err := e.m.Materialize(ctx, "lake"); err == nil {
					t.Fatal("materialize went past the failpoint")
				}
				e.hooks.At = nil
				e.reopen()
				p, err := e.m.Preflight(ctx, "lake")
				if err != nil {
					t.Fatal(err)
				}
				if p.Status != catalog.StatusReadyToSnapshot && p.Status != catalog.StatusSnapshotMaterialized {
					t.Fatalf("preflight after a crash at %s: %+v", point, p)
				}
				if then == "cancel" {
					c, err := e.m.Cancel(ctx, "lake")
					if err != nil {
						t.Fatal(err)
					}
					if c.ObjectBackedWritesFenced {
						t.Errorf("cancel: %+v", c)
					}
					if err := setProp(ctx, e.svc, "lake", "k", "v"); err != nil {
						t.Fatalf("write after cancel: %v", err)
					}
					if _, err := e.svc.CreateWarehouse(ctx, "pond"); err != nil {
						t.Fatalf("registry after cancel: %v", err)
					}
					if etag, _ := e.sb.SnapshotETag(ctx, "lake"); etag != "" {
						t.Error("target left behind")
					}
					return
				}
				res, err := e.m.Materialize(ctx, "lake")
				if err != nil {
					t.Fatal(err)
				}
				if res.SourceFingerprint == "" {
					t.Errorf("materialize: %+v", res)
				}
				p, _ = e.m.Preflight(ctx, "lake")
				if p.Status != catalog.StatusSnapshotMaterialized {
					t.Fatalf("preflight: %+v", p)
				}
				if _, err := e.strongService().LoadTable(ctx, "lake", tbl, ""); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

// TestMaterializeDrainsWriters starts a commit that blocks inside the
// gate, then a materialize: the materialize waits for the commit, which
// lands, and the next commit is fenced.
func TestMaterializeDrainsWriters(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	inside, proceed := make(chan struct{}), make(chan struct{})
	e.chooks.BeforePointerFlip = func(context.Context, catalog.Ident, string) error {
		close(inside)
		<-proceed
		return nil
	}
	e.reopen()
	committed := make(chan error, 1)
	go func() { committed <- setProp(ctx, e.svc, "lake", "k", "v") }()
	<-inside
	done := make(chan error, 1)
	go func() {
		_, err := e.m.Materialize(ctx, "lake")
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("materialize did not wait for the in-flight commit: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	close(proceed)
	if err := <-committed; err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	got, err := e.strongService().LoadTable(ctx, "lake", tbl, "")
	if err != nil || !strings.Contains(string(got.Metadata), `"k":"v"`) {
		t.Fatalf("the drained commit is not in the snapshot: %v", err)
	}
	e.chooks = catalog.Hooks{}
	mustIs(t, setProp(ctx, e.svc, "lake", "k", "w"), catalog.ErrFenced, "commit after materialize")
}

func TestDecodeFence(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		ok        bool
	}{
		{"preparing", `{"version":2,"table_bucket":"w","migration_id":"m","status":"PREPARING","target_bucket_existed":false,"source_fingerprint":null,"target_snapshot_etag":null,"created":"2026-01-01T00:00:00Z"}`, true},
		{"materialized", `{"version":2,"table_bucket":"w","migration_id":"m","status":"MATERIALIZED","target_bucket_existed":false,"source_fingerprint":"ab","target_snapshot_etag":"e","created":"2026-01-01T00:00:00Z"}`, true},
		{"v1", `{"version":1,"table_bucket":"w","migration_id":"m","status":"PREPARING","target_bucket_existed":false,"source_fingerprint":null,"target_snapshot_etag":null,"created":"2026-01-01T00:00:00Z"}`, true},
		{"version 3", `{"version":3,"table_bucket":"w","migration_id":"m","status":"PREPARING"}`, false},
		{"other bucket", `{"version":2,"table_bucket":"x","migration_id":"m","status":"PREPARING"}`, false},
		{"no id", `{"version":2,"table_bucket":"w","migration_id":" ","status":"PREPARING"}`, false},
		{"preparing with fingerprint", `{"version":2,"table_bucket":"w","migration_id":"m","status":"PREPARING","source_fingerprint":"ab"}`, false},
		{"materialized without etag", `{"version":2,"table_bucket":"w","migration_id":"m","status":"MATERIALIZED","source_fingerprint":"ab"}`, false},
		{"unknown status", `{"version":2,"table_bucket":"w","migration_id":"m","status":"DONE"}`, false},
		{"unknown field", `{"version":2,"table_bucket":"w","migration_id":"m","status":"PREPARING","extra":1}`, false},
		{"existed without baseline", `{"version":2,"table_bucket":"w","migration_id":"m","status":"PREPARING","target_bucket_existed":true}`, false},
		{"trailing", `{"version":2,"table_bucket":"w","migration_id":"m","status":"PREPARING"} {}`, false},
		{"not json", `fence`, false},
	} {
		_, err := decodeFence([]byte(tc.doc), "w")
		if (err == nil) != tc.ok {
			t.Errorf("%s: %v", tc.name, err)
		}
		if err != nil && !errors.Is(err, catalog.ErrBadRequest) {
			t.Errorf("%s: %v is not ErrBadRequest", tc.name, err)
		}
	}
}

func FuzzDecodeFence(f *testing.F) {
	f.Add([]byte(`{"version":2,"table_bucket":"w","migration_id":"m","status":"PREPARING"}`))
	f.Add([]byte(`{"version":2,"migration_id":"m"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if fc, err := decodeFence(data, "w"); err == nil && (fc.TableBucket != "w" || fc.MigrationID == "") {
			t.Fatalf("accepted %q", data)
		}
		_, _ = decodeGlobalFence(data)
	})
}
