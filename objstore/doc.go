// Package objstore is Cairn's erasure-coded, copy-on-write object store:
// the one store every face (S3, the mount, the catalog) works on.
//
// A Store composes four parts it alone may import: objstore/meta (the
// index, given in Options.Index: bbolt by default, opened by cmd/; an
// in-memory one for tests), objstore/erasure (the Reed-Solomon codec and
// shard format), objstore/drive (the drive seam; one local directory per
// drive unless Options.OpenDrive supplies others) and objstore/blockcache (the
// in-memory cache of verified blocks that ObjectReader.CopyRange sends
// from). It must not import the catalog, the faces or fs. The store
// speaks drive.Drive and asks for drive.Local (drives.go) for its local
// fast paths: direct I/O for large shard files, syncfs per filesystem,
// preadv, paths in reports and statfs in Status.
//
// # Model
//
// An object version's bytes live in immutable data objects, each cut into
// blocks and encoded into k data + m parity shards, one shard file per
// drive. A version lists segments (data id, offset, length). Writing
// creates new data and then commits by flipping the key's pointer in one
// index transaction: readers see the old version or the new, never a mix.
// Copy, rename and prefix rename only write index entries and adjust data
// reference counts, so they are O(1) in bytes.
//
// A data object's shards live either in their own shard file per drive
// (drives/dN/data/xx/<data id>) or, for small objects (Options.PackMaxSize,
// 128 KiB by default), as records appended at one shared offset to every
// drive's active pack segment (drives/dN/packs/<segment>). A record is
// byte for byte what the shard file would hold, so reads, fsck and heal
// treat both alike; packing saves a small put the inode, directory entry
// and journal commit a file per drive would cost.
//
// # Versions made of shared segments
//
// Versions share immutable data: a copy, a rename, a multipart complete,
// an UploadPartCopy (CopyPart: the part's segments are sub-ranges of the
// source's, whatever their alignment), an append (Append, append.go) and
// a patch (PatchAsync, patch.go: the mount's in-place writes) write index
// entries only, plus, for an append or a patch, one new data object
// holding just the new or changed bytes; a patch's other segments are
// slices of its base version's. A data record's Refs counts the version
// and part segments naming it, one per segment (fsck checks it), so a
// data object outlives every version that names it and no longer. An
// append commits in one transaction a version whose segments are the
// current version's followed by the new one, after checking there that
// the current size is still the offset: of racing appends one wins, the
// others fail and their data is discarded unreferenced. Without
// versioning the new null version takes over the references of the one
// it replaces (only the new segment is counted); with versioning every
// segment gains a reference, as the older version keeps its own.
//
// A version of more than Options.ChunkSegments segments (64) keeps them
// in chunk records (chunks.go; meta.Chunk, the chunks table) that its
// record names in order (meta.Version.Chunks). A chunk record is
// immutable and belongs to exactly one version: its segments count in
// their data's Refs as a flat version's do, it is deleted with its
// version, and a version made from another (copy, rename, SetMetaAsync,
// a versioned patch) copies the chunk records under new ids. A patch
// over a chunked version (patchplan.go) plans outside the transaction
// which chunks its fills touch (or its new size cuts) and rewrites only
// those; when the new version replaces its base as the null version it
// takes over the untouched chunks, deletes the replaced ones, and
// applies the reference changes once per data id, net (refDelta): most
// of a rewritten chunk's segments are its old one's. The mount then
// derives the new version's reader from the base's (Store.Rebase, which
// takes over the base reader's pins) instead of opening it again. An
// index with transaction limits (etcd) keeps lists flat.
//
// Segment lists are bounded: Append refuses to give a version more than
// Options.MaxSegments segments or parts (MaxSegments, 10 000, S3's bound
// on an appended object's parts) with ErrTooManySegments; a put of the
// whole starts again from one. Each append rewrites the version record
// (about 30 bytes a segment) and, with versioning, touches every
// segment's data record, so the bound also bounds one append's index
// work. The segment compactor keeps lists short well before the hard
// bound (segcompact.go, segqueue.go). Its planner
// (planSegmentCompaction) cuts the file into 1 MiB windows and, for a
// version of more than Options.SegmentCompactMin segments (256), picks
// the windows where the most segments start (more than 2) until the
// list would be down to half that, within segPassBudget (32 MiB) a pass:
// a file changed at random all over shrinks over several passes rather
// than being rewritten whole each time; adjacent picks make one range.
// CompactSegments reads the ranges through an ObjectReader
// of the version, writes them as one new data object, and commits in
// one transaction that checks the version is unchanged (same Seq and
// segments; otherwise the new data is discarded and nothing changes)
// the new list: segments outside the ranges kept (cut where a range
// cuts them), the new data's slices inside, contiguous slices of one
// data object merged. It counts the new list's references, drops the
// old list's and rewrites the version record in place: same id, ETag,
// size, times, metadata and attributes. Data no longer referenced is
// garbage as usual, freed once the readers that pinned it close. Writes
// that commit a version of many segments (appends, patches, multipart
// completes, copies, renames, SetMetaAsync) note it (noteSegments) in an
// in-memory queue
// that a background goroutine drains a second after the first note of
// a burst, taking a version only once its key has not been noted for
// SegmentCompactDelay, and skipping a noted version that is no longer current; Open's
// scan of the versions table queues again every version past
// SegmentCompactMin, so a crash loses no candidate for good. With flat
// lists (chunking off), a patch
// whose list would pass Options.MaxSegments takes the planner's windows
// (down to half the bound, no budget) into its own new data, read from
// its base: the hard bound holds without a failed write.
// Health.SegmentBacklog is the queue's length and
// Stats.SegmentCompactions the versions compacted.
// Stats.DriveBytesWritten (stats.go) counts the shard bytes written, so
// tests and /metrics show what a write cost: O(new bytes × (k+m)/k) for
// an append, nothing for a copy.
//
// # Durability and group commit
//
// Shard files are written without fsync. Each mutation goes through the
// committer, a two-stage pipeline: the syncer takes every request waiting
// and, when any of them wrote data, flushes the drives once (syncfs per
// filesystem; while the page cache holds much else to write back, such
// as a file the mount is staging, fdatasync of each shard file and its
// directory instead, so as not to write that too; drives that are not
// local always flush by name, SyncFiles and SyncPacks); the indexer takes
// every flushed batch waiting and applies them in one index transaction,
// request after request, each seeing the writes of those before it (the
// read-your-writes rule of meta.Index). A batch is split where the
// index's transaction bound (meta.Limits) would be passed, and a request
// that alone passes it fails with ErrTooManyChanges. A lone request
// starts a batch at once; concurrent ones share the flushes, and batch
// N+1 flushes while batch N commits. The index never points at data that
// was not flushed first: TestPowerLoss (powerloss_test.go) cuts the power
// of fault drives mid-write and checks every acknowledged write survives.
//
// Asynchronous operations (PutAsync with a FromReader, FromFunc or
// FromBytes source, and SetMetaAsync: the mount's closes) are pending from the call on: every
// operation on their key waits for them. They start in bursts (burst.go),
// up to burstDelay after the first, or at once when somebody waits for
// one; the small in-memory puts of a burst are written in order by one
// goroutine, which queues their commits without waiting between them.
// Background commits may linger backgroundLinger for company. A
// PatchFuncAsync may hold its content back (the mount holds a file's
// commit for more closes): whatever waits for a pending operation, or
// for one after it on the same key, calls its PutOptions.OnWait once
// (Pending.kick), and a done operation drops its link to the one before
// it, so that a key's history is not kept behind its newest. A read with
// GetOptions.Committed reads the index as it is, without waiting.
//
// PutBatch (batch.go) installs several conditional puts of one bucket in
// one index transaction: all of them or none (the catalog's multi-table
// commits on the object backing). Its data objects are flushed first,
// with every drive any of them wrote; a refused batch leaves only
// unreferenced data for the sweep.
//
// # Reclaiming space
//
// When a data object's reference count drops to zero it moves to the
// garbage table in the same transaction. The cleaner deletes its shards
// once no open reader pins it: woken ~100 ms after any commit that made
// garbage (and when a reader unpins some), and every CleanerInterval,
// when it also compacts. A packed record is dead space until its
// whole segment holds nothing live, and then the segment is removed; a
// segment less than half live is compacted first (compact.go: its live
// records are copied to the active segment). Shard files of
// writes that never committed (a crash between writing and committing)
// are orphans: Open sweeps them,
// and pack segment files the index does not know. Each Open starts a new
// pack segment, so a torn append of a crashed run is never written over.
//
// # Object lock
//
// A version under a retention not yet over, or under a legal hold, is
// never removed from the index, whatever removes it (a DELETE by version
// id, a null-version overwrite, a DELETE in an unversioned bucket, the
// lifecycle): lock.go's checkRemovable refuses it with ErrObjectLocked
// in the same transaction; only GOVERNANCE retention gives way, to
// DeleteOptions.BypassGovernance. Retention is only lengthened without
// that bypass (SetRetention), and a bucket with object lock keeps its
// versioning enabled. So the cleaner, which only frees data no version
// references, never frees a locked version's data.
//
// # Readers in other processes
//
// With Options.ReaderGrace set (an index several processes share), the
// cleaner also waits out a grace period and honours reader leases
// recorded in the index (lease.go), since it cannot see other processes'
// pins.
//
// # Writers in other processes
//
// With Options.WriterID set (the nodes of a cluster), each process's data
// ids and pack segments carry its id: its Open sweeps only its own
// orphans, and it compacts and removes only its own segments
// (writers.go). With Options.HealProbe set, the leader of the heal job
// heals the whole store once a drive that was out answers again
// (healscan.go).
//
// # Goroutines
//
// A Store runs, from Open to Close:
//
//   - the committer's two stages (commit.go): the syncer, which gathers
//     requests and flushes the drives, and the indexer, which applies
//     flushed batches in index transactions; Close stops them after the
//     requests in flight;
//   - unless Options.NoBackground: the cleaner (cleaner.go), the healer
//     (heal.go, fed by degraded reads through healq), the lifecycle runner
//     (lifecycle.go), the segment compactor (segqueue.go: Open's scan of
//     the versions, then the queue noteSegments fills), with ReaderGrace
//     the leaser (lease.go), with WriterID the pack upkeep of its own
//     segments (cleaner.go's runPackTidy), and with HealProbe the heal
//     scan (healscan.go); Close cancels and waits for them first;
//   - per burst of asynchronous operations, one goroutine for the burst's
//     small writes and one per other operation (burst.go, async.go);
//     Close drains them before anything else;
//   - per Watch subscription, one goroutine closing its channel when its
//     context ends (watch.go);
//   - short-lived ones inside an operation: one per drive for a pack
//     append or a compaction copy, the shard writers of a large put, and
//     md5-simd's server for concurrent large writes.
//
// # Locks
//
// Every mutex, what it protects and what may be taken while it is held
// (an arrow means "then"; a lock not named on the right of an arrow is
// never held while taking another):
//
//	Store.closeMu (RW)   shared by every committer request from send until
//	                     its outcome is read; Close takes it alone to stop
//	                     the committer. Taken by callers holding cleanMu or
//	                     leaser.mu, never by the committer itself.
//	Store.cleanMu        one Clean at a time.
//	                     cleanMu -> pinGate -> pinMu; cleanMu -> closeMu;
//	                     cleanMu -> packs.mu (compaction, dead segments).
//	leaser.mu            one lease renewal at a time; protects held.
//	                     leaser.mu -> pinMu; leaser.mu -> closeMu.
//	Store.pinGate (RW)   readers share it while they look up and pin a
//	                     version, the cleaner takes it alone while it
//	                     reads the garbage: a reader pins before the
//	                     cleaner looks, or looks up after the data became
//	                     garbage. pinGate -> an index View -> pinMu.
//	Store.pinMu          pins and pinSegs (leaf).
//	packs.mu             the open pack segment files and the append
//	                     position (leaf; pack I/O runs outside it).
//	Store.codecMu        the codec cache (leaf).
//	pendingSet.runMu (RW) draining and joining the running operations (leaf).
//	pendingSet.mu        the pending operations by key (leaf).
//	launcher.mu          the queued burst operations (leaf).
//	watchers.mu          the Watch subscribers; sends never block (leaf).
//	segQueue.mu          the versions queued for the segment compactor
//	                     (leaf; segqueue.go). Taken after commits, never
//	                     inside a transaction's function.
//	bucketCache.mu       the decoded bucket records of HeadBucket (leaf).
//	degradedSet.mu       the data ids seen degraded, not healed (leaf;
//	                     health.go).
//	blockcache.Cache.mu  the block cache's entries (leaf, its own package).
//
// Index transactions are not locks of the store's, but a View may run
// while pinGate is held (shared by readers, alone by the cleaner); no
// transaction's function takes a store lock, and the committer holds none
// while it runs one.
package objstore
