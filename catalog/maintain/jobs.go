package maintain

import (
	"context"
	"errors"
	"fmt"

	"github.com/apache/iceberg-go/table"
	"github.com/apache/iceberg-go/table/compaction"

	"github.com/cairnstore/cairn/catalog"
)

// conflictRetries bounds the attempts of a job whose commit keeps losing
// to concurrent writers (each attempt starts from the table as it is).
const conflictRetries = 5

// retryConflicts runs attempt again while it fails with a lost
// compare-and-swap: the writer that won keeps its commit, and the job
// starts over from the table with it.
func retryConflicts(ctx context.Context, attempt func() (jobResult, error)) (jobResult, error) {
	for i := 1; ; i++ {
		res, err := attempt()
		lost := errors.Is(err, table.ErrCommitFailed) || errors.Is(err, catalog.ErrCommitFailed)
		if err == nil || i == conflictRetries || !lost {
			return res, err
		}
		if err := ctx.Err(); err != nil {
			return res, err
		}
	}
}

// compact rewrites the small data files of the table's current snapshot
// into files of the target size (iceberg-go's bin-pack planner and
// rewrite): one "replace" snapshot with the same rows. The files it
// replaces stay referenced by the older snapshots until those expire.
func (r *Runner) compact(ctx context.Context, wh string, id catalog.Ident, cfg catalog.JobConfig) (jobResult, error) {
	return retryConflicts(ctx, func() (jobResult, error) {
		res := jobResult{counts: map[string]int64{"files-rewritten": 0, "files-written": 0, "bytes-rewritten": 0}}
		tbl, err := r.loadTable(ctx, wh, id)
		if err != nil {
			return res, err
		}
		if tbl.CurrentSnapshot() == nil {
			return res, nil
		}
		cc := compaction.DefaultConfig()
		cc.TargetFileSizeBytes = cfg.TargetFileSize
		cc.MinFileSizeBytes = cfg.TargetFileSize * 3 / 4
		cc.MaxFileSizeBytes = cfg.TargetFileSize * 9 / 5
		if err := cc.Validate(); err != nil {
			return res, fmt.Errorf("compaction settings: %w", err)
		}
		plan, err := compaction.Analyze(ctx, tbl, cc)
		if err != nil {
			return res, fmt.Errorf("planning: %w", err)
		}
		if len(plan.Groups) == 0 {
			return res, nil
		}
		groups := make([]table.CompactionTaskGroup, len(plan.Groups))
		rewritten := map[string]struct{}{}
		for i, g := range plan.Groups {
			groups[i] = table.CompactionTaskGroup{PartitionKey: g.PartitionKey, Tasks: g.Tasks, TotalSizeBytes: g.TotalSizeBytes}
			res.counts["bytes-rewritten"] += g.TotalSizeBytes
			for _, t := range g.Tasks {
				rewritten[t.File.FilePath()] = struct{}{}
			}
		}
		fsys, err := tbl.FS(ctx)
		if err != nil {
			return res, err
		}
		// Equality deletes that no surviving file needs go with the
		// rewrite, as iceberg-go's own compaction does.
		dead, err := compaction.CollectDeadEqualityDeletesWithSpecs(ctx, fsys, tbl.Metadata(), tbl.CurrentSnapshot(), rewritten)
		if err != nil {
			return res, fmt.Errorf("collecting dead equality deletes: %w", err)
		}
		tx := tbl.NewTransaction()
		out, err := tx.RewriteDataFiles(ctx, groups, table.RewriteDataFilesOptions{
			ExtraDeleteFilesToRemove: dead,
			// The job's target, not the table's write.target-file-size-bytes.
			GroupOptions: []table.CompactionGroupOption{table.WithCompactionTargetFileSize(cfg.TargetFileSize)},
		})
		if err != nil {
			return res, fmt.Errorf("rewriting: %w", err)
		}
		if _, err := tx.Commit(ctx); err != nil {
			return res, fmt.Errorf("committing the rewrite: %w", err)
		}
		res.counts["files-rewritten"] = int64(out.RemovedDataFiles)
		res.counts["files-written"] = int64(out.AddedDataFiles)
		return res, nil
	})
}

