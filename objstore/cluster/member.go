package cluster

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/cairnstore/cairn/objstore/drive"
	"github.com/cairnstore/cairn/objstore/drive/peer"
)

// Member is one node's view of the drive set.
type Member struct {
	topo    Topology
	self    int
	dir     string
	secret  []byte
	timeout time.Duration

	mu    sync.Mutex // protects local and peers
	local map[int]drive.Drive
	peers map[int]*peer.Drive // the other nodes' slots, as opened
}

// Link is one of the other nodes' drives as this node reaches it.
type Link struct {
	Node  string // the node that holds it
	Slot  int
	Stats peer.Stats
}

// NewMember returns the view of node self (a name in topo) whose data
// directory is dir, reaching its peers with secret; timeout bounds each
// exchange with a peer (peer.Config.Timeout; zero for its default).
func NewMember(topo Topology, self, dir string, secret []byte, timeout time.Duration) (*Member, error) {
	if err := topo.Validate(); err != nil {
		return nil, err
	}
	i := topo.Index(self)
	if i < 0 {
		return nil, fmt.Errorf("%w: this node, %s, is not one of the store's (%s): give --node one of those names", ErrTopology, self, topo)
	}
	if len(secret) < peer.MinSecretLen {
		return nil, fmt.Errorf("%w: the cluster secret has %d bytes, at least %d needed", ErrTopology, len(secret), peer.MinSecretLen)
	}
	return &Member{topo: topo, self: i, dir: dir, secret: secret, timeout: timeout, local: map[int]drive.Drive{}, peers: map[int]*peer.Drive{}}, nil
}

// Self is this node.
func (m *Member) Self() Node { return m.topo.Nodes[m.self] }

// WriterID is this node's writer id in the store (objstore.Options.WriterID).
func (m *Member) WriterID() uint16 { return uint16(m.self + 1) }

// Slots is the number of drives of the store (objstore.Options.DriveCount).
func (m *Member) Slots() int { return m.topo.Slots() }

// Holds reports whether slot is one of this node's drives.
func (m *Member) Holds(slot int) bool { return m.topo.Owner(slot) == m.self }

// OpenDrive is objstore.Options.OpenDrive: slot's directory under the
// data directory when this node holds it (formatting it when new), the
// holder's peer drive otherwise.
func (m *Member) OpenDrive(_ context.Context, set string, slot int) (drive.Drive, bool, error) {
	if m.Holds(slot) {
		d, created, err := drive.OpenDir(filepath.Join(m.dir, "drives", fmt.Sprintf("d%d", slot)), set, slot)
		if err != nil {
			return nil, false, err
		}
		m.mu.Lock()
		m.local[slot] = d
		m.mu.Unlock()
		return d, created, nil
	}
	n := m.topo.Nodes[m.topo.Owner(slot)]
	d, err := peer.New(peer.Config{
		URL:         "http://" + n.Peer,
		Slot:        slot,
		Secret:      m.secret,
		Timeout:     m.timeout,
		Description: fmt.Sprintf("%s:d%d", n.Name, slot),
	})
	if err != nil {
		return nil, false, err
	}
	m.mu.Lock()
	m.peers[slot] = d
	m.mu.Unlock()
	return d, false, nil
}

// Links returns the other nodes' drives opened so far, by slot, with the
// counters of their links.
func (m *Member) Links() []Link {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]Link, 0, len(m.peers))
	for slot, d := range m.peers {
		out = append(out, Link{Node: m.topo.Nodes[m.topo.Owner(slot)].Name, Slot: slot, Stats: d.Stats()})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Slot < out[j].Slot })
	return out
}

// Server returns the peer server of the local drives opened so far (all
// of them once the store is open).
func (m *Member) Server() (*peer.Server, error) {
	m.mu.Lock()
	slots := make([]int, 0, len(m.local))
	for s := range m.local {
		slots = append(slots, s)
	}
	sort.Ints(slots)
	drives := make([]drive.Drive, len(slots))
	for i, s := range slots {
		drives[i] = m.local[s]
	}
	m.mu.Unlock()
	if len(drives) == 0 {
		return nil, fmt.Errorf("%w: no local drive is open yet", ErrTopology)
	}
	return peer.NewServer(peer.ServerConfig{Secret: m.secret, Drives: drives})
}
