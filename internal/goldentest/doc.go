// Package goldentest compares an encoding with the fixture committed for
// it (restic's golden files): the tests that pin Cairn's on-disk formats
// (shard files, index records, catalog snapshots, records and fences)
// call Compare, each with its own -update flag. It is imported by tests only and keeps no state.
//
// It imports nothing of Cairn's, so that any package's tests may use it.
package goldentest
