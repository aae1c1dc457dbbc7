package catalog

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/rs/zerolog"
)

// Ident names a table or view: its namespace levels and its name. Tables
// and views share one identifier space per warehouse. It marshals as the
// spec's TableIdentifier {"namespace": [...], "name": "..."}.
type Ident struct {
	Namespace []string `json:"namespace"`
	Name      string   `json:"name"`
}

// String joins the levels and the name with ".", for logs and messages.
func (id Ident) String() string {
	return strings.Join(append(append([]string(nil), id.Namespace...), id.Name), ".")
}

// Warehouse describes a warehouse: a table bucket, whose S3 bucket of the
// same name holds the metadata and data files of its tables.
type Warehouse struct {
	Name    string    `json:"name"`
	Created time.Time `json:"created"`
}

// TableResult is the answer of the table operations that return a table:
// it marshals as the spec's LoadTableResult (and CommitTableResponse, a
// subset): {"metadata-location", "metadata", "config"}.
type TableResult struct {
	// MetadataLocation is the current metadata file, s3://<wh>/...; empty
	// for a staged create (marshalled as null then).
	MetadataLocation string
	// Metadata is the spec's TableMetadata JSON.
	Metadata json.RawMessage
	// Config is the per-table FileIO configuration (s3.endpoint, ...).
	Config map[string]string
	// ETag is an opaque, unquoted tag of the metadata location (it changes
	// with every commit), for the optional ETag / If-None-Match handling
	// of loadTable.
	ETag string
	// StorageCredentials are credentials vended for the table's location
	// (the face adds them when the client asks for vended credentials).
	StorageCredentials []StorageCredential
}

// StorageCredential is one entry of the spec's storage-credentials: the
// FileIO configuration (credentials) for the locations under Prefix.
type StorageCredential struct {
	Prefix string            `json:"prefix"`
	Config map[string]string `json:"config"`
}

// MarshalJSON renders the spec's LoadTableResult.
func (r TableResult) MarshalJSON() ([]byte, error) {
	return marshalLoadResult(r.MetadataLocation, r.Metadata, r.Config, r.StorageCredentials)
}

// Location is the table's location (the metadata's "location"), or "".
func (r TableResult) Location() string {
	var m struct {
		Location string `json:"location"`
	}
	if json.Unmarshal(r.Metadata, &m) != nil {
		return ""
	}
	return m.Location
}

// ViewResult is the answer of the view operations that return a view; it
// marshals as the spec's LoadViewResult {"metadata-location", "metadata",
// "config"}.
type ViewResult struct {
	MetadataLocation string
	Metadata         json.RawMessage // the spec's ViewMetadata JSON
	Config           map[string]string
	ETag             string
}

// MarshalJSON renders the spec's LoadViewResult.
func (r ViewResult) MarshalJSON() ([]byte, error) {
	return marshalLoadResult(r.MetadataLocation, r.Metadata, r.Config, nil)
}

// IdempotencyLifetime is how long RememberResponse keeps a response at
// least; IdempotencyLifetimeISO is the same as an ISO-8601 duration, the
// idempotency-key-lifetime of GET /v1/config.
const (
	IdempotencyLifetime    = 30 * time.Minute
	IdempotencyLifetimeISO = "PT30M"
)

// NamespaceSep joins namespace levels in backing keys (and is the spec's
// default namespace separator in paths, %1F).
const NamespaceSep = "\x1f"

