package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"github.com/cairnstore/cairn/objstore"
	"github.com/cairnstore/cairn/objstore/cluster"
	"github.com/cairnstore/cairn/objstore/meta/etcd"
)

// clusterLong is the top of "cairn admin cluster --help".
const clusterLong = `The nodes that share a store's index on etcd.

status reads the cluster's state from etcd (--meta, the URL the nodes serve
with): the nodes and drives the store was formatted for (a cluster's), the
registered nodes, each with its addresses, its own drives, version, start
time and how long its registration lasts unless renewed (a node that stopped
answering disappears after that), which node leads each background job (the
cleaner, lifecycle, the segment compactor, heal), and whether a heal of the
whole store is due (a drive was out; the heal leader heals once every drive
answers). It needs no running Cairn.`

// clusterStatusOptions are the flags of "cairn admin cluster status".
type clusterStatusOptions struct {
	Meta string
	JSON bool
}

func clusterCommand(done func(invocation)) *cobra.Command {
	c := groupCommand("cluster", "Show the nodes that share a store's index", clusterLong)
	var o clusterStatusOptions
	st := leafCommand("status", "Show the nodes registered in etcd and the leaders of the background jobs",
		`  cairn admin cluster status --meta etcd://10.0.0.1:2379,10.0.0.2:2379,10.0.0.3:2379/cairn/
  cairn admin cluster status --meta etcd://127.0.0.1:2379/cairn/ --json`,
		func(c *cobra.Command, args []string) error {
			name := commandName(c)
			if err := noArgs(c, args); err != nil {
				return err
			}
			if o.Meta == "" {
				return usageErrorf(name, "--meta is required: the etcd URL the nodes serve with")
			}
			if _, err := etcd.ParseURL(o.Meta); err != nil {
				return usageErrorf(name, "--meta: %v", err)
			}
			done(invocation{name: name, opts: o, logLevel: zerolog.InfoLevel})
			return nil
		})
	fs := st.Flags()
	fs.StringVar(&o.Meta, "meta", "", "the store's index, `etcd://HOST:2379[,HOST:2379...]/PREFIX` as the nodes serve with")
	fs.BoolVar(&o.JSON, "json", false, "print the state as JSON")
	c.AddCommand(st)
	return c
}

// clusterState is what cluster status shows (its JSON form).
type clusterState struct {
	// Topology is the nodes and drives the store was formatted for; nil
	// for a store of one node on etcd.
	Topology *cluster.Topology `json:"topology,omitempty"`
	Nodes    []clusterNode     `json:"nodes"`
	Leaders  map[string]string `json:"leaders"`
	// HealDueSince is set while a heal of the whole store is due: a
	// drive was out, and the heal leader heals once every drive answers.
	HealDueSince *time.Time `json:"heal_due_since,omitempty"`
}

type clusterNode struct {
	etcd.NodeInfo
	TTLSeconds int `json:"ttl_seconds"`
}

// runClusterStatus reads the nodes and leaders from etcd and prints them.
func runClusterStatus(ctx context.Context, o clusterStatusOptions, d deps) error {
	idx, err := openEtcd(ctx, o.Meta)
	if err != nil {
		return err
	}
	defer func() { _ = idx.Close() }()
	cfg := idx.Config()
	nodes, err := idx.Nodes(ctx)
	if err != nil {
		return err
	}
	leaders, err := idx.Leaders(ctx)
	if err != nil {
		return err
	}
	st := clusterState{Nodes: []clusterNode{}, Leaders: leaders}
	if topo, ok, err := cluster.Load(ctx, idx); err != nil {
		return err
	} else if ok {
		st.Topology = &topo
	}
	if since, due, err := objstore.HealDue(ctx, idx); err != nil {
		return err
	} else if due {
		st.HealDueSince = &since
	}
	for _, n := range nodes {
		st.Nodes = append(st.Nodes, clusterNode{NodeInfo: n.NodeInfo, TTLSeconds: int(n.TTL / time.Second)})
	}
	if o.JSON {
		b, err := json.MarshalIndent(st, "", "  ")
		if err != nil {
			return err
		}
		_, err = d.stdout.Write(append(b, '\n'))
		return err
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "index: %s\n", cfg)
	if t := st.Topology; t != nil {
		fmt.Fprintf(&b, "store: %d nodes with %d drives each (%s)\n", len(t.Nodes), t.DrivesPerNode, t)
	}
	if len(st.Nodes) == 0 {
		b.WriteString("no node is registered: none serves this store now\n")
	} else {
		tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
		_, _ = fmt.Fprintln(tw, "NODE\tADDRESS\tPEER\tDRIVES\tVERSION\tUP SINCE\tLEASE")
		for _, n := range st.Nodes {
			_, _ = fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%ds\n", n.Name, dash(n.Address), dash(n.Peer), len(n.Drives), dash(n.Version),
				n.Started.Local().Format(time.DateTime), n.TTLSeconds)
		}
		_ = tw.Flush()
	}
	jobs := make([]string, 0, len(leaders))
	for j := range leaders {
		jobs = append(jobs, j)
	}
	sort.Strings(jobs)
	if len(jobs) == 0 {
		b.WriteString("background jobs: no leader\n")
	}
	for _, j := range jobs {
		fmt.Fprintf(&b, "job %s: led by %s\n", j, leaders[j])
	}
	if st.HealDueSince != nil {
		fmt.Fprintf(&b, "heal: due since %s (a drive was out; the heal leader heals the store once every drive answers)\n", st.HealDueSince.Local().Format(time.DateTime))
	} else {
		b.WriteString("heal: nothing due\n")
	}
	_, err = d.stdout.Write(b.Bytes())
	return err
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// nodeName is --node, or the host's name when it is empty.
func nodeName(flag string) string {
	if flag != "" {
		return flag
	}
	h, err := os.Hostname()
	if err != nil || h == "" {
		return "cairn"
	}
	return strings.ReplaceAll(h, "/", "-")
}

// registerNode registers a node serving st in etcd, when its index is
// there: its name, address, drives and version, kept registered until
// the index closes (cairn admin cluster status lists it).
func registerNode(ctx context.Context, st *objstore.Store, sopt objstore.Options, o serveOptions, m *cluster.Member, log zerolog.Logger) error {
	x, ok := sopt.Index.(*etcd.Index)
	if !ok {
		return nil
	}
	info := etcd.NodeInfo{Name: nodeName(o.Store.Node), Address: o.Address, Version: version, Started: time.Now().UTC()}
	if m != nil {
		info.Peer = m.Self().Peer
	}
	drives, err := st.DriveStatuses(ctx)
	if err != nil {
		return err
	}
	for _, d := range drives {
		if m == nil || m.Holds(d.Index) {
			info.Drives = append(info.Drives, d.Path) // a node lists its own
		}
	}
	// A node restarted after a crash finds its old registration until
	// that lease expires: it waits that long for it.
	deadline := time.Now().Add(registerWait)
	for {
		err := x.Register(ctx, info)
		if err == nil {
			return nil
		}
		if !errors.Is(err, etcd.ErrNodeExists) || time.Now().After(deadline) {
			return fmt.Errorf("register node %s in etcd (is another node serving under that name? give --node): %w", info.Name, err)
		}
		log.Info().Str("node", info.Name).Msg("the name is still registered (a crash of this node?); waiting for its lease to expire")
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// registerWait is how long a node waits for its name to be free: the
// etcd session's lease (10 s) and some.
const registerWait = 15 * time.Second
