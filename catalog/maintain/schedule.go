package maintain

import (
	"context"
	"errors"
	"time"

	"github.com/cairnstore/cairn/catalog"
)

// Schedule runs RunAll every interval until ctx ends (cairn serve's
// scheduler). A run still going when the next is due delays it.
func (r *Runner) Schedule(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if _, err := r.RunAll(ctx); err != nil && ctx.Err() == nil {
				r.opt.Logger.Warn().Err(err).Msg("scheduled table maintenance")
			}
		}
	}
}

// RunAll runs the maintenance of every table that has a job enabled, in
// every warehouse, one table at a time; it returns how many tables ran.
// A warehouse fenced by a cutover is left for the next round; a table's
// failure is in its job status and does not stop the others.
func (r *Runner) RunAll(ctx context.Context) (int, error) {
	whs, err := r.svc.ListWarehouses(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	var errs []error
	for _, wh := range whs {
		ids, err := r.svc.MaintainedTables(ctx, wh.Name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, id := range ids {
			if _, err := r.Run(ctx, wh.Name, id); err != nil {
				if errors.Is(err, catalog.ErrFenced) {
					break
				}
				if ctx.Err() != nil {
					return n, ctx.Err()
				}
				if !errors.Is(err, catalog.ErrNoSuchTable) {
					errs = append(errs, err)
				}
				continue
			}
			n++
		}
	}
	return n, errors.Join(errs...)
}
