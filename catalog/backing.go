package catalog

import (
	"context"
	"errors"
)

// Errors of a Backing. Catalog code translates them into the catalog's own
// sentinels; they never reach a face.
var (
	// ErrNotFound: the record does not exist (Get, Delete, or a Put whose
	// ifVersion names a version of a record that is gone).
	ErrNotFound = errors.New("backing: record not found")
	// ErrConflict: the condition of a Put or Delete did not hold (the
	// record exists when it must not, or its version differs).
	ErrConflict = errors.New("backing: version conflict")
)

// Kind is a kind of record a Backing keeps. Every record is addressed by
// (warehouse, kind, key).
type Kind string

// The kinds of records the catalog keeps.
const (
	// KindWarehouse: one per warehouse; warehouse "" and key = its name.
	KindWarehouse Kind = "warehouse"
	// KindNamespace: key = the levels joined by NamespaceSep.
	KindNamespace Kind = "namespace"
	// KindTable: key = TableKey(ident); value = the pointer record.
	KindTable Kind = "table"
	// KindView: key = TableKey(ident), same shape as tables.
	KindView Kind = "view"
	// KindCommit: the commit log; key = a time-ordered commit id.
	KindCommit Kind = "commit"
	// KindIdempotency: key = the Idempotency-Key header value.
	KindIdempotency Kind = "idempotency"
	// KindPrefix: the location prefix index; key = a table location
	// ending in "/", value = the table identifier.
	KindPrefix Kind = "prefix"
	// KindMaintenance: table maintenance configuration and job status;
	// key = TableKey(ident), or "warehouse" for the warehouse's own.
	KindMaintenance Kind = "maintenance"
	// KindPolicy: resource policies (policy.go); key = TableKey(ident)
	// for a table's, or "warehouse" for the warehouse's (its table bucket
	// policy).
	KindPolicy Kind = "policy"
)

// Kinds lists every kind, for tools that walk a whole backing.
func Kinds() []Kind {
	return []Kind{KindWarehouse, KindNamespace, KindTable, KindView, KindCommit, KindIdempotency, KindPrefix, KindMaintenance, KindPolicy}
}

// AnyVersion as ifVersion makes Put and Delete unconditional.
const AnyVersion = "*"

// Record is one stored record.
type Record struct {
	Key     string
	Value   []byte
	Version string // opaque version token, changes on every Put
}

// ListOptions select a page of List.
type ListOptions struct {
	Prefix string // only keys starting with it
	After  string // only keys strictly after it
	Limit  int    // at most this many; zero means no limit
	// KeysOnly leaves Value and Version empty (cheaper for some backings).
	KeysOnly bool
}

// Backing is the record store the catalog keeps its state in, one
// namespace of records per warehouse. catalog/objectbacked keeps records
// as objects in the store's system bucket; the durable-strong backing of
// issue 6 replaces it behind this interface.
//
// Contract (catalog/backingtest checks it; every implementation runs
// that suite):
//   - Keys are non-empty UTF-8 strings without NUL; they may contain "/".
//     Warehouses are "" (records of no warehouse) or UTF-8 names without
//     "/" or NUL, other than "." and "..". Kinds are those of Kinds. Every
//     method refuses any other address with an error that wraps neither
//     ErrNotFound nor ErrConflict, and stores nothing.
//   - Each Put or Delete is atomic and linearizable per record; there is
//     no transaction across records.
//   - Versions are opaque, non-empty and never equal to AnyVersion; a Put
//     always yields a version different from every earlier version of the
//     record, a re-create after a Delete included (no ABA).
//   - Values come back byte for byte; a nil value reads back empty, not
//     nil.
//   - Errors wrap ErrNotFound or ErrConflict when those are the cause;
//     anything else is an I/O failure whose effect is unknown.
//   - All methods are safe for concurrent use.
type Backing interface {
	// Get returns the record; ErrNotFound when absent.
	Get(ctx context.Context, warehouse string, kind Kind, key string) (Record, error)
	// Put writes the record under a condition: ifVersion "" = it must not
	// exist (ErrConflict when it does); AnyVersion = unconditional;
	// otherwise its current version must equal ifVersion (ErrConflict when
	// it differs, ErrNotFound when it is gone). It returns the new version.
	Put(ctx context.Context, warehouse string, kind Kind, key string, value []byte, ifVersion string) (string, error)
	// Delete removes the record: ifVersion "" or AnyVersion =
	// unconditional (an absent record is no error), otherwise only when
	// the version equals it (ErrConflict; ErrNotFound when absent).
	Delete(ctx context.Context, warehouse string, kind Kind, key, ifVersion string) error
	// List returns the records of a kind in ascending key order (of the
	// keys' bytes), with more = true when the limit cut the list short
	// (false when exactly Limit records remained).
	List(ctx context.Context, warehouse string, kind Kind, opt ListOptions) (recs []Record, more bool, err error)
}

// BatchPut is one conditional Put of a PutBatch, with Put's condition.
type BatchPut struct {
	Kind      Kind
	Key       string
	Value     []byte
	IfVersion string
}

// BatchBacking is a Backing that can also write several records of one
// warehouse at once: either every Put's condition holds and all land
// together, or none does (ErrConflict or ErrNotFound, nothing written).
// Both backings are: the durable-strong one publishes one snapshot per
// warehouse, the object backing installs several objects in one index
// transaction (objstore.Store.PutBatch). Multi-table transactions use it.
type BatchBacking interface {
	Backing
	// PutBatch writes puts atomically and returns their new versions,
	// in order. Keys must be distinct.
	PutBatch(ctx context.Context, warehouse string, puts []BatchPut) ([]string, error)
}

// SnapshotBacking is a BatchBacking whose every write republishes its
// whole warehouse (the durable-strong backing). A commit there flips its
// pointer alone, without the staged commit record, which would cost two
// more writes of the whole warehouse (see Service.flip).
type SnapshotBacking interface {
	BatchBacking
	// RewritesWarehouse marks the backing; it does nothing.
	RewritesWarehouse()
}

// ListAll calls fn for every record of a kind of warehouse wh in b, in
// ascending key order, a page at a time; keysOnly as in ListOptions. An
// error of fn stops the walk and is returned.
func ListAll(ctx context.Context, b Backing, wh string, kind Kind, keysOnly bool, fn func(Record) error) error {
	after := ""
	for {
		recs, more, err := b.List(ctx, wh, kind, ListOptions{After: after, Limit: 1000, KeysOnly: keysOnly})
		if err != nil {
			return err
		}
		for _, r := range recs {
			after = r.Key
			if err := fn(r); err != nil {
				return err
			}
		}
		if !more || len(recs) == 0 {
			return nil
		}
	}
}
