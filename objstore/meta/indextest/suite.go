package indextest

import (
	"bytes"
	"context"
	"testing"

	"github.com/cairnstore/cairn/objstore/meta"
)

// Factory opens a new, empty index with the given limits for one test; an
// engine that cannot take limits returns ok false for non-zero ones and
// those subtests are skipped. Reopen, when not nil, closes idx and opens
// the same database again (persistence across opens).
type Factory struct {
	Open   func(t *testing.T, limits meta.Limits) (idx meta.Index, ok bool)
	Reopen func(t *testing.T, idx meta.Index) meta.Index
}

// Run runs the whole suite against the engine f opens.
func Run(t *testing.T, f Factory) {
	tests := []struct {
		name string
		fn   func(t *testing.T, f Factory)
	}{
		{"GetPutDelete", testGetPutDelete},
		{"ReadYourWrites", testReadYourWrites},
		{"CursorSeesWrites", testCursorSeesWrites},
		{"Rollback", testRollback},
		{"FailedReadPoisons", testFailedReadPoisons},
		{"ViewIsReadOnly", testViewIsReadOnly},
		{"SnapshotIsolation", testSnapshotIsolation},
		{"CursorOrder", testCursorOrder},
		{"Scan", testScan},
		{"NextSeq", testNextSeq},
		{"CopiesWrites", testCopiesWrites},
		{"ConcurrentUpdates", testConcurrentUpdates},
		{"Limits", testLimits},
		{"Context", testContext},
		{"Closed", testClosed},
		{"Reopen", testReopen},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, f) })
	}
}

func open(t *testing.T, f Factory) meta.Index {
	t.Helper()
	idx, ok := f.Open(t, meta.Limits{})
	if !ok {
		t.Fatal("factory cannot open an unlimited index")
	}
	return idx
}

func put(t *testing.T, idx meta.Index, table meta.Table, kv ...string) {
	t.Helper()
	err := idx.Update(context.Background(), func(tx meta.Tx) error {
		for i := 0; i+1 < len(kv); i += 2 {
			if err := tx.Put(table, []byte(kv[i]), []byte(kv[i+1])); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("put: %v", err)
	}
}

// get reads one key in a View; "" with ok false when absent.
func get(t *testing.T, idx meta.Index, table meta.Table, key string) (string, bool) {
	t.Helper()
	var v []byte
	err := idx.View(context.Background(), func(tx meta.Tx) error {
		raw, err := tx.Get(table, []byte(key))
		v = bytes.Clone(raw)
		return err
	})
	if err != nil {
		t.Fatalf("get %q: %v", key, err)
	}
	return string(v), v != nil
}

// keys lists a table's keys (and values) in cursor order.
func keys(t *testing.T, idx meta.Index, table meta.Table) []string {
	t.Helper()
	var out []string
	err := idx.View(context.Background(), func(tx meta.Tx) error {
		return meta.Scan(tx, table, nil, func(k, v []byte) error {
			out = append(out, string(k)+"="+string(v))
			return nil
		})
	})
	if err != nil {
		t.Fatalf("scan: %v", err)
	}
	return out
}
