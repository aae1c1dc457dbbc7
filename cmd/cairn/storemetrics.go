package main

import (
	"context"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sys/unix"

	"github.com/cairnstore/cairn/frontends/s3"
	cairnfs "github.com/cairnstore/cairn/fs"
	"github.com/cairnstore/cairn/objstore"
	"github.com/cairnstore/cairn/objstore/blockcache"
	"github.com/cairnstore/cairn/objstore/cluster"
	"github.com/cairnstore/cairn/objstore/meta/etcd"
)

// healthTTL is how long a scrape reuses the drives' state and the store's
// Health: both ask every drive's filesystem and Health scans the garbage
// and pack tables, which a scrape every second need not repeat.
const healthTTL = 5 * time.Second

// serverMetrics are the metrics of a serving process beyond the faces'
// own: the store's drives and background work, the catalog's commits and
// the mount's requests. Build it before the mount (mountOption) and
// register it with the router's registry (register).
type serverMetrics struct {
	started time.Time
	ops     *mountOps
	// etcd is the store's index when it is on etcd, whose counters are
	// exported too; nil on bbolt.
	etcd *etcd.Index
	// member is this node's view of a cluster's drives, whose peer links
	// are exported too; nil for a store of one node.
	member *cluster.Member
}

func newServerMetrics() *serverMetrics {
	return &serverMetrics{started: time.Now(), ops: newMountOps()}
}

// mountOption gives the mount the observer of its requests.
func (mx *serverMetrics) mountOption() func(*cairnfs.Options) {
	return func(o *cairnfs.Options) { o.Ops = mx.ops }
}

// register registers every metric of the process but the faces': the
// read cache, the store, the catalog (parts may be nil) and the mount.
func (mx *serverMetrics) register(reg prometheus.Registerer, st *objstore.Store, parts *catalogParts) error {
	if err := registerCacheMetrics(reg, st); err != nil {
		return err
	}
	if err := registerIndexMetrics(reg, mx.etcd); err != nil {
		return err
	}
	if mx.member != nil {
		if err := reg.Register(newPeerCollector(mx.member)); err != nil {
			return err
		}
	}
	cs := []prometheus.Collector{
		newStoreCollector(st),
		mx.ops.latency, mx.ops.errors,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "cairn_uptime_seconds", Help: "Seconds since the server started."},
			func() float64 { return time.Since(mx.started).Seconds() }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "cairn_drive_bytes_written_total", Help: "Shard bytes (data and parity, with headers and checksums) written to the drives: new data, pack and segment compaction and heals; copies, renames and UploadPartCopy write none, an append only its new bytes."},
			func() float64 { return float64(st.Stats().DriveBytesWritten) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "cairn_segment_compactions_total", Help: "Versions whose segment lists the segment compactor rewrote shorter."},
			func() float64 { return float64(st.Stats().SegmentCompactions) }),
		prometheus.NewGauge(prometheus.GaugeOpts{Name: "cairn_build_info", Help: "Always 1; the label names the server's version.",
			ConstLabels: prometheus.Labels{"version": resolveVersion(version)}}),
	}
	cs[len(cs)-1].(prometheus.Gauge).Set(1)
	if parts != nil && parts.svc != nil {
		svc := parts.svc
		cs = append(cs,
			prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "cairn_catalog_commits_total", Help: "Iceberg table commits (a multi-table transaction counts once) that succeeded."},
				func() float64 { return float64(svc.CommitStats().Commits) }),
			prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "cairn_catalog_commit_conflicts_total", Help: "Iceberg table commits refused with CommitFailedException (a requirement failed or the table changed meanwhile)."},
				func() float64 { return float64(svc.CommitStats().Conflicts) }),
		)
		if parts.maint != nil {
			cs = append(cs, newMaintCollector(parts.maint))
		}
	}
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}

// statusFunc answers the admin API's status: the store's full Status (it
// walks the index: on demand only) and a fresh Health.
func (mx *serverMetrics) statusFunc(st *objstore.Store) func(context.Context) (s3.ServerStatus, error) {
	return func(ctx context.Context) (s3.ServerStatus, error) {
		status, err := st.Status(ctx)
		if err != nil {
			return s3.ServerStatus{}, err
		}
		h, err := st.Health(ctx)
		if err != nil {
			return s3.ServerStatus{}, err
		}
		return s3.ServerStatus{Status: status, Health: h, Version: resolveVersion(version),
			UptimeSeconds: time.Since(mx.started).Seconds()}, nil
	}
}

// mountOps records the mount's requests (cairnfs.OpObserver).
type mountOps struct {
	latency *prometheus.HistogramVec
	errors  *prometheus.CounterVec
}

var _ cairnfs.OpObserver = (*mountOps)(nil)

