// Package catalog is the Iceberg catalog domain: warehouses (table
// buckets), namespaces, tables and views, their commits, and the backing
// that keeps the catalog's state. Table metadata semantics come from
// apache/iceberg-go (table.Metadata, requirements, updates, the metadata
// builder), used in this package and its backings only: objstore, fs and
// the faces never import it. Nothing crossing the Catalog interface
// (api.go) is an iceberg-go type: request bodies are raw spec JSON,
// results marshal to spec JSON.
//
// The state lives behind the Backing interface (backing.go):
// catalog/objectbacked keeps it as JSON objects in the store's system
// bucket .cairn.sys, each changed with a conditional write; the
// durable-strong backing (catalog/strong) comes with the cutover.
//
// # Records
//
// Per warehouse: namespace records (properties), table and view pointer
// records (current metadata location and table location), the commit log,
// idempotency entries, the location prefix index, table maintenance
// (maintenance.go) and resource policies (policy.go: a table bucket's and
// a table's, kept and checked here, evaluated by whoever authorizes).
// Keys: a namespace is its levels joined by 0x1F; a table or view is its
// namespace key, 0x1E and its name. Identifiers (levels and names) are 1-255 bytes of UTF-8
// without "/", NUL or other control characters, and not "." or "..".
//
// # Commit protocol
//
// A commit (table or view, create included) reads the pointer record and
// its version, validates the requirements against the current metadata
// (ErrCommitFailed), applies the updates with iceberg-go, then:
//
//  1. writes <location>/metadata/NNNNN-<uuid>.metadata.json into the
//     warehouse bucket (create-only write: a fresh name each time);
//  2. records a staged commit (KindCommit, state "staged");
//  3. flips the pointer with a conditional Put on the version read:
//     a conflict means a concurrent commit won, so the new file is
//     deleted, the staged entry dropped and ErrCommitFailed returned
//     (nothing applied; the client refreshes and retries); any other
//     failure is ErrCommitStateUnknown;
//  4. deletes the staged entry: the commit log holds only commits in
//     flight (the table's metadata-log is its history), so a
//     durable-strong snapshot does not grow with every commit.
//
// On a SnapshotBacking (durable-strong), where every write republishes the
// whole warehouse snapshot, steps 2 and 4 are left out (flipPointers): the
// pointer flips with one conditional Put, and a crash before it leaves
// only the new metadata file, which RecoverWarehouse removes once it is
// old enough (orphans.go).
//
// A crash anywhere leaves the pointer on the old file or the new one, both
// present; a crash after 2 leaves a staged entry that Recover (run at
// start) and RecoverWarehouse (the operator's) resolve with one rule,
// classifyStaged (classify.go): flipped (or the new file in the current
// metadata-log) means committed, otherwise abandoned and the orphan file
// deleted; when the pointer or the current metadata file cannot be read
// it is manual review, the entry stays staged and nothing is deleted.
// Hooks (Options.Hooks) stop a commit after 1 or before 3 for crash
// tests.
//
// There is no server-side retry: the pointer's version is the only
// serialization point, so of concurrent commits on one table exactly one
// wins per round.
//
// Multi-table transactions (transaction.go): both backings can write
// several records at once (BatchBacking: durable-strong publishes one
// snapshot per warehouse, the object backing installs several objects in
// one index transaction of the store, objstore.Store.PutBatch), so every
// table of a transaction commits or none does: each change is validated
// and its metadata file written, then all pointers flip in one PutBatch,
// without staged records (flipPointers). A crash before the flip leaves
// only the new metadata files, which recovery removes (orphans.go).
//
// Tables and views share one identifier space; creates check both kinds
// (a create racing a create of the other kind is checked again after the
// view flip). Purge deletes every object under the table's location after
// dropping the entry.
//
// # Cutover
//
// Options.Gate fences writes while catalog/migrate moves a warehouse to
// the durable-strong backing: every exported write enters it once for the
// whole operation and gets ErrFenced (naming the migration) while the
// warehouse is fenced. Inspect and RecoverWarehouse (inspect.go) are the
// preflight's view of a warehouse and the operator's commit recovery;
// migration.go holds the cutover's wire types and interfaces.
package catalog