// expireSnapshots removes the snapshots past the maximum age beyond the
// minimum count each branch keeps (iceberg-go's ExpireSnapshots; refs'
// snapshots always stay). Their files are left to the removal of
// unreferenced files, so a reader still on an old snapshot keeps its
// files for the grace period.
func (r *Runner) expireSnapshots(ctx context.Context, wh string, id catalog.Ident, cfg catalog.JobConfig) (jobResult, error) {
	return retryConflicts(ctx, func() (jobResult, error) {
		res := jobResult{counts: map[string]int64{"snapshots-expired": 0}}
		tbl, err := r.loadTable(ctx, wh, id)
		if err != nil {
			return res, err
		}
		if len(tbl.Metadata().Snapshots()) == 0 {
			return res, nil
		}
		tx := tbl.NewTransaction()
		err = tx.ExpireSnapshots(table.WithRetainLast(cfg.MinSnapshotsToKeep), table.WithOlderThan(cfg.MaxSnapshotAge), table.WithPostCommit(false))
		if err != nil {
			return res, err
		}
		next, err := tx.Commit(ctx)
		if err != nil {
			return res, fmt.Errorf("committing the expiry: %w", err)
		}
		kept := map[int64]bool{}
		for _, s := range next.Metadata().Snapshots() {
			kept[s.SnapshotID] = true
		}
		for _, s := range tbl.Metadata().Snapshots() {
			if !kept[s.SnapshotID] {
				res.counts["snapshots-expired"]++
			}
		}
		return res, nil
	})
}

// removeUnreferenced deletes the files under the table's location that
// its metadata does not reference (iceberg-go's orphan planner: the
// metadata files of its log, manifest lists, manifests, data and delete
// files, statistics of every snapshot) and that are older than the grace
// period. A file is kept when it belongs to another table nested under
// this one's location, or when a commit that landed during the planning
// references it.
func (r *Runner) removeUnreferenced(ctx context.Context, wh string, id catalog.Ident, cfg catalog.JobConfig) (jobResult, error) {
	res := jobResult{counts: map[string]int64{"files-removed": 0, "bytes-removed": 0}}
	tbl, err := r.loadTable(ctx, wh, id)
	if err != nil {
		return res, err
	}
	plan, err := tbl.PlanOrphanFiles(ctx, table.WithFilesOlderThan(cfg.UnreferencedAfter))
	if err != nil {
		return res, fmt.Errorf("planning: %w", err)
	}
	orphans := plan.OrphanFiles()
	if len(orphans) == 0 {
		return res, nil
	}
	again, err := r.loadTable(ctx, wh, id)
	if err != nil {
		return res, err
	}
	if again.MetadataLocation() != tbl.MetadataLocation() {
		plan2, err := again.PlanOrphanFiles(ctx, table.WithFilesOlderThan(cfg.UnreferencedAfter))
		if err != nil {
			return res, fmt.Errorf("planning again after a commit: %w", err)
		}
		still := map[string]bool{}
		for _, f := range plan2.OrphanFiles() {
			still[f.Path] = true
		}
		kept := orphans[:0]
		for _, f := range orphans {
			if still[f.Path] {
				kept = append(kept, f)
			}
		}
		orphans = kept
	}
	fsys := &fileIO{ctx: ctx, store: r.store, wh: wh}
	var errs []error
	for _, f := range orphans {
		owner, err := r.svc.TableForLocation(ctx, wh, f.Path)
		switch {
		case err == nil && catalog.TableKey(owner) != catalog.TableKey(id):
			continue // another table's, under this one's location
		case err != nil && !errors.Is(err, catalog.ErrNoSuchTable):
			return res, fmt.Errorf("resolving the owner of %s: %w", f.Path, err)
		}
		if err := fsys.Remove(f.Path); err != nil {
			errs = append(errs, err)
			continue
		}
		res.counts["files-removed"]++
		res.counts["bytes-removed"] += f.SizeBytes
	}
	return res, errors.Join(errs...)
}
