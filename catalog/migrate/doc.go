// Package migrate is the catalog cutover: it moves a warehouse's catalog
// state from the object backing (catalog/objectbacked) to the
// durable-strong backing (catalog/strong) without losing a commit, and
// can undo that while it is safe. It implements catalog.Cutover
// (preflight, materialize, cancel) and catalog.Gate (Fences), and reports
// a warehouse's status (Reporter). docs/design.md places it in the
// catalog; docs/operations/cutover-runbook.md is the operator's view, its
// behaviour step by step.
//
// # Fences
//
// Fence documents live in the system bucket .cairn.sys:
//
//	migration/global-fence.json             {version, migration_id, created}
//	migration/warehouses/<wh>/fence.json    catalog.Fence
//
// While a warehouse's fence exists, every object-backed write to it fails
// with catalog.ErrFenced naming the migration id; while the global fence
// exists, warehouse registry writes (create, delete) do. Documents are
// validated strictly when loaded (unknown fields, version, warehouse,
// migration id, PREPARING without a fingerprint, MATERIALIZED with a
// fingerprint and an ETag); an invalid one fences its warehouse (fail
// closed) and its operations answer catalog.ErrBadRequest.
//
// # Locks
//
// Fences is the Service's write gate: a warehouse write holds that
// warehouse's lock shared for the whole operation (a commit's metadata
// write, staged record, pointer flip and mark), a registry write the
// global lock shared. Materialize and cancel take the global lock, then
// the warehouse's, exclusively: in-flight writers drain and new ones wait,
// then find the fence. Lock order is always global, then warehouse.
//
// # Fingerprints
//
// A warehouse's fingerprint (strong.Fingerprint) is the SHA-256 of its
// registry record and every record (kind, key, value; versions left out),
// so the same state has the same fingerprint in either backing. The
// MATERIALIZED fence keeps the source's; the target matches when its
// records give the same one.
//
// # Crashes
//
// Every step of materialize can be re-run: a PREPARING fence with no
// target means the publish never happened; a target equal to the source
// means it did; the registry entry and the MATERIALIZED fence follow.
// Hooks.At names each point (Points) so crash tests can stop there.
// Cancel proves the target is still what materialize wrote before it
// removes anything.
//
// # Imports
//
// migrate imports catalog, catalog/strong and objstore; faces reach it
// only through the catalog interfaces, wired in cmd/.
package migrate
