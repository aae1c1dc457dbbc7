package migrate

import (
	"context"
	"errors"

	"github.com/cairnstore/cairn/catalog"
	"github.com/cairnstore/cairn/catalog/strong"
)

// Reporter answers a warehouse's catalog status (GET .../catalog/status,
// .cairn/catalog/<wh>/status) under either backing.
type Reporter struct {
	// Service is the catalog being served.
	Service *catalog.Service
	// Backing is catalog.BackingObject or catalog.BackingDurableStrong.
	Backing string
	// Strong is the durable-strong backing (the target under the object
	// backing); nil leaves the snapshot fields empty.
	Strong *strong.Backing
	// Fences are the cutover fences; nil when not loaded.
	Fences *Fences
}

// Status reports warehouse wh.
func (r *Reporter) Status(ctx context.Context, wh string) (catalog.Status, error) {
	st := catalog.Status{TableBucket: wh, Backing: r.Backing, Served: true}
	in, err := r.Service.Inspect(ctx, wh)
	switch {
	case errors.Is(err, catalog.ErrUnavailable):
		st.Served, st.Unhealthy = false, err.Error()
	case err != nil:
		return st, err
	default:
		st.NamespaceCount, st.TableCount, st.ViewCount = in.Namespaces, in.Tables, in.Views
		st.CommitLogCount, st.IdempotencyCount = in.Commits, in.Idempotency
		for _, it := range in.Report.Repaired {
			if it.Kind == "commit" {
				st.StagedCommits++
			}
		}
		for _, it := range in.Report.ManualReview {
			if it.Kind == "commit" {
				st.StagedCommits++
			}
		}
	}
	if r.Strong != nil {
		st.SnapshotFormat, st.SnapshotHighWater = r.Strong.Format(wh)
		if etag, err := r.Strong.ObjectETag(ctx, wh); err == nil {
			st.SnapshotETag = etag
		}
		if bad := r.Strong.Unhealthy()[wh]; bad != nil {
			st.Unhealthy = bad.Error()
			if r.Backing == catalog.BackingDurableStrong {
				st.Served = false
			}
		}
		for _, k := range r.Strong.Quarantined()[wh] {
			st.Quarantined = append(st.Quarantined, catalog.IdentFromKey(k))
		}
	}
	if r.Fences != nil {
		f, err := r.Fences.Fence(wh)
		if err != nil {
			st.Unhealthy = err.Error()
		}
		st.Fence = f
	}
	return st, nil
}
