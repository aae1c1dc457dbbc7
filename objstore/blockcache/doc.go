// Package blockcache keeps decoded, checksum-verified blocks of large
// objects in memory, so that a hot read neither re-reads nor re-checks
// their shards.
//
// Blocks are held in one memfd (anonymous shared memory outside the Go
// heap, so the cache does not move the garbage collector's target) cut
// into fixed slots of the store's block size. A hit hands the caller the
// slot's offset: the S3 face sends it to the socket with sendfile(2), so
// the server makes no pass over the bytes at all, as a plain file server
// serving from the page cache does; other readers copy it out with
// pread(2).
//
// # What may be cached
//
// A key is a data object id and a block index. Data objects are immutable
// and their ids never reused (copy-on-write), so an entry never goes
// stale: a block read again from its shards would hold the same bytes.
// Blocks come in from two places only: a write, as each block is encoded
// (the bytes the shards are made of), and a read, after the block was
// decoded and every chunk it came from passed its CRC32C. A block of a
// write that never commits is never looked up (no version names its
// data) and ages out.
//
// # Eviction
//
// The cache is a segmented LRU. A block comes in on probation; a lookup
// that finds it moves it to the protected segment (at most 80% of the
// slots; its least recently used block drops back to probation). Room is
// made by evicting the least recently used block on probation first, so
// a large upload or one streaming read of a large object churns only
// probation and leaves the blocks read more than once. A slot in use by
// a reader (pinned between Lookup and Release) is never reused. An
// evicted slot's pages are punched out of the memfd before new bytes are
// written: pages that a sendfile still has queued on a socket keep their
// old contents, since punching drops the file's reference, not the
// socket's. A slot no lookup returned is written over in place. That
// promise holds for whole small pages, so slots are whole pages, the
// mappings refuse huge pages, and New refuses a kernel that forces them
// on shared memory.
package blockcache
