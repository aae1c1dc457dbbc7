package main

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/cairnstore/cairn/catalog/maintain"
)

// maintCollector exports the table maintenance Runner's counters.
type maintCollector struct {
	r                   *maintain.Runner
	running, runs, done *prometheus.Desc
}

func newMaintCollector(r *maintain.Runner) *maintCollector {
	return &maintCollector{
		r: r,
		running: prometheus.NewDesc("cairn_catalog_maintenance_running",
			"Table maintenance jobs running now.", nil, nil),
		runs: prometheus.NewDesc("cairn_catalog_maintenance_runs_total",
			"Table maintenance job runs finished, by job (icebergCompaction, icebergSnapshotManagement, icebergUnreferencedFileRemoval) and outcome (success, failure).",
			[]string{"job", "outcome"}, nil),
		done: prometheus.NewDesc("cairn_catalog_maintenance_done_total",
			"What the successful table maintenance runs did, by job and count (files-rewritten, files-written, bytes-rewritten, snapshots-expired, files-removed, bytes-removed).",
			[]string{"job", "count"}, nil),
	}
}

// Describe implements prometheus.Collector.
func (c *maintCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.running
	ch <- c.runs
	ch <- c.done
}

// Collect implements prometheus.Collector.
func (c *maintCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.r.Stats()
	ch <- prometheus.MustNewConstMetric(c.running, prometheus.GaugeValue, float64(s.Running))
	for job, m := range s.Runs {
		for outcome, n := range m {
			ch <- prometheus.MustNewConstMetric(c.runs, prometheus.CounterValue, float64(n), string(job), outcome)
		}
	}
	for job, m := range s.Done {
		for name, n := range m {
			ch <- prometheus.MustNewConstMetric(c.done, prometheus.CounterValue, float64(n), string(job), name)
		}
	}
}
