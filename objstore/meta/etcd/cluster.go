package etcd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"

	"github.com/cairnstore/cairn/objstore/meta"
)

// Nodes and jobs. A node registers itself (Register) and leads the
// background jobs it wins (Lead) on one etcd lease per Index, its
// session: kept alive while the process lives and the cluster hears from
// it, it expires Config.SessionTTL after the process dies or is cut off,
// and with it the node's registration and leaderships go, so that
// another node takes the jobs over. Keys, beside the tables (doc.go):
//
//	P nodes/<name>          NodeInfo as JSON, under the session's lease
//	P jobs/<job>/<lease>    a candidate for job (etcd's election recipe);
//	                        the oldest is the leader

// ErrNodeExists: another live process registered the node name.
var ErrNodeExists = errors.New("etcd: node name taken by a live node")

// NodeInfo is what a node registers.
type NodeInfo struct {
	Name    string    `json:"name"`
	Address string    `json:"address,omitempty"` // its faces (S3, Iceberg)
	Peer    string    `json:"peer,omitempty"`    // its peer API
	Drives  []string  `json:"drives,omitempty"`
	Version string    `json:"version,omitempty"`
	Started time.Time `json:"started"`
}

// Node is a registered node as the cluster sees it.
type Node struct {
	NodeInfo
	// TTL is how long the registration lasts unless renewed: about
	// SessionTTL for a live node.
	TTL time.Duration
}

// sessions holds an Index's etcd session, made on first use and made
// again once it has expired.
type sessions struct {
	mu  sync.Mutex // protects cur and reg
	cur *concurrency.Session
	reg *NodeInfo // what Register keeps registered
}

// session returns the live session, making one when there is none.
func (x *Index) session(ctx context.Context) (*concurrency.Session, error) {
	x.sess.mu.Lock()
	defer x.sess.mu.Unlock()
	if s := x.sess.cur; s != nil {
		select {
		case <-s.Done():
		default:
			return s, nil
		}
	}
	rctx, cancel := x.rctx(ctx)
	defer cancel()
	s, err := concurrency.NewSession(x.cli, concurrency.WithTTL(int(x.cfg.SessionTTL/time.Second)), concurrency.WithContext(context.WithoutCancel(ctx)))
	if err != nil {
		return nil, wrap(rctx, "session", err)
	}
	x.sess.cur = s
	return s, nil
}

// nodeName is the name this Index leads jobs under.
func (x *Index) nodeName() string {
	if x.cfg.Node != "" {
		return x.cfg.Node
	}
	host, _ := os.Hostname()
	return fmt.Sprintf("%s/%d", host, os.Getpid())
}

// Register registers the node under the index's session and keeps it
// registered (again after a lost session) until Close. A name another
// live session holds is ErrNodeExists.
func (x *Index) Register(ctx context.Context, info NodeInfo) error {
	if err := x.begin(ctx); err != nil {
		return err
	}
	defer x.end()
	if info.Name == "" || strings.ContainsAny(info.Name, "/\x00") {
		return fmt.Errorf("etcd: node name %q: want a non-empty name without / or NUL", info.Name)
	}
	if err := x.putNode(ctx, info); err != nil {
		return err
	}
	x.sess.mu.Lock()
	first := x.sess.reg == nil
	x.sess.reg = &info
	x.sess.mu.Unlock()
	if first {
		go x.keepRegistered()
	}
	return nil
}

// putNode writes the registration under the current session, unless a
// live registration of another session holds the name.
func (x *Index) putNode(ctx context.Context, info NodeInfo) error {
	s, err := x.session(ctx)
	if err != nil {
		return err
	}
	val, err := json.Marshal(info)
	if err != nil {
		return fmt.Errorf("etcd: node: %w", err)
	}
	key := x.keys.prefix + "nodes/" + info.Name
	rctx, cancel := x.rctx(ctx)
	defer cancel()
	free := clientv3.Compare(clientv3.CreateRevision(key), "=", 0)
	mine := clientv3.Compare(clientv3.LeaseValue(key), "=", s.Lease())
	put := clientv3.OpPut(key, string(val), clientv3.WithLease(s.Lease()))
	resp, err := x.cli.Txn(rctx).If(free).Then(put).Else(clientv3.OpTxn([]clientv3.Cmp{mine}, []clientv3.Op{put}, nil)).Commit()
	if err != nil {
		return wrap(ctx, "register "+info.Name, err)
	}
	if !resp.Succeeded && !resp.Responses[0].GetResponseTxn().Succeeded {
		return fmt.Errorf("%w: %s", ErrNodeExists, info.Name)
	}
	return nil
}

