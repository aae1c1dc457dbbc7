package migrate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cairnstore/cairn/catalog"
	"github.com/google/uuid"
)

// Materialize implements catalog.Cutover: it fences the warehouse, copies
// its records into a durable-strong snapshot and records the result in
// the fence. Steps (each re-runnable after a crash):
//
//  1. Take the global then the warehouse lock exclusively (drains
//     in-flight object-backed writers), read the fence.
//  2. Check the warehouse as preflight does (READY_TO_SNAPSHOT: no staged
//     commit, no finding; no durable-strong warehouse the object registry
//     lacks), collect the source and fingerprint it. A MATERIALIZED fence
//     with another fingerprint is a conflict.
//  3. Create the global fence if absent (registry writes now refused).
//  4. Observe the target; without a fence, write the PREPARING fence
//     recording whether the target existed and its ETag.
//  5. Publish the snapshot with a compare-and-swap on that ETag: equal
//     to the source already = nothing to do; different = conflict.
//  6. Add the warehouse to the durable-strong registry.
//  7. Overwrite the fence: MATERIALIZED, fingerprint and snapshot ETag.
func (m *Migrator) Materialize(ctx context.Context, wh string) (catalog.MaterializeResult, error) {
	if _, err := m.svc.GetWarehouse(ctx, wh); err != nil {
		return catalog.MaterializeResult{}, err
	}
	unlock := m.lockExclusive(wh)
	defer unlock()
	return m.materializeLocked(ctx, wh)
}

func (m *Migrator) materializeLocked(ctx context.Context, wh string) (catalog.MaterializeResult, error) {
	var res catalog.MaterializeResult
	fence, err := m.fences.Fence(wh)
	if err != nil {
		return res, err
	}
	in, err := m.svc.Inspect(ctx, wh)
	if err != nil {
		return res, err
	}
	if status, blockers, _ := in.Assess(); status != catalog.StatusReadyToSnapshot {
		return res, conflictf("warehouse %s is %s (blockers: %s); resolve them and run preflight again", wh, status, strings.Join(blockers, ", "))
	}
	unknown, err := m.unknownTargets(ctx)
	if err != nil {
		return res, err
	}
	if len(unknown) > 0 {
		return res, conflictf("the durable-strong registry holds warehouses the object registry does not: %s", strings.Join(unknown, ", "))
	}
	src, err := m.collect(ctx, wh)
	if err != nil {
		return res, err
	}
	if fence != nil && fence.Status == catalog.FenceStatusMaterialized && *fence.SourceFingerprint != src.fp {
		return res, conflictf("warehouse %s changed since migration %s materialized it", wh, fence.MigrationID)
	}
	global, err := m.fences.Global()
	if err != nil {
		return res, err
	}
	if global == nil {
		global = &GlobalFence{Version: fenceVersion, MigrationID: uuid.NewString(), Created: time.Now().UTC()}
		if fence != nil {
			global.MigrationID = fence.MigrationID
		}
		if err := m.fences.putGlobal(ctx, global); err != nil {
			return res, err
		}
	}
	if err := m.opt.Hooks.at(PointAfterGlobalFence); err != nil {
		return res, err
	}
	tgt, err := m.observe(ctx, wh)
	if err != nil {
		return res, err
	}
	if fence == nil {
		fence = &catalog.Fence{Version: fenceVersion, TableBucket: wh, MigrationID: global.MigrationID,
			Status: catalog.FenceStatusPreparing, TargetBucketExisted: tgt.etag != "", Created: time.Now().UTC()}
		if tgt.etag != "" {
			fence.TargetSnapshotETag = ptr(tgt.etag)
		}
		if err := m.fences.putFence(ctx, wh, fence); err != nil {
			return res, err
		}
		m.opt.Logger.Info().Str("warehouse", wh).Str("migration", fence.MigrationID).Bool("target_existed", fence.TargetBucketExisted).Msg("cutover: warehouse fenced (PREPARING)")
	}
	if err := m.opt.Hooks.at(PointAfterPrepareFence); err != nil {
		return res, err
	}
	already := fence.Status == catalog.FenceStatusMaterialized
	etag, err := m.publish(ctx, wh, src, tgt, fence)
	if err != nil {
		return res, err
	}
	if err := m.opt.Hooks.at(PointAfterPublish); err != nil {
		return res, err
	}
	if err := m.publishRegistry(ctx, wh, src, tgt); err != nil {
		return res, err
	}
	if err := m.opt.Hooks.at(PointAfterRegistry); err != nil {
		return res, err
	}
	if !already {
		done := *fence
		done.Status = catalog.FenceStatusMaterialized
		done.SourceFingerprint = ptr(src.fp)
		done.TargetSnapshotETag = ptr(etag)
		if err := m.fences.putFence(ctx, wh, &done); err != nil {
			return res, err
		}
		fence = &done
		m.opt.Logger.Info().Str("warehouse", wh).Str("migration", fence.MigrationID).Str("fingerprint", src.fp).Str("etag", etag).Msg("cutover: warehouse materialized")
	}
	if err := m.opt.Hooks.at(PointAfterMaterialized); err != nil {
		return res, err
	}
	res = catalog.MaterializeResult{
		TableBucket: wh, SourceKind: catalog.SourceKindObjectBacked, TargetKind: catalog.TargetKindDurable,
		Status: catalog.StatusSnapshotMaterialized, MigrationID: fence.MigrationID,
		NamespaceCount: src.counts[catalog.KindNamespace], TableCount: src.counts[catalog.KindTable],
		ViewCount: src.counts[catalog.KindView], CommitLogCount: src.counts[catalog.KindCommit],
		IdempotencyIndexCount: src.counts[catalog.KindIdempotency],
		SourceFingerprint:     src.fp, TargetSnapshotETag: *fence.TargetSnapshotETag,
		ObjectBackedWritesFenced: true,
	}
	if already {
		res.Status = catalog.StatusAlreadyMaterialized
	}
	_, allReady, err := m.buckets(ctx)
	if err != nil {
		return res, err
	}
	res.ReadyToEnableDurableStrong = allReady
	return res, nil
}

