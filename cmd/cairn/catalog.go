package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/rs/zerolog"

	"github.com/cairnstore/cairn/catalog"
	"github.com/cairnstore/cairn/catalog/maintain"
	"github.com/cairnstore/cairn/catalog/migrate"
	"github.com/cairnstore/cairn/catalog/objectbacked"
	"github.com/cairnstore/cairn/catalog/strong"
	"github.com/cairnstore/cairn/frontends/control/catalogctl"
	"github.com/cairnstore/cairn/internal/failpoint"
	"github.com/cairnstore/cairn/objstore"
)

// Values of CAIRN_TABLE_CATALOG_BACKING.
const (
	backingObject = catalog.BackingObject
	backingStrong = catalog.BackingDurableStrong
)

// Catalog failpoints besides migrate's (CAIRN_FAILPOINTS).
const (
	pointBeforePointerFlip = "catalog.before-pointer-flip"
	pointAfterMetadata     = "catalog.after-metadata-write"
)

// catalogParts is the catalog as the faces use it.
type catalogParts struct {
	svc     *catalog.Service
	backing string
	// ready reports warehouses the backing does not serve (a
	// durable-strong snapshot that failed validation), for /health/ready.
	ready   func(context.Context) error
	cutover catalog.Cutover // object backing only
	backups catalog.Backups // durable-strong backing only
	status  *migrate.Reporter
	// vendTTL is the lifetime of vended credentials (zero:
	// defaultVendTTL), region the one they are for (serve's --region).
	vendTTL time.Duration
	region  string
	// maint runs table maintenance: on demand through the REST face, and
	// every serve --catalog-maintenance-interval.
	maint *maintain.Runner
}

// regionName is the region vended credentials and S3 Tables ARNs are
// for: serve's --region, or defaultRegion when none was set (tests).
func (p *catalogParts) regionName() string {
	if p.region == "" {
		return defaultRegion
	}
	return p.region
}

// parseFailpoints parses CAIRN_FAILPOINTS.
func parseFailpoints() (*failpoint.Set, error) {
	fp, err := failpoint.Parse(os.Getenv("CAIRN_FAILPOINTS"), append(migrate.Points(), pointBeforePointerFlip, pointAfterMetadata))
	if err != nil {
		return nil, fmt.Errorf("$CAIRN_FAILPOINTS: %w", err)
	}
	return fp, nil
}

// catalogBacking is the backing CAIRN_TABLE_CATALOG_BACKING names.
func catalogBacking() (string, error) {
	switch v := os.Getenv("CAIRN_TABLE_CATALOG_BACKING"); v {
	case "", backingObject:
		return backingObject, nil
	case backingStrong:
		return backingStrong, nil
	default:
		return "", fmt.Errorf("$CAIRN_TABLE_CATALOG_BACKING=%q: want %q (the default) or %q", v, backingObject, backingStrong)
	}
}

// failpoints parses CAIRN_FAILPOINTS (crash tests only).
func failpoints(log zerolog.Logger) (*failpoint.Set, error) {
	fp, err := parseFailpoints()
	if err != nil {
		return nil, err
	}
	if !fp.Empty() {
		log.Warn().Str("failpoints", fp.String()).Msg("CAIRN_FAILPOINTS is set: this server crashes or fails on purpose (crash tests only)")
	}
	return fp, nil
}

