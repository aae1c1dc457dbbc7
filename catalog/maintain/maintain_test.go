package maintain_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go/table"

	"github.com/cairnstore/cairn/catalog"
	"github.com/cairnstore/cairn/catalog/maintain"
	"github.com/cairnstore/cairn/catalog/objectbacked"
	"github.com/cairnstore/cairn/catalog/strong"
	"github.com/cairnstore/cairn/objstore"
	"github.com/cairnstore/cairn/objstore/storetest"
)

const schemaJSON = `{"type":"struct","schema-id":0,"fields":[
 {"id":1,"name":"id","type":"long","required":true},
 {"id":2,"name":"data","type":"string","required":false}]}`

// env is a catalog, its store and a Runner.
type env struct {
	t     *testing.T
	store *objstore.Store
	svc   *catalog.Service
	run   *maintain.Runner
	id    catalog.Ident
}

func newEnv(t *testing.T, durable bool) *env {
	t.Helper()
	return newEnvGated(t, durable, nil)
}

// gate fences every write while fenced is set, as a cutover does.
type gate struct{ fenced atomic.Bool }

func (g *gate) Enter(ctx context.Context, wh string) (func(), error) {
	if g.fenced.Load() {
		return nil, fmt.Errorf("%w: warehouse %s is being migrated", catalog.ErrFenced, wh)
	}
	return func() {}, nil
}

func newEnvGated(t *testing.T, durable bool, g catalog.Gate) *env {
	t.Helper()
	ctx := context.Background()
	st := storetest.Open(t, objstore.Options{DriveCount: 3, Parity: 1, BlockSize: 64 << 10, MinPartSize: 1, NoBackground: true})
	var b catalog.Backing
	var err error
	if durable {
		b, err = strong.Open(ctx, st, strong.Options{})
	} else {
		b, err = objectbacked.New(ctx, st)
	}
	if err != nil {
		t.Fatal(err)
	}
	svc, err := catalog.New(st, b, catalog.Options{Gate: g})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateWarehouse(ctx, "lake"); err != nil {
		t.Fatal(err)
	}
	if err := svc.CreateNamespace(ctx, "lake", []string{"ns"}, nil); err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, store: st, svc: svc, run: maintain.New(svc, st, maintain.Options{}), id: catalog.Ident{Namespace: []string{"ns"}, Name: "t"}}
	if _, err := svc.CreateTable(ctx, "lake", []string{"ns"}, []byte(`{"name":"t","schema":`+schemaJSON+`}`)); err != nil {
		t.Fatal(err)
	}
	return e
}

// table loads the table through iceberg-go's REST-free path: the
// Runner's catalog adapter, exported for tests.
func (e *env) table() *table.Table {
	e.t.Helper()
	tbl, err := e.run.LoadTable(context.Background(), "lake", e.id)
	if err != nil {
		e.t.Fatal(err)
	}
	return tbl
}

var arrowSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "data", Type: arrow.BinaryTypes.String, Nullable: true},
}, nil)

// appendRows commits one snapshot adding rows [from, from+n), one file;
// a commit that lost to a concurrent one (nothing applied) is tried
// again from the table as it is.
func (e *env) appendRows(from, n int) error {
	b := array.NewRecordBuilder(memory.DefaultAllocator, arrowSchema)
	defer b.Release()
	for i := from; i < from+n; i++ {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("row-%d", i))
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	for attempt := 1; ; attempt++ {
		err := e.appendOnce(rec)
		if err == nil || attempt == 20 || !errors.Is(err, table.ErrCommitFailed) {
			return err
		}
	}
}

func (e *env) appendOnce(rec arrow.RecordBatch) error {
	tbl, err := e.run.LoadTable(context.Background(), "lake", e.id)
	if err != nil {
		return err
	}
	rdr, err := array.NewRecordReader(arrowSchema, []arrow.RecordBatch{rec})
	if err != nil {
		return err
	}
	defer rdr.Release()
	tx := tbl.NewTransaction()
	if err := tx.Append(context.Background(), rdr, nil); err != nil {
		return err
	}
	_, err = tx.Commit(context.Background())
	return err
}

