package catalog

import (
	"context"
	"time"
)

// The catalog cutover (moving a warehouse's state from the object backing
// to the durable-strong backing) as the faces see it. catalog/migrate
// implements Cutover and Gate; catalog/strong implements Backups. The
// wire shapes keep RustFS's snake_case field names and status words (the
// reference the cutover was specified against; docs/design.md and
// docs/operations/cutover-runbook.md describe Cairn's) so that operators'
// tooling carries over.

// Wire labels of the two backings, as RustFS names them.
const (
	SourceKindObjectBacked = "OBJECT_BACKED"
	TargetKindDurable      = "STRONG_KV_WAL" // RustFS's legacy label of the durable-strong snapshot
)

// Preflight statuses.
const (
	StatusReadyToSnapshot       = "READY_TO_SNAPSHOT"
	StatusSnapshotMaterialized  = "SNAPSHOT_MATERIALIZED"
	StatusRecoveryRequired      = "RECOVERY_REQUIRED"
	StatusManualReviewRequired  = "MANUAL_REVIEW_REQUIRED"
	StatusAlreadyMaterialized   = "SNAPSHOT_ALREADY_MATERIALIZED" // materialize retried
	StatusNoMigrationFence      = "NO_MIGRATION_FENCE"            // cancel without a fence
	StatusFenceReleased         = "FENCE_RELEASED"                // cancel done
	FenceStatusPreparing        = "PREPARING"
	FenceStatusMaterialized     = "MATERIALIZED"
	BucketStatusNotMigrated     = "NOT_MIGRATED"
	BackingObject               = "object"
	BackingDurableStrong        = "durable-strong"
	BackingConfigKey            = "CAIRN_TABLE_CATALOG_BACKING"
	blockerCommitRecovery       = "COMMIT_RECOVERY_REQUIRED"
	blockerCommitManualReview   = "COMMIT_MANUAL_REVIEW_REQUIRED"
	blockerIndexBackfill        = "WAREHOUSE_INDEX_BACKFILL_REQUIRED"
	blockerDuplicatePrefix      = "DUPLICATE_WAREHOUSE_PREFIX"
	blockerIdentifierCollision  = "TABLE_VIEW_IDENTIFIER_COLLISION"
	actionRunRecovery           = "RUN_CATALOG_RECOVERY"
	actionBackfillIndex         = "BACKFILL_WAREHOUSE_INDEX"
	actionReviewPrefixes        = "REVIEW_DUPLICATE_WAREHOUSE_PREFIXES"
	actionReviewCollisions      = "REVIEW_TABLE_VIEW_IDENTIFIER_COLLISIONS"
	BlockerSnapshotChanged      = "DURABLE_STRONG_SNAPSHOT_CHANGED"
	ActionSnapshot              = "SNAPSHOT_OBJECT_BACKED_CATALOG"
	ActionEnableDurableStrong   = "ENABLE_DURABLE_STRONG_BACKING"
	ActionVerifySnapshot        = "VERIFY_DURABLE_STRONG_SNAPSHOT"
	ActionSnapshotRemaining     = "SNAPSHOT_REMAINING_TABLE_BUCKETS"
	ActionReviewSnapshot        = "REVIEW_DURABLE_STRONG_SNAPSHOT"
	ActionKeepRollbackConfig    = "KEEP_OBJECT_BACKED_ROLLBACK_CONFIG"
	ActionCancelOrRematerialize = "CANCEL_OR_REPEAT_MATERIALIZE"
	ActionFinishCancel          = "FINISH_CANCEL"
)

// Preflight is the dry run of a warehouse's cutover (GET .../catalog/
// migration): RustFS's flat fields, plus fence, identifier_conflicts and
// buckets.
type Preflight struct {
	TableBucket                string            `json:"table_bucket"`
	SourceKind                 string            `json:"source_kind"`
	TargetKind                 string            `json:"target_kind"`
	Status                     string            `json:"status"`
	NamespaceCount             int               `json:"namespace_count"`
	TableCount                 int               `json:"table_count"`
	ViewCount                  int               `json:"view_count"`
	CommitLogCount             int               `json:"commit_log_count"`
	IdempotencyIndexCount      int               `json:"idempotency_index_count"`
	WarehousePrefixCount       int               `json:"warehouse_prefix_count"`
	WarehouseIndexReady        bool              `json:"warehouse_index_ready"`
	ObjectBackedWritesFenced   bool              `json:"object_backed_writes_fenced"`
	ReadyToEnableDurableStrong bool              `json:"ready_to_enable_durable_strong"`
	Blockers                   []string          `json:"blockers"`
	RecommendedActions         []string          `json:"recommended_actions"`
	Rollback                   Rollback          `json:"rollback"`
	Fence                      *Fence            `json:"fence"`
	IdentifierConflicts        []Ident           `json:"identifier_conflicts"`
	Buckets                    []BucketReadiness `json:"buckets"`
	// Recovery lists the commits and records that block the cutover.
	Recovery *RecoveryReport `json:"recovery,omitempty"`
}