// publish makes the target snapshot hold the source's records and returns
// its ETag.
func (m *Migrator) publish(ctx context.Context, wh string, src *source, tgt *target, fence *catalog.Fence) (string, error) {
	if tgt.etag != "" {
		if tgt.fingerprint(wh, src.registry) == src.fp {
			return tgt.etag, nil // published before (a retry), or the target already equals the source
		}
		if fence.Status == catalog.FenceStatusMaterialized {
			return "", conflictf("the durable-strong snapshot of %s advanced after migration %s materialized it", wh, fence.MigrationID)
		}
		return "", conflictf("the durable-strong snapshot of %s exists and differs from the object-backed catalog", wh)
	}
	if fence.Status == catalog.FenceStatusMaterialized {
		return "", conflictf("the durable-strong snapshot of %s, materialized by migration %s, is gone", wh, fence.MigrationID)
	}
	if fence.TargetBucketExisted {
		return "", conflictf("the durable-strong snapshot of %s existed when migration %s began and is gone", wh, fence.MigrationID)
	}
	etag, err := m.dst.Replace(ctx, wh, src.kinds, "")
	if errors.Is(err, catalog.ErrConflict) {
		return "", conflictf("the durable-strong snapshot of %s was written concurrently: %v", wh, err)
	}
	if err != nil {
		return "", fmt.Errorf("migrate: publish %s: %w", wh, err)
	}
	return etag, nil
}

// publishRegistry adds the warehouse to the durable-strong registry.
func (m *Migrator) publishRegistry(ctx context.Context, wh string, src *source, tgt *target) error {
	if tgt.registry != nil {
		if bytes.Equal(tgt.registry, src.registry) {
			return nil
		}
		return conflictf("the durable-strong registry entry of %s differs from the object-backed one", wh)
	}
	_, err := m.dst.Put(ctx, "", catalog.KindWarehouse, wh, src.registry, "")
	if errors.Is(err, catalog.ErrConflict) {
		return conflictf("the durable-strong registry entry of %s was written concurrently", wh)
	}
	if err != nil {
		return fmt.Errorf("migrate: registry entry of %s: %w", wh, err)
	}
	return nil
}
