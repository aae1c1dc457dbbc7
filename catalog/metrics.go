package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
)

// CommitStats counts the table commits (CommitTable and CommitTransaction
// calls, a transaction counting once) a Service has answered since it was
// built: those that succeeded, and those refused with ErrCommitFailed
// (a requirement failed, or the table changed since it was loaded: the
// client refreshes and retries).
type CommitStats struct {
	Commits   uint64
	Conflicts uint64
}

// commitCounters are a Service's CommitStats.
type commitCounters struct {
	commits, conflicts atomic.Uint64
}

// count counts one commit's outcome.
func (c *commitCounters) count(err error) {
	switch {
	case err == nil:
		c.commits.Add(1)
	case errors.Is(err, ErrCommitFailed):
		c.conflicts.Add(1)
	}
}

// CommitStats reports the commits counted so far.
func (s *Service) CommitStats() CommitStats {
	return CommitStats{Commits: s.stats.commits.Load(), Conflicts: s.stats.conflicts.Load()}
}

// ReportMetrics implements Catalog.
func (s *Service) ReportMetrics(ctx context.Context, wh string, id Ident, body []byte) error {
	var rep map[string]json.RawMessage
	if err := json.Unmarshal(body, &rep); err != nil || rep == nil {
		return fmt.Errorf("%w: metrics report is not a JSON object", ErrBadRequest)
	}
	var typ string
	if err := json.Unmarshal(rep["report-type"], &typ); err != nil || typ == "" {
		return fmt.Errorf("%w: metrics report without report-type", ErrBadRequest)
	}
	if _, _, err := s.loadPointer(ctx, wh, KindTable, id); err != nil {
		return err
	}
	s.log.Info().Str("warehouse", wh).Stringer("ident", id).Str("report-type", typ).
		RawJSON("report", body).Msg("iceberg metrics report")
	return nil
}
