package main

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/cairnstore/cairn/objstore"
	"github.com/cairnstore/cairn/objstore/blockcache"
)

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
