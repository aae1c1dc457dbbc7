package iceberg

import (
	"context"

	"github.com/cairnstore/cairn/catalog"
)

// Catalog is the part of catalog.Catalog the face calls; *catalog.Service
// satisfies it, and tests use a fake. The contracts are those of
// catalog.Catalog: request bodies go in as raw JSON (the face has checked
// that they are well-formed JSON), results marshal to the spec's shapes,
// and every error wraps one of package catalog's sentinels (errors.go maps
// them). A warehouse is a table bucket; it is the REST prefix.
type Catalog interface {
	CreateWarehouse(ctx context.Context, name string) (catalog.Warehouse, error)
	ListWarehouses(ctx context.Context) ([]catalog.Warehouse, error)
	GetWarehouse(ctx context.Context, name string) (catalog.Warehouse, error)
	DeleteWarehouse(ctx context.Context, name string) error

	Config(ctx context.Context, wh string) (defaults, overrides map[string]string, err error)

	ListNamespaces(ctx context.Context, wh string, parent []string, pageToken string, pageSize int) (list [][]string, next string, err error)
	CreateNamespace(ctx context.Context, wh string, ns []string, props map[string]string) error
	LoadNamespace(ctx context.Context, wh string, ns []string) (map[string]string, error)
	NamespaceExists(ctx context.Context, wh string, ns []string) (bool, error)
	DropNamespace(ctx context.Context, wh string, ns []string) error
	UpdateNamespaceProperties(ctx context.Context, wh string, ns []string, removals []string, updates map[string]string) (updated, removed, missing []string, err error)

	ListTables(ctx context.Context, wh string, ns []string, pageToken string, pageSize int) (ids []catalog.Ident, next string, err error)
	CreateTable(ctx context.Context, wh string, ns []string, body []byte) (catalog.TableResult, error)
	LoadTable(ctx context.Context, wh string, id catalog.Ident, snapshots string) (catalog.TableResult, error)
	TableExists(ctx context.Context, wh string, id catalog.Ident) (bool, error)
	DropTable(ctx context.Context, wh string, id catalog.Ident, purge bool) error
	RenameTable(ctx context.Context, wh string, from, to catalog.Ident) error
	RegisterTable(ctx context.Context, wh string, ns []string, name, metadataLocation string, overwrite bool) (catalog.TableResult, error)
	CommitTable(ctx context.Context, wh string, id catalog.Ident, body []byte) (catalog.TableResult, error)
	CommitTransaction(ctx context.Context, wh string, body []byte) error
	SwapMetadataLocation(ctx context.Context, wh string, id catalog.Ident, versionToken, metadataLocation string) (catalog.TableResult, error)
	ReportMetrics(ctx context.Context, wh string, id catalog.Ident, body []byte) error

	Maintenance(ctx context.Context, wh string, id *catalog.Ident) (catalog.Maintenance, error)
	SetMaintenance(ctx context.Context, wh string, id *catalog.Ident, kind catalog.JobKind, cfg catalog.JobConfig) error

	ResourcePolicy(ctx context.Context, wh string, id *catalog.Ident) (string, error)
	SetResourcePolicy(ctx context.Context, wh string, id *catalog.Ident, arn, doc string) error
	DeleteResourcePolicy(ctx context.Context, wh string, id *catalog.Ident) error

	ListViews(ctx context.Context, wh string, ns []string, pageToken string, pageSize int) (ids []catalog.Ident, next string, err error)
	CreateView(ctx context.Context, wh string, ns []string, body []byte) (catalog.ViewResult, error)
	LoadView(ctx context.Context, wh string, id catalog.Ident) (catalog.ViewResult, error)
	ViewExists(ctx context.Context, wh string, id catalog.Ident) (bool, error)
	ReplaceView(ctx context.Context, wh string, id catalog.Ident, body []byte) (catalog.ViewResult, error)
	DropView(ctx context.Context, wh string, id catalog.Ident) error
	RenameView(ctx context.Context, wh string, from, to catalog.Ident) error

	RecallResponse(ctx context.Context, wh, key string) (status int, body []byte, found bool, err error)
	RememberResponse(ctx context.Context, wh, key string, status int, body []byte) error
}

var _ Catalog = (*catalog.Service)(nil)
