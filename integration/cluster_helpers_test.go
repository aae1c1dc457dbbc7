package integration

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairnstore/cairn/objstore/meta/etcd/etcdtest"
)

// clusterEnv, set to a node count (make test sets 3), runs the S3 and
// catalog tests that start their server with startS3Server against a
// cluster of that many nodes instead of one, each request going to the
// next node in turn (clusterProxy).
const clusterEnv = "CAIRN_TEST_CLUSTER"

// testCluster is Cairn nodes on the loopback addresses 127.0.0.1,
// 127.0.0.2, ... serving one store over a three-member etcd embedded in
// the test process.
type testCluster struct {
	t      testing.TB
	etcd   *etcdtest.Cluster
	meta   string   // the nodes' --meta
	spec   string   // their --cluster
	secret string   // the secret file
	names  []string // node names: a, b, c, ...
	addrs  []string // their S3 addresses
	dirs   []string // their data directories
	extra  []string // more flags for every node
	// nodeExtra holds more flags for one node (set before start).
	nodeExtra [][]string
	nodes     []*server
}

// startTestCluster starts n nodes (at most 9) and waits until each is
// ready.
func startTestCluster(t testing.TB, n int, extra ...string) *testCluster {
	t.Helper()
	c := newTestCluster(t, n, extra...)
	c.start()
	return c
}

// newTestCluster prepares n nodes (at most 9) with the etcd they share,
// for start; nodeExtra may be set meanwhile.
func newTestCluster(t testing.TB, n int, extra ...string) *testCluster {
	t.Helper()
	if n < 1 || n > 9 {
		t.Fatalf("a test cluster of %d nodes: want 1 to 9", n)
	}
	for i := range n {
		host := fmt.Sprintf("127.0.0.%d", i+1)
		ln, err := net.Listen("tcp", host+":0")
		if err != nil {
			t.Skipf("cannot listen on %s (a cluster test needs the loopback range): %v", host, err)
		}
		_ = ln.Close()
	}
	c := &testCluster{t: t, etcd: etcdtest.StartCluster(t, 3, etcdtest.Options{}), extra: extra}
	c.meta = etcdURL(c.etcd, "cairn-cluster/", "request-timeout=3s&dial-timeout=2s")
	c.secret = filepath.Join(t.TempDir(), "cluster-secret")
	if err := os.WriteFile(c.secret, []byte("a-cluster-secret-of-enough-bytes-for-the-test\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var spec []string
	for i := range n {
		host := fmt.Sprintf("127.0.0.%d", i+1)
		name := string(rune('a' + i))
		c.names = append(c.names, name)
		c.addrs = append(c.addrs, freeAddrOn(t, host))
		c.dirs = append(c.dirs, t.TempDir())
		spec = append(spec, name+"="+freeAddrOn(t, host))
	}
	c.spec = strings.Join(spec, ",")
	c.nodes = make([]*server, n)
	c.nodeExtra = make([][]string, n)
	return c
}

// start starts every node and waits until each is ready.
func (c *testCluster) start() {
	c.t.Helper()
	for i := range c.nodes {
		c.nodes[i] = c.startNode(i)
	}
	for _, s := range c.nodes {
		s.waitReady(readyTimeout + 30*time.Second) // a node waits for its peers
	}
}

// startNode starts node i (again, after a kill) without waiting for it.
func (c *testCluster) startNode(i int) *server {
	c.t.Helper()
	args := append([]string{"--node", c.names[i], "--meta", c.meta, "--cluster", c.spec,
		"--cluster-secret-file", c.secret, "--no-console"}, c.extra...)
	args = append(args, c.nodeExtra[i]...)
	s := startServerAt(c.t, c.addrs[i], c.dirs[i], args...)
	c.nodes[i] = s
	return s
}

// drives lists the drive directories of every slot in slot order, for
// an offline fsck or heal of the whole store with --drive.
func (c *testCluster) drives() []string {
	n := len(c.names)
	var out []string
	for slot := 0; ; slot++ {
		d := filepath.Join(c.dirs[slot%n], "drives", "d"+strconv.Itoa(slot))
		if _, err := os.Stat(d); err != nil {
			return out
		}
		out = append(out, d)
	}
}

// fsck stops nothing: call it with every node stopped. It runs cairn
// admin fsck over the whole store and fails the test unless it is clean.
func (c *testCluster) fsck() {
	c.t.Helper()
	args := []string{"admin", "fsck", "--meta", c.meta, "--data", c.t.TempDir()}
	for _, d := range c.drives() {
		args = append(args, "--drive", d)
	}
	res := runCairn(c.t, 2*time.Minute, args...)
	if res.code != 0 || !strings.Contains(res.stdout, "clean") {
		c.t.Fatalf("fsck of the cluster's store: exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
}

// stopAll stops every running node.
func (c *testCluster) stopAll() {
	c.t.Helper()
	for _, s := range c.nodes {
		select {
		case <-s.done:
		default:
			if code := s.stop(30 * time.Second); code != 0 {
				c.t.Errorf("node %s exited %d\n%s", s.addr, code, s.stderr.String())
			}
		}
	}
}

// clusterProxy serves the cluster's S3 and Iceberg faces on one address
// of its own, sending each request to the next node in turn with the
// client's Host header (which its signature covers), so that every test
// run through it reads on one node what it wrote on another. It returns
// a server whose address is the proxy's and whose data directory and
// process are the first node's.
func (c *testCluster) clusterProxy() *server {
	c.t.Helper()
	targets := make([]*url.URL, len(c.addrs))
	for i, a := range c.addrs {
		targets[i] = &url.URL{Scheme: "http", Host: a}
	}
	var next atomic.Uint64
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(targets[next.Add(1)%uint64(len(targets))])
			r.Out.Host = r.In.Host
		},
		FlushInterval: -1,
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		c.t.Fatal(err)
	}
	// The proxy reads the node's answer with Go's client, which puts
	// header names in canonical case; user metadata names go back in the
	// lower case the node sent, as S3 sends them.
	hs := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rp.ServeHTTP(lowerMetaWriter{w}, r)
	}))
	hs.Listener = ln
	hs.Start()
	c.t.Cleanup(hs.Close)
	first := c.nodes[0]
	return &server{t: c.t, addr: ln.Addr().String(), data: first.data, cmd: first.cmd,
		stdout: first.stdout, stderr: first.stderr, done: first.done, cluster: c}
}

// clusterNodes is how many nodes CAIRN_TEST_CLUSTER asks for; zero for
// a single server.
func clusterNodes(t testing.TB) int {
	v := os.Getenv(clusterEnv)
	if v == "" {
		return 0
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("%s=%q: want a node count", clusterEnv, v)
	}
	return n
}

// lowerMetaWriter writes the names of x-amz-meta-* headers in lower case.
type lowerMetaWriter struct{ http.ResponseWriter }

func (w lowerMetaWriter) WriteHeader(code int) {
	h := w.Header()
	for k, v := range h {
		if strings.HasPrefix(k, "X-Amz-Meta-") {
			delete(h, k)
			h[strings.ToLower(k)] = v
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

// Unwrap lets http.ResponseController reach the writer's Flush.
func (w lowerMetaWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// allMetrics returns the /metrics of s, or of every node behind a
// cluster's proxy, one after the other.
func allMetrics(t *testing.T, s *server) string {
	t.Helper()
	servers := []*server{s}
	if s.cluster != nil {
		servers = s.cluster.nodes
	}
	var b strings.Builder
	for _, n := range servers {
		b.Write(doRaw(t, newRaw(t, http.MethodGet, n.url("/metrics"), nil)).body)
	}
	return b.String()
}
