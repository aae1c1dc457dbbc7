package meta

import (
	"context"
	"errors"
)

// Table names one keyspace of the index.
type Table string

// The tables of the schema (see the package comment).
const (
	Settings  Table = "settings"
	Buckets   Table = "buckets"
	Objects   Table = "objects"
	Versions  Table = "versions"
	DataTable Table = "data"
	Garbage   Table = "garbage"
	Uploads   Table = "uploads"
	UploadIDs Table = "uploadids"
	Parts     Table = "parts"
	Packs     Table = "packs"
	PackData  Table = "packdata"
	Leases    Table = "leases"
	Chunks    Table = "chunks"
)

// AllTables lists every table, created when an index is opened.
var AllTables = []Table{Settings, Buckets, Objects, Versions, DataTable, Garbage, Uploads, UploadIDs, Parts, Packs, PackData, Leases, Chunks}

// Errors an Index returns. Implementations wrap them with %w; callers
// match them with errors.Is.
var (
	// ErrCorruptRecord means a stored record could not be decoded.
	ErrCorruptRecord = errors.New("meta: corrupt record")
	// ErrTxTooLarge means an Update wrote more than the index's Limits
	// allow in one transaction. Nothing of it was committed; the same
	// writes split over several transactions may succeed.
	ErrTxTooLarge = errors.New("meta: transaction too large")
	// ErrClosed means the index was closed.
	ErrClosed = errors.New("meta: index closed")
	// ErrUnknownTable means a table outside AllTables was named: a
	// programming error, reported rather than panicking.
	ErrUnknownTable = errors.New("meta: unknown table")
	// ErrOutcomeUnknown: an Update's commit was sent but its outcome
	// could not be learnt (a replicated engine lost its cluster): it may
	// have applied. Engines wrap it; callers must not undo what the
	// transaction would reference (its data) on it.
	ErrOutcomeUnknown = errors.New("meta: commit outcome unknown")
	// ErrUnavailable: the index cannot be reached now (a replicated
	// engine lost its cluster); the request may succeed later. Nothing
	// was committed, unless the error also wraps ErrOutcomeUnknown.
	// Engines wrap it.
	ErrUnavailable = errors.New("meta: index unavailable")
	// ErrBusy: an Update lost to concurrent writers of the same keys too
	// many times in a row (a replicated engine serving several nodes);
	// nothing was committed, and it may succeed later. Engines wrap it.
	ErrBusy = errors.New("meta: index busy with concurrent writers")
)

// Limits bounds one Update transaction. Zero fields mean no bound.
//
// An engine with limits (etcd: 128 operations and 1.5 MiB per
// transaction by default) states them here, net of whatever it adds to
// each transaction itself, so that callers can split their work: the
// store's group commit puts as many requests in one transaction as fit
// and fails a single request that alone does not fit with ErrTxTooLarge.
type Limits struct {
	// MaxWrites is the most Puts and Deletes one transaction may make.
	MaxWrites int
	// MaxBytes is the most key and value bytes those writes may carry.
	MaxBytes int
}

// Fits reports whether writes and bytes are within the limits.
func (l Limits) Fits(writes, bytes int) bool {
	return (l.MaxWrites == 0 || writes <= l.MaxWrites) && (l.MaxBytes == 0 || bytes <= l.MaxBytes)
}

// Index is a transactional, ordered key-value store: the contract every
// engine (bbolt, in-memory, and later replicated ones) implements and
// meta/indextest checks.
//
// View runs fn in a read-only transaction that sees one consistent state:
// every transaction committed before View began and none that commits
// while fn runs. Update runs fn in a read-write transaction; writers are
// serialised. When fn returns nil the transaction is committed, durably
// for a persistent engine, before Update returns nil; when fn returns an
// error, or any read or write inside it failed, nothing of it is
// committed and Update returns that error (a failed read poisons the
// transaction even when fn ignored it). Update may also fail on its own
// (the commit itself failed, ErrTxTooLarge, ErrClosed): then nothing is
// committed either, as far as the engine can tell; a replicated engine
// that cannot tell says so (objstore/meta/etcd's ErrOutcomeUnknown), and
// the commit may then have applied.
//
// Inside an Update, reads see the transaction's own writes, in order
// (read-your-writes): a Get after a Put returns the new value, a Get after
// a Delete returns nil, and a cursor positioned after a write sees it.
// The store relies on this when group commit runs many requests one after
// the other in one transaction: each sees the writes of those before it,
// exactly as if each had its own transaction, committed in that order.
//
// An engine may run fn more than once per call (an optimistic one, etcd,
// runs it again on a fresh transaction after a conflict; only the last
// run commits): fn must derive what it does from the Tx and its inputs.
// Slices a Tx returns are valid only inside fn and must not be modified. Both calls fail with ctx's error
// when ctx is done before they start; a transaction that started runs to
// its end. Index is safe for concurrent use.
type Index interface {
	View(ctx context.Context, fn func(Tx) error) error
	Update(ctx context.Context, fn func(Tx) error) error
	// Limits returns the bound on one Update transaction.
	Limits() Limits
	// Close releases the index. Calls after Close fail with ErrClosed.
	// Transactions in flight finish first.
	Close() error
}

