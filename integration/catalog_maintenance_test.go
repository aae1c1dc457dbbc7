package integration

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	icecat "github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/table"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/cairnstore/cairn/catalog"
)

// Table maintenance on the real binary: a table of 200 snapshots and 500
// small data files, maintained through `cairn admin catalog maintenance
// run` (the REST face's POST .../maintenance/run), read back with
// iceberg-go; then again while a writer appends all along; then the
// scheduler of cairn serve on its own.

const (
	maintWarehouse = icebergWarehouse
	maintPath      = "/iceberg/v1/" + maintWarehouse + "/namespaces/ns/tables/t"
	maintSnapshots = 200
)

// maintAppend appends rows as len(rows)/batch files (the table writes a
// file per batch) in one snapshot, again when a concurrent commit won.
func maintAppend(ctx context.Context, cat *rest.Catalog, ident table.Identifier, at func(*table.Table) (int, error)) error {
	for attempt := 1; ; attempt++ {
		tbl, err := cat.LoadTable(ctx, ident)
		if err != nil {
			return err
		}
		if _, err = at(tbl); err == nil || attempt == 20 || !errors.Is(err, table.ErrCommitFailed) {
			return err
		}
	}
}

// maintFiles lists the data files of the table's current snapshot.
func maintFiles(t *testing.T, tbl *table.Table) []string {
	t.Helper()
	tasks, err := tbl.Scan().PlanFiles(icebergCtx(t))
	if err != nil {
		t.Fatalf("PlanFiles: %v", err)
	}
	out := make([]string, len(tasks))
	for i, task := range tasks {
		out[i] = task.File.FilePath()
	}
	return out
}

