package migrate

import (
	"context"
	"errors"
	"fmt"

	"github.com/cairnstore/cairn/catalog"
)

// Cancel implements catalog.Cutover: it undoes a warehouse's cutover while
// that is safe, that is while the durable-strong target has not advanced
// past what materialize wrote. A target that did not exist before the
// migration is removed (registry entry, then snapshot); one that existed
// is kept. The fence is deleted, and the global fence with the last
// warehouse fence. Anything it cannot prove safe is a conflict, and
// nothing is changed then (fail closed).
func (m *Migrator) Cancel(ctx context.Context, wh string) (catalog.CancelResult, error) {
	if _, err := m.svc.GetWarehouse(ctx, wh); err != nil {
		return catalog.CancelResult{}, err
	}
	unlock := m.lockExclusive(wh)
	defer unlock()
	res := catalog.CancelResult{TableBucket: wh}
	fence, err := m.fences.Fence(wh)
	if err != nil {
		return res, err
	}
	if fence == nil {
		res.Status = catalog.StatusNoMigrationFence
		released, err := m.releaseGlobal(ctx, wh)
		res.RegistryFenceReleased = released
		return res, err
	}
	res.MigrationID = fence.MigrationID
	src, err := m.collect(ctx, wh)
	if err != nil {
		return res, err
	}
	tgt, err := m.observe(ctx, wh)
	if err != nil {
		return res, err
	}
	materialized := fence.Status == catalog.FenceStatusMaterialized
	if materialized && *fence.SourceFingerprint != src.fp {
		return res, conflictf("warehouse %s changed since migration %s materialized it; refusing to cancel", wh, fence.MigrationID)
	}
	equal := tgt.etag != "" && tgt.fingerprint(wh, src.registry) == src.fp
	switch {
	case fence.TargetBucketExisted && tgt.etag == "":
		return res, conflictf("the durable-strong snapshot of %s existed before migration %s and is gone; restore it before cancelling", wh, fence.MigrationID)
	case materialized && tgt.exists() && !equal:
		return res, conflictf("the durable-strong snapshot of %s advanced after migration %s materialized it; cancelling would lose those commits (restore a backup or migrate back instead)", wh, fence.MigrationID)
	case materialized && equal && tgt.etag != *fence.TargetSnapshotETag && !fence.TargetBucketExisted:
		return res, conflictf("the durable-strong snapshot of %s was rewritten after migration %s materialized it (ETag %s, fence %s)", wh, fence.MigrationID, tgt.etag, *fence.TargetSnapshotETag)
	case !materialized && !fence.TargetBucketExisted && tgt.etag != "" && !equal:
		return res, conflictf("the durable-strong snapshot of %s holds state migration %s did not write; refusing to remove it", wh, fence.MigrationID)
	case fence.TargetBucketExisted && fence.TargetSnapshotETag != nil && tgt.etag != *fence.TargetSnapshotETag && !equal:
		return res, conflictf("the durable-strong snapshot of %s advanced during migration %s", wh, fence.MigrationID)
	}
	if !fence.TargetBucketExisted && tgt.exists() {
		if err := m.removeTarget(ctx, wh, tgt); err != nil {
			return res, err
		}
		res.TargetRemoved = true
		m.opt.Logger.Info().Str("warehouse", wh).Str("migration", fence.MigrationID).Msg("cutover cancelled: durable-strong target removed")
	}
	if err := m.opt.Hooks.at(PointCancelAfterTarget); err != nil {
		return res, err
	}
	if err := m.fences.putFence(ctx, wh, nil); err != nil {
		return res, err
	}
	released, err := m.releaseGlobal(ctx, wh)
	if err != nil {
		return res, err
	}
	m.opt.Logger.Info().Str("warehouse", wh).Str("migration", fence.MigrationID).Bool("registry_fence_released", released).Msg("cutover cancelled: fence released")
	res.Status = catalog.StatusFenceReleased
	res.RegistryFenceReleased = released
	return res, nil
}

// removeTarget deletes the registry entry, then the snapshot, each only
// while it is what the cancel looked at.
func (m *Migrator) removeTarget(ctx context.Context, wh string, tgt *target) error {
	if tgt.registry != nil {
		rec, err := m.dst.Get(ctx, "", catalog.KindWarehouse, wh)
		if err == nil {
			err = m.dst.Delete(ctx, "", catalog.KindWarehouse, wh, rec.Version)
		}
		if err != nil && !errors.Is(err, catalog.ErrNotFound) {
			return fmt.Errorf("migrate: remove the durable-strong registry entry of %s: %w", wh, err)
		}
	}
	if tgt.etag == "" {
		return nil
	}
	if err := m.dst.Remove(ctx, wh, tgt.etag); errors.Is(err, catalog.ErrConflict) {
		return conflictf("the durable-strong snapshot of %s changed during the cancel", wh)
	} else if err != nil {
		return fmt.Errorf("migrate: remove the durable-strong snapshot of %s: %w", wh, err)
	}
	return nil
}

// releaseGlobal deletes the global fence when no warehouse other than
// wh holds a fence; it reports whether it did.
func (m *Migrator) releaseGlobal(ctx context.Context, wh string) (bool, error) {
	for _, other := range m.fences.fencedWarehouses() {
		if other != wh {
			return false, nil
		}
	}
	g, err := m.fences.Global()
	if err == nil && g == nil {
		return false, nil
	}
	if err := m.fences.putGlobal(ctx, nil); err != nil {
		return false, err
	}
	return true, nil
}
