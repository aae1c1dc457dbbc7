// Package peer owns the drives a node serves to its peers and reaches on
// theirs, so that a store's erasure set can span several nodes: each node
// serves its local drives with a Server (an http.Handler), and the other
// nodes use a Drive (a drive.Drive for one remote slot, made by New) in
// their place. It imports package drive and nothing else of Cairn (its
// tests use drivetest and faultdrive too), and only the standard
// library's net/http.
//
// Serve the Server from an http.Server without ReadTimeout or
// WriteTimeout (or with ones longer than the longest shard stream:
// ReadHeaderTimeout is the one to set), and with an IdleTimeout longer
// than the Drives' idle connections live (30s for the package's own
// client).
//
// # Protocol
//
// Every path is below /peer/v1/drives/{slot}, slot in decimal:
//
//	GET    shards                    Walk: names as lines (lines.go), then ".end COUNT"
//	GET    shards/{name}?op=open     Open: 204 when the file is there
//	GET    shards/{name}?off=&len=   ReadAt: the bytes, Cairn-Peer-Eof: 1 at the end
//	PUT    shards/{name}             Create: a write stream (frame.go), 204 after Close
//	DELETE shards/{name}             Remove
//	PUT    staged/{name}             Stage: a write stream, 204 after Commit
//	GET    packs                     Packs: {"segs": [...]}
//	POST   packs/{seg}?create=0|1    OpenPack
//	GET    packs/{seg}?off=&len=     PackFile.ReadAt
//	GET    packs/{seg}?op=size       PackFile.Size: {"size": N}
//	PUT    packs/{seg}?off=          PackFile.WriteAt: the body, all or nothing
//	DELETE packs/{seg}               RemovePack
//	POST   sync                      Sync
//	POST   sync/files                SyncFiles: body of name lines
//	POST   sync/packs                SyncPacks: body {"segs": [...]}
//
// A name is path-escaped and checked by the server before anything else
// (drive.CheckName, at most 255 bytes, no NUL: drive.ErrInvalidName); a
// segment is drive.PackName's 16 lowercase hex digits. Each answer comes
// after the local drive's call returned, so a flush answered 204 is as
// durable as the peer's local flush makes it. Sizes are bounded (maxIO per
// read, frame or pack write; maxSyncNames, maxSyncSegs, maxSyncBody per
// flush); the client splits what is larger.
//
// Errors come back as {"code": ..., "message": ...} with a status, which
// the client turns into a *RemoteError unwrapping to a sentinel:
// not-exist (404) to fs.ErrNotExist, invalid-name (400) to
// drive.ErrInvalidName, no-space (507) to syscall.ENOSPC, auth (401) to
// ErrAuth, no-drive (404, a slot the peer does not serve) to
// ErrUnreachable; bad-request, too-large, canceled and internal carry the
// message alone. A connection that fails or breaks, a peer that stalls
// past Config.Timeout or answers what the client cannot use, is
// ErrUnreachable, which the store takes for a failed drive. A caller's
// context that ends gives its own error instead.
//
// # Authentication
//
// Every request carries Cairn-Peer-Time (Unix seconds) and Cairn-Peer-Mac,
// the hex HMAC-SHA256 under the shared cluster secret (at least 32 bytes)
// of
//
//	"cairn-peer-v1\n" METHOD "\n" ESCAPED-PATH "\n" RAW-QUERY "\n" TIME "\n" SLOT
//
// The server checks it (hmac.Equal) before it parses anything, and a time
// more than MaxSkew (5 minutes) off its clock fails too; all a refused
// request learns is 401 "peer authentication failed". Offsets, lengths
// and flags are in the query, so the MAC covers them; bodies are not
// MACed: shard files carry their own block checksums, which the store
// verifies on every read. Answers are not authenticated and nothing is
// encrypted, and a request may be replayed within the skew window: on a
// network that is not trusted, give the Drives an http.Client with TLS
// (Config.Client) and serve the Server over TLS.
//
// # Write streams
//
// A ShardWriter (Create) or StagedFile (Stage) is one PUT whose body, fed
// through an io.Pipe, carries a frame per WriteAt in the order written,
// whatever the offsets: 'W' off n data. Close or Commit sends a 'C' frame
// with the number of W frames and bytes sent, ends the body and waits for
// the peer's answer, which comes after its local Close or Commit; Abort
// sends 'A' and waits likewise. The server tells a complete stream from a
// cut one by that frame alone: a body that ends or breaks before it, holds
// a malformed frame or bytes after it, or whose counts differ, is cut, and
// the server aborts the local writer and removes the shard file (a staged
// file is dropped, the shard left as it was), so that a shard is whole
// once its Close returned nil and absent otherwise. The request waits for
// 100 Continue, so that the server refuses it (bad name, create failed,
// bad MAC) before the body goes out; a write that fails on the server
// fails the stream, whose remaining frames the server reads and drops, and
// the error comes back at Close.
//
// # Invariants
//
//   - No name, segment, offset or length reaches a local drive before the
//     MAC verified and the server checked it; the server never panics on
//     what a request holds (FuzzParseRequest, FuzzReadStream, FuzzServe).
//   - A shard file is written by one stream at a time: a newer Create (or
//     a staged file's Commit) of the name stops the older stream's writes
//     and its removal of the file (shardStates).
//   - A Drive holds no state but its configuration and the end of its
//     cooldown (Config.Cooldown: after the peer was found unreachable,
//     calls fail at once for a while), and the server holds
//     nothing open between requests: a reader or PackFile is a name and a
//     context, each call one request. The store's cached PackFiles run
//     their calls in the opener's context without its cancellation.
//
// # Locks
//
// Server.shards.mu (the table of shard states) and a shardState.mu are
// never held together; shardState.mu is held across each local call on
// the name's file made by a stream, and by Create and Commit of the name.
// The client has no locks: a stream is used by one goroutine at a time,
// and hands its result to the caller through a channel.
package peer