// openCatalog builds the catalog on the backing CAIRN_TABLE_CATALOG_BACKING
// names and resolves the staged commits a crash may have left. Under the
// object backing it also opens the durable-strong backing as the cutover
// target, with the fences that gate object-backed writes.
func openCatalog(ctx context.Context, st *objstore.Store, s3Endpoint string, log zerolog.Logger) (*catalogParts, error) {
	fp, err := failpoints(log)
	if err != nil {
		return nil, err
	}
	copt := catalog.Options{
		Logger:     log.With().Str("component", "catalog").Logger(),
		S3Endpoint: s3Endpoint,
		// A resource policy is put only when the evaluator can read it.
		PolicyCheck: checkTablesPolicy,
	}
	if !fp.Empty() {
		copt.Hooks = catalog.Hooks{
			AfterMetadataWrite: func(context.Context, catalog.Ident, string) error { return fp.Hit(pointAfterMetadata) },
			BeforePointerFlip:  func(context.Context, catalog.Ident, string) error { return fp.Hit(pointBeforePointerFlip) },
		}
	}
	parts := &catalogParts{ready: func(context.Context) error { return nil }}
	if parts.backing, err = catalogBacking(); err != nil {
		return nil, err
	}
	// The fences gate object-backed writes; a durable-strong server only
	// shows them in status.
	fences, err := migrate.OpenFences(ctx, st)
	if err != nil {
		return nil, err
	}
	sb, err := strong.Open(ctx, st, strongOptions(log))
	if err != nil {
		return nil, err
	}
	var b catalog.Backing
	var ob *objectbacked.Backing
	if parts.backing == backingObject {
		if ob, err = objectbacked.New(ctx, st); err != nil {
			return nil, err
		}
		b, copt.Gate = ob, fences
	} else {
		for wh, err := range sb.Unhealthy() {
			log.Error().Err(err).Str("warehouse", wh).Msg("durable-strong snapshot failed validation: this warehouse is not served")
		}
		b, parts.backups = sb, sb
		parts.ready = func(context.Context) error { return unhealthyError(sb.Unhealthy()) }
		warnUnmigrated(ctx, st, sb, log)
	}
	svc, err := catalog.New(st, b, copt)
	if err != nil {
		return nil, err
	}
	if err := svc.Recover(ctx); err != nil {
		return nil, fmt.Errorf("catalog recovery: %w", err)
	}
	parts.svc = svc
	parts.maint = maintain.New(svc, st, maintain.Options{Logger: log.With().Str("component", "maintenance").Logger()})
	parts.status = &migrate.Reporter{Service: svc, Backing: parts.backing, Strong: sb, Fences: fences}
	if parts.backing == backingObject {
		mig, err := migrate.New(svc, ob, sb, fences, migrate.Options{
			Logger: log.With().Str("component", "cutover").Logger(),
			Hooks:  migrate.Hooks{At: fp.Hit},
		})
		if err != nil {
			return nil, err
		}
		parts.cutover = mig
	}
	return parts, nil
}

// controls are the catalog's control files (.cairn/catalog/<wh>/...).
func (p *catalogParts) controls() catalogctl.Controls {
	return catalogctl.Controls{
		Warehouses: func(ctx context.Context) ([]string, error) {
			whs, err := p.svc.ListWarehouses(ctx)
			if err != nil {
				return nil, err
			}
			names := make([]string, len(whs))
			for i, w := range whs {
				names[i] = w.Name
			}
			return names, nil
		},
		Cutover: p.cutover,
		Status:  p.status,
	}
}

// warnUnmigrated logs the warehouses the object backing knows and the
// durable-strong registry does not: a durable-strong server does not serve
// them (they were never materialized, or the cutover was cancelled).
func warnUnmigrated(ctx context.Context, st *objstore.Store, sb *strong.Backing, log zerolog.Logger) {
	ob, err := objectbacked.New(ctx, st)
	if err != nil {
		return
	}
	list := func(b catalog.Backing) map[string]bool {
		out := map[string]bool{}
		recs, _, err := b.List(ctx, "", catalog.KindWarehouse, catalog.ListOptions{KeysOnly: true})
		if err == nil {
			for _, r := range recs {
				out[r.Key] = true
			}
		}
		return out
	}
	strongNames := list(sb)
	for wh := range list(ob) {
		if !strongNames[wh] {
			log.Warn().Str("warehouse", wh).Msg("warehouse of the object-backed catalog is not in the durable-strong registry (never materialized, or cancelled): not served; run the cutover for it on an object-backed server")
		}
	}
}
