package peer

import (
	"sync/atomic"
	"time"
)

// Stats counts a Drive's exchanges with its peer since New, for the
// metrics of a peer link.
type Stats struct {
	// Requests counts the requests sent (a call, a read, a write
	// stream), Unreachable those that found the peer unreachable or
	// stalled (or were refused at once in the cooldown), and Refused
	// those the peer answered with an error of its own (a file absent
	// included).
	Requests, Unreachable, Refused uint64
	// BytesSent and BytesReceived count shard and pack bytes written to
	// and read from the peer.
	BytesSent, BytesReceived uint64
	// Down reports the cooldown running: the peer was found unreachable
	// less than Config.Cooldown ago.
	Down bool
}

// counters are a Drive's Stats as they run.
type counters struct {
	requests, unreachable, refused atomic.Uint64
	sent, received                 atomic.Uint64
}

// Stats returns the drive's counters.
func (d *Drive) Stats() Stats {
	until := d.downUntil.Load()
	return Stats{
		Requests:      d.stats.requests.Load(),
		Unreachable:   d.stats.unreachable.Load(),
		Refused:       d.stats.refused.Load(),
		BytesSent:     d.stats.sent.Load(),
		BytesReceived: d.stats.received.Load(),
		Down:          until != 0 && time.Now().UnixNano() < until,
	}
}

// Peer is the base URL of the drive's peer (scheme://host:port).
func (d *Drive) Peer() string { return d.base }
