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
)

// AllTables lists every table, created when an index is opened.
var AllTables = []Table{Settings, Buckets, Objects, Versions, DataTable, Garbage, Uploads, UploadIDs, Parts, Packs, PackData}

// ErrCorruptRecord means a stored record could not be decoded.
var ErrCorruptRecord = errors.New("meta: corrupt record")

// Index is a transactional ordered key-value store.
//
// View runs fn in a read-only transaction that sees one consistent state.
// Update runs fn in a read-write transaction, committed durably when fn
// returns nil and rolled back when it returns an error; writers are
// serialised. Slices returned by a Tx are valid only inside fn.
type Index interface {
	View(ctx context.Context, fn func(Tx) error) error
	Update(ctx context.Context, fn func(Tx) error) error
	Close() error
}

// Tx is one transaction.
type Tx interface {
	// Get returns the value of key, or nil when absent.
	Get(t Table, key []byte) []byte
	// Put stores value under key. Key and value must not be modified
	// until the transaction ends.
	Put(t Table, key, value []byte) error
	// Delete removes key; an absent key is not an error.
	Delete(t Table, key []byte) error
	// Cursor iterates a table in key order.
	Cursor(t Table) Cursor
	// NextSeq returns a store-wide, strictly increasing sequence number.
	NextSeq() (uint64, error)
	// Writable tells an Update transaction from a View one.
	Writable() bool
}

// Cursor walks the keys of a table in ascending order. A nil key means the
// end. Deleting the current key through the Tx while a cursor is open is
// not allowed; collect keys first.
type Cursor interface {
	Seek(key []byte) (k, v []byte)
	First() (k, v []byte)
	Next() (k, v []byte)
	Last() (k, v []byte)
	Prev() (k, v []byte)
}