// Options configure a Service. Only cmd/ fills them from flags and env.
type Options struct {
	// Logger receives the catalog's logs; the zero value discards them.
	Logger zerolog.Logger
	// S3Endpoint is the URL clients use to reach Cairn's S3 face for data
	// files (s3.endpoint in /v1/config and in table configs). Empty: not
	// advertised.
	S3Endpoint string
	// Region is advertised as s3.region and client.region; empty means
	// "us-east-1".
	Region string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Hooks are failpoints for crash tests; nil fields do nothing.
	Hooks Hooks
	// PolicyCheck, when set, also checks a resource policy document that
	// is put (SetResourcePolicy), after the catalog's own checks of its
	// shape: cmd/ passes the parser of the evaluator that enforces the
	// policies, so that what it cannot evaluate (an unknown condition
	// operator, a value of the wrong type) is refused when it is put. Its
	// error is answered as a malformed policy (ErrBadRequest).
	PolicyCheck func(doc []byte) error
	// Gate, when set, fences writes during a backing cutover: every write
	// enters it first (catalog/migrate provides it for the object
	// backing). Nil: writes are never fenced.
	Gate Gate
}

// Hooks are failpoints on the commit path. A hook returning an error stops
// the commit right there, as a crash would (the error is returned wrapped
// in ErrCommitStateUnknown and nothing is cleaned up).
type Hooks struct {
	// AfterMetadataWrite runs once the new metadata file is written,
	// before the staged commit is recorded.
	AfterMetadataWrite func(ctx context.Context, id Ident, metadataLocation string) error
	// BeforePointerFlip runs once the staged commit is recorded, before
	// the table or view pointer is flipped.
	BeforePointerFlip func(ctx context.Context, id Ident, metadataLocation string) error
}

