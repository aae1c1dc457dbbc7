package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"time"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"github.com/cairnstore/cairn/frontends/control"
	"github.com/cairnstore/cairn/frontends/control/catalogctl"
	"github.com/cairnstore/cairn/frontends/s3"
	"github.com/cairnstore/cairn/frontends/s3/iam"
	"github.com/cairnstore/cairn/objstore/meta/etcd"
)

const (
	defaultAddress = "127.0.0.1:9000"
	defaultRegion  = "us-east-1"
	// readHeaderTimeout bounds slow-loris clients. There is deliberately no
	// ReadTimeout/WriteTimeout: S3 bodies of many GiB stream for minutes.
	readHeaderTimeout = 10 * time.Second
	idleTimeout       = 2 * time.Minute
	// shutdownGrace is how long in-flight requests get after SIGINT/SIGTERM
	// before their connections are closed.
	shutdownGrace = 5 * time.Second
)

// serveOptions are the flags of "cairn serve".
type serveOptions struct {
	Store    storeFlags
	Cluster  clusterFlags
	Address  string
	Mount    string
	MountOpt mountFlags
	// LifecycleInterval and LifecycleDay tune the lifecycle worker
	// (zero: the store's defaults, 1h and 24h).
	LifecycleInterval time.Duration
	LifecycleDay      time.Duration
	Log               logFlags
	ReadCache         readCacheFlag
	Memory            memoryFlags
	SSE               sseFlags
	// Region is the S3 face's region (GetBucketLocation, HeadBucket,
	// CreateBucket's location constraint and re-create answer).
	Region string
	// CredentialTTL is the lifetime of the credentials the Iceberg
	// catalog vends (zero: defaultVendTTL).
	CredentialTTL time.Duration
	// MaintenanceInterval is how often the tables with maintenance
	// enabled are maintained; zero turns the scheduler off.
	MaintenanceInterval time.Duration
	// NoConsole turns the web console at /console/ off.
	NoConsole bool
	// ConsoleSecureCookie marks the console's cookie Secure although the
	// requests arrive over plain HTTP (TLS ends at a proxy in front).
	ConsoleSecureCookie bool
}

func serveCommand(done func(invocation)) *cobra.Command {
	var o serveOptions
	c := leafCommand("serve", "Serve a store as S3, Iceberg REST and (with --mount) a POSIX mount",
		`  cairn serve --data /var/lib/cairn
  cairn serve --data /var/lib/cairn --address 0.0.0.0:9000 --mount /mnt/cairn
  cairn serve --data /var/lib/cairn --drive /disk1/cairn --drive /disk2/cairn --drive /disk3/cairn --parity 1`,
		func(c *cobra.Command, args []string) error {
			if err := noArgs(c, args); err != nil {
				return err
			}
			lvl, err := o.check()
			if err != nil {
				return err
			}
			done(invocation{name: "serve", opts: o, logLevel: lvl})
			return nil
		})
	fs := c.Flags()
	o.Store.register(fs)
	o.Cluster.register(fs)
	o.Log.register(fs)
	fs.StringVar(&o.Address, "address", defaultAddress, "`host:port` of the HTTP faces (S3, Iceberg REST, health)")
	fs.StringVar(&o.Mount, "mount", "", "also mount the store at this `directory` (FUSE); it must exist")
	o.MountOpt.register(fs)
	o.ReadCache.register(fs)
	o.Memory.register(fs)
	o.SSE.register(fs)
	fs.StringVar(&o.Region, "region", defaultRegion, "the S3 `region` the server answers for (us-east-1 answers a re-create of one's own bucket 200, as S3 does there)")
	fs.DurationVar(&o.MaintenanceInterval, "catalog-maintenance-interval", time.Hour, "how often the tables with maintenance enabled are maintained (compaction, snapshot expiry, removal of unreferenced files); 0 turns the scheduler off")
	fs.DurationVar(&o.CredentialTTL, "catalog-credential-ttl", defaultVendTTL, "lifetime of the S3 credentials the Iceberg catalog vends for a table's location (1s to 12h)")
	fs.BoolVar(&o.NoConsole, "no-console", false, "do not serve the web console at /console/")
	fs.BoolVar(&o.ConsoleSecureCookie, "console-secure-cookie", false, "mark the console's session cookie Secure (behind a proxy that terminates TLS)")
	fs.DurationVar(&o.LifecycleInterval, "lifecycle-interval", 0, "how often lifecycle rules are applied (0: 1h)")
	fs.DurationVar(&o.LifecycleDay, "lifecycle-day", 0, "the length of a lifecycle rule's day (0: 24h; shorter to rehearse rules)")
	return c
}

