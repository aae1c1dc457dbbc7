package migrate

import (
	"context"
	"fmt"
	"slices"

	"github.com/cairnstore/cairn/catalog"
)

// Preflight implements catalog.Cutover: a dry run that changes nothing.
func (m *Migrator) Preflight(ctx context.Context, wh string) (catalog.Preflight, error) {
	if _, err := m.svc.GetWarehouse(ctx, wh); err != nil {
		return catalog.Preflight{}, err
	}
	in, err := m.svc.Inspect(ctx, wh)
	if err != nil {
		return catalog.Preflight{}, err
	}
	status, blockers, actions := in.Assess()
	rep := in.Report
	p := catalog.Preflight{
		TableBucket: wh, SourceKind: catalog.SourceKindObjectBacked, TargetKind: catalog.TargetKindDurable,
		NamespaceCount: in.Namespaces, TableCount: in.Tables, ViewCount: in.Views,
		CommitLogCount: in.Commits, IdempotencyIndexCount: in.Idempotency, WarehousePrefixCount: in.Prefixes,
		WarehouseIndexReady: in.IndexReady(),
		Rollback:            catalog.DefaultRollback(),
		IdentifierConflicts: append([]catalog.Ident{}, in.Collisions...),
		Recovery:            &rep,
	}
	fence, ferr := m.fences.Fence(wh)
	if ferr != nil {
		return catalog.Preflight{}, ferr
	}
	p.Fence = fence
	p.ObjectBackedWritesFenced = fence != nil
	buckets, allReady, err := m.buckets(ctx)
	if err != nil {
		return catalog.Preflight{}, err
	}
	p.Buckets = buckets
	unknown, err := m.unknownTargets(ctx)
	if err != nil {
		return catalog.Preflight{}, err
	}
	changed := len(unknown) > 0
	var mine catalog.BucketReadiness
	for _, b := range buckets {
		if b.TableBucket == wh {
			mine = b
		}
	}
	if status == catalog.StatusReadyToSnapshot && fence != nil && fence.Status == catalog.FenceStatusMaterialized {
		if mine.Ready {
			status = catalog.StatusSnapshotMaterialized
		} else {
			changed = true
		}
	}
	if changed {
		status = catalog.StatusManualReviewRequired
		blockers = append(blockers, catalog.BlockerSnapshotChanged)
		actions = append(actions, catalog.ActionReviewSnapshot)
		if fence != nil && fence.Status == catalog.FenceStatusMaterialized && !fence.TargetBucketExisted && mine.TargetFingerprint == "" {
			// The target is gone, as a cancel stopped half-way leaves
			// it: running cancel again finishes it.
			actions = append(actions, catalog.ActionFinishCancel)
		}
	}
	global, gerr := m.fences.Global()
	switch status {
	case catalog.StatusReadyToSnapshot:
		if fence != nil { // a materialize stopped half-way
			actions = append(actions, catalog.ActionCancelOrRematerialize)
		}
		actions = append(actions, catalog.ActionSnapshot, catalog.ActionKeepRollbackConfig)
	case catalog.StatusSnapshotMaterialized:
		p.ReadyToEnableDurableStrong = allReady && global != nil && gerr == nil && !changed
		actions = append(actions, catalog.ActionVerifySnapshot)
		if p.ReadyToEnableDurableStrong {
			actions = append(actions, catalog.ActionEnableDurableStrong)
		} else {
			actions = append(actions, catalog.ActionSnapshotRemaining)
		}
		actions = append(actions, catalog.ActionKeepRollbackConfig)
	}
	p.Status = status
	p.Blockers = append([]string{}, blockers...)
	p.RecommendedActions = slices.Compact(append([]string{}, actions...))
	return p, nil
}

// buckets reports every object-backed warehouse's cutover state; allReady
// is true when each is MATERIALIZED with a matching target.
func (m *Migrator) buckets(ctx context.Context) ([]catalog.BucketReadiness, bool, error) {
	names, err := registryNames(ctx, m.src)
	if err != nil {
		return nil, false, fmt.Errorf("migrate: list warehouses: %w", err)
	}
	out := make([]catalog.BucketReadiness, 0, len(names))
	allReady := len(names) > 0
	for _, wh := range names {
		b := catalog.BucketReadiness{TableBucket: wh, Fence: catalog.BucketStatusNotMigrated}
		fence, err := m.fences.Fence(wh)
		if err != nil {
			b.Fence = "INVALID"
		} else if fence != nil {
			b.Fence = fence.Status
			if fence.SourceFingerprint != nil {
				b.SourceFingerprint = *fence.SourceFingerprint
			}
		}
		if b.Fence == catalog.FenceStatusMaterialized {
			t, err := m.observe(ctx, wh)
			if err != nil {
				return nil, false, err
			}
			if t.exists() {
				b.TargetFingerprint = t.fingerprint(wh, t.registry)
			}
			b.Ready = t.registry != nil && t.etag != "" && b.TargetFingerprint == b.SourceFingerprint
		}
		allReady = allReady && b.Ready
		out = append(out, b)
	}
	return out, allReady, nil
}