// maintReferencedExist fails unless every manifest list, manifest and
// data file the table's snapshots reference is still in the bucket.
func maintReferencedExist(t *testing.T, s *server, tbl *table.Table) {
	t.Helper()
	fsys, err := tbl.FS(icebergCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	c := sdkClient(s, s3User, s3Secret)
	head := func(loc string) {
		key := strings.TrimPrefix(loc, "s3://"+maintWarehouse+"/")
		if _, err := c.HeadObject(icebergCtx(t), &s3.HeadObjectInput{Bucket: aws.String(maintWarehouse), Key: aws.String(key)}); err != nil {
			t.Fatalf("%s is referenced and gone: %v", loc, err)
		}
	}
	for _, snap := range tbl.Metadata().Snapshots() {
		head(snap.ManifestList)
		mfs, err := snap.Manifests(fsys)
		if err != nil {
			t.Fatalf("snapshot %d: %v", snap.SnapshotID, err)
		}
		for _, mf := range mfs {
			head(mf.FilePath())
			for e, err := range mf.Entries(fsys, true) {
				if err != nil {
					t.Fatalf("manifest %s: %v", mf.FilePath(), err)
				}
				head(e.DataFile().FilePath())
			}
		}
	}
}

// maintRun runs the table's maintenance with the CLI and returns what it
// printed as JSON.
func maintRun(t *testing.T, s *server) catalog.Maintenance {
	t.Helper()
	r := runCairn(t, 5*time.Minute, "admin", "catalog", "maintenance", "run", maintWarehouse, "ns.t", "--json", "--endpoint", s.url(""))
	if r.code != 0 {
		t.Fatalf("maintenance run: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	var m catalog.Maintenance
	if err := json.Unmarshal([]byte(r.stdout), &m); err != nil {
		t.Fatalf("maintenance run --json: %v\n%s", err, r.stdout)
	}
	return m
}

func TestCatalogMaintenance(t *testing.T) {
	s := startS3Server(t)
	if r := runCairn(t, 30*time.Second, "admin", "table-bucket", "create", maintWarehouse, "--endpoint", s.url("")); r.code != 0 {
		t.Fatalf("table-bucket create: exit %d\n%s", r.code, r.stderr)
	}
	cat := openSigV4Catalog(t, s)
	if err := cat.CreateNamespace(icebergCtx(t), icecat.ToIdentifier("ns"), nil); err != nil {
		t.Fatal(err)
	}
	ident := icecat.ToIdentifier("ns", "t")
	// A file per appended batch, so that 200 commits make 500 files.
	tbl, err := cat.CreateTable(icebergCtx(t), ident, eventSchema,
		icecat.WithProperties(iceberg.Properties{table.WriteTargetFileSizeBytesKey: "1"}))
	if err != nil {
		t.Fatal(err)
	}
	var want [][]eventRow
	next := 1
	for i := 0; i < maintSnapshots; i++ {
		files := 1
		if i < 100 {
			files = 4
		}
		rows := makeRows(next, 5*files, "r")
		next += len(rows)
		want = append(want, rows)
		at := arrowTable(t, tbl.Schema(), rows, 5)
		if err := maintAppend(icebergCtx(t), cat, ident, func(tb *table.Table) (int, error) {
			_, err := tb.AppendTable(icebergCtx(t), at, 5, nil)
			return 0, err
		}); err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
	}
	tbl, err = cat.LoadTable(icebergCtx(t), ident)
	if err != nil {
		t.Fatal(err)
	}
	if n, f := len(tbl.Metadata().Snapshots()), len(maintFiles(t, tbl)); n != maintSnapshots || f != 500 {
		t.Fatalf("set-up: %d snapshots and %d data files, want %d and 500", n, f, maintSnapshots)
	}
	before := scanRows(t, tbl)
	wantRows(t, "before maintenance", before, sortedRows(want...))

	// Settings: through the REST face, as an engine's operator would.
	tok := icebergToken(t, s)
	for job, body := range map[string]string{
		"icebergCompaction":              `{"enabled":true,"target-file-size-bytes":1048576}`,
		"icebergSnapshotManagement":      `{"enabled":true,"min-snapshots-to-keep":5,"max-snapshot-age":"1ms"}`,
		"icebergUnreferencedFileRemoval": `{"enabled":true,"unreferenced-after":"3s"}`,
	} {
		icebergJSON(t, s, tok, http.MethodPut, maintPath+"/maintenance/"+job, body, http.StatusOK, nil)
	}
	res := newRaw(t, http.MethodPut, s.url(maintPath+"/maintenance/icebergSnapshotManagement"), []byte(`{"enabled":true,"min-snapshots-to-keep":-1}`))
	res.Header.Set("Authorization", "Bearer "+tok)
	if r := doRaw(t, res); r.status != http.StatusBadRequest || !strings.Contains(string(r.body), "at least 1") {
		t.Fatalf("bad settings: %d %s, want 400 naming the bound", r.status, r.body)
	}

	// An unreferenced file old enough to go, and one that is not.
	c := sdkClient(s, s3User, s3Secret)
	put := func(key string) {
		if _, err := c.PutObject(icebergCtx(t), &s3.PutObjectInput{Bucket: aws.String(maintWarehouse), Key: aws.String(key), Body: strings.NewReader("stray")}); err != nil {
			t.Fatal(err)
		}
	}
	put("ns/t/data/stray-old.parquet")
	time.Sleep(3100 * time.Millisecond)
	put("ns/t/data/stray-fresh.parquet")

	began := time.Now()
	m := maintRun(t, s)
	took := time.Since(began)
	t.Logf("maintenance run of %d snapshots, 500 files: %v (counts: compaction %v, snapshots %v, removal %v)", maintSnapshots, took,
		m.Status[catalog.JobCompaction].Counts, m.Status[catalog.JobSnapshots].Counts, m.Status[catalog.JobUnreferenced].Counts)
	for _, k := range catalog.JobKinds() {
		if m.Status[k].Status != catalog.JobSuccessful {
			t.Fatalf("%s: %+v, want Successful", k, m.Status[k])
		}
	}
	tbl, err = cat.LoadTable(icebergCtx(t), ident)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(tbl.Metadata().Snapshots()); n != 5 {
		t.Errorf("%d snapshots after the run, want the 5 configured", n)
	}
	if f := maintFiles(t, tbl); len(f) != 1 {
		t.Errorf("%d data files after compaction into 1 MiB files, want 1", len(f))
	}
	wantRows(t, "after maintenance", scanRows(t, tbl), before)
	maintReferencedExist(t, s, tbl)
	current, _ := tableKeys(t, s, tbl.Location())
	has := func(k string) bool { return strings.Contains(strings.Join(current, "\n"), k) }
	if has("stray-old.parquet") || !has("stray-fresh.parquet") {
		t.Errorf("old stray gone = %v (want true), fresh stray kept = %v (want true)", !has("stray-old.parquet"), has("stray-fresh.parquet"))
	}
	// The expired snapshots' manifest lists are gone (5 stay); the
	// appends' 200 manifests stay, the snapshots kept list them, beside
	// the compaction's.
	if n := countSuffix(current, ".avro"); n > 5+maintSnapshots+2 {
		t.Errorf("%d Avro files left, want at most %d", n, 5+maintSnapshots+2)
	}

	// Again, while a writer appends: no commit of the writer is lost.
	var wg sync.WaitGroup
	var written [][]eventRow
	var werr error
	stop := make(chan struct{})
	batches := make([]arrowRows, 40)
	for i := range batches {
		batches[i].rows = makeRows(next+i*5, 5, "w")
		batches[i].at = arrowTable(t, tbl.Schema(), batches[i].rows, 5)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for _, b := range batches {
			select {
			case <-stop:
				return
			default:
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			err := maintAppend(ctx, cat, ident, func(tb *table.Table) (int, error) {
				_, err := tb.AppendTable(ctx, b.at, 5, nil)
				return 0, err
			})
			cancel()
			if err != nil {
				werr = err
				return
			}
			written = append(written, b.rows)
		}
	}()
	for range 3 {
		maintRun(t, s)
	}
	close(stop)
	wg.Wait()
	if werr != nil {
		t.Fatalf("writer: %v", werr)
	}
	if len(written) == 0 {
		t.Fatal("the writer committed nothing during the runs")
	}
	tbl, err = cat.LoadTable(icebergCtx(t), ident)
	if err != nil {
		t.Fatal(err)
	}
	wantRows(t, "after maintenance beside a writer", scanRows(t, tbl), sortedRows(append([][]eventRow{before}, written...)...))
	maintReferencedExist(t, s, tbl)

	// The CLI's text status and the metrics.
	r := runCairn(t, time.Minute, "admin", "catalog", "maintenance", "status", maintWarehouse, "ns.t", "--endpoint", s.url(""))
	if r.code != 0 || !strings.Contains(r.stdout, "icebergCompaction") || !strings.Contains(r.stdout, "Successful") {
		t.Errorf("maintenance status: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(allMetrics(t, s), `cairn_catalog_maintenance_runs_total{job="icebergCompaction",outcome="success"}`) {
		t.Errorf("/metrics has no maintenance runs")
	}
}

// arrowRows is a batch of rows and its Arrow table.
type arrowRows struct {
	rows []eventRow
	at   arrow.Table
}

// TestCatalogMaintenanceScheduled: cairn serve maintains the tables with
// maintenance enabled on its own, every --catalog-maintenance-interval.
func TestCatalogMaintenanceScheduled(t *testing.T) {
	t.Setenv("CAIRN_ROOT_USER", s3User)
	t.Setenv("CAIRN_ROOT_PASSWORD", s3Secret)
	s := startServer(t, t.TempDir(), "--catalog-maintenance-interval", "1s")
	s.waitReady(readyTimeout)
	if r := runCairn(t, 30*time.Second, "admin", "table-bucket", "create", maintWarehouse, "--endpoint", s.url("")); r.code != 0 {
		t.Fatalf("table-bucket create: exit %d\n%s", r.code, r.stderr)
	}
	cat := openSigV4Catalog(t, s)
	if err := cat.CreateNamespace(icebergCtx(t), icecat.ToIdentifier("ns"), nil); err != nil {
		t.Fatal(err)
	}
	ident := icecat.ToIdentifier("ns", "t")
	tbl, err := cat.CreateTable(icebergCtx(t), ident, eventSchema)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if tbl, err = tbl.AppendTable(icebergCtx(t), arrowTable(t, tbl.Schema(), makeRows(i*10+1, 10, "s"), 10), 10, nil); err != nil {
			t.Fatal(err)
		}
	}
	tok := icebergToken(t, s)
	icebergJSON(t, s, tok, http.MethodPut, maintPath+"/maintenance/icebergSnapshotManagement",
		`{"enabled":true,"min-snapshots-to-keep":1,"max-snapshot-age":"1ms"}`, http.StatusOK, nil)
	deadline := time.Now().Add(30 * time.Second)
	for {
		var m catalog.Maintenance
		icebergJSON(t, s, tok, http.MethodGet, maintPath+"/maintenance", "", http.StatusOK, &m)
		if st := m.Status[catalog.JobSnapshots]; st.Status == catalog.JobSuccessful {
			break
		} else if st.Status == catalog.JobFailed || time.Now().After(deadline) {
			t.Fatalf("scheduled snapshot expiry: %+v after %v", st, 30*time.Second)
		}
		time.Sleep(200 * time.Millisecond)
	}
	tbl, err = cat.LoadTable(icebergCtx(t), ident)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(tbl.Metadata().Snapshots()); n != 1 {
		t.Fatalf("%d snapshots after the scheduled run, want 1", n)
	}
	wantRows(t, "after the scheduled run", scanRows(t, tbl), makeRows(1, 30, "s"))
}
