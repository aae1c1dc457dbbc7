package integration

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/table"
)

// TestEngineTrino runs Trino (the server and CLI from Maven Central,
// integration/engines/trino/install.sh) against `cairn serve`: its Iceberg
// connector on cairn's REST catalog, SigV4-signed (and a second catalog
// with OAuth2 client credentials), data and metadata files through cairn's
// S3 face with Trino's native S3 file system. Trino creates, fills and
// reads its own table; it reads a table another engine wrote (iceberg-go
// here) and appends to it, and that engine reads every row back.
func TestEngineTrino(t *testing.T) {
	in := requireTrino(t)
	began := time.Now()
	t.Setenv("CAIRN_ROOT_USER", s3User)
	t.Setenv("CAIRN_ROOT_PASSWORD", s3Secret)
	s := startServer(t, t.TempDir(), "--drives", "4", "--parity", "2")
	s.waitReady(readyTimeout)
	if r := runCairn(t, 30*time.Second, "admin", "table-bucket", "create", icebergWarehouse, "--endpoint", s.url("")); r.code != 0 {
		t.Fatalf("cairn admin table-bucket create: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}

	// Another engine's table, written before Trino starts.
	goCat := openSigV4Catalog(t, s)
	goIdent := catalog.ToIdentifier("goclient", "events")
	goRows := makeRows(1, 300, "go")
	writeGoTable(t, goCat, goIdent, goRows)

	tr := startTrino(t, in, s, icebergWarehouse,
		trinoCatalog{name: "iceberg", security: "SIGV4"},
		trinoCatalog{name: "iceberg_oauth", security: "OAUTH2"})
	t.Logf("Trino started in %v", tr.startup.Round(time.Millisecond))

	t.Run("OwnTable", func(t *testing.T) {
		tr.query(t, "CREATE SCHEMA iceberg.trino")
		if res := tr.query(t, "SHOW CREATE SCHEMA iceberg.trino"); len(res.rows) != 1 || !strings.Contains(res.rows[0][0], "location = 's3://"+icebergWarehouse+"/trino'") {
			t.Fatalf("SHOW CREATE SCHEMA: %v, want the namespace's location s3://%s/trino", res.rows, icebergWarehouse)
		}
		tr.query(t, "CREATE TABLE iceberg.trino.orders (id bigint NOT NULL, name varchar, day date) WITH (partitioning = ARRAY['day'])")
		first, second := makeRows(1, 40, "trino"), makeRows(41, 25, "trino")
		for _, rows := range [][]eventRow{first, second} {
			if res := tr.query(t, "INSERT INTO iceberg.trino.orders VALUES "+trinoValues(rows)); res.updateCount != int64(len(rows)) {
				t.Fatalf("INSERT: %s %d rows, want %d", res.updateType, res.updateCount, len(rows))
			}
		}
		want := append(slices.Clone(first), second...)
		wantTrinoRows(t, tr.query(t, "SELECT id, name, day FROM iceberg.trino.orders ORDER BY id"), want)

		// The same table through the OAuth2 catalog, the CLI and iceberg-go.
		if res := tr.query(t, "SELECT count(*), sum(id) FROM iceberg_oauth.trino.orders"); !slices.Equal(res.rows[0], []string{fmt.Sprint(len(want)), fmt.Sprint(sumIDs(want))}) {
			t.Fatalf("count and sum over OAuth2: %v, want %d %d", res.rows, len(want), sumIDs(want))
		}
		lines := tr.cli(t, "SELECT id, name, day FROM iceberg.trino.orders WHERE id <= 3 ORDER BY id")
		if wantLines := csvLines(want[:3]); !slices.Equal(lines, wantLines) {
			t.Fatalf("trino cli: %q, want %q", lines, wantLines)
		}
		tbl, err := goCat.LoadTable(icebergCtx(t), catalog.ToIdentifier("trino", "orders"))
		if err != nil {
			t.Fatalf("iceberg-go LoadTable of Trino's table: %v", err)
		}
		if got := scanRows(t, tbl); !slices.EqualFunc(got, want, eventRowsEqual) {
			t.Fatalf("iceberg-go reads Trino's table: %d rows %v…, want %d", len(got), got[:min(3, len(got))], len(want))
		}
		if n := len(tbl.Metadata().Snapshots()); n < 2 {
			t.Fatalf("Trino's table has %d snapshots after two INSERTs", n)
		}
	})

	t.Run("ForeignTable", func(t *testing.T) {
		trinoReadsAndAppends(t, tr, goCat, goIdent, goRows)
	})
	t.Logf("TestEngineTrino wall time %v (Trino startup %v)", time.Since(began).Round(time.Millisecond), tr.startup.Round(time.Millisecond))
}

// trinoReadsAndAppends checks that Trino reads table ident, written by
// another engine, as rows want; Trino then appends rows and the other
// engine's catalog cat reads all of them back.
func trinoReadsAndAppends(t *testing.T, tr *trinoServer, cat *rest.Catalog, ident table.Identifier, want []eventRow) {
	t.Helper()
	name := "iceberg." + strings.Join(ident, ".")
	wantTrinoRows(t, tr.query(t, "SELECT id, name, day FROM "+name+" ORDER BY id"), want)
	if res := tr.query(t, "SELECT count(*) FROM iceberg_oauth."+strings.Join(ident, ".")); res.rows[0][0] != fmt.Sprint(len(want)) {
		t.Fatalf("count over OAuth2: %v, want %d", res.rows, len(want))
	}
	if res := tr.query(t, fmt.Sprintf("SELECT count(*) FROM %s WHERE day = DATE '%s'", name, isoDay(want[0].day))); res.rows[0][0] != fmt.Sprint(countDay(want, want[0].day)) {
		t.Fatalf("count of one day: %v, want %d", res.rows, countDay(want, want[0].day))
	}

	added := makeRows(int(maxID(want))+1, 30, "trino")
	if res := tr.query(t, "INSERT INTO "+name+" VALUES "+trinoValues(added)); res.updateCount != int64(len(added)) {
		t.Fatalf("INSERT into the foreign table: %d rows, want %d", res.updateCount, len(added))
	}
	all := append(slices.Clone(want), added...)
	wantTrinoRows(t, tr.query(t, "SELECT id, name, day FROM "+name+" ORDER BY id"), all)

	tbl, err := cat.LoadTable(icebergCtx(t), ident)
	if err != nil {
		t.Fatalf("LoadTable %v after Trino's INSERT: %v", ident, err)
	}
	if got := scanRows(t, tbl); !slices.EqualFunc(got, all, eventRowsEqual) {
		t.Fatalf("after Trino's INSERT the writer reads %d rows, want %d", len(got), len(all))
	}
	if snap := tbl.CurrentSnapshot(); snap == nil || snap.Summary == nil || snap.Summary.Operation != table.OpAppend {
		t.Fatalf("Trino's INSERT made the snapshot %+v, want an append", snap)
	}
}

// writeGoTable creates ident with iceberg-go and appends rows in one
// snapshot.
func writeGoTable(t *testing.T, cat *rest.Catalog, ident table.Identifier, rows []eventRow) {
	t.Helper()
	if err := cat.CreateNamespace(icebergCtx(t), ident[:len(ident)-1], iceberg.Properties{"writer": "iceberg-go"}); err != nil {
		t.Fatalf("CreateNamespace: %v", err)
	}
	tbl, err := cat.CreateTable(icebergCtx(t), ident, eventSchema)
	if err != nil {
		t.Fatalf("CreateTable %v: %v", ident, err)
	}
	if _, err := tbl.AppendTable(icebergCtx(t), arrowTable(t, tbl.Schema(), rows, 128), 128, nil); err != nil {
		t.Fatalf("AppendTable %v: %v", ident, err)
	}
}

// isoDay formats days since 1970-01-01 as Trino prints a date.
func isoDay(day int32) string {
	return time.Unix(int64(day)*86400, 0).UTC().Format(time.DateOnly)
}

// trinoValues is the VALUES list of rows (id, name, day).
func trinoValues(rows []eventRow) string {
	vals := make([]string, len(rows))
	for i, r := range rows {
		vals[i] = fmt.Sprintf("(%d, '%s', DATE '%s')", r.id, strings.ReplaceAll(r.name, "'", "''"), isoDay(r.day))
	}
	return strings.Join(vals, ", ")
}

// wantTrinoRows checks a SELECT id, name, day result against rows.
func wantTrinoRows(t *testing.T, res trinoResult, rows []eventRow) {
	t.Helper()
	if !slices.Equal(res.columns, []string{"id", "name", "day"}) {
		t.Fatalf("columns %v, want id name day", res.columns)
	}
	if len(res.rows) != len(rows) {
		t.Fatalf("%d rows, want %d", len(res.rows), len(rows))
	}
	for i, r := range rows {
		if want := []string{fmt.Sprint(r.id), r.name, isoDay(r.day)}; !slices.Equal(res.rows[i], want) {
			t.Fatalf("row %d: %v, want %v", i, res.rows[i], want)
		}
	}
}

// csvLines is rows as the CLI prints them in CSV_UNQUOTED.
func csvLines(rows []eventRow) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = fmt.Sprintf("%d,%s,%s", r.id, r.name, isoDay(r.day))
	}
	return out
}

func eventRowsEqual(a, b eventRow) bool {
	return a.id == b.id && a.name == b.name && a.day == b.day && (a.score == nil) == (b.score == nil) && (a.score == nil || *a.score == *b.score)
}

func sumIDs(rows []eventRow) int64 {
	var n int64
	for _, r := range rows {
		n += r.id
	}
	return n
}

func maxID(rows []eventRow) int64 {
	var m int64
	for _, r := range rows {
		m = max(m, r.id)
	}
	return m
}

func countDay(rows []eventRow, day int32) int {
	n := 0
	for _, r := range rows {
		if r.day == day {
			n++
		}
	}
	return n
}
