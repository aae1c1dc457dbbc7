package etcd

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/connectivity"

	"github.com/cairnstore/cairn/objstore/meta"
)

// Index is a meta.Index on an etcd cluster.
type Index struct {
	cfg    Config
	cli    *clientv3.Client
	keys   keys
	limits meta.Limits
	// writer holds the one token of this index's Updates: they would
	// conflict with each other anyway (each rewrites the commit marker),
	// so they wait their turn here instead of failing at etcd and
	// running again. Taken before mu.
	writer chan struct{}
	stats  stats
	own    ownCommits    // ids of this index's recent commits (WatchOthers)
	sess   sessions      // the lease of Register and Lead (cluster.go)
	done   chan struct{} // closed by Close
	// large marks the tables a range request found large, which cursors
	// then read with streams; noStream is set once the cluster answered
	// that it has no RangeStream (stream.go). The map is fixed at Open.
	large    map[meta.Table]*atomic.Bool
	noStream atomic.Bool

	mu sync.Mutex // protects the following
	// closed is set by Close; active counts the calls in flight, and idle
	// is closed when the last of them ends after Close.
	closed bool
	active int
	idle   chan struct{}
}

var _ meta.Index = (*Index)(nil)

// Open connects to the cluster cfg names and checks, within
// cfg.DialTimeout and ctx, that it answers (ErrUnavailable otherwise).
// It writes nothing: an empty prefix is an empty index.
func Open(ctx context.Context, cfg Config) (*Index, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	tlsCfg, err := cfg.TLS.config()
	if err != nil {
		return nil, err
	}
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:   cfg.endpoints(),
		TLS:         tlsCfg,
		Username:    cfg.Username,
		Password:    cfg.Password,
		DialTimeout: cfg.DialTimeout,
		// Notice a dead connection within about a request timeout.
		DialKeepAliveTime:    max(cfg.RequestTimeout, 10*time.Second), // etcd refuses pings more often than every 5 s
		DialKeepAliveTimeout: cfg.RequestTimeout,
		MaxCallSendMsgSize:   max(2<<20, cfg.MaxRequestBytes+64<<10),
		Logger:               zap.NewNop(), // the index reports through its own errors and cfg.Log
		DialOptions: []grpc.DialOption{
			// Reconnect soon after the cluster comes back, not up to
			// gRPC's default two minutes later.
			grpc.WithConnectParams(grpc.ConnectParams{
				Backoff:           backoff.Config{BaseDelay: 50 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: time.Second},
				MinConnectTimeout: cfg.DialTimeout,
			}),
		},
	})
	if err != nil {
		return nil, wrap(ctx, "connect", err)
	}
	x := &Index{cfg: cfg, cli: cli, keys: newKeys(cfg.Prefix), limits: cfg.Limits, writer: make(chan struct{}, 1),
		large: map[meta.Table]*atomic.Bool{}, done: make(chan struct{})}
	for _, t := range meta.AllTables {
		x.large[t] = new(atomic.Bool)
	}
	if x.limits == (meta.Limits{}) {
		x.limits = cfg.derivedLimits()
	}
	pctx, cancel := context.WithTimeout(ctx, cfg.DialTimeout)
	defer cancel()
	if _, err := cli.Get(pctx, x.keys.rev); err != nil {
		_ = cli.Close()
		return nil, wrap(ctx, "reach "+fmt.Sprint(cfg.Endpoints), err)
	}
	return x, nil
}

// Prefix is the key prefix the store's keys live under, ending in "/".
func (x *Index) Prefix() string { return x.cfg.Prefix }

// Config returns the configuration the index was opened with, defaults
// applied; Reopen-style callers open the same store with it.
func (x *Index) Config() Config { return x.cfg }

// View implements meta.Index. The transaction reads at one revision of
// the cluster, fixed by its first read.
func (x *Index) View(ctx context.Context, fn func(meta.Tx) error) error {
	if err := x.begin(ctx); err != nil {
		return err
	}
	defer x.end()
	t := newTx(ctx, x, false)
	return t.finish(fn(t))
}

