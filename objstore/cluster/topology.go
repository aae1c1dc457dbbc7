package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/cairnstore/cairn/objstore/meta"
)

// ErrTopology is wrapped by every error about a topology: one that does
// not parse, or one that differs from the store's.
var ErrTopology = errors.New("cluster: bad topology")

// MaxNodes bounds a topology (writer ids are 16 bits; slots 256).
const MaxNodes = 64

// Node is one node of a topology.
type Node struct {
	Name string `json:"name"`
	// Peer is the HOST:PORT of its peer API, which the other nodes reach.
	Peer string `json:"peer"`
}

// Topology is the nodes of a store and the drives each holds.
type Topology struct {
	Nodes         []Node `json:"nodes"`
	DrivesPerNode int    `json:"drives_per_node"`
}

// settingsKey is the topology's key in the index's Settings table.
var settingsKey = []byte("cluster")

// ParseNodes parses NAME=HOST:PORT[,NAME=HOST:PORT...], the form of
// cairn serve's --cluster flag.
func ParseNodes(s string) ([]Node, error) {
	var nodes []Node
	for _, part := range strings.Split(s, ",") {
		name, addr, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return nil, fmt.Errorf("%w: %q: want NAME=HOST:PORT", ErrTopology, part)
		}
		nodes = append(nodes, Node{Name: name, Peer: addr})
	}
	return nodes, nil
}

// Validate checks t: one to MaxNodes nodes with distinct names and peer
// addresses of the form HOST:PORT, and at least one drive each.
func (t Topology) Validate() error {
	if len(t.Nodes) == 0 || len(t.Nodes) > MaxNodes {
		return fmt.Errorf("%w: %d nodes, want 1 to %d", ErrTopology, len(t.Nodes), MaxNodes)
	}
	if t.DrivesPerNode < 1 || t.DrivesPerNode > 256/len(t.Nodes) {
		return fmt.Errorf("%w: %d drives per node on %d nodes: want 1 or more, 256 drives at most", ErrTopology, t.DrivesPerNode, len(t.Nodes))
	}
	names, peers := map[string]bool{}, map[string]bool{}
	for _, n := range t.Nodes {
		if !validName(n.Name) {
			return fmt.Errorf("%w: node name %q: want letters, digits, '-', '_' and '.', at most 63", ErrTopology, n.Name)
		}
		host, port, err := net.SplitHostPort(n.Peer)
		if err != nil || host == "" {
			return fmt.Errorf("%w: node %s: peer address %q: want HOST:PORT", ErrTopology, n.Name, n.Peer)
		}
		p, err := strconv.ParseUint(port, 10, 16)
		if err != nil || p < 1 || port[0] == '0' {
			return fmt.Errorf("%w: node %s: peer port %q: want 1-65535", ErrTopology, n.Name, port)
		}
		if names[n.Name] || peers[n.Peer] {
			return fmt.Errorf("%w: node %s (%s) is named twice", ErrTopology, n.Name, n.Peer)
		}
		names[n.Name], peers[n.Peer] = true, true
	}
	return nil
}

func validName(s string) bool {
	if s == "" || len(s) > 63 {
		return false
	}
	for _, c := range s {
		if (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return true
}

// Slots is the number of drives of the store.
func (t Topology) Slots() int { return len(t.Nodes) * t.DrivesPerNode }

// Owner is the index of the node that holds slot.
func (t Topology) Owner(slot int) int { return slot % len(t.Nodes) }

// Index returns the position of the node named name, or -1.
func (t Topology) Index(name string) int {
	return slices.IndexFunc(t.Nodes, func(n Node) bool { return n.Name == name })
}

// String is the --cluster form of t's nodes.
func (t Topology) String() string {
	parts := make([]string, len(t.Nodes))
	for i, n := range t.Nodes {
		parts[i] = n.Name + "=" + n.Peer
	}
	return strings.Join(parts, ",")
}

// Load reads the topology recorded in idx; ok is false for a store
// formatted without one.
func Load(ctx context.Context, idx meta.Index) (t Topology, ok bool, err error) {
	err = idx.View(ctx, func(tx meta.Tx) error {
		raw, err := tx.Get(meta.Settings, settingsKey)
		if raw == nil || err != nil {
			return err
		}
		ok = true
		return meta.Decode(raw, &t)
	})
	return t, ok, err
}

// Record returns the topology of the store on idx: want, recorded when
// the index holds none and the store is new (no layout yet), or the one
// recorded, which want (when it names nodes) must equal. A store formatted
// without a topology is refused one.
func Record(ctx context.Context, idx meta.Index, want Topology) (Topology, error) {
	var got Topology
	err := idx.Update(ctx, func(tx meta.Tx) error {
		raw, err := tx.Get(meta.Settings, settingsKey)
		if err != nil {
			return err
		}
		if raw != nil {
			if err := meta.Decode(raw, &got); err != nil {
				return err
			}
			if len(want.Nodes) > 0 && !equal(got, want) {
				return fmt.Errorf("%w: the store was formatted for the nodes %s with %d drives each, not %s with %d: give the same, or leave --cluster out to use what it records",
					ErrTopology, got, got.DrivesPerNode, want, want.DrivesPerNode)
			}
			return nil
		}
		if len(want.Nodes) == 0 {
			return fmt.Errorf("%w: the store records no cluster: give --cluster on the first start", ErrTopology)
		}
		if err := want.Validate(); err != nil {
			return err
		}
		layout, err := tx.Get(meta.Settings, []byte("layout"))
		if err != nil {
			return err
		}
		if layout != nil {
			return fmt.Errorf("%w: the store was formatted for one node; a store's drives are fixed when it is formatted, so a cluster needs a new store", ErrTopology)
		}
		got = want
		return tx.Put(meta.Settings, settingsKey, meta.Encode(want))
	})
	return got, err
}

func equal(a, b Topology) bool {
	return a.DrivesPerNode == b.DrivesPerNode && slices.Equal(a.Nodes, b.Nodes)
}
