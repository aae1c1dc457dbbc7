// Package objstore is Cairn's erasure-coded, copy-on-write object store:
// the one store every face (S3, the mount, the catalog) works on.
//
// A Store composes four parts it alone may import: objstore/meta (the
// bbolt index), objstore/erasure (the Reed-Solomon codec and shard format),
// objstore/drive (the drive seam; one local directory per drive unless
// Options.OpenDrive supplies others) and objstore/blockcache (the
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
// # Durability and group commit
//
// Shard files are written without fsync. Each mutation goes through the
// committer, a two-stage pipeline: the syncer takes every request waiting
// and, when any of them wrote data, flushes the drives once (syncfs per
// filesystem; while the page cache holds much else to write back, such
// as a file the mount is staging, fdatasync of each shard file and its
// directory instead, so as not to write that too; drives that are not
// local always flush by name, SyncFiles and SyncPacks); the indexer
// takes every flushed batch waiting and applies them in one bbolt
// transaction. A lone request starts a batch at once; concurrent ones
// share the flushes, and batch N+1 flushes while batch N commits. The
// index never points at data that was not flushed first: TestPowerLoss
// (powerloss_test.go) cuts the power of fault drives mid-write and
// checks every acknowledged write survives.
//
// Asynchronous operations (PutAsync, PutBackground, PutBackgroundBytes,
// SetMetaAsync: the mount's closes) are pending from the call on: every
// operation on their key waits for them. They start in bursts (burst.go),
// up to burstDelay after the first, or at once when somebody waits for
// one; the small in-memory puts of a burst are written in order by one
// goroutine, which queues their commits without waiting between them.
// Background commits may linger backgroundLinger for company.
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
// # Lock order
//
// Store.pinGate (readers share, the cleaner takes it alone) -> Store.pinMu.
// The committer runs index transactions without holding either.
package objstore
