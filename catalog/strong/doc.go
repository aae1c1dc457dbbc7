// Package strong is the durable-strong backing of the catalog
// (catalog.Backing): each warehouse's whole state is one deterministic
// snapshot object in the system bucket .cairn.sys, published atomically
// with an ETag compare-and-swap and decoded and validated before anything
// of it is served. It imports only catalog (the Backing contract) and
// objstore; it reads no environment (cmd/ parses the gates with ParseGate
// and passes Options).
//
// # Layout
//
//	strong/registry.snapshot            records of warehouse "" (the warehouse records)
//	strong/warehouses/<name>.snapshot   everything of warehouse <name>
//	strong/backups/<name>/<id>.snapshot a backup of warehouse <name>
//
// # Snapshot format
//
// One header line, then a compact JSON body:
//
//	cairn-strong-snapshot <format> <body length> <sha256 of body, hex>\n
//	{"format":1,"warehouse":"lake","epoch":"<16 hex>","generation":7,
//	 "kinds":[{"kind":"namespace","records":[{"key":"ns","gen":3,"value":"<base64>"}]}]}
//
// Groups are sorted by kind, records by key, struct fields encode in a
// fixed order and nothing (no time, no map) depends on the encoder, so the
// same state always encodes to the same bytes. Format 2 is format 1 plus
// a "count" in every group (its number of records) and the rule that no
// identifier is both a table and a view.
//
// Decoding (at load and, before every publish, on the bytes about to be
// written) checks: the magic, a known format (1 or 2) equal in header and
// body, the length and checksum, strict JSON (unknown fields rejected, no
// trailing data), the warehouse name, a 16-hex-digit epoch, generation >=
// 1, known kinds in ascending order with no empty group, valid keys in
// strictly ascending order, every record generation in 1..generation, the
// format-2 rules, and finally canonical form: re-encoding the decoded
// state must give the input bytes exactly. Anything else wraps
// ErrSnapshotInvalid. Size is capped at MaxSnapshot.
//
// # Versions
//
// Every publish increments the snapshot's generation; a written record
// carries it. A record's version token is "<epoch>.<gen>": it changes on
// every write of the record, never repeats within a snapshot's life, and
// the random epoch (chosen when a warehouse's first snapshot is made)
// keeps it from repeating across a deleted and re-created snapshot. The
// changing generation also makes every publish change the object's bytes
// and so its ETag (no ABA on the swap).
//
// # Writes
//
// Put and Delete (per warehouse, serialised in-process by the warehouse
// mutex) HEAD the snapshot, re-read it when its ETag moved, apply the
// change to a copy, encode, decode-validate the bytes, then Put with
// If-Match <etag> (If-None-Match * for the first). A lost swap (another
// process) re-reads and re-applies, so the record condition is evaluated
// again: the write either lands on the newer state or reports
// catalog.ErrConflict / ErrNotFound. Any other Put failure is resolved by
// re-reading: success when the object holds exactly our bytes, otherwise
// an error of unknown effect. Reads HEAD the snapshot first, so they see
// every publish that completed before them (linearizable per record).
//
// # Health
//
// Open loads the registry and every warehouse snapshot it lists. A
// snapshot failing validation, unreadable as corrupt, or vanished after it
// was seen makes that warehouse fail closed: every operation on it returns
// the error (ErrSnapshotInvalid or ErrSnapshotMissing) and Unhealthy
// reports it, while the other warehouses are served. A later valid
// snapshot (a restore) is picked up by the next operation.
//
// # Whole-state operations
//
// For the cutover and operators: Records reads a warehouse's whole state
// with the ETag it came from; SnapshotETag refreshes and returns that ETag
// (errors for a warehouse not served) and ObjectETag HEADs it without
// decoding (also for a damaged snapshot). Replace publishes a given state
// as the whole of a warehouse in one publish, Remove deletes its snapshot
// (If-Match in the store), both only when the current ETag is the one
// named (catalog.ErrConflict otherwise, no retry); neither works on the
// registry. After Remove this process serves the empty state for the
// warehouse (a later publish starts a fresh epoch; the high-water mark is
// kept); other processes that had seen the snapshot report it missing
// until one is published again. Fingerprint hashes a state without
// versions, equal across backings.
//
// # Backups
//
// Backup (catalog.Backups) copies a warehouse's snapshot bytes unchanged
// to strong/backups/<wh>/<id>.snapshot, the warehouse's registry record
// value (base64), the format and the source ETag in the object's user
// metadata; id is the first 32 hex digits of a SHA-256 over the snapshot
// and the registry value, so unchanged content gives the same id
// (Existed). A warehouse without a snapshot has nothing to back up
// (catalog.ErrBadRequest). Restore checks the id strictly (32 lowercase
// hex), the content against the id, full decode validation and the
// warehouse name (catalog.ErrBadRequest otherwise), then the expected ETag
// and allow-replace (catalog.ErrMigrationConflict); it re-encodes the
// records under a fresh epoch and a generation above the backup's and
// the current one, so every version token handed out before is invalid,
// and publishes with the ETag swap, over a damaged or vanished snapshot
// too (which heals the warehouse). A backup in a format below the
// process high-water mark for the warehouse is refused
// (catalog.ErrBadRequest wrapping ErrBelowHighWater). A missing registry
// record is put back from the backup.
//
// # Formats and gates
//
// Writes use format 2 only when both Options.SnapshotV2 and
// Options.SnapshotV2FleetConfirmed are set; otherwise the larger of the
// current snapshot's format and the process high-water mark. The
// high-water mark is per warehouse (each warehouse is its own snapshot)
// and lives in the Backing value: once this process has read or written
// format 2 for a warehouse, a format-1 snapshot of it is refused
// (ErrSnapshotInvalid wrapping ErrBelowHighWater) and only format 2 is
// written. A restart forgets it, but reads the format-2 snapshot at start
// and so sets it again: rolling the format back is a Restore of a format-1
// backup with AllowFormatDowngrade, by a process whose gates are unset
// (with them set it is ErrMigrationConflict), which lowers the warehouse's
// mark.
//
// # Quarantine
//
// A format-1 snapshot in which an identifier is both a table and a view
// loads in cleanup-only mode (Quarantined reports it): Get of a colliding
// table or view key, and a List page of tables or views containing one,
// fail with ErrQuarantined; a write succeeds only when the collision set
// afterwards is a strict subset of the set before (ErrQuarantined
// otherwise) and is written as format 1 until the set is empty. Outside
// quarantine a write that would create a collision is catalog.ErrConflict;
// after format 2 was seen none can be persisted.
//
// ErrSnapshotInvalid and ErrSnapshotMissing wrap catalog.ErrUnavailable
// (503, the warehouse is not served); ErrQuarantined wraps
// catalog.ErrQuarantined (503 "requires operator cleanup"). The catalog's
// drop of a colliding table or view, which cannot read the entry, deletes
// it by key with catalog.AnyVersion: that shrinks the collision set, so
// it is the cleanup path.
//
// # Locks
//
// Lock order: warehouse.mu, then Backing.mu. Backing.mu (the warehouse
// map and health maps) is never held during I/O. warehouse.mu is held
// across a whole operation, I/O included, so operations on one warehouse
// are serialised in-process; different warehouses are independent.
package strong
