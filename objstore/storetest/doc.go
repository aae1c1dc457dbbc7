// Package storetest holds what tests of any package need to open an
// objstore.Store honestly, and the store's conformance suite.
//
// Open opens a store and, at the end of the test, closes it and runs fsck
// on what it left (every store test ends with a consistency check, as
// bbolt's btesting does); Check, OpenBolt and Reopener are its parts.
//
// Run is the behavioural suite of the store through its public API
// (buckets, objects, ranges, conditional writes, versions, listings,
// copies, atomic renames, multipart uploads, appends, watch, object lock, restart), run against
// every index engine: bbolt, the in-memory index, and the in-memory index
// with the transaction bound of an etcd cluster (128 writes, 1.5 MiB), so
// that an engine passes the same suite as bbolt before the store may run
// on it; and on drives that are not local (Engine.OpenDrive), so that the
// store's portable paths pass it too; and on node a of a three-node
// cluster (objstore/meta/etcd's storesuite_cluster_test.go, where tests
// may embed etcd's server): an etcd index on a three-member embedded
// etcd cluster, and six drives of which four are the other nodes',
// reached through the peer API, with a's writer id (Engine.Options sets
// what a cluster node's store needs beyond an index and drives). Each
// subtest opens its own store through Open, so each ends with fsck too.
//
// storetest may import objstore, objstore/meta and objstore/meta/etcd
// (to reopen an etcd index for fsck); it is imported only by tests.
package storetest