// Rollback is the fixed rollback advice of a preflight.
type Rollback struct {
	BackingConfigKey             string `json:"backing_config_key"`
	CurrentBackingValue          string `json:"current_backing_value"`
	RollbackBackingValue         string `json:"rollback_backing_value"`
	PreservesObjectBackedCatalog bool   `json:"preserves_object_backed_catalog"`
	RequiresOperatorRestart      bool   `json:"requires_operator_restart"`
}

// DefaultRollback is the rollback advice every preflight carries.
func DefaultRollback() Rollback {
	return Rollback{BackingConfigKey: BackingConfigKey, CurrentBackingValue: BackingDurableStrong,
		RollbackBackingValue: BackingObject, PreservesObjectBackedCatalog: true, RequiresOperatorRestart: true}
}

// BucketReadiness is one warehouse's cutover state in a preflight.
type BucketReadiness struct {
	TableBucket string `json:"table_bucket"`
	// Fence is NOT_MIGRATED, PREPARING or MATERIALIZED.
	Fence string `json:"fence"`
	// Ready: MATERIALIZED and the target's fingerprint equals the fence's.
	Ready             bool   `json:"ready"`
	SourceFingerprint string `json:"source_fingerprint,omitempty"`
	TargetFingerprint string `json:"target_fingerprint,omitempty"`
}

// Fence is a warehouse's migration fence document. While it exists,
// object-backed writes to the warehouse are refused (ErrFenced).
type Fence struct {
	Version             int       `json:"version"`
	TableBucket         string    `json:"table_bucket"`
	MigrationID         string    `json:"migration_id"`
	Status              string    `json:"status"` // PREPARING or MATERIALIZED
	TargetBucketExisted bool      `json:"target_bucket_existed"`
	SourceFingerprint   *string   `json:"source_fingerprint"`
	TargetSnapshotETag  *string   `json:"target_snapshot_etag"`
	Created             time.Time `json:"created"`
}

// MaterializeResult answers POST .../catalog/migration.
type MaterializeResult struct {
	TableBucket                string `json:"table_bucket"`
	SourceKind                 string `json:"source_kind"`
	TargetKind                 string `json:"target_kind"`
	Status                     string `json:"status"` // SNAPSHOT_MATERIALIZED or SNAPSHOT_ALREADY_MATERIALIZED
	MigrationID                string `json:"migration_id"`
	NamespaceCount             int    `json:"namespace_count"`
	TableCount                 int    `json:"table_count"`
	ViewCount                  int    `json:"view_count"`
	CommitLogCount             int    `json:"commit_log_count"`
	IdempotencyIndexCount      int    `json:"idempotency_index_count"`
	SourceFingerprint          string `json:"source_fingerprint"`
	TargetSnapshotETag         string `json:"target_snapshot_etag"`
	ObjectBackedWritesFenced   bool   `json:"object_backed_writes_fenced"`
	ReadyToEnableDurableStrong bool   `json:"ready_to_enable_durable_strong"`
}

// CancelResult answers DELETE .../catalog/migration.
type CancelResult struct {
	TableBucket              string `json:"table_bucket"`
	Status                   string `json:"status"` // NO_MIGRATION_FENCE or FENCE_RELEASED
	MigrationID              string `json:"migration_id,omitempty"`
	TargetRemoved            bool   `json:"target_removed"`
	RegistryFenceReleased    bool   `json:"registry_fence_released"`
	ObjectBackedWritesFenced bool   `json:"object_backed_writes_fenced"`
}

// Cutover runs a warehouse's migration to the durable-strong backing; it
// is served by an object-backed server only. Errors wrap the catalog's
// sentinels: ErrNoSuchWarehouse, ErrMigrationConflict (409: not ready, a
// fence disagrees, the target advanced), ErrBadRequest (a malformed fence
// document), ErrUnsupported.
type Cutover interface {
	Preflight(ctx context.Context, wh string) (Preflight, error)
	Materialize(ctx context.Context, wh string) (MaterializeResult, error)
	Cancel(ctx context.Context, wh string) (CancelResult, error)
}

// Gate fences object-backed writes during a cutover. Every write of the
// Service enters it first (wh "" for the warehouse registry) and releases
// it when done, so a cutover can drain in-flight writers by taking the
// warehouse exclusively. Enter fails with ErrFenced while a fence holds
// the warehouse (or, for wh "", the registry).
type Gate interface {
	Enter(ctx context.Context, wh string) (release func(), err error)
}