// Catalog is the whole API of the catalog, implemented by *Service. The
// REST face (frontends/iceberg) depends on this interface; nothing that
// crosses it is an iceberg-go type: bodies are raw JSON as the spec
// defines them, results are plain Go values that marshal to the spec's
// JSON. Every error wraps one of the sentinels of errors.go.
//
// wh is the warehouse name (the REST prefix); every method answers
// ErrNoSuchWarehouse when it is unknown, and every write ErrFenced while a
// cutover fences the warehouse.
type Catalog interface {
	// CreateWarehouse registers a warehouse and creates the S3 bucket of
	// that name, or adopts it when it already exists. ErrAlreadyExists
	// when the warehouse is registered; ErrBadRequest for a name that is
	// not a valid bucket name.
	CreateWarehouse(ctx context.Context, name string) (Warehouse, error)
	// ListWarehouses lists the warehouses by name.
	ListWarehouses(ctx context.Context) ([]Warehouse, error)
	// GetWarehouse describes one warehouse.
	GetWarehouse(ctx context.Context, name string) (Warehouse, error)
	// DeleteWarehouse unregisters a warehouse that holds no namespace
	// (ErrNamespaceNotEmpty otherwise), forgets its commit log,
	// idempotency and prefix records, and deletes its S3 bucket when that
	// is empty (a bucket still holding objects is kept).
	DeleteWarehouse(ctx context.Context, name string) error

	// Config returns the defaults and overrides of GET /v1/config for the
	// warehouse: overrides carry "prefix" = wh; defaults carry
	// s3.endpoint, s3.path-style-access=true, s3.region, client.region.
	Config(ctx context.Context, wh string) (defaults, overrides map[string]string, err error)

	// ListNamespaces lists the namespaces one level under parent (nil or
	// empty: the top level), sorted. pageToken "" starts at the
	// beginning; pageSize <= 0 means all. next is "" on the last page.
	// ErrNoSuchNamespace when parent does not exist.
	ListNamespaces(ctx context.Context, wh string, parent []string, pageToken string, pageSize int) (list [][]string, next string, err error)
	// CreateNamespace creates a namespace (parents need not exist).
	// ErrAlreadyExists when it exists.
	CreateNamespace(ctx context.Context, wh string, ns []string, props map[string]string) error
	// LoadNamespace returns the namespace's properties (never nil).
	LoadNamespace(ctx context.Context, wh string, ns []string) (map[string]string, error)
	// NamespaceExists reports whether the namespace exists.
	NamespaceExists(ctx context.Context, wh string, ns []string) (bool, error)
	// DropNamespace drops an empty namespace; ErrNamespaceNotEmpty when it
	// holds tables, views or child namespaces.
	DropNamespace(ctx context.Context, wh string, ns []string) error
	// UpdateNamespaceProperties removes then sets properties. missing
	// lists removals that were not set. ErrUnprocessable when a key is in
	// both removals and updates.
	UpdateNamespaceProperties(ctx context.Context, wh string, ns []string, removals []string, updates map[string]string) (updated, removed, missing []string, err error)

	// ListTables lists the tables of a namespace, sorted by name; paging
	// as ListNamespaces.
	ListTables(ctx context.Context, wh string, ns []string, pageToken string, pageSize int) (ids []Ident, next string, err error)
	// CreateTable creates a table from the raw CreateTableRequest JSON.
	// With stage-create it returns the metadata without persisting
	// anything (MetadataLocation ""); the table is then created by a
	// CommitTable carrying assert-create.
	CreateTable(ctx context.Context, wh string, ns []string, body []byte) (TableResult, error)
	// LoadTable returns the table; snapshots "refs" keeps only the
	// snapshots some ref points to, "" or "all" keeps all.
	LoadTable(ctx context.Context, wh string, id Ident, snapshots string) (TableResult, error)
	// TableExists reports whether the table exists.
	TableExists(ctx context.Context, wh string, id Ident) (bool, error)
	// DropTable forgets the table; with purge it also deletes every
	// object under the table's location (metadata and data).
	DropTable(ctx context.Context, wh string, id Ident, purge bool) error
	// RenameTable renames or moves a table (the destination namespace must
	// exist). Files stay where they are. ErrAlreadyExists when the
	// destination names a table or view.
	RenameTable(ctx context.Context, wh string, from, to Ident) error
	// RegisterTable adopts an existing metadata file (which must be in
	// the warehouse bucket) as table ns.name; with overwrite it replaces
	// an existing table's pointer.
	RegisterTable(ctx context.Context, wh string, ns []string, name, metadataLocation string, overwrite bool) (TableResult, error)
	// CommitTable applies a raw CommitTableRequest JSON: requirements are
	// validated against the current metadata (ErrCommitFailed), updates
	// applied, a new metadata file written and the pointer swapped with a
	// compare-and-swap (ErrCommitFailed when it moved). A commit carrying
	// assert-create creates the table. The identifier in the body, when
	// present, must equal id.
	CommitTable(ctx context.Context, wh string, id Ident, body []byte) (TableResult, error)
	// CommitTransaction applies a raw CommitTransactionRequest JSON
	// {"table-changes": [...]}, atomically: every table moves or none
	// does (ErrCommitFailed). With the object backing only a transaction
	// of exactly one table change is supported (it is a CommitTable);
	// more answer ErrUnsupported, as atomicity across tables needs the
	// durable-strong backing. A table named twice is ErrBadRequest.
	CommitTransaction(ctx context.Context, wh string, body []byte) error
	// SwapMetadataLocation points the table at a metadata file the client
	// wrote (S3 Tables' UpdateTableMetadataLocation): versionToken must be
	// the current TableResult.ETag (ErrCommitFailed otherwise, or when a
	// commit lands meanwhile), the file a metadata file of the same table
	// in the warehouse's bucket (ErrBadRequest).
	SwapMetadataLocation(ctx context.Context, wh string, id Ident, versionToken, metadataLocation string) (TableResult, error)
	// TableForLocation resolves an object location (s3://wh/key) to the
	// table whose location prefix holds it, through the prefix index.
	// ErrNoSuchTable when no table's location holds it.
	TableForLocation(ctx context.Context, wh string, location string) (Ident, error)

	// Maintenance describes the table maintenance of a warehouse (id
	// nil) or of a table: the jobs it configures, those that apply, and
	// for a table each job's last outcome. ErrNoSuchTable when the table
	// is unknown.
	Maintenance(ctx context.Context, wh string, id *Ident) (Maintenance, error)
	// SetMaintenance configures one maintenance job of a warehouse (id
	// nil: every table without a configuration of its own) or of a
	// table; zero settings of an enabled job take the defaults.
	// ErrBadRequest for settings out of bounds.
	SetMaintenance(ctx context.Context, wh string, id *Ident, kind JobKind, cfg JobConfig) error

	// ResourcePolicy returns the resource policy of a warehouse (id nil:
	// its table bucket policy) or of a table, as it was put.
	// ErrNoSuchPolicy when there is none; ErrNoSuchTable when the table
	// is unknown.
	ResourcePolicy(ctx context.Context, wh string, id *Ident) (string, error)
	// SetResourcePolicy checks doc (policycheck.go: the IAM policy
	// language with s3tables: actions, at most MaxPolicySize bytes, every
	// resource naming the table bucket or the table, whose ARN is arn,
	// and Options.PolicyCheck) and keeps it as the warehouse's or the
	// table's resource policy, replacing any. ErrBadRequest for a
	// malformed document; ErrNoSuchTable when the table is unknown.
	SetResourcePolicy(ctx context.Context, wh string, id *Ident, arn, doc string) error
	// DeleteResourcePolicy forgets the warehouse's or the table's
	// resource policy; none is no error.
	DeleteResourcePolicy(ctx context.Context, wh string, id *Ident) error
	// ResourcePolicies returns the policies that govern a request on the
	// warehouse and, when id is set, on that table: "" for each that is
	// not set. It checks neither the warehouse nor the table (an unknown
	// one has none), for authorizers, which read it on every request.
	ResourcePolicies(ctx context.Context, wh string, id *Ident) (warehouse, table string, err error)

	// ListViews lists the views of a namespace; paging as ListTables.
	ListViews(ctx context.Context, wh string, ns []string, pageToken string, pageSize int) (ids []Ident, next string, err error)
	// CreateView creates a view from the raw CreateViewRequest JSON.
	CreateView(ctx context.Context, wh string, ns []string, body []byte) (ViewResult, error)
	// LoadView returns the view.
	LoadView(ctx context.Context, wh string, id Ident) (ViewResult, error)
	// ViewExists reports whether the view exists.
	ViewExists(ctx context.Context, wh string, id Ident) (bool, error)
	// ReplaceView applies a raw CommitViewRequest JSON (requirements
	// assert-view-uuid; view updates), as CommitTable does for tables.
	ReplaceView(ctx context.Context, wh string, id Ident, body []byte) (ViewResult, error)
	// DropView forgets the view (its metadata files stay).
	DropView(ctx context.Context, wh string, id Ident) error
	// RenameView renames or moves a view.
	RenameView(ctx context.Context, wh string, from, to Ident) error

	// RecallResponse returns the response remembered for an
	// Idempotency-Key, found = false when there is none (or it expired).
	RecallResponse(ctx context.Context, wh, key string) (status int, body []byte, found bool, err error)
	// RememberResponse keeps a final response for an Idempotency-Key for
	// at least IdempotencyLifetime. Callers must not remember 5xx
	// answers.
	RememberResponse(ctx context.Context, wh, key string, status int, body []byte) error

	// ReportMetrics validates a raw ReportMetricsRequest JSON, logs it and
	// discards it. ErrBadRequest when it is not a JSON object with a
	// report-type; ErrNoSuchTable when the table is unknown.
	ReportMetrics(ctx context.Context, wh string, id Ident, body []byte) error

	// Recover resolves the staged commits left by a crash: a commit whose
	// pointer was flipped (or whose file the current metadata-log lists)
	// is marked committed, one whose pointer moved on without it is
	// marked abandoned and its orphan metadata file deleted. A commit it
	// cannot decide (the pointer or the current metadata file cannot be
	// read) stays staged, nothing deleted, and is logged for the operator
	// (RecoverWarehouse lists it under ManualReview). Called at start; it
	// never touches commits this Service started itself.
	Recover(ctx context.Context) error
}

var _ Catalog = (*Service)(nil)

// API READY
