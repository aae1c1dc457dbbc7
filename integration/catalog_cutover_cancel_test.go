package integration

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/cairnstore/cairn/catalog"
)

// TestCatalogCutoverCancel: cancel releases a half-done or complete
// materialize (the registry fence with the last warehouse fence), and is
// refused, keeping the fence, once the durable-strong target advanced.
func TestCatalogCutoverCancel(t *testing.T) {
	t.Run("stopped at PREPARING", func(t *testing.T) {
		s := cfStart(t, t.TempDir(), cfEnv{failpoints: "materialize.after-prepare-fence=error"})
		locA := cfMakeWarehouse(t, s, cfA)
		cfMakeWarehouse(t, s, cfB)

		if r := cfCall(t, s, cfRoot, http.MethodPost, cfMigrationPath(cfA), ""); r.status != http.StatusInternalServerError {
			t.Fatalf("materialize a with the failpoint: %s, want 500", r)
		}
		p := cfPreflight(t, s, cfA)
		if p.Fence == nil || p.Fence.Status != catalog.FenceStatusPreparing || !p.ObjectBackedWritesFenced || p.Fence.MigrationID == "" {
			t.Fatalf("preflight after the stop: fence %+v, fenced %v; want PREPARING, fenced", p.Fence, p.ObjectBackedWritesFenced)
		}
		if p.Status != catalog.StatusReadyToSnapshot || !slices.Contains(p.RecommendedActions, catalog.ActionCancelOrRematerialize) {
			t.Errorf("preflight after the stop: status %s, actions %v; want %s with %s", p.Status, p.RecommendedActions, catalog.StatusReadyToSnapshot, catalog.ActionCancelOrRematerialize)
		}
		id := p.Fence.MigrationID
		cfWantFenced(t, s, cfA, id)
		if got := cfLoad(t, s, cfA).MetadataLocation; got != locA {
			t.Errorf("a's table after the refused commit: %s, want %s", got, locA)
		}
		if pb := cfPreflight(t, s, cfB); pb.Fence != nil || pb.ObjectBackedWritesFenced {
			t.Errorf("b is fenced by a's migration: %+v", pb.Fence)
		}
		cfWantWrites(t, s, cfB)
		cfWantRegistryFenced(t, s, cfC, id)

		c := cfCancel(t, s, cfA)
		if c.Status != catalog.StatusFenceReleased || c.MigrationID != id || c.TargetRemoved || !c.RegistryFenceReleased {
			t.Errorf("cancel: %+v; want FENCE_RELEASED of %s, nothing published so no target removed, registry fence released", c, id)
		}
		if st := cfStatus(t, s, cfA); st.SnapshotETag != "" || st.Fence != nil {
			t.Errorf("status after cancel: snapshot %q, fence %+v; want no target and no fence", st.SnapshotETag, st.Fence)
		}
		if p := cfPreflight(t, s, cfA); p.Fence != nil || p.ObjectBackedWritesFenced || p.Status != catalog.StatusReadyToSnapshot {
			t.Errorf("preflight after cancel: status %s, fence %+v", p.Status, p.Fence)
		}
		cfWantWrites(t, s, cfA)
		cfWantCreate(t, s, cfC)
		cfStop(t, s)
	})

	t.Run("two materialized", func(t *testing.T) {
		s := cfStart(t, t.TempDir(), cfEnv{})
		cfMakeWarehouse(t, s, cfA)
		cfMakeWarehouse(t, s, cfB)
		ma := cfMaterialize(t, s, cfA)
		mb := cfMaterialize(t, s, cfB)
		if ma.Status != catalog.StatusSnapshotMaterialized || mb.Status != catalog.StatusSnapshotMaterialized {
			t.Errorf("materialize: a %s, b %s", ma.Status, mb.Status)
		}
		if ma.ReadyToEnableDurableStrong || !mb.ReadyToEnableDurableStrong {
			t.Errorf("ready_to_enable_durable_strong: a %v (b not yet done), b %v (all done)", ma.ReadyToEnableDurableStrong, mb.ReadyToEnableDurableStrong)
		}
		if st := cfStatus(t, s, cfA); st.SnapshotETag == "" {
			t.Errorf("status of materialized a: no snapshot")
		}
		cfWantFenced(t, s, cfA, ma.MigrationID)
		cfWantFenced(t, s, cfB, mb.MigrationID)

		c := cfCancel(t, s, cfA)
		if c.Status != catalog.StatusFenceReleased || !c.TargetRemoved || c.RegistryFenceReleased {
			t.Errorf("cancel a: %+v; want FENCE_RELEASED, target removed, registry still fenced (b)", c)
		}
		if st := cfStatus(t, s, cfA); st.SnapshotETag != "" {
			t.Errorf("status of a after cancel: snapshot %q, want removed", st.SnapshotETag)
		}
		cfWantRegistryFenced(t, s, cfC, mb.MigrationID)
		cfWantWrites(t, s, cfA)
		cfWantFenced(t, s, cfB, mb.MigrationID)

		// b through the CLI, as an operator would.
		cli := runCairn(t, runTimeout, "admin", "catalog", "migration", "cancel", cfB, "--endpoint", s.url(""), "--json")
		if cli.code != 0 || json.Unmarshal([]byte(cli.stdout), &c) != nil {
			t.Fatalf("cairn admin catalog migration cancel %s: exit %d\n%s%s", cfB, cli.code, cli.stdout, cli.stderr)
		}
		if c.Status != catalog.StatusFenceReleased || !c.TargetRemoved || !c.RegistryFenceReleased {
			t.Errorf("cancel b: %+v; want FENCE_RELEASED, target removed, registry fence released", c)
		}
		cfWantCreate(t, s, cfC)
		cfWantWrites(t, s, cfB)
		if c := cfCancel(t, s, cfA); c.Status != catalog.StatusNoMigrationFence {
			t.Errorf("cancel a again: %+v, want %s", c, catalog.StatusNoMigrationFence)
		}
		cfStop(t, s)
	})

	t.Run("target advanced", func(t *testing.T) {
		data := t.TempDir()
		s := cfStart(t, data, cfEnv{})
		cfMakeWarehouse(t, s, cfA)
		cfMakeWarehouse(t, s, cfB)
		m := cfMaterialize(t, s, cfA)
		cfStop(t, s)

		s = cfStart(t, data, cfEnv{backing: catalog.BackingDurableStrong})
		before := cfLoad(t, s, cfA)
		if r := cfCommit(t, s, cfA, "strong", "yes"); r.status != http.StatusOK {
			t.Fatalf("commit under durable-strong: %s", r)
		}
		advanced := cfLoad(t, s, cfA)
		if advanced.MetadataLocation == before.MetadataLocation || advanced.Metadata.Properties["strong"] != "yes" {
			t.Fatalf("durable-strong commit did not advance a: %s -> %s", before.MetadataLocation, advanced.MetadataLocation)
		}
		cfStop(t, s)

		s = cfStart(t, data, cfEnv{})
		r := cfCall(t, s, cfRoot, http.MethodDelete, cfMigrationPath(cfA), "")
		cfWantErr(t, "cancel after the target advanced", r, http.StatusConflict, "CommitFailedException", "advanced", m.MigrationID)
		p := cfPreflight(t, s, cfA)
		if p.Status != catalog.StatusManualReviewRequired || !slices.Contains(p.Blockers, catalog.BlockerSnapshotChanged) || p.ReadyToEnableDurableStrong {
			t.Errorf("preflight after the target advanced: status %s, blockers %v, ready %v; want %s with %s",
				p.Status, p.Blockers, p.ReadyToEnableDurableStrong, catalog.StatusManualReviewRequired, catalog.BlockerSnapshotChanged)
		}
		if p.Fence == nil || p.Fence.Status != catalog.FenceStatusMaterialized || !p.ObjectBackedWritesFenced {
			t.Errorf("preflight after the refused cancel: fence %+v, want MATERIALIZED kept", p.Fence)
		}
		cfWantFenced(t, s, cfA, m.MigrationID)
		if got := cfLoad(t, s, cfA); got.MetadataLocation != before.MetadataLocation || got.Metadata.Properties["strong"] != "" {
			t.Errorf("object-backed a: %s %v, want the materialized %s", got.MetadataLocation, got.Metadata.Properties, before.MetadataLocation)
		}
		if st := cfStatus(t, s, cfA); st.SnapshotETag == "" {
			t.Errorf("the refused cancel removed the durable-strong snapshot of a")
		}
		cfStop(t, s)
		// The refusal holds across a restart too.
		s = cfStart(t, data, cfEnv{})
		r = cfCall(t, s, cfRoot, http.MethodDelete, cfMigrationPath(cfA), "")
		cfWantErr(t, "cancel after the target advanced, after a restart", r, http.StatusConflict, "CommitFailedException", "advanced")
		cfWantFenced(t, s, cfA, m.MigrationID)
		cli := runCairn(t, runTimeout, "admin", "catalog", "migration", "cancel", cfA, "--endpoint", s.url(""), "--json")
		if out := cli.stdout + cli.stderr; cli.code != 2 || !strings.Contains(out, "CommitFailedException") || !strings.Contains(out, "advanced") {
			t.Errorf("cairn admin catalog migration cancel %s: exit %d, output %q; want exit 2 naming CommitFailedException and the advanced snapshot", cfA, cli.code, out)
		}
		cfStop(t, s)
	})
}

// cfKillCase is one failpoint of TestCatalogCutoverKill and what the
// restarted server should show. The registry fence (written before the
// first failpoint) is there after each.