// RecoveryItem is one finding of a warehouse's commit recovery.
type RecoveryItem struct {
	Kind  string `json:"kind"` // "commit", "idempotency", "prefix", "identifier"
	Key   string `json:"key"`
	Ident *Ident `json:"ident,omitempty"`
	// EntryKind is "table" or "view" for findings about an entry.
	EntryKind Kind   `json:"entry_kind,omitempty"`
	Action    string `json:"action"` // ROLL_FORWARD, ROLL_BACK, BACKFILL, DROP_STALE, DROP_EXPIRED, MANUAL_REVIEW
	Reason    string `json:"reason"`
}

// Recovery actions.
const (
	RecoverRollForward  = "ROLL_FORWARD"
	RecoverRollBack     = "ROLL_BACK"
	RecoverBackfill     = "BACKFILL"
	RecoverDropStale    = "DROP_STALE"
	RecoverDropExpired  = "DROP_EXPIRED"
	RecoverDropOrphan   = "DROP_ORPHAN"
	RecoverManualReview = "MANUAL_REVIEW"
)

// RecoveryReport is what a warehouse's recovery found (and, unless it was
// a dry run, did). ManualReview items are listed, never acted on.
type RecoveryReport struct {
	TableBucket  string         `json:"table_bucket"`
	DryRun       bool           `json:"dry_run"`
	Repaired     []RecoveryItem `json:"repaired"`
	ManualReview []RecoveryItem `json:"manual_review"`
	// Counts of the records looked at.
	Commits     int `json:"commit_log_count"`
	Idempotency int `json:"idempotency_index_count"`
}

// BackupResult answers POST .../catalog/backup.
type BackupResult struct {
	TableBucket  string    `json:"table_bucket"`
	BackupID     string    `json:"backup-id"`
	SnapshotETag string    `json:"snapshot-etag"`
	Format       int       `json:"format"`
	Size         int64     `json:"size"`
	Created      time.Time `json:"created"`
	// Existed: the same content was backed up before (IDs derive from it).
	Existed bool `json:"existed"`
}

// RestoreRequest is the body of POST .../catalog/restore.
type RestoreRequest struct {
	BackupID string `json:"backup-id"`
	// ExpectedSnapshotETag must equal the warehouse snapshot's current
	// ETag ("" when it has none); ErrMigrationConflict otherwise.
	ExpectedSnapshotETag string `json:"expected-snapshot-etag"`
	// AllowReplace must be true to replace an existing snapshot.
	AllowReplace bool `json:"allow-replace"`
	// AllowFormatDowngrade must be true to restore a backup of an older
	// snapshot format than the warehouse's current one (rolling the v1 ->
	// v2 format roll back); the v2 gates must be unset then.
	AllowFormatDowngrade bool `json:"allow-format-downgrade"`
}

// RestoreResult answers POST .../catalog/restore.
type RestoreResult struct {
	TableBucket      string `json:"table_bucket"`
	BackupID         string `json:"backup-id"`
	PreviousETag     string `json:"previous-snapshot-etag"`
	SnapshotETag     string `json:"snapshot-etag"`
	Format           int    `json:"format"`
	RecordsRestored  int    `json:"records"`
	RegistryRestored bool   `json:"registry_entry_restored"`
}

// Backups backs up and restores a durable-strong warehouse snapshot; it
// is served by a durable-strong server only. Errors: ErrNoSuchWarehouse,
// ErrBadRequest (unknown backup, a backup of another warehouse, an
// invalid snapshot), ErrMigrationConflict (the expected ETag differs, or
// a snapshot exists and allow-replace is false).
type Backups interface {
	Backup(ctx context.Context, wh string) (BackupResult, error)
	Restore(ctx context.Context, wh string, req RestoreRequest) (RestoreResult, error)
}

// Status is the document of GET .../catalog/status and of the control
// file .cairn/catalog/<wh>/status.
type Status struct {
	TableBucket string `json:"table_bucket"`
	Backing     string `json:"backing"` // object or durable-strong
	// SnapshotFormat is the durable-strong snapshot's format (0: none);
	// SnapshotHighWater the process high-water mark.
	SnapshotFormat    int     `json:"snapshot_format"`
	SnapshotHighWater int     `json:"snapshot_high_water"`
	SnapshotETag      string  `json:"snapshot_etag,omitempty"`
	Served            bool    `json:"served"`
	Unhealthy         string  `json:"unhealthy,omitempty"`
	Quarantined       []Ident `json:"quarantined,omitempty"`
	Fence             *Fence  `json:"fence"`
	NamespaceCount    int     `json:"namespace_count"`
	TableCount        int     `json:"table_count"`
	ViewCount         int     `json:"view_count"`
	CommitLogCount    int     `json:"commit_log_count"`
	StagedCommits     int     `json:"staged_commit_count"`
	IdempotencyCount  int     `json:"idempotency_index_count"`
}
