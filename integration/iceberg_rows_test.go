package integration

// The rows TestIcebergClient writes and reads back: the table's schema,
// Arrow batches of them, and scans of a table into them.

import (
	"fmt"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// eventSchema is the table's first schema: id, name, day.
var eventSchema = iceberg.NewSchema(0,
	iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
	iceberg.NestedField{ID: 2, Name: "name", Type: iceberg.PrimitiveTypes.String},
	iceberg.NestedField{ID: 3, Name: "day", Type: iceberg.PrimitiveTypes.Date},
)

// eventRow is one row of the test table; score exists after the schema
// evolution only (nil reads back as null).
type eventRow struct {
	id    int64
	name  string
	day   int32 // days since 1970-01-01
	score *float64
}

func (r eventRow) String() string {
	sc := "null"
	if r.score != nil {
		sc = fmt.Sprint(*r.score)
	}
	return fmt.Sprintf("{%d %q %d %s}", r.id, r.name, r.day, sc)
}

func makeRows(from, n int, prefix string) []eventRow {
	rows := make([]eventRow, n)
	for i := range rows {
		id := int64(from + i)
		rows[i] = eventRow{id: id, name: fmt.Sprintf("%s-%d", prefix, id), day: int32(19000 + id%365)}
	}
	return rows
}

// arrowTable builds an Arrow table of rows in the Arrow form of sc, as
// batches of at most batch rows each.
func arrowTable(t *testing.T, sc *iceberg.Schema, rows []eventRow, batch int) arrow.Table {
	t.Helper()
	as, err := table.SchemaToArrowSchema(sc, nil, false, false)
	if err != nil {
		t.Fatalf("SchemaToArrowSchema: %v", err)
	}
	rb := array.NewRecordBuilder(memory.DefaultAllocator, as)
	defer rb.Release()
	var recs []arrow.RecordBatch
	for start := 0; start < len(rows); start += batch {
		for _, r := range rows[start:min(start+batch, len(rows))] {
			for i, f := range as.Fields() {
				switch f.Name {
				case "id":
					rb.Field(i).(*array.Int64Builder).Append(r.id)
				case "name":
					rb.Field(i).(*array.StringBuilder).Append(r.name)
				case "day":
					rb.Field(i).(*array.Date32Builder).Append(arrow.Date32(r.day))
				case "score":
					if r.score == nil {
						rb.Field(i).AppendNull()
					} else {
						rb.Field(i).(*array.Float64Builder).Append(*r.score)
					}
				default:
					t.Fatalf("unexpected column %q", f.Name)
				}
			}
		}
		recs = append(recs, rb.NewRecordBatch())
	}
	tbl := array.NewTableFromRecords(as, recs)
	for _, r := range recs {
		r.Release()
	}
	t.Cleanup(tbl.Release)
	return tbl
}

// scanRows reads the whole table back, sorted by id.
func scanRows(t *testing.T, tbl *table.Table) []eventRow {
	t.Helper()
	at, err := tbl.Scan().ToArrowTable(icebergCtx(t))
	if err != nil {
		t.Fatalf("scan %v: %v", tbl.Identifier(), err)
	}
	defer at.Release()
	rdr := array.NewTableReader(at, 1024)
	defer rdr.Release()
	var out []eventRow
	for rdr.Next() {
		rec := rdr.RecordBatch()
		n := int(rec.NumRows())
		rows := make([]eventRow, n)
		for c, f := range rec.Schema().Fields() {
			col := rec.Column(c)
			for i := range n {
				switch f.Name {
				case "id":
					rows[i].id = col.(*array.Int64).Value(i)
				case "name":
					rows[i].name = stringAt(t, col, i)
				case "day":
					rows[i].day = int32(col.(*array.Date32).Value(i))
				case "score":
					if col.IsValid(i) {
						v := col.(*array.Float64).Value(i)
						rows[i].score = &v
					}
				default:
					t.Fatalf("scan: unexpected column %q", f.Name)
				}
			}
		}
		out = append(out, rows...)
	}
	if err := rdr.Err(); err != nil {
		t.Fatalf("scan %v: read: %v", tbl.Identifier(), err)
	}
	slices.SortFunc(out, func(a, b eventRow) int { return int(a.id - b.id) })
	return out
}

// stringAt reads a string cell whatever Arrow string layout the scan chose.
func stringAt(t *testing.T, col arrow.Array, i int) string {
	switch c := col.(type) {
	case *array.String:
		return c.Value(i)
	case *array.LargeString:
		return c.Value(i)
	case *array.StringView:
		return c.Value(i)
	}
	t.Fatalf("name column is %T, not a string array", col)
	return ""
}

// wantRows fails unless got equals want (both sorted by id).
func wantRows(t *testing.T, what string, got, want []eventRow) {
	t.Helper()
	same := len(got) == len(want)
	for i := 0; same && i < len(got); i++ {
		g, w := got[i], want[i]
		same = g.id == w.id && g.name == w.name && g.day == w.day &&
			(g.score == nil) == (w.score == nil) && (g.score == nil || *g.score == *w.score)
	}
	if !same {
		t.Fatalf("%s: scanned %d rows, want %d\n got: %v\nwant: %v", what, len(got), len(want), firstRows(got), firstRows(want))
	}
}

func firstRows(rows []eventRow) []eventRow { return rows[:min(len(rows), 8)] }

func sortedRows(parts ...[]eventRow) []eventRow {
	out := slices.Concat(parts...)
	slices.SortFunc(out, func(a, b eventRow) int { return int(a.id - b.id) })
	return out
}
