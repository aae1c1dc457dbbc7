package main

import (
	"context"
	"net/http"
	"os"
	"strings"

	"github.com/gorilla/mux"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/rs/zerolog"

	"github.com/cairnstore/cairn/catalog"
	"github.com/cairnstore/cairn/frontends/health"
	"github.com/cairnstore/cairn/frontends/iceberg"
	"github.com/cairnstore/cairn/frontends/s3"
	"github.com/cairnstore/cairn/frontends/s3/iam"
	"github.com/cairnstore/cairn/objstore"
)

// Default root credentials, for a first `make run`; serve warns when they
// are in use.
const (
	defaultRootUser     = "cairnadmin"
	defaultRootPassword = "cairnadmin"
)

// rootCredentials reads CAIRN_ROOT_USER / CAIRN_ROOT_PASSWORD.
func rootCredentials(log zerolog.Logger) (user, password string) {
	user, password, defaulted := rootFromEnv()
	if defaulted {
		log.Warn().Str("user", defaultRootUser).Msg("CAIRN_ROOT_USER / CAIRN_ROOT_PASSWORD not set: using the default root credentials; set them for anything but a trial")
	}
	return user, password
}

// domains are the host names for virtual-hosted-style S3 requests:
// CAIRN_DOMAIN (comma-separated) plus localhost.
func domains() []string {
	out := []string{"localhost"}
	for _, d := range strings.Split(os.Getenv("CAIRN_DOMAIN"), ",") {
		if d = strings.TrimSpace(d); d != "" {
			out = append(out, d)
		}
	}
	return out
}

// unsigned matches requests that carry no S3 signature (SigV4 or SigV2,
// header or presigned), so that /health/* and /metrics never hide a
// bucket named health or metrics from signed S3 requests.
func unsigned(r *http.Request, _ *mux.RouteMatch) bool {
	if r.Header.Get("Authorization") != "" {
		return false
	}
	q := r.URL.Query()
	return q.Get("X-Amz-Signature") == "" && q.Get("Signature") == ""
}

// newRouter wires the HTTP faces on one router: health and metrics for
// unsigned requests, the AWS S3 Tables API for requests signed for
// s3tables, the Iceberg REST catalog under /iceberg/v1/ and /_iceberg/v1/
// (and the table-bucket admin API), then the S3 API for everything else.
func newRouter(ctx context.Context, st *objstore.Store, parts *catalogParts, log zerolog.Logger, s3opts ...func(*s3.Options)) (http.Handler, error) {
	return newRouterWith(ctx, st, parts, log, newServerMetrics(), s3opts...)
}

// newRouterWith is newRouter exporting mx (storemetrics.go), which the
// mount may share, on /metrics and the admin status API.
func newRouterWith(ctx context.Context, st *objstore.Store, parts *catalogParts, log zerolog.Logger, mx *serverMetrics, s3opts ...func(*s3.Options)) (http.Handler, error) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if err := mx.register(reg, st, parts); err != nil {
		return nil, err
	}
	metrics, err := s3.NewMetrics(reg)
	if err != nil {
		return nil, err
	}
	user, password := rootCredentials(log)
	users, err := iam.OpenDirectory(ctx, st, user, password, log.With().Str("component", "iam").Logger())
	if err != nil {
		return nil, err
	}
	users.Follow(ctx) // users changed on other nodes of a cluster
	s3o := s3.Options{
		Users:   users,
		Domains: domains(),
		Logger:  log.With().Str("component", "s3").Logger(),
		Metrics: metrics,
		Status:  mx.statusFunc(st),
	}
	for _, f := range s3opts {
		f(&s3o)
	}
	s3srv, err := s3.New(st, s3o)
	if err != nil {
		return nil, err
	}
	ice, err := newIcebergFace(parts, users, reg, log)
	if err != nil {
		return nil, err
	}
	ready := func(ctx context.Context) error {
		if err := st.Ready(ctx); err != nil {
			return err
		}
		return parts.ready(ctx)
	}
	r := mux.NewRouter()
	r.SkipClean(true) // S3 keys may hold "//", "/./" and "/../"
	health.Register(r.MatcherFunc(unsigned).Subrouter(), health.Options{Ready: ready})
	r.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{})).Methods(http.MethodGet).MatcherFunc(unsigned)
	// The AWS S3 Tables API (requests signed for s3tables) shadows the S3
	// buckets named buckets, namespaces, tables and get-table for them.
	r.MatcherFunc(s3tablesRequest).Handler(ice.S3Tables(s3tablesOptions(parts)))
	// The catalog's paths shadow keys under v1/ of an S3 bucket named
	// "iceberg" (bucket names cannot start with "_").
	r.PathPrefix(iceberg.Base + "/v1/").Handler(ice)
	r.PathPrefix(iceberg.AliasBase + "/v1/").Handler(ice)
	r.Path(iceberg.AdminPath).Handler(ice)
	r.PathPrefix(iceberg.AdminPath + "/").Handler(ice)
	r.PathPrefix("/").Handler(s3srv)
	return r, nil
}

// newIcebergFace builds the catalog and the Iceberg REST face over it.
func newIcebergFace(parts *catalogParts, users *iam.Directory, reg prometheus.Registerer, log zerolog.Logger) (*iceberg.Server, error) {
	metrics, err := iceberg.NewMetrics(reg)
	if err != nil {
		return nil, err
	}
	auth := newIcebergAuth(users)
	// The Authorizer honours users' policies and the resource policies of
	// table buckets and tables (tablepolicy.go), which name them by the
	// S3 Tables API's ARNs.
	opt := iceberg.Options{
		Catalog:             parts.svc,
		Recovery:            parts.svc,
		Status:              parts.status,
		Authenticator:       auth,
		Authorizer:          newTablesAuth(auth, parts.svc, s3tablesOptions(parts)),
		IdempotencyLifetime: catalog.IdempotencyLifetimeISO,
		Logger:              log.With().Str("component", "iceberg").Logger(),
		Metrics:             metrics,
	}
	if users != nil {
		ttl := parts.vendTTL
		if ttl == 0 {
			ttl = defaultVendTTL
		}
		v := &icebergVendor{users: users, ttl: ttl, region: parts.regionName()}
		opt.Vendor, opt.Signer = v, v
	}
	// Nil interfaces stay nil: the face answers 400 for the other mode.
	if parts.cutover != nil {
		opt.Cutover = parts.cutover
	}
	if parts.backups != nil {
		opt.Backups = parts.backups
	}
	if parts.maint != nil {
		opt.Maintainer = parts.maint
	}
	return iceberg.New(opt)
}
