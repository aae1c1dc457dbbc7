package maintain

import (
	"maps"
	"sync"

	"github.com/cairnstore/cairn/catalog"
)

// Stats are a Runner's counters since it started, for /metrics.
type Stats struct {
	// Running is the number of jobs running now.
	Running int
	// Runs counts finished job runs by job and outcome ("success" or
	// "failure").
	Runs map[catalog.JobKind]map[string]int64
	// Done sums what the successful runs did, by job and count name (the
	// keys of catalog.JobStatus.Counts).
	Done map[catalog.JobKind]map[string]int64
}

// stats accumulates Stats.
type stats struct {
	mu sync.Mutex
	s  Stats
}

func (st *stats) start() {
	st.mu.Lock()
	st.s.Running++
	st.mu.Unlock()
}

// stop ends a job that did not run to an outcome (fenced).
func (st *stats) stop() {
	st.mu.Lock()
	st.s.Running--
	st.mu.Unlock()
}

func (st *stats) end(k catalog.JobKind, res jobResult, err error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.s.Running--
	if st.s.Runs == nil {
		st.s.Runs, st.s.Done = map[catalog.JobKind]map[string]int64{}, map[catalog.JobKind]map[string]int64{}
	}
	if st.s.Runs[k] == nil {
		st.s.Runs[k], st.s.Done[k] = map[string]int64{}, map[string]int64{}
	}
	if err != nil {
		st.s.Runs[k]["failure"]++
		return
	}
	st.s.Runs[k]["success"]++
	for name, n := range res.counts {
		st.s.Done[k][name] += n
	}
}

// Stats returns a copy of the Runner's counters.
func (r *Runner) Stats() Stats {
	r.stats.mu.Lock()
	defer r.stats.mu.Unlock()
	out := Stats{Running: r.stats.s.Running, Runs: map[catalog.JobKind]map[string]int64{}, Done: map[catalog.JobKind]map[string]int64{}}
	for k, m := range r.stats.s.Runs {
		out.Runs[k] = maps.Clone(m)
	}
	for k, m := range r.stats.s.Done {
		out.Done[k] = maps.Clone(m)
	}
	return out
}
