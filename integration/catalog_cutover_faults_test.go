package integration

import (
	"errors"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cairnstore/cairn/catalog"
)

type cfKillCase struct {
	point      string
	fence      string // "" (none), PREPARING or MATERIALIZED
	status     string // preflight status after the restart
	target     bool   // a durable-strong snapshot exists after the restart
	cancel     string // the cancel's status
	removed    bool   // the cancel removes the target
	rematerial string // the repeated materialize's status
}

// TestCatalogCutoverKill: the server is SIGKILLed (by itself, through
// CAIRN_FAILPOINTS=<point>=kill) at each step of a materialize; restarted
// without failpoints it shows a consistent state, and both recoveries
// work: cancel (object-backed writes resume) or materialize again (a
// durable-strong restart then serves the table at the same metadata).
func TestCatalogCutoverKill(t *testing.T) {
	for _, tc := range []cfKillCase{
		{point: "materialize.after-global-fence", status: catalog.StatusReadyToSnapshot,
			cancel: catalog.StatusNoMigrationFence, rematerial: catalog.StatusSnapshotMaterialized},
		{point: "materialize.after-prepare-fence", fence: catalog.FenceStatusPreparing, status: catalog.StatusReadyToSnapshot,
			cancel: catalog.StatusFenceReleased, rematerial: catalog.StatusSnapshotMaterialized},
		{point: "materialize.after-publish", fence: catalog.FenceStatusPreparing, status: catalog.StatusReadyToSnapshot, target: true,
			cancel: catalog.StatusFenceReleased, removed: true, rematerial: catalog.StatusSnapshotMaterialized},
		{point: "materialize.after-registry", fence: catalog.FenceStatusPreparing, status: catalog.StatusReadyToSnapshot, target: true,
			cancel: catalog.StatusFenceReleased, removed: true, rematerial: catalog.StatusSnapshotMaterialized},
		{point: "materialize.after-materialized-fence", fence: catalog.FenceStatusMaterialized, status: catalog.StatusSnapshotMaterialized, target: true,
			cancel: catalog.StatusFenceReleased, removed: true, rematerial: catalog.StatusAlreadyMaterialized},
	} {
		for _, rec := range []string{"cancel", "materialize"} {
			t.Run(strings.TrimPrefix(tc.point, "materialize.")+"/"+rec, func(t *testing.T) { cfKillRun(t, tc, rec) })
		}
	}

	// A cancel killed after it removed the target (fence still there):
	// the restarted server shows the fence, a materialize again is
	// refused (its target is gone) and a second cancel finishes.
	t.Run("cancel.after-target-removed", func(t *testing.T) {
		const point = "cancel.after-target-removed"
		data := t.TempDir()
		s := cfStart(t, data, cfEnv{failpoints: point + "=kill"})
		loc := cfMakeWarehouse(t, s, cfA)
		m := cfMaterialize(t, s, cfA)
		cfWantKilled(t, s, http.MethodDelete, point)

		s = cfStart(t, data, cfEnv{})
		p := cfPreflight(t, s, cfA)
		if p.Fence == nil || p.Fence.Status != catalog.FenceStatusMaterialized || p.Fence.MigrationID != m.MigrationID || p.ReadyToEnableDurableStrong {
			t.Fatalf("preflight after the kill: status %s, fence %+v, ready %v; want the MATERIALIZED fence of %s, not ready",
				p.Status, p.Fence, p.ReadyToEnableDurableStrong, m.MigrationID)
		}
		if !slices.Contains(p.RecommendedActions, catalog.ActionFinishCancel) {
			t.Errorf("preflight after a cancel killed half-way: %s, blockers %v, actions %v; want %s recommended",
				p.Status, p.Blockers, p.RecommendedActions, catalog.ActionFinishCancel)
		}
		if st := cfStatus(t, s, cfA); st.SnapshotETag != "" {
			t.Errorf("status after the kill: snapshot %q, want the target removed", st.SnapshotETag)
		}
		cfWantFenced(t, s, cfA, m.MigrationID)
		r := cfCall(t, s, cfRoot, http.MethodPost, cfMigrationPath(cfA), "")
		cfWantErr(t, "materialize after the target was removed", r, http.StatusConflict, "CommitFailedException", m.MigrationID)
		c := cfCancel(t, s, cfA)
		if c.Status != catalog.StatusFenceReleased || c.MigrationID != m.MigrationID || c.TargetRemoved || !c.RegistryFenceReleased {
			t.Errorf("cancel again: %+v; want FENCE_RELEASED of %s, nothing left to remove, registry fence released", c, m.MigrationID)
		}
		if got := cfLoad(t, s, cfA).MetadataLocation; got != loc {
			t.Errorf("table after the cancel: %s, want %s", got, loc)
		}
		cfWantWrites(t, s, cfA)
		cfWantCreate(t, s, cfZ)
		cfStop(t, s)
	})
}

