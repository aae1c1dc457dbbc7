package etcd_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairnstore/cairn/objstore"
	"github.com/cairnstore/cairn/objstore/cluster"
	"github.com/cairnstore/cairn/objstore/drive"
	"github.com/cairnstore/cairn/objstore/drive/peer"
	"github.com/cairnstore/cairn/objstore/meta"
	"github.com/cairnstore/cairn/objstore/meta/etcd"
	"github.com/cairnstore/cairn/objstore/meta/etcd/etcdtest"
	"github.com/cairnstore/cairn/objstore/storetest"
)

// clusterSecret is the cluster secret of the cluster engine.
var clusterSecret = bytes.Repeat([]byte("c"), peer.MinSecretLen)

// clusterHosts are the loopback addresses of nodes a, b and c.
var clusterHosts = []string{"127.0.0.1", "127.0.0.2", "127.0.0.3"}

// TestStoreConformanceCluster runs the store suite on one node of a
// cluster, as cairn serve --cluster runs it: the index is on a
// three-member etcd cluster (each store under a key prefix of its own),
// and the store is node a of the nodes a, b and c with two drives each
// (six slots, parity two), its writer id a's. Its slots 0 and 3 are
// local directories; the other four are peer drives of b and c, which
// lend them through their peer servers on 127.0.0.2 and 127.0.0.3, so
// that two shards in three cross the peer API. Only a runs a store: the
// suite is about one node's view.
func TestStoreConformanceCluster(t *testing.T) {
	for _, h := range clusterHosts[1:] {
		l, err := net.Listen("tcp", h+":0")
		if err != nil {
			t.Skipf("cannot listen on %s: %v", h, err)
		}
		_ = l.Close()
	}
	etcdCluster := etcdtest.StartCluster(t, 3, etcdtest.Options{})
	var stores atomic.Int64 // names each store's key prefix
	storetest.Run(t, storetest.Engine{
		Index: func(t *testing.T) meta.Index {
			cfg := etcd.Config{
				Endpoints: etcdCluster.Endpoints(),
				Prefix:    fmt.Sprintf("/cairn/conformance/%d", stores.Add(1)),
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			idx, err := etcd.Open(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = idx.Close() })
			return idx
		},
		Options: joinCluster,
	})
}

// joinCluster makes opt node a of a new cluster of three nodes: it
// starts the peer servers of b and c (whose data directories are
// temporary), records the topology in opt.Index as a node's first start
// does (cmd/cairn), and gives opt a's drives and writer id.
func joinCluster(t *testing.T, opt *objstore.Options) {
	ctx := context.Background()
	topo := cluster.Topology{DrivesPerNode: 2}
	lenders := make([]*lender, len(clusterHosts))
	for i, h := range clusterHosts {
		ln, err := net.Listen("tcp", h+":0")
		if err != nil {
			t.Fatal(err)
		}
		name := string(rune('a' + i))
		topo.Nodes = append(topo.Nodes, cluster.Node{Name: name, Peer: ln.Addr().String()})
		if i == 0 {
			// a's address is held but not served: it runs the store,
			// and no node of this test reads a's drives.
			t.Cleanup(func() { _ = ln.Close() })
			continue
		}
		l := &lender{}
		hs := httptest.NewUnstartedServer(l)
		hs.Listener = ln
		hs.Start()
		t.Cleanup(func() {
			hs.Close()
			// The store's shards did cross the peer API.
			if n := l.served.Load(); n == 0 && !t.Failed() {
				t.Errorf("node %s served no peer request", name)
			}
		})
		lenders[i] = l
	}
	topo, err := cluster.Record(ctx, opt.Index, topo)
	if err != nil {
		t.Fatal(err)
	}
	members := make([]*cluster.Member, len(topo.Nodes))
	for i, n := range topo.Nodes {
		dir := opt.Dir // a's data directory is the store's
		if i > 0 {
			dir = t.TempDir()
		}
		if members[i], err = cluster.NewMember(topo, n.Name, dir, clusterSecret, 5*time.Second); err != nil {
			t.Fatal(err)
		}
		if i > 0 {
			lenders[i].m = members[i]
		}
	}
	a := members[0]
	opt.DriveCount = a.Slots()
	opt.Parity = 2 // a node's two drives may be out
	opt.WriterID = a.WriterID()
	// ReaderGrace stays zero although the index is shared: the suite
	// counts what Clean frees at once, and only a reads.
	opt.OpenDrive = func(ctx context.Context, set string, slot int) (drive.Drive, bool, error) {
		if !a.Holds(slot) {
			if err := lenders[topo.Owner(slot)].lend(ctx, set); err != nil {
				return nil, false, err
			}
		}
		return a.OpenDrive(ctx, set, slot)
	}
}

// lender is a node other than a: it serves, over the peer API, its
// local drives of the drive set the store opens, which it opens when
// the store first asks for one of its slots (the set id is the store's,
// known only then).
type lender struct {
	m *cluster.Member

	srv    atomic.Pointer[peer.Server]
	served atomic.Int64 // requests answered by srv

	mu  sync.Mutex // protects set
	set string     // the set whose drives srv serves
}

// lend opens m's drives of set, formatting them when new, and serves
// them.
func (l *lender) lend(ctx context.Context, set string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.set == set {
		return nil
	}
	for slot := 0; slot < l.m.Slots(); slot++ {
		if l.m.Holds(slot) {
			if _, _, err := l.m.OpenDrive(ctx, set, slot); err != nil {
				return fmt.Errorf("node %s: %w", l.m.Self().Name, err)
			}
		}
	}
	srv, err := l.m.Server()
	if err != nil {
		return fmt.Errorf("node %s: %w", l.m.Self().Name, err)
	}
	l.srv.Store(srv)
	l.set = set
	return nil
}

// ServeHTTP serves the peer API once lend has run, 503 before.
func (l *lender) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	srv := l.srv.Load()
	if srv == nil {
		http.Error(w, "no drive lent yet", http.StatusServiceUnavailable)
		return
	}
	srv.ServeHTTP(w, r)
	l.served.Add(1)
}
