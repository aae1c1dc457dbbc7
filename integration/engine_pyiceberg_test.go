package integration

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"
)

// TestEnginePyIceberg runs PyIceberg (with pyarrow, from the engines
// cache) against `cairn serve --drives 4 --parity 2` on loopback: its REST
// catalog at /iceberg, its FileIO on the S3 face, catalog auth by SigV4
// (signing name s3) and by OAuth2 client credentials, each write made
// through one and read back through the other.
//
//  1. Object backing (integration/engines/pyiceberg/object_phase.py): a
//     namespace and a table from an Arrow schema, partitioned by region;
//     appends, an overwrite of one partition, scans with row filters
//     (rows checked exactly), a column added and one renamed (old rows
//     read with nulls), the snapshots listed, an older snapshot read by
//     id; a nested namespace with an escaped table name.
//  2. The cutover through the mount: `echo materialize >
//     <mount>/.cairn/catalog/<wh>/migration`, then a restart with
//     CAIRN_TABLE_CATALOG_BACKING=durable-strong.
//  3. Durable-strong (strong_phase.py): the same table loads with the
//     same metadata, snapshots and rows; appends, a second evolution and
//     a row delete grow its snapshot list; a second table is made.
//
// The Python scripts check the rows they read against what they wrote;
// this test checks their reports against each other across the cutover.
func TestEnginePyIceberg(t *testing.T) {
	eng := requireEngines(t)
	started := time.Now()
	lake := startEngineLake(t, pyWarehouse)
	srv, mnt := lake.srv, lake.mnt
	state := filepath.Join(t.TempDir(), "state.json")

	var before pyObjectReport
	pyRunPhase(t, eng, srv, "object_phase.py", state, &before)
	wantOps := []string{"append", "append", "delete", "append", "append"}
	if got := pyOperations(before.Snapshots); !slices.Equal(got, wantOps) {
		t.Fatalf("object phase: snapshot operations %v, want %v", got, wantOps)
	}
	if before.UUID == "" || len(before.Rows) != 13 || len(before.FirstRows) != 6 || before.FirstSnapshot != before.Snapshots[0].ID {
		t.Fatalf("object phase report: uuid %q, %d rows (want 13), %d rows in the first snapshot (want 6), first snapshot %d of %v",
			before.UUID, len(before.Rows), len(before.FirstRows), before.FirstSnapshot, before.Snapshots)
	}

	// The cutover, as an operator runs it on the mount.
	lake.cutover(t, 2, 2)
	srv = lake.srv

	var after pyStrongReport
	pyRunPhase(t, eng, srv, "strong_phase.py", state, &after)
	if after.UUID != before.UUID {
		t.Errorf("durable-strong: table uuid %s, want the object phase's %s", after.UUID, before.UUID)
	}
	n := len(before.Snapshots)
	if len(after.Snapshots) != n+3 || !reflect.DeepEqual(after.Snapshots[:n], before.Snapshots) {
		t.Errorf("durable-strong: snapshots %v; want the object phase's %v and 3 more", after.Snapshots, before.Snapshots)
	} else if got := pyOperations(after.Snapshots[n:]); !slices.Equal(got, []string{"append", "append", "overwrite"}) {
		t.Errorf("durable-strong: new snapshot operations %v, want append, append, overwrite", got)
	}
	if len(after.Rows) != len(before.Rows)+3+4-1 {
		t.Errorf("durable-strong: %d rows, want %d (the object phase's, 3 and 4 appended, 1 deleted)", len(after.Rows), len(before.Rows)+6)
	}
	if len(after.ReturnsSnapshots) != 3 || len(after.ReturnsRows) != 1 {
		t.Errorf("second table: snapshots %v and %d rows; want 3 snapshots (append, then the overwrite's delete and append) and 1 row",
			after.ReturnsSnapshots, len(after.ReturnsRows))
	}
	if _, err := os.Stat(filepath.Join(mnt, pyWarehouse, "sales", "orders", "metadata")); err != nil {
		t.Errorf("the table's metadata directory on the mount: %v", err)
	}
	t.Logf("TestEnginePyIceberg wall time: %v", time.Since(started).Round(time.Millisecond))
}
