// Package etcd is a meta.Index on an etcd cluster (v3 API), so that the
// store's index is replicated and several nodes can share it, with what
// sharing needs: a watch of the others' changes, node registration and
// the election of background jobs. cmd/ opens
// it for `cairn serve --meta etcd://host:2379,host:2379/prefix` (ParseURL
// reads that form); bbolt stays the embedded default. It passes the
// meta/indextest suite on one member and on three.
//
// It owns the key layout under a store's prefix, the mapping of a
// meta.Tx onto etcd requests and the commit protocol below. It imports
// objstore/meta and etcd's client only, nothing else of Cairn; etcd's
// server is linked only by tests, through etcdtest.
//
// # Keys
//
// Every key of a store is under its prefix P (Config.Prefix, ending in
// "/"), so that stores share a cluster:
//
//	P rev              the commit marker: the id of the last transaction that wrote
//	P seq              NextSeq's counter, in decimal
//	P t/<table>/<key>  a table's key, byte for byte; the value likewise
//	P nodes/<name>     a registered node (cluster.go), under its session's lease
//	P jobs/<job>/...   the candidates for a background job's lead (etcd's
//	                   election recipe), under their sessions' leases
//
// A table is the range [P t/<table>/, P t/<table>0); keys within it sort
// as the store's keys do.
//
// # Transactions
//
// View and Update read at one revision of the cluster: the first read of
// a transaction is linearizable and fixes the revision R; every later
// read asks for R (serializable, falling back to the leader's view when a
// member is behind). A View is therefore one consistent snapshot, and so
// are an Update's reads. Gets are cached for the transaction. Cursors
// fetch pages of 16 keys doubling to Config.PageSize, or, on a table
// found large, read a RangeStream (stream.go says why: etcd counts the
// rest of the range on every paged request).
//
// An Update buffers its writes (per table, in key order); its reads see
// them (read-your-writes, cursors merge the buffer with the snapshot).
// It commits as one etcd transaction:
//
//	If   mod_revision(P rev) == the value read at R
//	Then every buffered put and delete; put P seq (if NextSeq ran); put P rev = a new id
//
// Every write transaction of the store rewrites P rev, so the compare
// fails if any other write transaction of the store committed since R:
// then nothing was applied and Update runs fn again from the start, on a
// new snapshot, up to Config.MaxAttempts times (then ErrConflict). This
// serialises writers across nodes, which makes the scheme serializable
// with no read tracking: whatever fn read (keys, absent keys, ranges and
// their phantoms) is as of R, and nothing of the store changed between R
// and the commit. Finer compares (one per key read) could let disjoint
// writers commit side by side, but etcd cannot compare a range for keys
// deleted from it (phantoms), a transaction holds at most --max-txn-ops
// compares, and the store's writers already funnel through one group
// commit per node, so one marker costs little. Within one Index, Updates
// take turns (a token, taken before the index's mutex) instead of
// conflicting at etcd.
//
// fn may therefore run more than once per Update, unlike bbolt's (see
// meta.Index). The store's Update callers allow it: the group commit
// (objstore/commit.go) already re-runs a batch's requests when one fails
// and resets what it records per run, and its request functions derive
// everything from the transaction and their inputs; Open's layout load
// and Close's lease drop do too.
//
// An Update that wrote nothing commits without a request. A commit whose
// answer is lost (the connection failed, the request timed out) is
// settled before Update returns: the same transaction is sent again,
// which applies only if the first did not (both compare P rev at the
// value read), and if its compare fails the first write of P rev after
// that value, read from the cluster's history (a watch from that
// revision), tells whether it was this transaction's id. When the cluster
// stays unreachable for twice the request timeout, or the history was
// compacted, Update fails with ErrUnavailable wrapping ErrOutcomeUnknown.
//
// # Limits
//
// etcd bounds a transaction (--max-txn-ops, 128 operations, and
// --max-request-bytes, 1.5 MiB, by default; Config.MaxTxnOps and
// MaxRequestBytes state the cluster's). Limits reports them net of what
// the index adds: two operations (P rev, P seq) and, in bytes, the
// prefix and table name on every key, the protobuf framing and the
// compare. An Update past Limits fails with meta.ErrTxTooLarge at the
// write that passes them, and nothing is sent; a cluster that refuses a
// transaction as too large (a smaller bound than configured) gives
// meta.ErrTxTooLarge too.
//
// # Errors
//
// Errors are wrapped with %w. A cluster that cannot be reached or does
// not answer gives ErrUnavailable: calls fail within Config.DialTimeout
// when no member is reachable, within Config.RequestTimeout when one is
// but the request gets no answer (no leader), and always within the
// caller's context; a store maps ErrUnavailable to 503 and EIO. A
// snapshot revision compacted away under a long View fails it; under an
// Update it is a conflict.
//
// # Other nodes
//
// The index also serves the processes that share a prefix (meta.Watcher,
// meta.Elector): WatchOthers (watch.go) watches the prefix and reports a
// table's changes of every transaction whose marker value is not one of
// this index's own commit ids (noted before each commit is sent);
// Register and Lead (cluster.go) hold a node's registration and its
// leads of background jobs on one session lease (Config.SessionTTL), so
// that they end when the process dies or is cut off for longer, and Close
// revokes it. A lost session is made again, and Register's node
// registered again on it.
//
// # Concurrency
//
// Index is safe for concurrent use; a Tx is used by one goroutine. Lock
// order: the writer token, then Index.mu (which guards closed and the
// count of calls in flight; Close waits for those, closes done, revokes
// the session, then closes the client). sessions.mu and ownCommits.mu
// are leaves. No package-level mutable state.
package etcd