// cfWantKilled sends method to warehouse cfA's migration on s, whose
// failpoint point is set to kill: the request gets no answer and the
// server dies of SIGKILL.
func cfWantKilled(t *testing.T, s *server, method, point string) {
	t.Helper()
	r, err := cfTry(s, cfRoot, method, cfMigrationPath(cfA), "")
	if err == nil {
		t.Fatalf("%s with %s=kill answered %s, want a broken connection", method, point, r)
	}
	select {
	case <-s.done:
	case <-time.After(stopTimeout):
		t.Fatalf("the server is still running %v after %s hit %s=kill", stopTimeout, method, point)
	}
	var ee *exec.ExitError
	if !errors.As(s.err, &ee) {
		t.Fatalf("server exit: %v, want death by SIGKILL", s.err)
	}
	if ws, ok := ee.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("server exit: %v, want death by SIGKILL", s.err)
	}
}

func cfKillRun(t *testing.T, tc cfKillCase, recovery string) {
	data := t.TempDir()
	s := cfStart(t, data, cfEnv{failpoints: tc.point + "=kill"})
	loc := cfMakeWarehouse(t, s, cfA)

	cfWantKilled(t, s, http.MethodPost, tc.point)

	s = cfStart(t, data, cfEnv{})
	p := cfPreflight(t, s, cfA)
	fence := ""
	if p.Fence != nil {
		fence = p.Fence.Status
	}
	if fence != tc.fence || p.ObjectBackedWritesFenced != (tc.fence != "") || p.Status != tc.status {
		t.Fatalf("preflight after the kill: status %s, fence %q (%+v), fenced %v; want %s, fence %q",
			p.Status, fence, p.Fence, p.ObjectBackedWritesFenced, tc.status, tc.fence)
	}
	if len(p.Blockers) != 0 {
		t.Errorf("preflight after the kill: blockers %v", p.Blockers)
	}
	if st := cfStatus(t, s, cfA); (st.SnapshotETag != "") != tc.target {
		t.Errorf("status after the kill: snapshot %q, want one: %v", st.SnapshotETag, tc.target)
	}
	id := ""
	if p.Fence != nil {
		id = p.Fence.MigrationID
		cfWantFenced(t, s, cfA, id)
	} else {
		cfWantWrites(t, s, cfA)
		loc = cfLoad(t, s, cfA).MetadataLocation
	}
	cfWantRegistryFenced(t, s, cfZ, id)

	switch recovery {
	case "cancel":
		c := cfCancel(t, s, cfA)
		if c.Status != tc.cancel || c.TargetRemoved != tc.removed || !c.RegistryFenceReleased || c.MigrationID != id {
			t.Errorf("cancel: %+v; want %s of %q, target removed %v, registry fence released", c, tc.cancel, id, tc.removed)
		}
		if st := cfStatus(t, s, cfA); st.SnapshotETag != "" || st.Fence != nil {
			t.Errorf("status after cancel: snapshot %q, fence %+v; want neither", st.SnapshotETag, st.Fence)
		}
		if p := cfPreflight(t, s, cfA); p.Status != catalog.StatusReadyToSnapshot || p.Fence != nil {
			t.Errorf("preflight after cancel: %s, fence %+v", p.Status, p.Fence)
		}
		cfWantWrites(t, s, cfA)
		cfWantCreate(t, s, cfZ)
		cfStop(t, s)
	case "materialize":
		m := cfMaterialize(t, s, cfA)
		if m.Status != tc.rematerial || (id != "" && m.MigrationID != id) || !m.ReadyToEnableDurableStrong {
			t.Errorf("materialize again: %+v; want %s of %q, ready to enable", m, tc.rematerial, id)
		}
		if p := cfPreflight(t, s, cfA); p.Status != catalog.StatusSnapshotMaterialized || p.Fence == nil ||
			p.Fence.Status != catalog.FenceStatusMaterialized || !p.ReadyToEnableDurableStrong {
			t.Errorf("preflight after materialize: %s, fence %+v, ready %v", p.Status, p.Fence, p.ReadyToEnableDurableStrong)
		}
		cfWantFenced(t, s, cfA, m.MigrationID)
		cfStop(t, s)

		s = cfStart(t, data, cfEnv{backing: catalog.BackingDurableStrong})
		lt := cfLoad(t, s, cfA)
		if lt.MetadataLocation != loc || lt.Metadata.Properties["setup"] != "yes" {
			t.Errorf("durable-strong load: %s %v, want %s with setup=yes", lt.MetadataLocation, lt.Metadata.Properties, loc)
		}
		if st := cfStatus(t, s, cfA); st.Backing != catalog.BackingDurableStrong || !st.Served || st.TableCount != 1 {
			t.Errorf("durable-strong status: %+v", st)
		}
		cfWantWrites(t, s, cfA)
		cfStop(t, s)
	default:
		t.Fatalf("unknown recovery %q", recovery)
	}
}

// cfWriteFile writes a file for the test.
func cfWriteFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}