// keepRegistered registers the node again whenever its session was lost
// (a partition longer than SessionTTL), until the index closes.
func (x *Index) keepRegistered() {
	for {
		s, err := x.session(context.Background())
		if err == nil {
			select {
			case <-s.Done():
			case <-x.done:
				return
			}
		} else {
			select {
			case <-time.After(time.Second):
			case <-x.done:
				return
			}
		}
		x.sess.mu.Lock()
		info := *x.sess.reg
		x.sess.mu.Unlock()
		if err := x.putNode(context.Background(), info); err != nil && !errors.Is(err, meta.ErrClosed) {
			x.cfg.Log.Warn().Err(err).Str("node", info.Name).Msg("etcd index: registering the node again")
		}
	}
}

// Nodes lists the registered (live) nodes by name.
func (x *Index) Nodes(ctx context.Context) ([]Node, error) {
	if err := x.begin(ctx); err != nil {
		return nil, err
	}
	defer x.end()
	rctx, cancel := x.rctx(ctx)
	defer cancel()
	resp, err := x.cli.Get(rctx, x.keys.prefix+"nodes/", clientv3.WithPrefix())
	if err != nil {
		return nil, wrap(ctx, "nodes", err)
	}
	var out []Node
	for _, kv := range resp.Kvs {
		var n Node
		if err := json.Unmarshal(kv.Value, &n.NodeInfo); err != nil {
			return nil, fmt.Errorf("%w: node %s: %v", meta.ErrCorruptRecord, kv.Key, err)
		}
		if kv.Lease != 0 {
			if ttl, err := x.cli.TimeToLive(rctx, clientv3.LeaseID(kv.Lease)); err == nil && ttl.TTL > 0 {
				n.TTL = time.Duration(ttl.TTL) * time.Second
			}
		}
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Leaders returns the node leading each job that has a leader.
func (x *Index) Leaders(ctx context.Context) (map[string]string, error) {
	if err := x.begin(ctx); err != nil {
		return nil, err
	}
	defer x.end()
	rctx, cancel := x.rctx(ctx)
	defer cancel()
	pfx := x.keys.prefix + "jobs/"
	resp, err := x.cli.Get(rctx, pfx, clientv3.WithPrefix(), clientv3.WithSort(clientv3.SortByCreateRevision, clientv3.SortAscend))
	if err != nil {
		return nil, wrap(ctx, "leaders", err)
	}
	out := map[string]string{}
	for _, kv := range resp.Kvs {
		job, _, ok := strings.Cut(strings.TrimPrefix(string(kv.Key), pfx), "/")
		if _, seen := out[job]; ok && !seen {
			out[job] = string(kv.Value) // the oldest candidate leads
		}
	}
	return out, nil
}

var _ meta.Elector = (*Index)(nil)

// Lead implements meta.Elector with etcd's election recipe under
// P jobs/<job>/: it blocks until this index's session is the oldest
// candidate. The context it returns ends when the session is lost (the
// lease expired: another node may lead now) or release is called, which
// resigns.
func (x *Index) Lead(ctx context.Context, job string) (context.Context, func(), error) {
	if err := x.begin(ctx); err != nil {
		return nil, nil, err
	}
	defer x.end()
	s, err := x.session(ctx)
	if err != nil {
		return nil, nil, err
	}
	e := concurrency.NewElection(s, x.keys.prefix+"jobs/"+job)
	// A campaign cancelled resigns with the client's own context, which
	// blocks while etcd is unreachable until the index closes; a caller
	// that waits for Lead to return before it closes the index (a store
	// stopping its jobs) would wait for ever. So Lead returns when ctx
	// ends, and the campaign finishes on its own, at the latest when
	// Close closes the client.
	won := make(chan error, 1)
	go func() { won <- e.Campaign(ctx, x.nodeName()) }()
	select {
	case err := <-won:
		if err != nil {
			if ctx.Err() != nil {
				return nil, nil, ctx.Err()
			}
			return nil, nil, wrap(ctx, "campaign "+job, err)
		}
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	}
	lctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(s.Ctx(), cancel) // the session's end ends the lead
	release := func() {
		stop()
		cancel()
		rctx, done := x.rctx(context.Background())
		defer done()
		_ = e.Resign(rctx)
	}
	return lctx, release, nil
}

// closeSession revokes the session's lease: the registration and the
// leaderships go at once.
func (x *Index) closeSession() {
	x.sess.mu.Lock()
	s := x.sess.cur
	x.sess.cur = nil
	x.sess.mu.Unlock()
	if s != nil {
		_ = s.Close()
	}
}
