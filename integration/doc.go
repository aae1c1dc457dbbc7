// Package integration holds the end-to-end tests: they build the cairn
// binary once (TestMain in helpers_test.go) and drive it as an operator
// would, over its command line, HTTP and, later, a real mount. It also
// checks the import layering of the whole module (layering_test.go).
//
// Nothing here is imported by other packages; the package has no code
// besides this comment. The Makefile runs it under -race, like every
// package, with a longer timeout than the unit tests: the binaries it
// builds (cairn, the crash workers) are then race-built too, and a race
// report of any of them fails the test that started it, or the run
// (race_test.go). Helpers meant for reuse by other integration tests (the
// crash loop, the S3 clients) are in helpers_test.go: buildBinary,
// freeAddr, startServer, (*server).waitReady, (*server).stop.
package integration
