// Package etcdtest runs etcd members inside a test process, on
// 127.0.0.1, free ports and temporary directories, for the tests of the
// etcd index and of whatever opens a store on it. It is for tests only:
// it imports testing and etcd's server, which nothing else of Cairn links.
//
// A member's data is not fsynced unless Options.Fsync says so (a test
// needs no durability across a power cut), and its logs are discarded.
package etcdtest

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
)

// Options configure the members.
type Options struct {
	// MaxTxnOps and MaxRequestBytes are the members' --max-txn-ops and
	// --max-request-bytes; zero means etcd's defaults (128, 1.5 MiB).
	MaxTxnOps       int
	MaxRequestBytes int
	// TLS, when its CertFile is set, serves clients over TLS with that
	// certificate and key; with ClientCertAuth and TrustedCAFile it
	// requires client certificates signed by that CA.
	TLS transport.TLSInfo
	// Fsync makes the members sync their writes as a real cluster does
	// (for benchmarks); tests leave it off.
	Fsync bool
}

// startTimeout bounds how long a member or a cluster may take to start.
const startTimeout = 30 * time.Second

// Member is one running (or stopped) etcd member.
type Member struct {
	cfg *embed.Config

	mu sync.Mutex // protects e
	e  *embed.Etcd
}

// Endpoint is the member's client address, host:port.
func (m *Member) Endpoint() string { return m.cfg.AdvertiseClientUrls[0].Host }

// Stop stops the member; stopping a stopped member does nothing.
func (m *Member) Stop() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.e != nil {
		m.e.Close()
		m.e = nil
	}
}

// Restart starts a stopped member again on its data and ports, and waits
// until it serves (for a member of a cluster: until it has joined).
func (m *Member) Restart(t testing.TB) {
	t.Helper()
	m.Stop()
	e, err := embed.StartEtcd(m.cfg)
	if err != nil {
		t.Fatalf("etcdtest: restart %s: %v", m.cfg.Name, err)
	}
	m.mu.Lock()
	m.e = e
	m.mu.Unlock()
	if err := waitReady(e); err != nil {
		t.Fatalf("etcdtest: restart %s: %v", m.cfg.Name, err)
	}
}

// Cluster is a set of members that form one etcd cluster.
type Cluster struct {
	Members []*Member
}

// Endpoints returns every member's client address.
func (c *Cluster) Endpoints() []string {
	out := make([]string, len(c.Members))
	for i, m := range c.Members {
		out[i] = m.Endpoint()
	}
	return out
}

// Start runs a single-member cluster until the test ends.
func Start(t testing.TB, opt Options) *Member {
	t.Helper()
	return StartCluster(t, 1, opt).Members[0]
}

// StartCluster runs an n-member cluster until the test ends and returns
// once every member serves.
func StartCluster(t testing.TB, n int, opt Options) *Cluster {
	t.Helper()
	var err error
	for try := 0; try < 3; try++ {
		var c *Cluster
		if c, err = startCluster(t, n, opt); err == nil {
			return c
		}
		if !strings.Contains(err.Error(), "address already in use") {
			break // a port taken between choosing and binding it: choose again
		}
	}
	t.Fatalf("etcdtest: start %d members: %v", n, err)
	return nil
}

func startCluster(t testing.TB, n int, opt Options) (*Cluster, error) {
	ports, err := freePorts(2 * n)
	if err != nil {
		return nil, err
	}
	c := &Cluster{}
	var initial []string
	for i := 0; i < n; i++ {
		cfg := embed.NewConfig()
		cfg.Name = fmt.Sprintf("m%d", i)
		cfg.Dir = t.TempDir()
		cu := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", ports[2*i])}
		if opt.TLS.CertFile != "" {
			cu.Scheme = "https"
			cfg.ClientTLSInfo = opt.TLS
		}
		pu := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", ports[2*i+1])}
		cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{cu}, []url.URL{cu}
		cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{pu}, []url.URL{pu}
		cfg.InitialClusterToken = fmt.Sprintf("cairn-test-%d", ports[0])
		cfg.UnsafeNoFsync = !opt.Fsync
		cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
		if opt.MaxTxnOps > 0 {
			cfg.MaxTxnOps = uint(opt.MaxTxnOps)
		}
		if opt.MaxRequestBytes > 0 {
			cfg.MaxRequestBytes = uint(opt.MaxRequestBytes)
		}
		initial = append(initial, cfg.Name+"="+pu.String())
		c.Members = append(c.Members, &Member{cfg: cfg})
	}
	for _, m := range c.Members {
		m.cfg.InitialCluster = strings.Join(initial, ",")
	}
	// Members wait for each other to form the cluster: start them all,
	// then wait.
	for _, m := range c.Members {
		e, err := embed.StartEtcd(m.cfg)
		if err != nil {
			for _, m := range c.Members {
				m.Stop()
			}
			return nil, err
		}
		m.e = e
	}
	t.Cleanup(func() {
		for _, m := range c.Members {
			m.Stop()
		}
	})
	for _, m := range c.Members {
		if err := waitReady(m.e); err != nil {
			return nil, fmt.Errorf("%s: %w", m.cfg.Name, err)
		}
	}
	return c, nil
}

func waitReady(e *embed.Etcd) error {
	select {
	case <-e.Server.ReadyNotify():
		return nil
	case err := <-e.Err():
		return err
	case <-time.After(startTimeout):
		e.Server.Stop()
		return fmt.Errorf("not ready after %v", startTimeout)
	}
}

// freePorts returns n ports of 127.0.0.1 free at the time of the call.
func freePorts(n int) ([]int, error) {
	var lc net.ListenConfig
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			_ = l.Close()
		}
	}()
	var ports []int
	for i := 0; i < n; i++ {
		l, err := lc.Listen(context.Background(), "tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