// check validates what can be judged from the flags alone and returns
// the log level.
func (o serveOptions) check() (zerolog.Level, error) {
	const cmd = "serve"
	if err := o.Store.check(cmd); err != nil {
		return 0, err
	}
	if err := o.Cluster.check(cmd, o.Store); err != nil {
		return 0, err
	}
	if _, err := o.ReadCache.bytes(cmd); err != nil {
		return 0, err
	}
	if err := o.Memory.check(cmd); err != nil {
		return 0, err
	}
	if err := checkAddress(o.Address); err != nil {
		return 0, usageErrorf(cmd, "--address %q: %v", o.Address, err)
	}
	if !validRegion(o.Region) {
		return 0, usageErrorf(cmd, "--region %q: want lower-case letters, digits and dashes", o.Region)
	}
	if o.MountOpt.AttrTimeout <= 0 {
		return 0, usageErrorf(cmd, "--attr-timeout must be positive")
	}
	if o.MaintenanceInterval < 0 {
		return 0, usageErrorf(cmd, "--catalog-maintenance-interval %v: want a positive duration, or 0 to turn the scheduler off", o.MaintenanceInterval)
	}
	if o.CredentialTTL < time.Second || o.CredentialTTL > iam.MaxSessionDuration {
		return 0, usageErrorf(cmd, "--catalog-credential-ttl %v: want 1s to %v", o.CredentialTTL, iam.MaxSessionDuration)
	}
	if o.LifecycleInterval < 0 || o.LifecycleDay < 0 {
		return 0, usageErrorf(cmd, "--lifecycle-interval and --lifecycle-day must not be negative")
	}
	return o.Log.level(cmd)
}

// checkAddress accepts HOST:PORT with a port number (HOST may be empty:
// every address).
func checkAddress(a string) error {
	_, port, err := net.SplitHostPort(a)
	if err != nil {
		return fmt.Errorf("want HOST:PORT: %w", err)
	}
	if _, err := parsePort(port); err != nil {
		return fmt.Errorf("port %q: want 0-65535", port)
	}
	return nil
}