func newMountOps() *mountOps {
	return &mountOps{
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "cairn_mount_op_duration_seconds", Help: "FUSE requests the mount answered, by operation: how long each took (the count is the number of requests).",
			Buckets: prometheus.ExponentialBuckets(0.00005, 2, 18),
		}, []string{"op"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cairn_mount_op_errors_total", Help: "FUSE requests the mount answered with an error, by operation and errno (ENOENT on lookup is a name that is not there).",
		}, []string{"op", "errno"}),
	}
}

// ObserveOp implements cairnfs.OpObserver.
func (m *mountOps) ObserveOp(op string, d time.Duration, errno syscall.Errno) {
	m.latency.WithLabelValues(op).Observe(d.Seconds())
	if errno != 0 {
		name := unix.ErrnoName(errno)
		if name == "" {
			name = strconv.Itoa(int(errno))
		}
		m.errors.WithLabelValues(op, name).Inc()
	}
}

// storeCollector exports the state of the store's drives and its Health,
// asked at most every healthTTL.
type storeCollector struct {
	st *objstore.Store
	d  storeDescs

	mu      sync.Mutex // protects the following
	at      time.Time
	drives  []objstore.DriveStatus
	health  objstore.Health
	healthy bool // the last ask succeeded
}

// storeDescs are the descriptions of storeCollector's metrics.
type storeDescs struct {
	drivesOnline  *prometheus.Desc
	drivesOffline *prometheus.Desc
	driveOnline   *prometheus.Desc
	driveTotal    *prometheus.Desc
	driveFree     *prometheus.Desc
	driveAvail    *prometheus.Desc
	driveIOErrs   *prometheus.Desc
	driveChecksum *prometheus.Desc
	degraded      *prometheus.Desc
	healQueue     *prometheus.Desc
	cleaner       *prometheus.Desc
	compaction    *prometheus.Desc
	segments      *prometheus.Desc
	pendingPuts   *prometheus.Desc
	healthUp      *prometheus.Desc
}

func newStoreDescs() storeDescs {
	return storeDescs{
		drivesOnline:  prometheus.NewDesc("cairn_drives_online", "Drives whose directory is present and readable.", nil, nil),
		drivesOffline: prometheus.NewDesc("cairn_drives_offline", "Drives whose directory is absent or unreadable: writes skip them, reads reconstruct their shards.", nil, nil),
		driveOnline:   prometheus.NewDesc("cairn_drive_online", "1 when the drive is online, 0 when not.", []string{"drive", "path"}, nil),
		driveTotal:    prometheus.NewDesc("cairn_drive_total_bytes", "Size of the filesystem holding the drive.", []string{"drive"}, nil),
		driveFree:     prometheus.NewDesc("cairn_drive_free_bytes", "Free bytes of the filesystem holding the drive.", []string{"drive"}, nil),
		driveAvail:    prometheus.NewDesc("cairn_drive_available_bytes", "Bytes of the filesystem holding the drive available to the server (free less the root reserve).", []string{"drive"}, nil),
		driveIOErrs:   prometheus.NewDesc("cairn_drive_io_errors_total", "Shard reads and writes on the drive that failed (an absent shard file is not counted).", []string{"drive"}, nil),
		driveChecksum: prometheus.NewDesc("cairn_drive_checksum_failures_total", "Shard blocks and headers read from the drive that failed verification (bitrot, torn or foreign files).", []string{"drive"}, nil),
		degraded:      prometheus.NewDesc("cairn_objects_degraded", "Data objects found with a shard missing or bad and not healed yet.", nil, nil),
		healQueue:     prometheus.NewDesc("cairn_heal_queue_length", "Data objects waiting for the healer.", nil, nil),
		cleaner:       prometheus.NewDesc("cairn_cleaner_backlog", "Data objects no version references that the cleaner has not freed yet.", nil, nil),
		compaction:    prometheus.NewDesc("cairn_compaction_backlog", "Pack segments less than half live, waiting for compaction.", nil, nil),
		segments:      prometheus.NewDesc("cairn_segment_compaction_backlog", "Versions queued for the segment compactor: versions whose segment lists appends or in-place writes made long.", nil, nil),
		pendingPuts:   prometheus.NewDesc("cairn_pending_puts", "Asynchronous puts (the mount's closes) not committed yet.", nil, nil),
		healthUp:      prometheus.NewDesc("cairn_store_health_up", "1 when the store answered the last health probe, 0 when not (the drive and backlog metrics are then absent).", nil, nil),
	}
}

func newStoreCollector(st *objstore.Store) *storeCollector {
	return &storeCollector{st: st, d: newStoreDescs()}
}

