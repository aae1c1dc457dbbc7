// Package cluster owns where a store's drives are when several nodes
// serve it: the topology (the nodes, each with its peer address, and how
// many drives each has) recorded in the index when the store is formatted,
// which node holds each drive slot, and a node's view of the set (Member):
// its own slots as local directories, the others' as peer drives
// (objstore/drive/peer), and the peer server through which it lends its
// own to the others.
//
// Slot s of a store of n nodes is on node s mod n, in the directory
// drives/d<s> of that node's data directory, so that consecutive slots,
// and so a block's shards, are on distinct nodes wherever the counts
// allow (every node holds the same number of slots). Node i (0-based, in
// the topology's order) writes as objstore writer i+1, so that its data
// ids and pack segments are its own (objstore/writers.go).
//
// Invariants: the topology is recorded once, in the same index as the
// store, and never changes; a node whose flags disagree with it is
// refused before anything is opened. A Member holds the local drives it
// opened and nothing else; it does not close them (the store and the
// server outlive each other in no particular order; drive.Dir holds no
// descriptors).
//
// It imports objstore/drive, objstore/drive/peer and objstore/meta, not
// objstore itself: the store sees only Options.OpenDrive and
// Options.WriterID.
//
// Locks: Member.mu protects the drives opened so far (local and peer);
// nothing else is locked.
package cluster
