// Package drive owns one drive of the store: a directory (in production one
// per disk) holding shard files, behind a small seam so tests can inject
// faults.
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
// index (objstore/meta). It must not import other Cairn packages.
//
// Durability: Create does not fsync. Callers make a batch of writes durable
// with Sync, which is syncfs(2) on the drive's filesystem, so that many
// small shard files share one flush (group commit). SyncAll issues one
// syncfs per distinct filesystem. SyncFiles (SyncFilesAll for a set)
// flushes named shard files and their directories alone, for when the
// filesystem holds other dirty data that syncfs would write too
// (DirtyBytes tells how much the page cache holds); OpenDir syncs the
// directories it makes, so that a file's own directory is the only one
// SyncFiles needs.
package drive
