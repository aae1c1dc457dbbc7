package maintain

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/cairnstore/cairn/catalog"
	"github.com/cairnstore/cairn/objstore"
)

// Options configure a Runner.
type Options struct {
	// Logger receives a line per job run; the zero value discards them.
	Logger zerolog.Logger
	// Now is the clock of the job status; nil means time.Now.
	Now func() time.Time
}

// Runner runs the maintenance jobs of tables. It is safe for concurrent
// use; a table runs one maintenance at a time (a second Run of it waits).
type Runner struct {
	svc   *catalog.Service
	store *objstore.Store
	opt   Options
	stats stats

	mu      sync.Mutex
	running map[string]chan struct{} // table key -> closed when its run ends
}

// New returns a Runner over the catalog svc and the store holding its
// warehouses' buckets.
func New(svc *catalog.Service, store *objstore.Store, opt Options) *Runner {
	if opt.Now == nil {
		opt.Now = time.Now
	}
	return &Runner{svc: svc, store: store, opt: opt, running: map[string]chan struct{}{}}
}

// jobResult is what one job did.
type jobResult struct {
	counts map[string]int64
}

// Run runs the table's enabled maintenance jobs, in catalog.JobKinds
// order, and records each one's outcome (catalog.RecordMaintenance). A
// job that fails is recorded failed and the next ones still run, but
// for the removal of unreferenced files, which runs only when every job
// before it succeeded. It returns the table's maintenance afterwards.
// ErrFenced (a cutover in progress) stops the run without recording:
// the next run does the work.
func (r *Runner) Run(ctx context.Context, wh string, id catalog.Ident) (catalog.Maintenance, error) {
	release, err := r.lock(ctx, wh, id)
	if err != nil {
		return catalog.Maintenance{}, err
	}
	defer release()
	m, err := r.svc.Maintenance(ctx, wh, &id)
	if err != nil {
		return catalog.Maintenance{}, err
	}
	failed := false
	for _, k := range catalog.JobKinds() {
		cfg := m.Effective[k]
		if !cfg.Enabled {
			continue
		}
		if k == catalog.JobUnreferenced && failed {
			st := catalog.JobStatus{Status: catalog.JobFailed, LastRun: r.opt.Now().UTC(),
				Failure: "skipped: an earlier job of this run failed, and removal waits until every job before it succeeds"}
			if err := r.svc.RecordMaintenance(ctx, wh, id, k, st); err != nil {
				return catalog.Maintenance{}, err
			}
			continue
		}
		r.stats.start()
		began := time.Now()
		res, err := r.runJob(ctx, wh, id, k, cfg)
		if errors.Is(err, catalog.ErrFenced) {
			r.stats.stop()
			r.opt.Logger.Info().Err(err).Str("warehouse", wh).Stringer("table", id).Str("job", string(k)).Msg("maintenance paused by a catalog cutover")
			return catalog.Maintenance{}, err
		}
		r.stats.end(k, res, err)
		st := catalog.JobStatus{Status: catalog.JobSuccessful, LastRun: r.opt.Now().UTC(), Counts: res.counts}
		ev := r.opt.Logger.Info()
		if err != nil {
			failed = true
			st.Status, st.Failure = catalog.JobFailed, err.Error()
			ev = r.opt.Logger.Warn().Err(err)
		}
		ev.Str("warehouse", wh).Stringer("table", id).Str("job", string(k)).
			Dur("took", time.Since(began)).Interface("counts", res.counts).Msg("maintenance job")
		if err := r.svc.RecordMaintenance(ctx, wh, id, k, st); err != nil {
			return catalog.Maintenance{}, err
		}
	}
	return r.svc.Maintenance(ctx, wh, &id)
}

// lock makes runs of one table take turns.
func (r *Runner) lock(ctx context.Context, wh string, id catalog.Ident) (func(), error) {
	key := wh + "/" + catalog.TableKey(id)
	for {
		r.mu.Lock()
		ch, busy := r.running[key]
		if !busy {
			ch = make(chan struct{})
			r.running[key] = ch
			r.mu.Unlock()
			return func() {
				r.mu.Lock()
				delete(r.running, key)
				r.mu.Unlock()
				close(ch)
			}, nil
		}
		r.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// runJob runs one job.
func (r *Runner) runJob(ctx context.Context, wh string, id catalog.Ident, k catalog.JobKind, cfg catalog.JobConfig) (jobResult, error) {
	switch k {
	case catalog.JobCompaction:
		return r.compact(ctx, wh, id, cfg)
	case catalog.JobSnapshots:
		return r.expireSnapshots(ctx, wh, id, cfg)
	case catalog.JobUnreferenced:
		return r.removeUnreferenced(ctx, wh, id, cfg)
	}
	return jobResult{}, fmt.Errorf("maintain: unknown job %q", k)
}
