package s3

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the S3 face's Prometheus metrics: requests and latency by
// API and status, bytes in and out, and errors by S3 code.
type Metrics struct {
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	bytesIn  prometheus.Counter
	bytesOut prometheus.Counter
	errors   *prometheus.CounterVec
}

// NewMetrics registers the metrics with reg.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cairn_s3_requests_total", Help: "S3 requests by API and HTTP status.",
		}, []string{"api", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "cairn_s3_request_duration_seconds", Help: "S3 request latency by API.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16),
		}, []string{"api"}),
		bytesIn: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "cairn_s3_received_bytes_total", Help: "Request body bytes received.",
		}),
		bytesOut: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "cairn_s3_sent_bytes_total", Help: "Response body bytes sent.",
		}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cairn_s3_errors_total", Help: "S3 error responses by error code.",
		}, []string{"code"}),
	}
	for _, c := range []prometheus.Collector{m.requests, m.latency, m.bytesIn, m.bytesOut, m.errors} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func (m *Metrics) observe(api string, status int, d time.Duration, in, out int64, code string) {
	m.requests.WithLabelValues(api, strconv.Itoa(status)).Inc()
	m.latency.WithLabelValues(api).Observe(d.Seconds())
	if in > 0 {
		m.bytesIn.Add(float64(in))
	}
	m.bytesOut.Add(float64(out))
	if code != "" {
		m.errors.WithLabelValues(code).Inc()
	}
}
