// Package meta owns the store's index: a transactional, ordered key-value
// Index (bbolt by default, an interface so a replicated engine such as etcd
// can stand in later), the record types kept in it and the key schema.
//
// It must not import other Cairn packages. The objstore package is its only
// user and holds the semantics (versions, references, multipart); meta
// knows how keys are laid out and how records are encoded.
//
// # Key schema
//
// Every table is a top-level bbolt bucket. "\x00" separates the parts of a
// composite key (object keys may not hold a NUL byte).
//
//	settings  "layout"                    -> Layout (drive set id, drives, parity, block size)
//	buckets   <bucket>                    -> Bucket (creation time, versioning, lifecycle)
//	objects   <bucket>\0<key>             -> Version: the current version, never a delete marker
//	versions  <bucket>\0<key>\0<^seq:8>   -> Version: every version, newest first per key
//	data      <data id:16>                -> Data: erasure geometry, size, reference count
//	garbage   <data id:16>                -> Garbage: data no version or part references
//	uploads   <bucket>\0<key>\0<upload id> -> Upload: an incomplete multipart upload
//	uploadids <upload id>                 -> <bucket>\0<key>
//	parts     <upload id>\0<part:4 BE>    -> Part
//	packs     <segment:8 BE>              -> PackInfo: a pack segment of small data
//	packdata  <segment:8 BE><data id:16>  -> "" for each data record (live or garbage) in the segment
//	leases    <holder>\0d<data id:16>     -> Lease: a reader of another process keeps the data
//	leases    <holder>\0s<segment:8 BE>   -> Lease: ... keeps the pack segment file
//	chunks    <chunk id:8 BE>             -> Chunk: a run of a chunked version's segments
//
// Version, Data and Chunk records, read on every object access, are a compact
// binary form (binary.go documents it); every other record is JSON.
//
// ^seq is the bitwise complement of a store-wide sequence number, big
// endian, so the newest version of a key sorts first.
//
// # Invariants
//
//   - One operation is one transaction: readers see all of it or none.
//   - objects holds a copy of the newest versions entry of its key unless
//     that entry is a delete marker, in which case the key is absent.
//   - A chunk record is named by exactly one version record (and by the
//     objects copy of it while it is current), never rewritten, deleted
//     with its version; a chunked version's segments are its chunks',
//     in order.
//   - data.Refs counts the Version, Chunk and Part segments naming the data id;
//     when it drops to zero the data record moves to garbage in the same
//     transaction, and only the cleaner deletes shard files.
//   - A shard file whose data id is in neither data nor garbage is an
//     orphan (a write that never committed) and may be removed; so is a
//     pack segment file with no packs entry. A packs entry exists from the
//     first commit of data in the segment; PackInfo.Live sums the Len of
//     its data records in data or garbage.
package meta