// runServe opens the store and serves it until ctx is cancelled (SIGINT or
// SIGTERM), then shuts the server down and closes the store. A shutdown asked
// for by ctx is not an error.
func runServe(ctx context.Context, o serveOptions, d deps) (err error) {
	logger := d.log
	tuneGC()
	o.Memory.applyLimit()
	sopt := o.Store.options(logger.With().Str("component", "objstore").Logger())
	sopt.LifecycleInterval, sopt.LifecycleDay = o.LifecycleInterval, o.LifecycleDay
	sopt.ReadCacheSize, _ = o.ReadCache.bytes("serve") // checked when parsed
	sopt.WriteBuffers, _ = o.Memory.writeBuffers("serve")
	if err := sopt.Validate(); err != nil {
		return err
	}
	// Everything that can be wrong is checked before the store is opened
	// (which formats a new data directory).
	if err := o.preflight(); err != nil {
		return err
	}
	ln, err := listenFirst(ctx, o.Address)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = ln.Close()
		}
	}()

	sopt, unlock, err := o.Store.withMeta(ctx, sopt)
	if err != nil {
		return err
	}
	defer unlock()
	sopt, member, err := o.Cluster.join(ctx, o.Store, sopt)
	if err != nil {
		if sopt.Index != nil {
			_ = sopt.Index.Close()
		}
		return err
	}
	st, err := d.open(ctx, sopt)
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			// Asked to stop while opening: a clean stop, like later on.
			logger.Info().Msg("stopped before serving")
			return nil
		}
		return fmt.Errorf("open store %s: %w", sopt.Dir, err)
	}
	stopPeers := func() {}
	defer func() {
		if cerr := st.Close(); cerr != nil {
			err = errors.Join(err, fmt.Errorf("close store: %w", cerr))
		}
		stopPeers() // after the store closed: the peers need its drives until then
	}()

	if member != nil {
		if stopPeers, err = servePeers(ctx, member, logger); err != nil {
			stopPeers = func() {}
			return err
		}
		if err := st.WaitDrives(ctx, time.Second, peerWaitAll); err != nil {
			if ctx.Err() != nil {
				logger.Info().Msg("stopped before serving")
				return nil
			}
			return err
		}
	}
	if err := registerNode(ctx, st, sopt, o, member, logger); err != nil {
		return err
	}
	parts, err := openCatalog(ctx, st, s3Endpoint(o.Address), logger)
	if err != nil {
		return err
	}
	parts.vendTTL, parts.region = o.CredentialTTL, o.Region
	if o.MaintenanceInterval > 0 {
		// Stopped, and waited for, before the store closes.
		mctx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			// One node of a cluster maintains the tables at a time.
			st.RunLed(mctx, "catalog-maintenance", func(ctx context.Context) { parts.maint.Schedule(ctx, o.MaintenanceInterval) })
		}()
		defer func() {
			stop()
			<-done
		}()
	}

	mx := newServerMetrics() // storemetrics.go: the mount's requests and the store's health
	mx.etcd, _ = sopt.Index.(*etcd.Index)
	mx.member = member
	if o.Mount != "" {
		tree := control.StoreTree(st).Add("catalog", catalogctl.Tree(parts.controls()))
		m, err := startMount(ctx, st, sopt.Dir, o.Mount, o.MountOpt, tree, logger, mx.mountOption())
		if err != nil {
			return err
		}
		defer func() {
			if uerr := m.Unmount(); uerr != nil {
				err = errors.Join(err, uerr)
			}
		}()
	}

	var clusterSecret []byte // the nodes of a cluster share the SSE-S3 key
	if member != nil {
		if clusterSecret, err = o.Cluster.secret(); err != nil {
			return err
		}
	}
	keys, err := o.SSE.keys(sopt.Dir, clusterSecret, logger)
	if err != nil {
		return err
	}
	r, err := newRouterWith(ctx, st, parts, logger, mx, o.SSE.s3Option(keys), func(so *s3.Options) { so.Region = o.Region })
	if err != nil {
		return err
	}
	if !o.NoConsole {
		if r, err = withConsole(r, o.Region, o.ConsoleSecureCookie, logger); err != nil {
			return err
		}
	}

	srv := &http.Server{
		Handler:           r,
		ReadHeaderTimeout: readHeaderTimeout,
		IdleTimeout:       idleTimeout,
		// Requests must not die with the signal context: Shutdown lets
		// them finish within shutdownGrace.
		BaseContext: func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
		ErrorLog:    log.New(logger.With().Str("component", "http").Logger(), "", 0),
	}

	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	logger.Info().Str("address", ln.Addr().String()).Msg("serving")

	select {
	case err := <-served:
		return fmt.Errorf("serve %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}
	logger.Info().Msg("shutting down")
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		logger.Warn().Err(err).Msg("requests still running after the grace period; closing them")
		_ = srv.Close()
	}
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve %s: %w", ln.Addr(), err)
	}
	return nil
}

// preflight checks what the flags name on disk and the environment serve
// reads: nothing is created before it passes.
func (o serveOptions) preflight() error {
	const cmd = "serve"
	if err := o.Store.checkDataDir(cmd); err != nil {
		return err
	}
	if o.Mount != "" {
		if err := checkMountpoint(cmd, "--mount", o.Mount); err != nil {
			return err
		}
	}
	if err := o.SSE.check(cmd); err != nil {
		return err
	}
	return checkServeEnv(cmd)
}

// serverGCPercent is the garbage collector's target for the server: its
// live heap is small and its garbage is many short-lived per-request
// allocations, so the default (100) collects several hundred times a
// second under load. 400 costs a few times a small heap in memory and
// gave 8% more 4 KiB GETs (docs/performance.md).
const serverGCPercent = 400

// tuneGC applies serverGCPercent unless GOGC is set in the environment.
func tuneGC() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(serverGCPercent)
	}
}

// validRegion reports whether r looks like a region name (us-east-1,
// eu-central-2, a private one like home): lower-case letters, digits and
// dashes, not starting or ending with a dash.
func validRegion(r string) bool {
	if r == "" || len(r) > 64 || r[0] == '-' || r[len(r)-1] == '-' {
		return false
	}
	for _, c := range r {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
			return false
		}
	}
	return true
}
