// Package drive owns one drive of the store behind a seam: the Drive
// interface speaks small handles of its own (ShardReader, ShardWriter,
// PackFile, StagedFile) and explicit flushes by name (SyncFiles,
// SyncPacks) or whole (Sync), never *os.File or paths, so that a drive of
// another kind (remote, or faultdrive's fault-injecting wrapper) needs
// only that. Its contract (absence, durability, concurrency) is written
// on Drive; drivetest.Run checks it for every implementation.
//
// Dir, the drive on a local directory (in production one per disk), also
// implements Local: paths for reports and tools, CreateShard's direct I/O
// for large shard files (ShardFile), and Dev, so that SyncAll flushes each
// filesystem once. The store asks for Local with a type assertion and
// falls back to the Drive calls without it.
//
// Layout of a drive directory:
//
//	format.json        {"format":1,"set":"<set id>","index":N}
//	data/xx/<dataid>   one shard file per data id (xx = first two hex digits)
//	packs/<seg>        pack segments: shard records of small objects appended
//	                   at the same offset on every drive (seg = 16 hex digits)
//	tmp/               files being rebuilt by heal, renamed into data/ when done
//
// The package knows nothing of the shard format (objstore/erasure) or the
// index (objstore/meta). It must not import other Cairn packages; its
// subpackages faultdrive, drivetest and peer (drives served to and
// reached on other nodes over HTTP) import it alone.
//
// Durability: writes do not fsync. Callers make a batch of writes durable
// with one flush: Dir.Sync is syncfs(2) on the drive's filesystem, so that
// many small shard files share one flush (group commit), and SyncAll
// issues one per distinct filesystem among Local drives. SyncFiles
// (SyncFilesAll for a set) flushes named shard files and their
// directories alone, for when the filesystem holds other dirty data that
// syncfs would write too (DirtyBytes tells how much the page cache
// holds); SyncPacks fdatasyncs segment files, whose directory entries
// OpenPack made durable when it created them. OpenDir syncs the
// directories it makes, so that a file's own directory is the only one
// SyncFiles needs.
package drive
