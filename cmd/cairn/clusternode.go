package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/rs/zerolog"
	"github.com/spf13/pflag"

	"github.com/cairnstore/cairn/objstore"
	"github.com/cairnstore/cairn/objstore/cluster"
)

// A node of a cluster: cairn serve with --meta on etcd and --cluster (on
// the first start; later the index records it) serves its share of the
// drive set to its peers and reaches theirs (objstore/cluster).

const (
	// defaultDrivesPerNode is --drives with --cluster when left zero.
	defaultDrivesPerNode = 2
	// clusterReaderGrace is the store's ReaderGrace on a cluster: the
	// nodes cannot see each other's readers' pins (objstore/lease.go).
	clusterReaderGrace = 2 * time.Minute
	// clusterHealProbe is how often the heal leader probes the drives.
	clusterHealProbe = 5 * time.Second
	// peerTimeout bounds one exchange with a peer: a node stopped or cut
	// off costs a request that long, then its drives are out for the
	// peer drives' cooldown.
	peerTimeout = 5 * time.Second
	// peerWaitAll is how long a starting node waits for all its peers
	// before it serves on a write quorum of the drives.
	peerWaitAll = 20 * time.Second
)

// clusterFlags are serve's flags for a node of a cluster.
type clusterFlags struct {
	// Nodes is --cluster: NAME=HOST:PORT,... the nodes and their peer
	// addresses, recorded when the store is formatted.
	Nodes string
	// SecretFile holds the cluster secret shared by every node.
	SecretFile string
}

func (c *clusterFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&c.Nodes, "cluster", "", "with --meta: the nodes of a new cluster store and their peer API addresses, `NAME=HOST:PORT,...`, the same on every node; --drives is then per node (default 2); recorded when the store is formatted (docs/operations/cluster.md)")
	fs.StringVar(&c.SecretFile, "cluster-secret-file", "", "with a cluster: the `file` holding the secret every node shares (at least 32 bytes), which signs the peer API's requests")
}

// check validates what the flags alone tell.
func (c clusterFlags) check(cmd string, s storeFlags) error {
	if c.Nodes == "" {
		return nil
	}
	if s.Meta == "" {
		return usageErrorf(cmd, "--cluster needs --meta: the nodes of a cluster share an index on etcd")
	}
	if len(s.Drive) > 0 {
		return usageErrorf(cmd, "--cluster places the drives under --data: give --drives (per node), not --drive")
	}
	nodes, err := cluster.ParseNodes(c.Nodes)
	if err != nil {
		return usageErrorf(cmd, "--cluster: %v", err)
	}
	if err := (cluster.Topology{Nodes: nodes, DrivesPerNode: max(1, s.Drives)}).Validate(); err != nil {
		return usageErrorf(cmd, "--cluster: %v", err)
	}
	if c.SecretFile == "" {
		return usageErrorf(cmd, "--cluster needs --cluster-secret-file: the secret every node shares (make one with: head -c 32 /dev/urandom | base64 > FILE)")
	}
	return nil
}

// secret reads the cluster secret.
func (c clusterFlags) secret() ([]byte, error) {
	if c.SecretFile == "" {
		return nil, errors.New("this store is a cluster's: give --cluster-secret-file, the secret every node shares")
	}
	b, err := os.ReadFile(c.SecretFile)
	if err != nil {
		return nil, fmt.Errorf("--cluster-secret-file: %w", err)
	}
	return bytes.TrimRight(b, "\r\n"), nil
}

// join makes sopt a node of the cluster its index records (recording
// --cluster on a new store): its drives are its slots under the data
// directory and its peers' through the peer API. It returns nil, with
// sopt unchanged, for a store that is not a cluster's.
func (c clusterFlags) join(ctx context.Context, s storeFlags, sopt objstore.Options) (objstore.Options, *cluster.Member, error) {
	if s.Meta == "" {
		return sopt, nil, nil
	}
	var want cluster.Topology
	if c.Nodes != "" {
		nodes, err := cluster.ParseNodes(c.Nodes)
		if err != nil {
			return sopt, nil, err
		}
		want = cluster.Topology{Nodes: nodes, DrivesPerNode: s.Drives}
		if want.DrivesPerNode == 0 {
			want.DrivesPerNode = defaultDrivesPerNode
		}
	} else if _, ok, err := cluster.Load(ctx, sopt.Index); err != nil || !ok {
		return sopt, nil, err // one node on etcd
	}
	topo, err := cluster.Record(ctx, sopt.Index, want)
	if err != nil {
		return sopt, nil, err
	}
	secret, err := c.secret()
	if err != nil {
		return sopt, nil, err
	}
	m, err := cluster.NewMember(topo, nodeName(s.Node), sopt.Dir, secret, peerTimeout)
	if err != nil {
		return sopt, nil, err
	}
	sopt.OpenDrive = m.OpenDrive
	sopt.DriveCount = m.Slots()
	sopt.WriterID = m.WriterID()
	sopt.ReaderGrace = clusterReaderGrace
	sopt.HealProbe = clusterHealProbe
	return sopt, m, nil
}

// refuseCluster refuses to open a cluster's store (one whose index
// records a topology) the way cmd, which is not serve, would on its own:
// with the drives of this data directory alone. fsck and heal may open it
// offline with every drive given (--drive, in drive order); mount may not
// (serve --mount mounts a node of a cluster).
func refuseCluster(ctx context.Context, cmd string, s storeFlags, opt objstore.Options) error {
	if opt.Index == nil {
		return nil
	}
	topo, ok, err := cluster.Load(ctx, opt.Index)
	if err != nil || !ok {
		return err
	}
	if cmd != "mount" && len(s.Drive) == topo.Slots() {
		return nil
	}
	how := fmt.Sprintf("stop every node and give --drive once for each of its %d drives, in drive order (drive s is DATA/drives/ds on node s mod %d)", topo.Slots(), len(topo.Nodes))
	if cmd == "mount" {
		how = "mount it on a node with cairn serve --mount"
	}
	return fmt.Errorf("%w: this store is a cluster's (nodes %s): %s", objstore.ErrInvalidArgument, topo, how)
}

// servePeers serves m's local drives to its peers on its peer address
// until stop is called.
func servePeers(ctx context.Context, m *cluster.Member, logger zerolog.Logger) (stop func(), err error) {
	h, err := m.Server()
	if err != nil {
		return nil, err
	}
	addr := m.Self().Peer
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("peer API on %s (this node's address in --cluster): %w", addr, err)
	}
	plog := logger.With().Str("component", "peer").Logger()
	srv := &http.Server{
		Handler: h,
		// No ReadTimeout or WriteTimeout: a shard stream lasts as long
		// as the write it carries (objstore/drive/peer).
		ReadHeaderTimeout: readHeaderTimeout,
		IdleTimeout:       idleTimeout,
		ErrorLog:          log.New(plog, "", 0),
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			plog.Error().Err(err).Msg("peer API stopped")
		}
	}()
	plog.Info().Str("address", ln.Addr().String()).Str("node", m.Self().Name).Msg("serving drives to the peers")
	return func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
		defer cancel()
		if err := srv.Shutdown(sctx); err != nil {
			_ = srv.Close()
		}
		<-done
	}, nil
}
