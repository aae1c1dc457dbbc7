package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	icecatalog "github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/view"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/cairnstore/cairn/catalog"
)

// TestCatalogRunbook walks docs/operations/cutover-runbook.md end to end
// on the real binary: two warehouses (lake, pond) with Iceberg tables,
// Parquet data and a view are moved from the object backing to the
// durable-strong backing the way an operator would, with
// `cairn admin catalog ...` and the mount's control files; then the
// snapshot format is rolled from v1 to v2 behind its two gates, and a
// durable-strong backup is restored. Each "runbook step" log line names
// the runbook section it exercises (its number, or its title).
//
// Servers (each a fresh `cairn serve` on the same data directory):
//
//	A   object backing                      set up the warehouses, capture the baseline
//	B   object backing, failpoint, mount    seed a staged commit, preflight, recovery,
//	                                        materialize (CLI and control file), cancel
//	C   durable-strong, mount               switch and validate
//	C'  object backing                      rollback rehearsal: cancel refused, nothing changes
//	C'' durable-strong                      back, registry writes again
//	D   durable-strong, V2 gate only        a commit keeps format 1
//	E   durable-strong, both V2 gates       a commit writes format 2
//	F   durable-strong, gates unset         format 2 stays; backup and restore
//
// Without FUSE (not root, no /dev/fuse) the servers run without the mount
// and pond is materialized with the CLI instead.
func TestCatalogRunbook(t *testing.T) {
	rbTakeEnv(t)
	started := time.Now()
	step := func(format string, args ...any) {
		t.Logf("==== runbook step %s (%.1fs)", fmt.Sprintf(format, args...), time.Since(started).Seconds())
	}
	data := t.TempDir()
	mnt := ""
	if ok, why := rbFUSEUsable(); ok {
		mnt = t.TempDir()
	} else {
		t.Logf("no mount here (%s): step 3 materializes pond with the CLI instead of the control file", why)
	}

	const (
		ns        = "sales"
		tableName = "orders"
		viewName  = "orders_recent"
	)
	whs := []string{"lake", "pond"}
	tableIdent := icecatalog.ToIdentifier(ns, tableName)
	viewIdent := icecatalog.ToIdentifier(ns, viewName)
	lakePath, pondPath := rbTablePath("lake", ns, tableName), rbTablePath("pond", ns, tableName)

	// want is each warehouse's table as the runbook expects to find it:
	// the baseline, then every change the test makes on purpose.
	want := map[string]rbTableState{}
	rowsLake := [][]eventRow{makeRows(1, 300, "lake"), makeRows(301, 200, "lake")}
	rowsPond := [][]eventRow{makeRows(1, 250, "pond")}

	// ------------------------------------------------------------------
	step("setup (server A, object backing): table buckets lake and pond, a namespace, a table with Parquet rows, a view, an idempotent commit")
	s := rbStart(t, data, nil, "")
	for _, wh := range whs {
		if r := runCairn(t, rbCLITimeout, "admin", "table-bucket", "create", wh, "--endpoint", s.url("")); r.code != 0 {
			t.Fatalf("cairn admin table-bucket create %s: exit %d\n%s%s", wh, r.code, r.stdout, r.stderr)
		}
	}
	for _, wh := range whs {
		cat := rbCatalog(t, s, wh)
		if err := cat.CreateNamespace(icebergCtx(t), icecatalog.ToIdentifier(ns), iceberg.Properties{"owner": "runbook"}); err != nil {
			t.Fatalf("%s: CreateNamespace: %v", wh, err)
		}
		tbl, err := cat.CreateTable(icebergCtx(t), tableIdent, eventSchema)
		if err != nil {
			t.Fatalf("%s: CreateTable: %v", wh, err)
		}
		if !strings.HasPrefix(tbl.Location(), "s3://"+wh+"/") {
			t.Fatalf("%s: table location %s is not in its table bucket", wh, tbl.Location())
		}
		batches := rowsLake
		if wh == "pond" {
			batches = rowsPond
		}
		for i, rows := range batches {
			if tbl, err = rbAppend(t, tbl, rows); err != nil {
				t.Fatalf("%s: append %d: %v", wh, i+1, err)
			}
		}
		if wh == "lake" {
			viewSchema := iceberg.NewSchema(0,
				iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
				iceberg.NestedField{ID: 2, Name: "name", Type: iceberg.PrimitiveTypes.String})
			version, err := view.NewVersionFromSQL(1, 0, "SELECT id, name FROM sales.orders WHERE day > 19100", icecatalog.ToIdentifier(ns))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := cat.CreateView(icebergCtx(t), viewIdent, version, viewSchema); err != nil {
				t.Fatalf("lake: CreateView: %v", err)
			}
		}
	}
	// One commit with an Idempotency-Key; its answer is what a retry of
	// the same request must get back, before and after the cutover.
	tok := rbToken(t, s)
	lakeUUID := rbLoadTable(t, rbCatalog(t, s, "lake"), tableIdent).Metadata().TableUUID().String()
	idemKey := fmt.Sprintf("runbook-%d", time.Now().UnixNano())
	idemHdr := map[string]string{"Idempotency-Key": idemKey}
	idemBody := rbPropsCommit(lakeUUID, "runbook.idempotent", "yes")
	res := rbHTTP(t, s, tok, http.MethodPost, lakePath, idemBody, idemHdr)
	if res.status != http.StatusOK {
		t.Fatalf("idempotent commit: %d %s", res.status, res.body)
	}
	idemAnswer := res.body
	var idemTable restTable
	if err := json.Unmarshal(idemAnswer, &idemTable); err != nil || idemTable.MetadataLocation == "" {
		t.Fatalf("idempotent commit answer: %v\n%s", err, idemAnswer)
	}
	if res = rbHTTP(t, s, tok, http.MethodPost, lakePath, idemBody, idemHdr); res.status != http.StatusOK || !bytes.Equal(res.body, idemAnswer) {
		t.Fatalf("idempotent commit retried at once: %d, same answer %v; want 200 and the same answer", res.status, bytes.Equal(res.body, idemAnswer))
	}

	// ------------------------------------------------------------------
	step("1: capture the baseline (tables, view, status of each warehouse)")
	var lakeViewLoc string
	for _, wh := range whs {
		cat := rbCatalog(t, s, wh)
		tbl := rbLoadTable(t, cat, tableIdent)
		want[wh] = rbCapture(t, tbl)
		n := 0
		for _, rows := range map[string][][]eventRow{"lake": rowsLake, "pond": rowsPond}[wh] {
			n += len(rows)
		}
		if len(want[wh].rows) != n {
			t.Fatalf("%s baseline: %d rows scanned, want %d", wh, len(want[wh].rows), n)
		}
		if wh == "lake" {
			if want[wh].metadataLocation != idemTable.MetadataLocation || tbl.Properties()["runbook.idempotent"] != "yes" {
				t.Fatalf("lake baseline: metadata-location %s (the idempotent commit answered %s), properties %v",
					want[wh].metadataLocation, idemTable.MetadataLocation, tbl.Properties())
			}
			v, err := cat.LoadView(icebergCtx(t), viewIdent)
			if err != nil {
				t.Fatalf("lake: LoadView: %v", err)
			}
			lakeViewLoc = v.MetadataLocation()
		}
		t.Logf("baseline %s: metadata-location %s, snapshot %d, %d rows", wh, want[wh].metadataLocation, want[wh].snapshotID, len(want[wh].rows))

		st := rbStatus(t, s, wh)
		views := map[string]int{"lake": 1, "pond": 0}[wh]
		if st.Backing != catalog.BackingObject || !st.Served || st.NamespaceCount != 1 || st.TableCount != 1 || st.ViewCount != views ||
			st.StagedCommits != 0 || st.Fence != nil || st.SnapshotFormat != 0 {
			t.Fatalf("%s baseline status: %+v; want backing object, served, 1 namespace, 1 table, %d views, none staged, no fence, no durable-strong snapshot", wh, st, views)
		}
		// The CLI prints what GET .../catalog/status answers.
		var raw catalog.Status
		icebergJSON(t, s.server, tok, http.MethodGet, "/iceberg/v1/"+wh+"/catalog/status", "", http.StatusOK, &raw)
		if !reflect.DeepEqual(raw, st) {
			t.Fatalf("%s: GET .../catalog/status answered %+v, the CLI printed %+v", wh, raw, st)
		}
	}
	rbStop(t, s)

	// ------------------------------------------------------------------
	step("2: preflight and recovery (server B: object backing, mount, failpoint catalog.before-pointer-flip=error-once)")
	s = rbStart(t, data, map[string]string{"CAIRN_FAILPOINTS": "catalog.before-pointer-flip=error-once"}, mnt)
	tok = rbToken(t, s)
	// The first commit of this process stops after recording its staged
	// commit: a client sees CommitStateUnknown, the catalog keeps a
	// staged record, the pointer does not move.
	res = rbHTTP(t, s, tok, http.MethodPost, lakePath, rbPropsCommit(lakeUUID, "runbook.seeded", "yes"), nil)
	rbWantError(t, "the commit stopped before its pointer flip", res, http.StatusInternalServerError, "CommitStateUnknownException")
	if tbl := rbLoadTable(t, rbCatalog(t, s, "lake"), tableIdent); tbl.MetadataLocation() != want["lake"].metadataLocation || tbl.Properties()["runbook.seeded"] != "" {
		t.Fatalf("lake after the stopped commit: %s %v, want the baseline %s without runbook.seeded", tbl.MetadataLocation(), tbl.Properties(), want["lake"].metadataLocation)
	}
	if st := rbStatus(t, s, "lake"); st.StagedCommits != 1 {
		t.Fatalf("lake status after the stopped commit: %d staged commits, want 1", st.StagedCommits)
	}

	p := rbPreflight(t, s, "lake")
	if p.Status != catalog.StatusRecoveryRequired || !slices.Contains(p.Blockers, "COMMIT_RECOVERY_REQUIRED") ||
		!slices.Contains(p.RecommendedActions, "RUN_CATALOG_RECOVERY") || p.ObjectBackedWritesFenced || p.ReadyToEnableDurableStrong || p.Fence != nil {
		t.Fatalf("lake preflight with a staged commit: %+v; want RECOVERY_REQUIRED, blocker COMMIT_RECOVERY_REQUIRED, action RUN_CATALOG_RECOVERY, not fenced, not ready", p)
	}
	wantRollBack := func(what string, items []catalog.RecoveryItem) {
		t.Helper()
		c := rbCommitItems(items)
		if len(c) != 1 || c[0].Ident == nil || c[0].Ident.String() != ns+"."+tableName || c[0].Action != catalog.RecoverRollBack {
			t.Fatalf("%s: commit findings %+v; want one ROLL_BACK of %s.%s", what, c, ns, tableName)
		}
	}
	if p.Recovery == nil {
		t.Fatal("lake preflight lists no recovery findings")
	}
	wantRollBack("lake preflight", p.Recovery.Repaired)
	// The readable form says the same.
	if r := rbCLI(t, s, false, "migration", "preflight", "lake"); r.code != 0 || !strings.Contains(r.stdout, "RECOVERY_REQUIRED") ||
		!strings.Contains(r.stdout, "COMMIT_RECOVERY_REQUIRED") || !strings.Contains(r.stdout, "ROLL_BACK") {
		t.Fatalf("readable preflight: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	var rep catalog.RecoveryReport
	rbCLIJSON(t, s, &rep, "recover", "lake", "--dry-run")
	if !rep.DryRun || rep.TableBucket != "lake" {
		t.Fatalf("recover --dry-run: %+v", rep)
	}
	wantRollBack("recover --dry-run", rep.Repaired)
	// Materialize is refused while recovery is required, over HTTP and
	// with the CLI, and leaves no fence.
	res = rbHTTP(t, s, tok, http.MethodPost, "/iceberg/v1/lake/catalog/migration", nil, nil)
	rbWantError(t, "POST .../catalog/migration with a staged commit", res, http.StatusConflict, "CommitFailedException", "RECOVERY_REQUIRED", "COMMIT_RECOVERY_REQUIRED")
	rbCLIFail(t, s, []string{"409 CommitFailedException", "COMMIT_RECOVERY_REQUIRED"}, "migration", "materialize", "lake")
	if p = rbPreflight(t, s, "lake"); p.Status != catalog.StatusRecoveryRequired || p.Fence != nil || p.ObjectBackedWritesFenced {
		t.Fatalf("lake preflight after the refused materialize: %s, fence %+v; want RECOVERY_REQUIRED and no fence", p.Status, p.Fence)
	}

	rbCLIJSON(t, s, &rep, "recover", "lake")
	if rep.DryRun {
		t.Fatalf("recover: %+v, want a repair run", rep)
	}
	wantRollBack("recover", rep.Repaired)
	p = rbPreflight(t, s, "lake")
	if p.Status != catalog.StatusReadyToSnapshot || len(p.Blockers) != 0 || !p.WarehouseIndexReady || p.Fence != nil ||
		!slices.Equal(p.RecommendedActions, []string{catalog.ActionSnapshot, catalog.ActionKeepRollbackConfig}) ||
		p.Recovery == nil || len(rbCommitItems(p.Recovery.Repaired)) != 0 || len(p.Recovery.ManualReview) != 0 {
		t.Fatalf("lake preflight after recovery: %+v; want READY_TO_SNAPSHOT, no blockers, actions [%s %s], nothing to recover", p, catalog.ActionSnapshot, catalog.ActionKeepRollbackConfig)
	}
	if p.TableCount != 1 || p.ViewCount != 1 || p.NamespaceCount != 1 || p.IdempotencyIndexCount < 1 {
		t.Fatalf("lake preflight counts: %+v; want 1 namespace, 1 table, 1 view, the idempotency record", p)
	}
	if st := rbStatus(t, s, "lake"); st.StagedCommits != 0 {
		t.Fatalf("lake status after recovery: %d staged commits", st.StagedCommits)
	}
	rbWantState(t, "lake after recovery (the stopped commit rolled back)", rbLoadTable(t, rbCatalog(t, s, "lake"), tableIdent), want["lake"])
	if p = rbPreflight(t, s, "pond"); p.Status != catalog.StatusReadyToSnapshot || len(p.Blockers) != 0 {
		t.Fatalf("pond preflight: %s %v, want READY_TO_SNAPSHOT without blockers", p.Status, p.Blockers)
	}

	// ------------------------------------------------------------------
	step("3a: materialize lake with the CLI (POST .../catalog/migration)")
	var mLake catalog.MaterializeResult
	rbCLIJSON(t, s, &mLake, "migration", "materialize", "lake")
	if mLake.Status != catalog.StatusSnapshotMaterialized || mLake.MigrationID == "" || !rbIsHex64(mLake.SourceFingerprint) ||
		mLake.TargetSnapshotETag == "" || !mLake.ObjectBackedWritesFenced || mLake.ReadyToEnableDurableStrong ||
		mLake.TableCount != 1 || mLake.ViewCount != 1 || mLake.NamespaceCount != 1 || mLake.IdempotencyIndexCount < 1 {
		t.Fatalf("materialize lake: %+v; want SNAPSHOT_MATERIALIZED, a migration id, a fingerprint and ETag, fenced, not yet ready (pond is not done), the counts", mLake)
	}
	lakeMig := mLake.MigrationID
	// A retry is safe and changes nothing.
	var again catalog.MaterializeResult
	rbCLIJSON(t, s, &again, "migration", "materialize", "lake")
	if again.Status != catalog.StatusAlreadyMaterialized || again.MigrationID != lakeMig || again.SourceFingerprint != mLake.SourceFingerprint || again.TargetSnapshotETag != mLake.TargetSnapshotETag {
		t.Fatalf("materialize lake again: %+v; want SNAPSHOT_ALREADY_MATERIALIZED with the same id, fingerprint and ETag", again)
	}
	p = rbPreflight(t, s, "lake")
	if p.Status != catalog.StatusSnapshotMaterialized || !p.ObjectBackedWritesFenced || p.ReadyToEnableDurableStrong ||
		p.Fence == nil || p.Fence.Status != catalog.FenceStatusMaterialized || p.Fence.MigrationID != lakeMig ||
		p.Fence.SourceFingerprint == nil || *p.Fence.SourceFingerprint != mLake.SourceFingerprint ||
		p.Fence.TargetSnapshotETag == nil || *p.Fence.TargetSnapshotETag != mLake.TargetSnapshotETag ||
		!slices.Contains(p.RecommendedActions, catalog.ActionVerifySnapshot) || !slices.Contains(p.RecommendedActions, catalog.ActionSnapshotRemaining) ||
		slices.Contains(p.RecommendedActions, catalog.ActionEnableDurableStrong) {
		t.Fatalf("lake preflight after materialize: %+v; want SNAPSHOT_MATERIALIZED, fenced by %s, not ready, SNAPSHOT_REMAINING_TABLE_BUCKETS", p, lakeMig)
	}
	if b := rbBucket(t, p, "lake"); b.Fence != catalog.FenceStatusMaterialized || !b.Ready || b.SourceFingerprint != mLake.SourceFingerprint || b.TargetFingerprint != b.SourceFingerprint {
		t.Fatalf("preflight bucket line of lake: %+v", b)
	}
	if b := rbBucket(t, p, "pond"); b.Fence != catalog.BucketStatusNotMigrated || b.Ready {
		t.Fatalf("preflight bucket line of pond: %+v, want NOT_MIGRATED", b)
	}
	if st := rbStatus(t, s, "lake"); st.Backing != catalog.BackingObject || st.Fence == nil || st.Fence.MigrationID != lakeMig || st.SnapshotFormat != 1 || st.SnapshotETag != mLake.TargetSnapshotETag {
		t.Fatalf("lake status after materialize: %+v; want backing object, fence %s, a format-1 target snapshot with ETag %s", st, lakeMig, mLake.TargetSnapshotETag)
	}

	// Object-backed writes to lake are refused, naming the migration;
	// reads go on.
	lakeCat := rbCatalog(t, s, "lake")
	lakeTbl := rbLoadTable(t, lakeCat, tableIdent)
	_, err := rbAppend(t, lakeTbl, makeRows(9001, 10, "fenced"))
	rbWantCommitFailed(t, "iceberg-go append to the fenced lake", err, lakeMig)
	res = rbHTTP(t, s, tok, http.MethodPost, lakePath, rbPropsCommit(lakeUUID, "runbook.fenced", "yes"), nil)
	rbWantError(t, "raw commit to the fenced lake", res, http.StatusConflict, "CommitFailedException", lakeMig)
	rbWantState(t, "lake while fenced", rbLoadTable(t, lakeCat, tableIdent), want["lake"])
	// pond is not fenced.
	pondCat := rbCatalog(t, s, "pond")
	rowsPond = append(rowsPond, makeRows(251, 40, "pond"))
	pondTbl, err := rbAppend(t, rbLoadTable(t, pondCat, tableIdent), rowsPond[1])
	if err != nil {
		t.Fatalf("append to pond while lake is fenced: %v", err)
	}
	want["pond"] = rbCapture(t, pondTbl)
	wantRows(t, "pond after its append", want["pond"].rows, sortedRows(rowsPond...))
	// The warehouse registry is fenced: no new table bucket.
	res = rbHTTP(t, s, tok, http.MethodPut, "/_cairn/admin/v1/table-buckets/creek", nil, nil)
	if res.status != http.StatusConflict || !bytes.Contains(res.body, []byte("fenced")) || !bytes.Contains(res.body, []byte(lakeMig)) {
		t.Fatalf("PUT /_cairn/admin/v1/table-buckets/creek during the cutover: %d %s; want 409 naming the fence and %s", res.status, res.body, lakeMig)
	}
	if r := runCairn(t, rbCLITimeout, "admin", "table-bucket", "create", "creek", "--endpoint", s.url("")); r.code == 0 || !strings.Contains(r.stderr, "fenced") {
		t.Fatalf("cairn admin table-bucket create during the cutover: exit %d\n%s%s; want a failure naming the fence", r.code, r.stdout, r.stderr)
	}

	// ------------------------------------------------------------------
	step("3b / cancel and rollback, before the switch: on pond, nothing to cancel; materialize; cancel releases the fence and drops the new target")
	var c catalog.CancelResult
	rbCLIJSON(t, s, &c, "migration", "cancel", "pond")
	if c.Status != catalog.StatusNoMigrationFence || c.ObjectBackedWritesFenced || c.TargetRemoved || c.RegistryFenceReleased {
		t.Fatalf("cancel pond without a fence: %+v; want NO_MIGRATION_FENCE, nothing removed, the registry fence kept (lake holds one)", c)
	}
	var mPond catalog.MaterializeResult
	rbCLIJSON(t, s, &mPond, "migration", "materialize", "pond")
	if mPond.Status != catalog.StatusSnapshotMaterialized || !mPond.ReadyToEnableDurableStrong || mPond.MigrationID != lakeMig {
		t.Fatalf("materialize pond: %+v; want SNAPSHOT_MATERIALIZED, ready (both warehouses done), migration %s", mPond, lakeMig)
	}
	rbCLIJSON(t, s, &c, "migration", "cancel", "pond")
	if c.Status != catalog.StatusFenceReleased || c.MigrationID != lakeMig || !c.TargetRemoved || c.RegistryFenceReleased || c.ObjectBackedWritesFenced {
		t.Fatalf("cancel pond: %+v; want FENCE_RELEASED of %s, target removed, registry fence kept (lake holds one), not fenced", c, lakeMig)
	}
	p = rbPreflight(t, s, "pond")
	if p.Status != catalog.StatusReadyToSnapshot || p.Fence != nil || p.ObjectBackedWritesFenced || p.ReadyToEnableDurableStrong || rbBucket(t, p, "pond").Fence != catalog.BucketStatusNotMigrated {
		t.Fatalf("pond preflight after cancel: %+v; want READY_TO_SNAPSHOT, no fence", p)
	}
	if st := rbStatus(t, s, "pond"); st.SnapshotFormat != 0 || st.SnapshotETag != "" || st.Fence != nil {
		t.Fatalf("pond status after cancel: %+v; want no durable-strong snapshot and no fence", st)
	}
	rowsPond = append(rowsPond, makeRows(291, 30, "pond"))
	if pondTbl, err = rbAppend(t, rbLoadTable(t, pondCat, tableIdent), rowsPond[2]); err != nil {
		t.Fatalf("append to pond after the cancel: %v", err)
	}
	want["pond"] = rbCapture(t, pondTbl)
	wantRows(t, "pond after the cancel and an append", want["pond"].rows, sortedRows(rowsPond...))
	if p = rbPreflight(t, s, "lake"); p.Status != catalog.StatusSnapshotMaterialized || p.ReadyToEnableDurableStrong {
		t.Fatalf("lake preflight after pond's cancel: %s, ready %v; want SNAPSHOT_MATERIALIZED, not ready", p.Status, p.ReadyToEnableDurableStrong)
	}

	// ------------------------------------------------------------------
	if mnt != "" {
		step("3c: materialize pond through the mount's control file")
		migFile := rbControlPath(mnt, "pond", "migration")
		lastFile := rbControlPath(mnt, "pond", "last-result")
		var pre catalog.Preflight
		rbReadJSON(t, migFile, &pre)
		if pre.TableBucket != "pond" || pre.Status != catalog.StatusReadyToSnapshot {
			t.Fatalf("%s before: %+v, want pond READY_TO_SNAPSHOT", migFile, pre)
		}
		err := rbWriteWord(migFile, "frobnicate")
		if rbErrno(err) != syscall.EINVAL {
			t.Fatalf("echo frobnicate > %s: %v, want EINVAL", migFile, err)
		}
		var out rbMigrationOutcome
		rbReadJSON(t, lastFile, &out)
		if out.State != "failed" || out.Error == "" {
			t.Fatalf("%s after an unknown word: %+v, want state failed with the reason", lastFile, out)
		}
		if err := rbWriteWord(migFile, "materialize"); err != nil {
			t.Fatalf("echo materialize > %s: %v", migFile, err)
		}
		raw := rbReadJSON(t, lastFile, &out)
		if out.State != "succeeded" || out.Word != "materialize" || out.Result == nil || out.Result.Materialize == nil {
			t.Fatalf("%s: %s; want state succeeded with the materialize result", lastFile, raw)
		}
		mPond = *out.Result.Materialize
		t.Logf("echo materialize > %s; cat %s:\n%s", migFile, lastFile, raw)
		// `cat` the control file, as the runbook says.
		text := fsMust(t, "cat", migFile)
		if err := json.Unmarshal([]byte(text), &pre); err != nil {
			t.Fatalf("cat %s: %v\n%s", migFile, err, text)
		}
		if pre.Status != catalog.StatusSnapshotMaterialized || !pre.ReadyToEnableDurableStrong || !pre.ObjectBackedWritesFenced ||
			!slices.Contains(pre.RecommendedActions, catalog.ActionEnableDurableStrong) {
			t.Fatalf("cat %s after materialize: %+v; want SNAPSHOT_MATERIALIZED, ready_to_enable_durable_strong, ENABLE_DURABLE_STRONG_BACKING", migFile, pre)
		}
		var st catalog.Status
		rbReadJSON(t, rbControlPath(mnt, "pond", "status"), &st)
		if st.Fence == nil || st.Fence.Status != catalog.FenceStatusMaterialized || st.SnapshotFormat != 1 {
			t.Fatalf("pond status file after materialize: %+v", st)
		}
	} else {
		step("3c: materialize pond with the CLI (no mount here)")
		rbCLIJSON(t, s, &mPond, "migration", "materialize", "pond")
	}
	if mPond.Status != catalog.StatusSnapshotMaterialized || !mPond.ReadyToEnableDurableStrong || !mPond.ObjectBackedWritesFenced || mPond.TableCount != 1 || mPond.ViewCount != 0 {
		t.Fatalf("materialize pond: %+v; want SNAPSHOT_MATERIALIZED, ready_to_enable_durable_strong, fenced, 1 table, no view", mPond)
	}
	res = rbHTTP(t, s, tok, http.MethodPost, pondPath, rbPropsCommit(rbLoadTable(t, pondCat, tableIdent).Metadata().TableUUID().String(), "runbook.fenced", "yes"), nil)
	rbWantError(t, "raw commit to the fenced pond", res, http.StatusConflict, "CommitFailedException", mPond.MigrationID)

	// ------------------------------------------------------------------
	step("4: verify: every warehouse's preflight says ready_to_enable_durable_strong")
	for _, wh := range whs {
		p = rbPreflight(t, s, wh)
		if p.Status != catalog.StatusSnapshotMaterialized || !p.ReadyToEnableDurableStrong || len(p.Blockers) != 0 ||
			!slices.Contains(p.RecommendedActions, catalog.ActionEnableDurableStrong) || !slices.Contains(p.RecommendedActions, catalog.ActionKeepRollbackConfig) {
			t.Fatalf("%s preflight before the switch: %+v; want SNAPSHOT_MATERIALIZED, ready, ENABLE_DURABLE_STRONG_BACKING", wh, p)
		}
		for _, b := range p.Buckets {
			if !b.Ready {
				t.Fatalf("%s preflight: bucket %+v not ready", wh, b)
			}
		}
	}
	rbStop(t, s)

	// ------------------------------------------------------------------
	step("5: switch: restart with CAIRN_TABLE_CATALOG_BACKING=durable-strong (server C)")
	strongEnv := map[string]string{"CAIRN_TABLE_CATALOG_BACKING": catalog.BackingDurableStrong}
	s = rbStart(t, data, strongEnv, mnt)
	tok = rbToken(t, s)

	step("6: validate")
	var buckets struct {
		TableBuckets []catalog.Warehouse `json:"table_buckets"`
	}
	icebergJSON(t, s.server, tok, http.MethodGet, "/_cairn/admin/v1/table-buckets", "", http.StatusOK, &buckets)
	var names []string
	for _, b := range buckets.TableBuckets {
		names = append(names, b.Name)
	}
	if !slices.Equal(names, whs) {
		t.Fatalf("table buckets after the switch: %v, want %v", names, whs)
	}
	for _, wh := range whs {
		cat := rbCatalog(t, s, wh)
		props, err := cat.LoadNamespaceProperties(icebergCtx(t), icecatalog.ToIdentifier(ns))
		if err != nil || props["owner"] != "runbook" {
			t.Fatalf("%s namespace after the switch: %v, %v", wh, props, err)
		}
		rbWantState(t, wh+" after the switch", rbLoadTable(t, cat, tableIdent), want[wh])
		st := rbStatus(t, s, wh)
		if st.Backing != catalog.BackingDurableStrong || !st.Served || st.SnapshotFormat != 1 || st.SnapshotHighWater != 1 || st.SnapshotETag == "" || st.TableCount != 1 {
			t.Fatalf("%s status after the switch: %+v; want backing durable-strong, served, snapshot_format 1", wh, st)
		}
	}
	lakeCat = rbCatalog(t, s, "lake")
	v, err := lakeCat.LoadView(icebergCtx(t), viewIdent)
	if err != nil || v.MetadataLocation() != lakeViewLoc {
		t.Fatalf("lake view after the switch: %v (metadata-location %v), want %s", err, v, lakeViewLoc)
	}
	// The idempotent commit replays: same answer, no new metadata version.
	lakeTbl = rbLoadTable(t, lakeCat, tableIdent)
	logBefore := len(slices.Collect(lakeTbl.Metadata().PreviousFiles()))
	res = rbHTTP(t, s, tok, http.MethodPost, lakePath, idemBody, idemHdr)
	if res.status != http.StatusOK || !bytes.Equal(res.body, idemAnswer) {
		t.Fatalf("the idempotent commit retried after the switch: %d %s; want 200 and the answer of before the cutover", res.status, res.body)
	}
	lakeTbl = rbLoadTable(t, lakeCat, tableIdent)
	if lakeTbl.MetadataLocation() != want["lake"].metadataLocation || len(slices.Collect(lakeTbl.Metadata().PreviousFiles())) != logBefore {
		t.Fatalf("lake after the replay: %s (metadata-log %d entries, was %d); want %s unchanged",
			lakeTbl.MetadataLocation(), len(slices.Collect(lakeTbl.Metadata().PreviousFiles())), logBefore, want["lake"].metadataLocation)
	}
	// The data plane: a Parquet data file of lake over the S3 face.
	rbWantParquet(t, s, lakeTbl.Location())
	// New commits land and read back.
	beforeSwitch := want["lake"]
	rowsLake = append(rowsLake, makeRows(501, 60, "lake"))
	appended, err := rbAppend(t, lakeTbl, rowsLake[2])
	if err != nil {
		t.Fatalf("append to lake after the switch: %v", err)
	}
	if lakeTbl = rbLoadTable(t, lakeCat, tableIdent); lakeTbl.MetadataLocation() != appended.MetadataLocation() {
		t.Fatalf("lake after the append: metadata-location %s, the append committed %s", lakeTbl.MetadataLocation(), appended.MetadataLocation())
	}
	want["lake"] = rbCapture(t, lakeTbl)
	wantRows(t, "lake after an append on durable-strong", want["lake"].rows, sortedRows(rowsLake...))
	// Migration is served by an object-backed server only.
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodDelete} {
		res = rbHTTP(t, s, tok, m, "/iceberg/v1/lake/catalog/migration", nil, nil)
		rbWantError(t, m+" .../catalog/migration on durable-strong", res, http.StatusBadRequest, "BadRequestException", "object-backed")
	}
	res = rbHTTP(t, s, tok, http.MethodGet, "/_iceberg/v1/lake/catalog/migration", nil, nil)
	rbWantError(t, "GET /_iceberg/v1/.../catalog/migration on durable-strong", res, http.StatusBadRequest, "BadRequestException", "object-backed")
	rbCLIFail(t, s, []string{"400 BadRequestException"}, "migration", "preflight", "lake")
	if mnt != "" {
		// The control file says so too, and takes no word.
		migFile := rbControlPath(mnt, "lake", "migration")
		var doc struct {
			TableBucket string `json:"table_bucket"`
			Backing     string `json:"backing"`
			Message     string `json:"message"`
		}
		rbReadJSON(t, migFile, &doc)
		if doc.TableBucket != "lake" || doc.Backing != catalog.BackingDurableStrong || !strings.Contains(doc.Message, "object-backed") {
			t.Fatalf("%s on durable-strong: %+v", migFile, doc)
		}
		if err := rbWriteWord(migFile, "materialize"); rbErrno(err) != syscall.EPERM {
			t.Fatalf("echo materialize > %s on durable-strong: %v, want EPERM", migFile, err)
		}
		var st catalog.Status
		rbReadJSON(t, rbControlPath(mnt, "lake", "status"), &st)
		if st.Backing != catalog.BackingDurableStrong || st.SnapshotFormat != 1 {
			t.Fatalf("lake status file on durable-strong: %+v", st)
		}
	}
	if err := rbRecoveryClean(t, s, "lake"); err != "" {
		t.Fatal(err)
	}
	rbStop(t, s)

	// ------------------------------------------------------------------
	step("6b / cancel and rollback, after a durable-strong write: back on the object backing, cancel is refused and nothing changes")
	s = rbStart(t, data, nil, "")
	tok = rbToken(t, s)
	p = rbPreflight(t, s, "lake")
	if p.Status != catalog.StatusManualReviewRequired || !slices.Contains(p.Blockers, catalog.BlockerSnapshotChanged) ||
		!slices.Contains(p.RecommendedActions, catalog.ActionReviewSnapshot) || p.ReadyToEnableDurableStrong || !p.ObjectBackedWritesFenced {
		t.Fatalf("lake preflight on the object backing after a durable-strong commit: %+v; want MANUAL_REVIEW_REQUIRED, DURABLE_STRONG_SNAPSHOT_CHANGED, still fenced", p)
	}
	if b := rbBucket(t, p, "lake"); b.Ready || b.TargetFingerprint == "" || b.TargetFingerprint == b.SourceFingerprint {
		t.Fatalf("lake bucket line after a durable-strong commit: %+v; want not ready, the target's fingerprint moved", b)
	}
	rbCLIFail(t, s, []string{"409 CommitFailedException", "advanced after migration " + lakeMig}, "migration", "cancel", "lake")
	// The object backing still has the catalog of before the switch, and
	// keeps refusing writes.
	rbWantState(t, "lake on the object backing after the switch and back", rbLoadTable(t, rbCatalog(t, s, "lake"), tableIdent), beforeSwitch)
	res = rbHTTP(t, s, tok, http.MethodPost, lakePath, rbPropsCommit(lakeUUID, "runbook.rollback", "yes"), nil)
	rbWantError(t, "raw commit to lake on the object backing after the switch and back", res, http.StatusConflict, "CommitFailedException", lakeMig)
	rbStop(t, s)
	s = rbStart(t, data, strongEnv, "")
	rbWantState(t, "lake back on durable-strong after the refused cancel", rbLoadTable(t, rbCatalog(t, s, "lake"), tableIdent), want["lake"])
	// The registry takes writes again.
	if r := runCairn(t, rbCLITimeout, "admin", "table-bucket", "create", "creek", "--endpoint", s.url("")); r.code != 0 {
		t.Fatalf("cairn admin table-bucket create creek after the switch: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	rbStop(t, s)

	// ------------------------------------------------------------------
	step("7: format roll v1 -> v2")
	formatCommit := func(s *rbServer, value string, wantFormat int) {
		t.Helper()
		tok := rbToken(t, s)
		loc := rbCommitProps(t, s, tok, lakePath, lakeUUID, "runbook.roll", value)
		st := rbStatus(t, s, "lake")
		if st.SnapshotFormat != wantFormat || st.SnapshotHighWater != wantFormat {
			t.Fatalf("lake status after a commit (%s): snapshot_format %d, high-water %d; want %d", value, st.SnapshotFormat, st.SnapshotHighWater, wantFormat)
		}
		tbl := rbLoadTable(t, rbCatalog(t, s, "lake"), tableIdent)
		if tbl.MetadataLocation() != loc || tbl.Properties()["runbook.roll"] != value {
			t.Fatalf("lake after the commit (%s): %s %v, want %s", value, tbl.MetadataLocation(), tbl.Properties(), loc)
		}
		want["lake"] = rbTableState{metadataLocation: loc, snapshotID: want["lake"].snapshotID, rows: want["lake"].rows}
	}
	t.Log("server D: CAIRN_TABLE_CATALOG_STRONG_SNAPSHOT_V2=true only")
	s = rbStart(t, data, map[string]string{"CAIRN_TABLE_CATALOG_BACKING": catalog.BackingDurableStrong, "CAIRN_TABLE_CATALOG_STRONG_SNAPSHOT_V2": "true"}, "")
	// The runbook's first step of the roll: a format-1 backup.
	var v1Backup catalog.BackupResult
	rbCLIJSON(t, s, &v1Backup, "backup", "lake")
	if v1Backup.Format != 1 || v1Backup.BackupID == "" {
		t.Fatalf("backup lake before the roll: %+v, want a format-1 backup", v1Backup)
	}
	formatCommit(s, "v2-gate-only", 1)
	rbStop(t, s)

	t.Log("server E: both V2 gates true")
	s = rbStart(t, data, map[string]string{"CAIRN_TABLE_CATALOG_BACKING": catalog.BackingDurableStrong,
		"CAIRN_TABLE_CATALOG_STRONG_SNAPSHOT_V2": "true", "CAIRN_TABLE_CATALOG_STRONG_SNAPSHOT_V2_FLEET_CONFIRMED": "true"}, "")
	if st := rbStatus(t, s, "lake"); st.SnapshotFormat != 1 {
		t.Fatalf("lake status with both gates, before a write: snapshot_format %d, want 1 (the gates change what is written, not what is there)", st.SnapshotFormat)
	}
	formatCommit(s, "v2-both-gates", 2)
	if st := rbStatus(t, s, "pond"); st.SnapshotFormat != 1 {
		t.Fatalf("pond status (no write since the gates opened): snapshot_format %d, want 1", st.SnapshotFormat)
	}
	rbStop(t, s)

	t.Log("server F: both gates unset")
	s = rbStart(t, data, strongEnv, "")
	if st := rbStatus(t, s, "lake"); st.SnapshotFormat != 2 {
		t.Fatalf("lake status with the gates unset: snapshot_format %d, want 2", st.SnapshotFormat)
	}
	formatCommit(s, "v2-gates-unset", 2)
	rbWantState(t, "lake after the format roll", rbLoadTable(t, rbCatalog(t, s, "lake"), tableIdent), want["lake"])
	// This process read format 2 for lake when it started, so the
	// format-1 backup is below its high-water mark: a plain restore is
	// refused (rolling back needs --allow-format-downgrade, at the end).
	rbCLIFail(t, s, []string{"400 BadRequestException", "high-water", "format 1"},
		"restore", "lake", "--backup-id", v1Backup.BackupID, "--expected-etag", rbStatus(t, s, "lake").SnapshotETag, "--allow-replace")
	rbWantState(t, "lake after the refused format-1 restore", rbLoadTable(t, rbCatalog(t, s, "lake"), tableIdent), want["lake"])

	// ------------------------------------------------------------------
	step("cancel and rollback / backup and restore (durable-strong)")
	var b catalog.BackupResult
	rbCLIJSON(t, s, &b, "backup", "lake")
	st := rbStatus(t, s, "lake")
	if len(b.BackupID) != 32 || b.TableBucket != "lake" || b.SnapshotETag == "" || b.SnapshotETag != st.SnapshotETag || b.Format != 2 || b.Size <= 0 || b.Existed {
		t.Fatalf("backup lake: %+v (status ETag %s); want a 32-digit id of the current format-2 snapshot, new", b, st.SnapshotETag)
	}
	var b2 catalog.BackupResult
	rbCLIJSON(t, s, &b2, "backup", "lake")
	if b2.BackupID != b.BackupID || !b2.Existed {
		t.Fatalf("backup lake again, unchanged: %+v; want the same id %s, existed", b2, b.BackupID)
	}
	lakeCat = rbCatalog(t, s, "lake")
	atBackup := rbCapture(t, rbLoadTable(t, lakeCat, tableIdent))
	rowsLake = append(rowsLake, makeRows(561, 25, "after-backup"))
	lakeTbl, err = rbAppend(t, rbLoadTable(t, lakeCat, tableIdent), rowsLake[3])
	if err != nil {
		t.Fatalf("append to lake after the backup: %v", err)
	}
	if lakeTbl.MetadataLocation() == atBackup.metadataLocation {
		t.Fatal("the append after the backup kept the metadata location")
	}
	cur := rbStatus(t, s, "lake").SnapshotETag
	if cur == b.SnapshotETag {
		t.Fatalf("the snapshot ETag did not change with a commit: %s", cur)
	}
	// A stale expected ETag, and a replace without allow-replace, are refused.
	rbCLIFail(t, s, []string{"409"}, "restore", "lake", "--backup-id", b.BackupID, "--expected-etag", b.SnapshotETag, "--allow-replace")
	rbCLIFail(t, s, []string{"409", "allow-replace"}, "restore", "lake", "--backup-id", b.BackupID, "--expected-etag", cur)
	var rr catalog.RestoreResult
	rbCLIJSON(t, s, &rr, "restore", "lake", "--backup-id", b.BackupID, "--expected-etag", cur, "--allow-replace")
	if rr.BackupID != b.BackupID || rr.PreviousETag != cur || rr.SnapshotETag == "" || rr.SnapshotETag == cur || rr.Format != 2 || rr.RecordsRestored == 0 {
		t.Fatalf("restore lake: %+v; want the backup over %s, a new ETag, format 2", rr, cur)
	}
	if st = rbStatus(t, s, "lake"); st.SnapshotETag != rr.SnapshotETag || st.SnapshotFormat != 2 || !st.Served {
		t.Fatalf("lake status after the restore: %+v; want ETag %s, format 2, served", st, rr.SnapshotETag)
	}
	rbWantState(t, "lake after the restore", rbLoadTable(t, lakeCat, tableIdent), atBackup)
	// The restored table takes commits.
	more := makeRows(601, 15, "after-restore")
	if _, err = rbAppend(t, rbLoadTable(t, lakeCat, tableIdent), more); err != nil {
		t.Fatalf("append to lake after the restore: %v", err)
	}
	wantRows(t, "lake after the restore and an append", scanRows(t, rbLoadTable(t, lakeCat, tableIdent)), sortedRows(atBackup.rows, more))

	step("format roll-back: a deliberate restore of the format-1 backup")
	var down catalog.RestoreResult
	rbCLIJSON(t, s, &down, "restore", "lake", "--backup-id", v1Backup.BackupID, "--expected-etag", rbStatus(t, s, "lake").SnapshotETag,
		"--allow-replace", "--allow-format-downgrade")
	if down.Format != 1 || down.BackupID != v1Backup.BackupID {
		t.Fatalf("format roll-back: %+v, want the format-1 backup restored as format 1", down)
	}
	formatCommit(s, "v1-after-roll-back", 1)
	rbStop(t, s)
	step("done")
}

// rbWantParquet lists the data files under a table location through the
// S3 face and reads one back with aws-sdk-go-v2: a whole Parquet file.
func rbWantParquet(t *testing.T, s *rbServer, location string) {
	t.Helper()
	u, err := url.Parse(location)
	if err != nil || u.Scheme != "s3" {
		t.Fatalf("table location %q: %v", location, err)
	}
	c := sdkClient(s.server, s3User, s3Secret)
	keys := fsListKeys(t, c, u.Host, strings.TrimPrefix(u.Path, "/")+"/")
	var parquet []string
	for k := range keys {
		if strings.HasSuffix(k, ".parquet") {
			parquet = append(parquet, k)
		}
	}
	if len(parquet) == 0 {
		t.Fatalf("no Parquet file under %s: %v", location, keys)
	}
	slices.Sort(parquet)
	out, err := c.GetObject(callCtx(t), &s3.GetObjectInput{Bucket: aws.String(u.Host), Key: aws.String(parquet[0])})
	if err != nil {
		t.Fatalf("GetObject s3://%s/%s: %v", u.Host, parquet[0], err)
	}
	body := new(bytes.Buffer)
	_, err = body.ReadFrom(out.Body)
	_ = out.Body.Close()
	if err != nil {
		t.Fatalf("GetObject s3://%s/%s: read: %v", u.Host, parquet[0], err)
	}
	bs := body.Bytes()
	if int64(len(bs)) != keys[parquet[0]] || len(bs) < 8 || string(bs[:4]) != "PAR1" || string(bs[len(bs)-4:]) != "PAR1" {
		t.Fatalf("s3://%s/%s: %d bytes (listed %d), not a whole Parquet file", u.Host, parquet[0], len(bs), keys[parquet[0]])
	}
	t.Logf("data plane: read s3://%s/%s (%d bytes, %d Parquet files under the table)", u.Host, parquet[0], len(bs), len(parquet))
}

// rbRecoveryClean runs `cairn admin catalog recover WH --dry-run` and
// returns why it is not clean ("" when it finds nothing to repair).
func rbRecoveryClean(t *testing.T, s *rbServer, wh string) string {
	t.Helper()
	var rep catalog.RecoveryReport
	rbCLIJSON(t, s, &rep, "recover", wh, "--dry-run")
	if !rep.DryRun || len(rbCommitItems(rep.Repaired)) != 0 || len(rep.ManualReview) != 0 {
		return fmt.Sprintf("recover %s --dry-run: %+v; want a dry run with nothing to repair or review", wh, rep)
	}
	return ""
}
