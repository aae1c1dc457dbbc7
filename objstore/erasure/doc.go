// Package erasure owns the k+m Reed-Solomon codec of Cairn's erasure-coded
// store and the on-disk shard file format: streaming encode of an object into
// k+m shard files, block decode from any k of them (detecting missing and
// corrupt shards and reconstructing), full rebuild of lost shards (heal) and
// verification of shard files (fsck).
//
// It knows nothing about the index (bbolt), bucket semantics, drives or
// directories: callers hand it io.WriterAt and io.ReaderAt values, one per
// shard, with nil meaning "that shard is unavailable". It must not import
// other Cairn packages. It does not fsync: durability is the caller's.
//
// # Geometry
//
// An object is cut into blocks of BlockSize bytes (the last one shorter).
// Block b of length L is split into k data shards of ShardSize(b) =
// ceil(L/k) bytes each (the last data shard zero padded), plus m parity
// shards of the same length computed with
// github.com/klauspost/reedsolomon's default (systematic, Vandermonde
// derived) matrix for GF(2^8). The parity matrix is part of the format:
// changing encoder options is a format change. Limits: 1 <= k, 0 <= m,
// k+m <= 256, 64*k <= BlockSize <= MaxBlockSize. A 0-byte object has no
// blocks.
//
// # Shard file format, version 1
//
// All integers are little-endian.
//
//	offset size  field
//	0      8     magic "CAIRNSHD"
//	8      2     format version (1)
//	10     1     k (data shards)
//	11     1     m (parity shards)
//	12     1     shard index (0..k+m-1; data shards first)
//	13     1     reserved, 0
//	14     4     block size
//	18     8     object size in bytes
//	26     16    data id
//	42     2     bucket length B
//	44     2     key length K
//	46     B     bucket bytes
//	46+B   K     key bytes
//	46+B+K 4     CRC32C (Castagnoli) of all preceding header bytes
//
// Then, for each block b in 0..BlockCount-1, one chunk:
//
//	4            CRC32C of the shard bytes
//	ShardSize(b) shard bytes
//
// Every block but the last is full, so block b's chunk starts at
// headerLen + b*(4+ceil(BlockSize/k)), and the file's expected size follows
// from the header alone (Header.ShardFileSize).
//
// Bucket and key are a recovery hint only (at most 65535 bytes each). They
// are not compared when a shard is read, so an object renamed in the index
// keeps readable shards; each shard's block offsets are computed from its
// own header length.
//
// # Invariants
//
//   - A shard is used only if its header parses (magic, version, CRC,
//     geometry) and matches the expected header's k, m, block size, object
//     size and data id, with its own index. Anything else counts as bad.
//   - A shard chunk is used only if its CRC32C matches; otherwise that shard
//     is bad for that block and another shard is read in its place.
//   - The Writer writes each header at offset 0 first with size 0 and
//     rewrites it, same length, with the final size on Close. A shard file
//     left by an unfinished write still says size 0, so it never matches the
//     expected header of a non-empty object and counts as bad.
//   - Each chunk (checksum + shard bytes) is written with one WriteAt, in
//     order, so a sink sees one append after another (the drive package
//     turns them into large O_DIRECT writes).
//   - With HashWith, the object bytes are fed to a hash a block at a time
//     on the Writer's own goroutine, overlapping reading and writing;
//     TeeBlocks hands each block's bytes to a function on that goroutine
//     too (the store's block cache).
//   - Memory use is bounded by a few blocks, whatever the object size.
//     Writers given a Budget (UseBudget) together hand their sinks no more
//     block buffers than it allows: a full block's buffer is taken from
//     it before the block is encoded and queued, and given back once its
//     chunks are written and its observers are done, on every path, a
//     cancelled context included (Close frees what its stopped goroutines
//     left queued). Each Writer also has the one buffer it is filling,
//     outside the budget, so a slow body holds only its own buffer and
//     never stalls other Writers; memory is the budget plus one buffer
//     per open Writer. Handed-over buffers are freed without taking more,
//     so waiting for the budget cannot deadlock.
//
// Codec, Budget, Reader.ReadAt and MemFile are safe for concurrent use;
// Writer and Reader.Read/Seek are not.
package erasure