// Update implements meta.Index, with one difference the package comment
// explains: fn runs again from the start, in a new transaction, when a
// concurrent writer of the store committed first (at most
// cfg.MaxAttempts times, then ErrConflict). Callers' fn must derive
// everything from the transaction and their inputs.
func (x *Index) Update(ctx context.Context, fn func(meta.Tx) error) error {
	select {
	case x.writer <- struct{}{}:
		defer func() { <-x.writer }()
	case <-ctx.Done():
		return ctx.Err()
	}
	if err := x.begin(ctx); err != nil {
		return err
	}
	defer x.end()
	for attempt := 1; ; attempt++ {
		t := newTx(ctx, x, true)
		err := t.finish(fn(t))
		if err == nil {
			var ok bool
			ok, err = x.commit(ctx, t)
			if err == nil && ok {
				x.stats.commits.Add(1)
				return nil
			}
		}
		if err != nil && !errors.Is(err, errCompacted) {
			return err
		}
		x.stats.conflicts.Add(1)
		if attempt >= x.cfg.MaxAttempts {
			return fmt.Errorf("%w: %d attempts", ErrConflict, attempt)
		}
		x.cfg.Log.Debug().Int("attempt", attempt).Err(err).Msg("etcd index: transaction conflicted, running it again")
		if err := pause(ctx, attempt); err != nil {
			return err
		}
	}
}

// Stats counts what the index did since it was opened.
type Stats struct {
	// Commits counts the Updates committed (those that wrote something
	// included, read-only ones too).
	Commits uint64
	// Conflicts counts the runs of an Update's function thrown away
	// because another writer of the store committed first (or the
	// snapshot was compacted).
	Conflicts uint64
	// Unknown counts the commits whose outcome could not be learnt.
	Unknown uint64
}

type stats struct{ commits, conflicts, unknown atomic.Uint64 }

// Stats returns the index's counters.
func (x *Index) Stats() Stats {
	return Stats{Commits: x.stats.commits.Load(), Conflicts: x.stats.conflicts.Load(), Unknown: x.stats.unknown.Load()}
}

// pause waits before attempt+1 of a transaction: a few milliseconds,
// doubling, jittered so that two writers that collided part.
func pause(ctx context.Context, attempt int) error {
	d := time.Millisecond << min(attempt, 7)
	d = d/2 + rand.N(d)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Limits implements meta.Index: cfg.Limits, or by default what the
// cluster's --max-txn-ops and --max-request-bytes leave once the index's
// own operations (the commit marker and the sequence counter: 2) and
// bytes (the store's key prefix and the table name on every key,
// protobuf framing, the compare) are taken off. With etcd's defaults and
// a short prefix that is 126 writes and about 1.49 MiB.
func (x *Index) Limits() meta.Limits { return x.limits }

// Close implements meta.Index: it waits for the calls in flight, then
// closes the connection.
func (x *Index) Close() error {
	x.mu.Lock()
	if x.closed {
		x.mu.Unlock()
		return nil
	}
	x.closed = true
	n := x.active
	x.idle = make(chan struct{})
	x.mu.Unlock()
	if n > 0 {
		<-x.idle
	}
	close(x.done)
	x.closeSession()
	if err := x.cli.Close(); err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("etcd: close: %w", err)
	}
	return nil
}

// begin admits a call: ctx's error when it is done, ErrClosed after
// Close. Each admitted call ends with end.
func (x *Index) begin(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return meta.ErrClosed
	}
	x.active++
	return nil
}

func (x *Index) end() {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.active--
	if x.closed && x.active == 0 {
		close(x.idle)
	}
}

// reachable fails with ErrUnavailable when no member has been reachable
// for the dial timeout: a request then fails in that time rather than in
// the longer request timeout (a reachable cluster may take that long,
// electing a leader). It returns at once while the connection is up.
func (x *Index) reachable(ctx context.Context) error {
	conn := x.cli.ActiveConnection()
	st := conn.GetState()
	if st == connectivity.Ready || st == connectivity.Idle {
		return nil
	}
	dctx, cancel := context.WithTimeout(ctx, x.cfg.DialTimeout)
	defer cancel()
	for st != connectivity.Ready {
		conn.Connect()
		if !conn.WaitForStateChange(dctx, st) {
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("etcd: connect: %w", err)
			}
			return fmt.Errorf("%w: no member of %v reachable for %v (%s)", ErrUnavailable, x.cfg.Endpoints, x.cfg.DialTimeout, st)
		}
		st = conn.GetState()
	}
	return nil
}

// rctx bounds one request by the request timeout.
func (x *Index) rctx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, x.cfg.RequestTimeout)
}