// Describe implements prometheus.Collector.
func (c *storeCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.d.drivesOnline, c.d.drivesOffline, c.d.driveOnline, c.d.driveTotal, c.d.driveFree,
		c.d.driveAvail, c.d.driveIOErrs, c.d.driveChecksum, c.d.degraded, c.d.healQueue, c.d.cleaner, c.d.compaction,
		c.d.segments, c.d.pendingPuts, c.d.healthUp} {
		ch <- d
	}
}

// refresh asks the store again when its last answer is older than
// healthTTL.
func (c *storeCollector) refresh() ([]objstore.DriveStatus, objstore.Health, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.at.IsZero() && time.Since(c.at) < healthTTL {
		return c.drives, c.health, c.healthy
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	drives, derr := c.st.DriveStatuses(ctx)
	h, herr := c.st.Health(ctx)
	c.at, c.drives, c.health, c.healthy = time.Now(), drives, h, derr == nil && herr == nil
	return c.drives, c.health, c.healthy
}

// Collect implements prometheus.Collector.
func (c *storeCollector) Collect(ch chan<- prometheus.Metric) {
	drives, h, ok := c.refresh()
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	if !ok {
		gauge(c.d.healthUp, 0)
		return
	}
	gauge(c.d.healthUp, 1)
	online := 0
	for _, d := range drives {
		idx := strconv.Itoa(d.Index)
		up := 0.0
		if d.Online {
			up = 1
			online++
		}
		gauge(c.d.driveOnline, up, idx, d.Path)
		gauge(c.d.driveTotal, float64(d.TotalBytes), idx)
		gauge(c.d.driveFree, float64(d.FreeBytes), idx)
		gauge(c.d.driveAvail, float64(d.AvailableBytes), idx)
		ch <- prometheus.MustNewConstMetric(c.d.driveIOErrs, prometheus.CounterValue, float64(d.IOErrors), idx)
		ch <- prometheus.MustNewConstMetric(c.d.driveChecksum, prometheus.CounterValue, float64(d.ChecksumFailures), idx)
	}
	gauge(c.d.drivesOnline, float64(online))
	gauge(c.d.drivesOffline, float64(len(drives)-online))
	gauge(c.d.degraded, float64(h.DegradedObjects))
	gauge(c.d.healQueue, float64(h.HealQueue))
	gauge(c.d.cleaner, float64(h.CleanerBacklog))
	gauge(c.d.compaction, float64(h.CompactionBacklog))
	gauge(c.d.segments, float64(h.SegmentBacklog))
	gauge(c.d.pendingPuts, float64(h.PendingPuts))
}

// registerCacheMetrics exports the store's block cache counters (when it
// has a cache) as cairn_read_cache_*.
func registerCacheMetrics(reg prometheus.Registerer, st *objstore.Store) error {
	if _, ok := st.CacheStats(); !ok {
		return nil
	}
	stat := func(f func(s blockcache.Stats) float64) func() float64 {
		return func() float64 {
			s, _ := st.CacheStats()
			return f(s)
		}
	}
	cs := []prometheus.Collector{
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "cairn_read_cache_hits_total", Help: "Block reads served from the read cache."},
			stat(func(s blockcache.Stats) float64 { return float64(s.Hits) })),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "cairn_read_cache_misses_total", Help: "Block reads of cacheable data that missed the read cache."},
			stat(func(s blockcache.Stats) float64 { return float64(s.Misses) })),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "cairn_read_cache_admitted_total", Help: "Blocks written into the read cache."},
			stat(func(s blockcache.Stats) float64 { return float64(s.Admitted) })),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "cairn_read_cache_evicted_total", Help: "Blocks dropped from the read cache to make room."},
			stat(func(s blockcache.Stats) float64 { return float64(s.Evicted) })),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "cairn_read_cache_used_bytes", Help: "Memory the read cache's blocks take (whole slots)."},
			stat(func(s blockcache.Stats) float64 { return float64(s.Used) * float64(s.SlotSize) })),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "cairn_read_cache_size_bytes", Help: "The read cache's capacity."},
			stat(func(s blockcache.Stats) float64 { return float64(s.Slots) * float64(s.SlotSize) })),
	}
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}

// registerIndexMetrics exports the counters of an etcd index (nothing for
// bbolt's, idx nil).
func registerIndexMetrics(reg prometheus.Registerer, idx *etcd.Index) error {
	if idx == nil {
		return nil
	}
	for _, c := range []prometheus.Collector{
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "cairn_index_etcd_commits_total", Help: "Index transactions committed to etcd."},
			func() float64 { return float64(idx.Stats().Commits) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "cairn_index_etcd_conflicts_total", Help: "Index transactions run again because another writer of the store committed first."},
			func() float64 { return float64(idx.Stats().Conflicts) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "cairn_index_etcd_unknown_outcomes_total", Help: "Index commits whose outcome could not be learnt before etcd became unreachable (their data is kept)."},
			func() float64 { return float64(idx.Stats().Unknown) }),
	} {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}