// rows scans the table and returns its ids.
func (e *env) rows() map[int64]bool {
	e.t.Helper()
	_, itr, err := e.table().Scan().ToArrowRecords(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	out := map[int64]bool{}
	for rec, err := range itr {
		if err != nil {
			e.t.Fatal(err)
		}
		col := rec.Column(0).(*array.Int64)
		for i := 0; i < col.Len(); i++ {
			if out[col.Value(i)] {
				e.t.Fatalf("row %d scanned twice", col.Value(i))
			}
			out[col.Value(i)] = true
		}
		rec.Release()
	}
	return out
}

func (e *env) put(key, body string) {
	e.t.Helper()
	if _, err := e.store.Put(context.Background(), "lake", key, strings.NewReader(body), int64(len(body)), objstore.PutOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) exists(key string) bool {
	_, err := e.store.Head(context.Background(), "lake", key, objstore.GetOptions{})
	return err == nil
}

func (e *env) configure(k catalog.JobKind, c catalog.JobConfig) {
	e.t.Helper()
	c.Enabled = true
	if err := e.svc.SetMaintenance(context.Background(), "lake", &e.id, k, c); err != nil {
		e.t.Fatal(err)
	}
}

// dataFiles lists the data files of the current snapshot.
func (e *env) dataFiles() []string {
	e.t.Helper()
	tasks, err := e.table().Scan().PlanFiles(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, t := range tasks {
		out = append(out, t.File.FilePath())
	}
	return out
}

// referencedExist checks that every file the table's metadata references
// (through every snapshot left) is still there.
func (e *env) referencedExist() {
	e.t.Helper()
	tbl := e.table()
	fsys, err := tbl.FS(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	for _, s := range tbl.Metadata().Snapshots() {
		mfs, err := s.Manifests(fsys)
		if err != nil {
			e.t.Fatalf("snapshot %d: manifest list: %v", s.SnapshotID, err)
		}
		for _, mf := range mfs {
			for en, err := range mf.Entries(fsys, true) {
				if err != nil {
					e.t.Fatalf("snapshot %d: manifest %s: %v", s.SnapshotID, mf.FilePath(), err)
				}
				if _, err := fsys.Open(en.DataFile().FilePath()); err != nil {
					e.t.Fatalf("snapshot %d references %s, which is gone: %v", s.SnapshotID, en.DataFile().FilePath(), err)
				}
			}
		}
	}
}

func TestRun(t *testing.T) {
	for _, durable := range []bool{false, true} {
		t.Run(fmt.Sprintf("durable=%v", durable), func(t *testing.T) {
			e := newEnv(t, durable)
			ctx := context.Background()
			const snaps, per = 24, 5
			for i := 0; i < snaps; i++ {
				if err := e.appendRows(i*per, per); err != nil {
					t.Fatal(err)
				}
			}
			loc := "ns/t/"
			e.put(loc+"data/stray-old.parquet", "left by a writer that died")
			e.put(loc+"nested/data/other.parquet", "another table's")
			if _, err := e.svc.CreateTable(ctx, "lake", []string{"ns"}, []byte(`{"name":"nested","location":"s3://lake/ns/t/nested","schema":`+schemaJSON+`}`)); err != nil {
				t.Fatal(err)
			}
			e.configure(catalog.JobCompaction, catalog.JobConfig{TargetFileSize: 1 << 20})
			e.configure(catalog.JobSnapshots, catalog.JobConfig{MinSnapshotsToKeep: 4, MaxSnapshotAge: time.Millisecond})
			e.configure(catalog.JobUnreferenced, catalog.JobConfig{UnreferencedAfter: time.Second})
			time.Sleep(1100 * time.Millisecond)
			e.put(loc+"data/stray-fresh.parquet", "a writer's, not yet committed")

			before := len(e.dataFiles())
			if before != snaps {
				t.Fatalf("%d data files before, want %d", before, snaps)
			}
			m, err := e.run.Run(ctx, "lake", e.id)
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range catalog.JobKinds() {
				if st := m.Status[k]; st.Status != catalog.JobSuccessful || st.LastRun.IsZero() {
					t.Errorf("%s: status %+v, want Successful", k, st)
				}
			}
			c := m.Status[catalog.JobCompaction].Counts
			if c["files-rewritten"] != snaps || c["files-written"] != 1 {
				t.Errorf("compaction counts %v, want %d rewritten into 1", c, snaps)
			}
			if got := len(e.table().Metadata().Snapshots()); got != 4 {
				t.Errorf("%d snapshots after the run, want the 4 configured", got)
			}
			if n := m.Status[catalog.JobSnapshots].Counts["snapshots-expired"]; n != snaps+1-4 {
				t.Errorf("%d snapshots expired, want %d", n, snaps+1-4)
			}
			if got := e.dataFiles(); len(got) != 1 {
				t.Errorf("data files after compaction: %v, want 1", got)
			}
			rows := e.rows()
			if len(rows) != snaps*per {
				t.Errorf("%d rows after the run, want %d", len(rows), snaps*per)
			}
			e.referencedExist()
			if e.exists(loc + "data/stray-old.parquet") {
				t.Error("an unreferenced file older than the grace period is still there")
			}
			for _, k := range []string{loc + "data/stray-fresh.parquet", loc + "nested/data/other.parquet"} {
				if !e.exists(k) {
					t.Errorf("%s was removed", k)
				}
			}
			// The expired snapshots' manifest lists and the stray file;
			// the small data files stay, the snapshots kept reference them.
			if n := m.Status[catalog.JobUnreferenced].Counts["files-removed"]; n != snaps+1-4+1 {
				t.Errorf("removal counts %v: want %d files", m.Status[catalog.JobUnreferenced].Counts, snaps+1-4+1)
			}
			// A second run finds nothing to do and changes no row.
			m, err = e.run.Run(ctx, "lake", e.id)
			if err != nil {
				t.Fatal(err)
			}
			if c := m.Status[catalog.JobCompaction].Counts; c["files-rewritten"] != 0 {
				t.Errorf("second run rewrote %v", c)
			}
			if len(e.rows()) != snaps*per {
				t.Error("rows changed on the second run")
			}
		})
	}
}

// TestRunConcurrentWriter: a writer appending all along a run loses no
// commit, and the run still succeeds (its commits retry on conflicts).
func TestRunConcurrentWriter(t *testing.T) {
	e := newEnv(t, false)
	ctx := context.Background()
	for i := 0; i < 10; i++ {
		if err := e.appendRows(i*3, 3); err != nil {
			t.Fatal(err)
		}
	}
	e.configure(catalog.JobCompaction, catalog.JobConfig{TargetFileSize: 1 << 20})
	e.configure(catalog.JobSnapshots, catalog.JobConfig{MinSnapshotsToKeep: 2, MaxSnapshotAge: time.Millisecond})
	e.configure(catalog.JobUnreferenced, catalog.JobConfig{UnreferencedAfter: time.Second})
	var wg sync.WaitGroup
	stop := make(chan struct{})
	written := 10 * 3
	var werr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 10; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if err := e.appendRows(i*3, 3); err != nil {
				werr = err
				return
			}
			written += 3
		}
	}()
	for range 3 {
		if _, err := e.run.Run(ctx, "lake", e.id); err != nil {
			t.Error(err)
		}
	}
	close(stop)
	wg.Wait()
	if werr != nil {
		t.Fatalf("writer: %v", werr)
	}
	rows := e.rows()
	if len(rows) != written {
		t.Fatalf("%d rows, want the %d written", len(rows), written)
	}
	e.referencedExist()
}

// TestRunFailure: a job that cannot run is recorded failed with its
// reason, and the removal of unreferenced files waits.
func TestRunFailure(t *testing.T) {
	e := newEnv(t, false)
	ctx := context.Background()
	if err := e.appendRows(0, 3); err != nil {
		t.Fatal(err)
	}
	body := `{"updates":[{"action":"set-properties","updates":{"gc.enabled":"false"}}]}`
	if _, err := e.svc.CommitTable(ctx, "lake", e.id, []byte(body)); err != nil {
		t.Fatal(err)
	}
	e.configure(catalog.JobSnapshots, catalog.JobConfig{MinSnapshotsToKeep: 1, MaxSnapshotAge: time.Millisecond})
	e.configure(catalog.JobUnreferenced, catalog.JobConfig{UnreferencedAfter: time.Second})
	m, err := e.run.Run(ctx, "lake", e.id)
	if err != nil {
		t.Fatal(err)
	}
	st := m.Status[catalog.JobSnapshots]
	if st.Status != catalog.JobFailed || !strings.Contains(st.Failure, "GC is disabled") {
		t.Errorf("snapshot job: %+v, want Failed naming gc.enabled", st)
	}
	if st := m.Status[catalog.JobUnreferenced]; st.Status != catalog.JobFailed || !strings.Contains(st.Failure, "skipped") {
		t.Errorf("removal: %+v, want skipped", st)
	}
	if st := m.Status[catalog.JobCompaction]; st.Status != catalog.JobDisabled {
		t.Errorf("compaction: %+v, want Disabled", st)
	}
	if got := e.run.Stats().Runs[catalog.JobSnapshots]["failure"]; got != 1 {
		t.Errorf("failure count %d, want 1", got)
	}
}

// TestRunFenced: during a cutover a run stops at its first commit with
// ErrFenced, changes nothing and records nothing; once the fence is
// lifted the next run does the work.
func TestRunFenced(t *testing.T) {
	g := &gate{}
	e := newEnvGated(t, false, g)
	ctx := context.Background()
	for i := 0; i < 4; i++ {
		if err := e.appendRows(i*2, 2); err != nil {
			t.Fatal(err)
		}
	}
	e.configure(catalog.JobSnapshots, catalog.JobConfig{MinSnapshotsToKeep: 1, MaxSnapshotAge: time.Millisecond})
	g.fenced.Store(true)
	if _, err := e.run.Run(ctx, "lake", e.id); !errors.Is(err, catalog.ErrFenced) {
		t.Fatalf("run during a cutover: %v, want ErrFenced", err)
	}
	m, err := e.svc.Maintenance(ctx, "lake", &e.id)
	if err != nil {
		t.Fatal(err)
	}
	if st := m.Status[catalog.JobSnapshots]; st.Status != catalog.JobNotYetRun {
		t.Errorf("status after a fenced run: %+v, want Not_Yet_Run", st)
	}
	if s := e.run.Stats(); s.Running != 0 || len(s.Runs) != 0 {
		t.Errorf("stats after a fenced run: %+v, want nothing counted", s)
	}
	if n := len(e.table().Metadata().Snapshots()); n != 4 {
		t.Errorf("%d snapshots after a fenced run, want the 4 untouched", n)
	}
	g.fenced.Store(false)
	if m, err = e.run.Run(ctx, "lake", e.id); err != nil {
		t.Fatal(err)
	}
	if st := m.Status[catalog.JobSnapshots]; st.Status != catalog.JobSuccessful || st.Counts["snapshots-expired"] != 3 {
		t.Errorf("status after the fence: %+v, want 3 expired", st)
	}
}
