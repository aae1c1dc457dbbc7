// Package indextest is the conformance suite of meta.Index: every engine
// (bbolt, the in-memory index, and later replicated ones) runs Run and
// must pass all of it, as restic's backends run its backend suite.
//
// The suite checks what meta/index.go promises: reads that report their
// failures (and poison the transaction), read-your-writes inside an
// Update, snapshot isolation of a View, rollback of a failed Update,
// ordered cursors and prefix scans, strictly increasing sequence numbers,
// copies of written keys and values, the transaction bound of Limits,
// cancelled contexts and ErrClosed after Close.
//
// It imports meta only; the engine comes from the caller's Factory.
package indextest
