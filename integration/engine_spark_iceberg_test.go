package integration

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// TestEngineSparkIceberg runs Spark (pyspark in local mode, with Iceberg's
// Spark runtime and AWS bundle from the engines cache) against `cairn
// serve --drives 4 --parity 2` on loopback: two Iceberg catalogs on
// cairn's REST catalog at /iceberg, one signing with SigV4 (signing name
// s3), one with OAuth2 client credentials, and S3FileIO on the S3 face,
// configured as docs/engines.md says. One Spark session per phase:
//
//  1. Object backing (integration/engines/spark/iceberg_object_phase.py):
//     a partitioned table with copy-on-write row changes; INSERT, UPDATE,
//     DELETE, MERGE INTO; a column added and one renamed; time travel by
//     snapshot id and by timestamp; a view; a second table; CALL
//     expire_snapshots and remove_orphan_files (an orphan put over S3).
//  2. The cutover through the mount: `echo materialize >
//     <mount>/.cairn/catalog/<wh>/migration`, then a restart with
//     CAIRN_TABLE_CATALOG_BACKING=durable-strong.
//  3. Durable-strong (iceberg_strong_phase.py): the same tables, snapshots,
//     rows and view; an INSERT and a MERGE INTO make new snapshots.
//  4. Trino, when installed (integration/engines/trino): its Iceberg
//     connector reads the table Spark wrote and INSERTs into it, and
//     iceberg-go reads every row back.
//
// The scripts compare each read, row by row, with what they wrote; this
// test compares their reports across the cutover.
func TestEngineSparkIceberg(t *testing.T) {
	eng := requireEngines(t)
	started := time.Now()
	wh := icebergWarehouse // the warehouse openSigV4Catalog opens, for the Trino step
	lake := startEngineLake(t, wh)
	srv, mnt := lake.srv, lake.mnt
	state := filepath.Join(t.TempDir(), "state.json")

	var before siObjectReport
	siRunPhase(t, eng, srv, "iceberg_object_phase.py", wh, state, &before)
	wantWrites := []string{"insert", "insert", "update", "delete", "merge", "insert"}
	wantOps := []string{"append", "append", "overwrite", "overwrite", "overwrite", "append"}
	if !slices.Equal(before.Operations, wantWrites) || !slices.Equal(siOperations(before.AllSnapshots), wantOps) {
		t.Fatalf("object phase: writes %v made snapshots %v; want %v making %v", before.Operations, siOperations(before.AllSnapshots), wantWrites, wantOps)
	}
	n := len(before.AllSnapshots)
	if !reflect.DeepEqual(before.Snapshots, before.AllSnapshots[n-3:]) || before.Expired["deleted_manifest_lists_count"] != n-3 || before.Expired["deleted_data_files_count"] == 0 {
		t.Fatalf("expire_snapshots (retain_last 3): %v left of %v, %v", before.Snapshots, before.AllSnapshots, before.Expired)
	}
	// 26 orders written, 4 deleted (ids 5, 10, 15, 20) and 1 merged away.
	if before.UUID == "" || len(before.Rows) != 21 || len(before.FirstRows) != 12 || before.Events != 200 || len(before.ViewRows) == 0 {
		t.Fatalf("object phase report: uuid %q, %d rows (want 21), %d in the first snapshot (want 12), %d events (want 200), %d view rows",
			before.UUID, len(before.Rows), len(before.FirstRows), before.Events, len(before.ViewRows))
	}
	// The orphan remove_orphan_files removed is gone from both faces.
	bucket, key := s3URL(t, before.Orphan)
	_, err := sdkClient(srv, s3User, s3Secret).HeadObject(callCtx(t), &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	wantAPIError(t, "HeadObject of the removed orphan", err, "NotFound", 404)
	if _, err := os.Stat(filepath.Join(mnt, bucket, key)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the removed orphan on the mount: %v, want it gone", err)
	}

	// The cutover, as an operator runs it on the mount.
	if m := lake.cutover(t, 1, 2); m.ViewCount != 1 {
		t.Fatalf("materialize: %+v; want the view materialized too", m)
	}
	srv = lake.srv

	var after siStrongReport
	siRunPhase(t, eng, srv, "iceberg_strong_phase.py", wh, state, &after)
	k := len(before.Snapshots)
	if after.UUID != before.UUID {
		t.Errorf("durable-strong: table uuid %s, want the object phase's %s", after.UUID, before.UUID)
	}
	if len(after.Snapshots) != k+2 || !reflect.DeepEqual(after.Snapshots[:k], before.Snapshots) {
		t.Errorf("durable-strong: snapshots %v; want the object phase's %v and 2 more", after.Snapshots, before.Snapshots)
	} else if got := siOperations(after.Snapshots[k:]); !slices.Equal(got, []string{"append", "overwrite"}) {
		t.Errorf("durable-strong: new snapshot operations %v, want append (INSERT), overwrite (MERGE)", got)
	}
	if len(after.Rows) != len(before.Rows)+5 || len(after.ViewRows) <= len(before.ViewRows) {
		t.Errorf("durable-strong: %d rows and %d in the view; want %d (4 inserted, 1 merged in) and more than %d",
			len(after.Rows), len(after.ViewRows), len(before.Rows)+5, len(before.ViewRows))
	}
	if t.Failed() {
		t.FailNow()
	}

	t.Run("Trino", func(t *testing.T) {
		in := requireTrino(t)
		tr := startTrino(t, in, srv, wh,
			trinoCatalog{name: "iceberg", security: "SIGV4"},
			trinoCatalog{name: "iceberg_oauth", security: "OAUTH2"})
		t.Logf("Trino started in %v", tr.startup.Round(time.Millisecond))
		trinoReadsAndAppends(t, tr, openSigV4Catalog(t, srv), table.Identifier{"shop", "events"}, makeRows(1, before.Events, "spark"))
	})
	t.Logf("TestEngineSparkIceberg wall time: %v", time.Since(started).Round(time.Millisecond))
}
