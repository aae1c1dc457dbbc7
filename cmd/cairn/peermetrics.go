package main

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cairnstore/cairn/objstore/cluster"
)

// peerCollector exports the links of a cluster node to the other nodes'
// drives: one series per drive, labelled with the node that holds it.
type peerCollector struct {
	m                              *cluster.Member
	requests, unreachable, refused *prometheus.Desc
	sent, received, down           *prometheus.Desc
}

func newPeerCollector(m *cluster.Member) *peerCollector {
	labels := []string{"node", "drive"}
	d := func(name, help string) *prometheus.Desc { return prometheus.NewDesc(name, help, labels, nil) }
	return &peerCollector{
		m:           m,
		requests:    d("cairn_peer_requests_total", "Requests sent to another node's drive through its peer API."),
		unreachable: d("cairn_peer_unreachable_total", "Requests to another node's drive that found it unreachable or stalled, or were refused at once while it was down."),
		refused:     d("cairn_peer_refused_total", "Requests another node's drive answered with an error of its own (an absent file included)."),
		sent:        d("cairn_peer_sent_bytes_total", "Shard and pack bytes written to another node's drive."),
		received:    d("cairn_peer_received_bytes_total", "Shard and pack bytes read from another node's drive."),
		down:        d("cairn_peer_down", "1 while another node's drive is taken for down (it did not answer less than the cooldown ago)."),
	}
}

// Describe implements prometheus.Collector.
func (c *peerCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.requests, c.unreachable, c.refused, c.sent, c.received, c.down} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *peerCollector) Collect(ch chan<- prometheus.Metric) {
	for _, l := range c.m.Links() {
		lv := []string{l.Node, strconv.Itoa(l.Slot)}
		down := 0.0
		if l.Stats.Down {
			down = 1
		}
		for _, m := range []struct {
			d *prometheus.Desc
			t prometheus.ValueType
			v float64
		}{
			{c.requests, prometheus.CounterValue, float64(l.Stats.Requests)},
			{c.unreachable, prometheus.CounterValue, float64(l.Stats.Unreachable)},
			{c.refused, prometheus.CounterValue, float64(l.Stats.Refused)},
			{c.sent, prometheus.CounterValue, float64(l.Stats.BytesSent)},
			{c.received, prometheus.CounterValue, float64(l.Stats.BytesReceived)},
			{c.down, prometheus.GaugeValue, down},
		} {
			ch <- prometheus.MustNewConstMetric(m.d, m.t, m.v, lv...)
		}
	}
}
