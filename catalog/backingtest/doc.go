// Package backingtest is the conformance suite of the catalog.Backing
// contract (catalog/backing.go). Every Backing runs it from its own tests:
//
//	func TestBacking(t *testing.T) {
//		backingtest.Run(t, func(t *testing.T) catalog.Backing {
//			return newBacking(t) // fresh and empty, closed by t.Cleanup
//		})
//	}
//
// Run calls newBacking once per subtest, so every subtest starts from an
// empty backing and may be run alone (go test -run 'TestBacking/List').
// The subtests check what the contract promises and nothing an
// implementation chooses for itself:
//
//   - Conditions: Put and Delete under ifVersion "", AnyVersion and a
//     version, on absent and present records, with the sentinel each
//     failure must wrap;
//   - Versions: opaque, non-empty, never AnyVersion, new on every Put
//     (equal values included) and on a re-create, so an old version never
//     matches again (no ABA);
//   - Values: values come back byte for byte (empty, NUL, newlines,
//     large), nil as an empty value;
//   - InvalidAddress: empty, NUL or non-UTF-8 keys, a warehouse with "/",
//     unknown kinds are refused by every method with an error wrapping
//     neither ErrNotFound nor ErrConflict;
//   - List: ascending byte order, Prefix, After, Limit and more,
//     KeysOnly, and warehouses and kinds kept apart;
//   - Concurrent: creates of distinct keys all land and read-modify-write
//     increments of one record either land or fail with ErrConflict, the
//     record counting exactly those that landed (run under -race).
//
// What only one implementation has (the durable-strong snapshot format,
// its cache across processes, PutBatch) stays in that implementation's
// own tests. The package imports catalog and the standard library only;
// implementations open their store the way their tests do.
package backingtest
