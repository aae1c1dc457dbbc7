package catalog

import (
	"errors"
	"io/fs"
	"strings"
	"syscall"

	"github.com/cairnstore/cairn/objstore"
)

// Sentinel errors of the catalog. Errors returned by Service wrap one of
// these; match with errors.Is. frontends/iceberg/errors.go maps them, in
// one place, to the REST spec's status codes and exception types.
var (
	// ErrNoSuchWarehouse: the warehouse (table bucket) is unknown. 404
	// NoSuchWarehouseException.
	ErrNoSuchWarehouse = errors.New("no such warehouse")
	// ErrNoSuchNamespace: the namespace (or a listed parent) does not
	// exist. 404 NoSuchNamespaceException.
	ErrNoSuchNamespace = errors.New("no such namespace")
	// ErrNoSuchTable: the table does not exist. 404 NoSuchTableException.
	ErrNoSuchTable = errors.New("no such table")
	// ErrNoSuchView: the view does not exist. 404 NoSuchViewException.
	ErrNoSuchView = errors.New("no such view")
	// ErrAlreadyExists: a warehouse, namespace, table or view of that name
	// exists (tables and views share one identifier space). 409
	// AlreadyExistsException.
	ErrAlreadyExists = errors.New("already exists")
	// ErrNamespaceNotEmpty: dropping a namespace that holds tables, views
	// or child namespaces, or a warehouse that holds namespaces. 409
	// NamespaceNotEmptyException.
	ErrNamespaceNotEmpty = errors.New("namespace not empty")
	// ErrCommitFailed: a commit requirement failed or the pointer changed
	// under the commit; nothing was applied and the client should refresh
	// and retry. 409 CommitFailedException.
	ErrCommitFailed = errors.New("commit failed")
	// ErrCommitStateUnknown: the commit may or may not have been applied
	// (the store failed after the new metadata was written). 500
	// CommitStateUnknownException; never answer 409 or 400 for it.
	ErrCommitStateUnknown = errors.New("commit state unknown")
	// ErrBadRequest: malformed JSON, unknown requirement or update types,
	// invalid identifiers or arguments. 400 BadRequestException.
	ErrBadRequest = errors.New("bad request")
	// ErrUnprocessable: a request that is well formed but contradicts
	// itself (the same key in removals and updates of a namespace
	// properties update). 422.
	ErrUnprocessable = errors.New("unprocessable request")
	// ErrUnsupported: the operation is not supported by this catalog or
	// backing (multi-table transactions of more than one table). 406
	// UnsupportedOperationException.
	ErrUnsupported = errors.New("operation not supported")
	// ErrFenced: object-backed writes are refused while a backing
	// cutover's fence holds the warehouse (or, for the warehouse registry,
	// any cutover is in progress); the message names the migration id.
	// 409 CommitFailedException.
	ErrFenced = errors.New("catalog writes fenced by a migration")
	// ErrMigrationConflict: a cutover operation cannot run in the current
	// state (preflight not ready, a fence or the target disagrees, the
	// target advanced since it was materialized, a restore's expected ETag
	// differs). 409 CommitFailedException.
	ErrMigrationConflict = errors.New("catalog migration conflict")
	// ErrQuarantined: a table/view identifier collision left in a
	// format-1 durable-strong snapshot puts the warehouse in cleanup-only
	// mode: reads of a colliding identifier, listings touching one, and
	// writes that do not remove collisions are refused until an operator
	// drops the table or the view (drops of a colliding identifier are
	// allowed). 503 ServiceUnavailableException.
	ErrQuarantined = errors.New("identifier collision requires operator cleanup")
	// ErrNoSuchPolicy: the table bucket or table has no resource policy.
	// 404 NotFoundException (the S3 Tables API serves policies).
	ErrNoSuchPolicy = errors.New("no such resource policy")
	// ErrUnavailable: the backing does not serve the warehouse (a
	// durable-strong snapshot failed validation or is quarantined); other
	// warehouses are served. 503 ServiceUnavailableException.
	ErrUnavailable = errors.New("warehouse not served by the catalog backing")
)

// clientSentinels returns the sentinels whose text is the catalog's own
// words to a client (every exported one of errors.go).
func clientSentinels() []error {
	return []error{
		ErrNoSuchWarehouse, ErrNoSuchNamespace, ErrNoSuchTable, ErrNoSuchView,
		ErrAlreadyExists, ErrNamespaceNotEmpty, ErrCommitFailed, ErrCommitStateUnknown,
		ErrBadRequest, ErrUnprocessable, ErrUnsupported, ErrFenced,
		ErrMigrationConflict, ErrQuarantined, ErrUnavailable, ErrNoSuchPolicy,
	}
}

// ClientMessage is err's text for a client: the catalog's own words (what
// is missing or wrong, which name, what to do) without the causes beneath
// them that come from the backing or the store (ErrNotFound and
// ErrConflict, store errors, system calls), whose texts name records and
// keys of the system bucket. The log keeps err.Error(), the whole chain.
//
// A cause is cut where its text follows ": " in err's text, which is how
// fmt.Errorf("%w: ...: %w", sentinel, cause) spells it; a cause that
// wraps one of the catalog's sentinels is kept (it is the catalog's
// words, wrapped once more).
func ClientMessage(err error) string {
	if err == nil {
		return ""
	}
	msg := err.Error()
	for _, c := range internalCauses(err) {
		t := c.Error()
		if t == "" {
			continue
		}
		if i := strings.Index(msg, ": "+t); i >= 0 {
			msg = msg[:i] + msg[i+2+len(t):]
		} else if msg == t {
			return ""
		}
	}
	return msg
}

// internalCauses returns the outermost errors in err's tree (err itself
// excluded) that are internal: the backing's or the store's.
func internalCauses(err error) []error {
	var out []error
	var walk func(e error, top bool)
	walk = func(e error, top bool) {
		if e == nil {
			return
		}
		if !top && internalError(e) {
			out = append(out, e)
			return
		}
		switch u := e.(type) {
		case interface{ Unwrap() []error }:
			for _, c := range u.Unwrap() {
				walk(c, false)
			}
		case interface{ Unwrap() error }:
			walk(u.Unwrap(), false)
		}
	}
	walk(err, true)
	return out
}

// internalError says whether e is the backing's or the store's: it wraps
// none of the catalog's sentinels and one of the backing's, the store's,
// or a system call's error.
func internalError(e error) bool {
	for _, s := range clientSentinels() {
		if errors.Is(e, s) {
			return false
		}
	}
	// The store's errors name the backing's records and the system
	// bucket, which a client has no use for.
	if errors.Is(e, ErrNotFound) || errors.Is(e, ErrConflict) || objstore.IsStoreError(e) {
		return true
	}
	var pe *fs.PathError
	var errno syscall.Errno
	return errors.As(e, &pe) || errors.As(e, &errno)
}