// Tx is one transaction. A Tx is used by one goroutine at a time.
type Tx interface {
	// Get returns the value of key, nil with a nil error when absent.
	Get(t Table, key []byte) ([]byte, error)
	// Put stores value under key (only in an Update). Key and value must
	// not be modified until the transaction ends.
	Put(t Table, key, value []byte) error
	// Delete removes key (only in an Update); an absent key is not an
	// error.
	Delete(t Table, key []byte) error
	// Cursor iterates a table in key order. Writing to the table the
	// cursor walks, through the Tx, while the cursor is in use is not
	// allowed: collect keys first, then write.
	Cursor(t Table) Cursor
	// NextSeq returns a store-wide, strictly increasing sequence number
	// (only in an Update). Numbers taken by a transaction that does not
	// commit may be skipped, never reused.
	NextSeq() (uint64, error)
}

// Cursor walks the keys of a table in ascending order. A nil key means the
// end of the table or a failed read: after the walk, Err tells which.
type Cursor interface {
	// Seek moves to the first key at or after key.
	Seek(key []byte) (k, v []byte)
	// First moves to the first key of the table.
	First() (k, v []byte)
	// Next moves to the key after the current one.
	Next() (k, v []byte)
	// Err returns the error that ended the walk early, nil at the end of
	// the table.
	Err() error
}

// Scan calls fn for every key of table t that starts with prefix, in key
// order, and returns fn's first error (nil for ErrStop) or the cursor's. fn must not write
// to t (see Tx.Cursor).
func Scan(tx Tx, t Table, prefix []byte, fn func(k, v []byte) error) error {
	c := tx.Cursor(t)
	for k, v := c.Seek(prefix); HasPrefix(k, prefix); k, v = c.Next() {
		if err := fn(k, v); err != nil {
			return stopped(err)
		}
	}
	return c.Err()
}

// ErrStop, returned by a Scan callback, ends the walk early; Scan then
// returns nil.
var ErrStop = errors.New("meta: stop scan")

func stopped(err error) error {
	if errors.Is(err, ErrStop) {
		return nil
	}
	return err
}

// HasAny reports whether table t holds a key that starts with prefix.
func HasAny(tx Tx, t Table, prefix []byte) (bool, error) {
	c := tx.Cursor(t)
	k, _ := c.Seek(prefix)
	return HasPrefix(k, prefix), c.Err()
}

// Has reports whether table t holds key.
func Has(tx Tx, t Table, key []byte) (bool, error) {
	v, err := tx.Get(t, key)
	return v != nil, err
}

// Watcher is what an Index that several processes share (etcd) offers
// besides Index: the changes the others commit, so that each process can
// tell its own watchers (the mount's caches) about writes it did not
// make.
type Watcher interface {
	// WatchOthers calls fn, in commit order, for each key of table that a
	// transaction of another process (not of this Index) put or deleted,
	// from the call on, until ctx ends; it returns ctx's error then, or
	// the error that stopped it. When changes may have been missed (the
	// watch broke and resumed past history the engine no longer has), fn
	// is called once with a nil key: forget what was cached. fn runs on
	// one goroutine and must be quick.
	WatchOthers(ctx context.Context, table Table, fn func(key []byte, deleted bool)) error
}

// Elector is what an Index that several processes share (etcd) offers
// for the background jobs exactly one of them should run (the cleaner,
// lifecycle, the segment compactor).
type Elector interface {
	// Lead blocks until this process leads job, or ctx ends. It returns
	// a context that ends when the lead is lost (the process was cut off
	// from the others long enough for one of them to take over) and the
	// function that gives the lead up; the job runs under that context.
	Lead(ctx context.Context, job string) (context.Context, func(), error)
}
