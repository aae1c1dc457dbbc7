package iceberg

import (
	"context"
	"fmt"

	"github.com/cairnstore/cairn/catalog"
)

// maintKey is the fake's key of a warehouse's (id nil) or a table's
// maintenance.
func maintKey(wh string, id *catalog.Ident) string {
	if id == nil {
		return wh + "/"
	}
	return idKey(wh, *id)
}

// needTarget checks that the table exists when id is set.
func (f *fakeCatalog) needTarget(wh string, id *catalog.Ident) error {
	if id == nil {
		return nil
	}
	if _, ok := f.tables[idKey(wh, *id)]; !ok {
		return fmt.Errorf("%w: %s", catalog.ErrNoSuchTable, id)
	}
	return nil
}

// Maintenance answers as catalog.Service does: a table's own job, else
// its warehouse's, else a disabled one; Disabled or Not_Yet_Run unless a
// test set an outcome in f.status.
func (f *fakeCatalog) Maintenance(ctx context.Context, wh string, id *catalog.Ident) (catalog.Maintenance, error) {
	defer f.mu.Unlock()
	if err := f.enter("Maintenance", wh); err != nil {
		return catalog.Maintenance{}, err
	}
	if err := f.needTarget(wh, id); err != nil {
		return catalog.Maintenance{}, err
	}
	own, whJobs := f.maint[maintKey(wh, id)], f.maint[maintKey(wh, nil)]
	m := catalog.Maintenance{Own: map[catalog.JobKind]catalog.JobConfig{}, Effective: map[catalog.JobKind]catalog.JobConfig{}}
	for _, k := range catalog.JobKinds() {
		c, ok := own[k]
		if ok {
			m.Own[k] = c
		} else {
			c = whJobs[k]
		}
		m.Effective[k] = c
	}
	if id == nil {
		return m, nil
	}
	m.Status = map[catalog.JobKind]catalog.JobStatus{}
	for _, k := range catalog.JobKinds() {
		st, ok := f.status[maintKey(wh, id)][k]
		switch {
		case !m.Effective[k].Enabled:
			st.Status = catalog.JobDisabled
		case !ok:
			st = catalog.JobStatus{Status: catalog.JobNotYetRun}
		}
		m.Status[k] = st
	}
	return m, nil
}

// SetMaintenance keeps cfg; like catalog.Service it refuses an unknown
// kind and a target file size out of bounds (ErrBadRequest).
func (f *fakeCatalog) SetMaintenance(ctx context.Context, wh string, id *catalog.Ident, kind catalog.JobKind, cfg catalog.JobConfig) error {
	defer f.mu.Unlock()
	if err := f.enter("SetMaintenance", wh); err != nil {
		return err
	}
	if _, err := catalog.ParseJobKind(string(kind)); err != nil {
		return err
	}
	if cfg.TargetFileSize != 0 && (cfg.TargetFileSize < catalog.MinTargetFileSize || cfg.TargetFileSize > catalog.MaxTargetFileSize) {
		return fmt.Errorf("%w: %s: target file size %d bytes out of bounds", catalog.ErrBadRequest, kind, cfg.TargetFileSize)
	}
	if err := f.needTarget(wh, id); err != nil {
		return err
	}
	k := maintKey(wh, id)
	if f.maint[k] == nil {
		f.maint[k] = map[catalog.JobKind]catalog.JobConfig{}
	}
	f.maint[k][kind] = cfg
	return nil
}
