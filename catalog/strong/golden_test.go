package strong

// Golden files pin the snapshot format (doc.go, "Snapshot format"):
// testdata/ holds snapshot objects of formats 1 and 2 as this package
// writes them. The tests check both ways, against states written out here
// rather than derived from the encoder: each committed file decodes to its
// state, and encoding the state gives exactly the committed bytes, so a
// change made to the encoder and the decoder together still fails. A
// Backing opened on a store holding the files serves their records.
//
// go test ./catalog/strong -run Golden -update rewrites the files. Doing
// so means the snapshot format changed: snapshots already published would
// no longer load (every load checks canonical form), so that change needs
// a new format number read beside the old ones, not just new fixtures.

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/cairnstore/cairn/internal/goldentest"

	"github.com/cairnstore/cairn/catalog"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// golden compares got with testdata/name, or writes it there with -update,
// and returns the committed bytes.
func golden(t *testing.T, name string, got []byte) []byte {
	t.Helper()
	return goldentest.Compare(t, filepath.Join("testdata", name), got, *update, "the snapshot format")
}

const (
	nsSep  = "\x1f" // catalog.NamespaceSep
	tabSep = "\x1e" // between a table's namespace and name
)

// lakeKinds is a warehouse state with a record of every kind; count is
// the v2 per-group count (0 for v1).
func lakeKinds(v2 bool) []group {
	gs := []group{
		{Kind: catalog.KindCommit, Records: []record{
			{Key: "00000001-a", Gen: 4, Value: []byte(`{"id":"00000001-a","kind":"table","ident":{"namespace":["db"],"name":"events"},"from-version":"","to-metadata-location":"s3://lake/db/events/metadata/00000.json","state":"committed","created":"2026-03-14T15:09:26Z","updated":"2026-03-14T15:09:27Z"}`)},
		}},
		{Kind: catalog.KindIdempotency, Records: []record{
			{Key: "idem-1", Gen: 4, Value: []byte(`{"status":200,"body":"e30=","expires":"2026-03-15T15:09:26Z"}`)},
		}},
		{Kind: catalog.KindNamespace, Records: []record{
			{Key: "db", Gen: 2, Value: []byte(`{"properties":{"owner":"ana"},"created":"2026-03-14T15:00:00Z"}`)},
			{Key: "db" + nsSep + "raw", Gen: 3, Value: []byte(`{"properties":{},"created":"2026-03-14T15:01:00Z"}`)},
			{Key: "empty-value", Gen: 3, Value: []byte{}},
		}},
		{Kind: catalog.KindPrefix, Records: []record{
			{Key: "db/events/", Gen: 4, Value: []byte(`{"ident":{"namespace":["db"],"name":"events"},"kind":"table"}`)},
		}},
		{Kind: catalog.KindTable, Records: []record{
			{Key: "db" + tabSep + "events", Gen: 4, Value: []byte(`{"metadata-location":"s3://lake/db/events/metadata/00000.json","location":"s3://lake/db/events","updated":"2026-03-14T15:09:27Z"}`)},
			{Key: "db" + nsSep + "raw" + tabSep + "ünïcode", Gen: 5, Value: []byte("\x00\xff binary")},
		}},
		{Kind: catalog.KindView, Records: []record{
			{Key: "db" + tabSep + "recent", Gen: 5, Value: []byte(`{"metadata-location":"s3://lake/db/recent/metadata/v1.json","location":"s3://lake/db/recent","updated":"2026-03-14T15:10:00Z"}`)},
		}},
	}
	if v2 {
		for i := range gs {
			gs[i].Count = len(gs[i].Records)
		}
	}
	return gs
}

var goldenSnapshots = []struct {
	file string
	s    snapshot
}{
	{"v1-lake.snapshot", snapshot{Format: 1, Warehouse: "lake1", Epoch: "0123456789abcdef", Generation: 5, Kinds: lakeKinds(false)}},
	{"v2-lake.snapshot", snapshot{Format: 2, Warehouse: "lake2", Epoch: "fedcba9876543210", Generation: 9, Kinds: lakeKinds(true)}},
	{"v1-registry.snapshot", snapshot{Format: 1, Warehouse: "", Epoch: "00000000000000aa", Generation: 3, Kinds: []group{
		{Kind: catalog.KindWarehouse, Records: []record{
			{Key: "lake1", Gen: 1, Value: []byte(`{"name":"lake1","created":"2026-03-14T15:00:00Z"}`)},
			{Key: "lake2", Gen: 2, Value: []byte(`{"name":"lake2","created":"2026-03-14T15:00:01Z"}`)},
			{Key: "quarantined", Gen: 3, Value: []byte(`{"name":"quarantined","created":"2026-03-14T15:00:02Z"}`)},
		}},
	}}},
	// A format-1 snapshot with an identifier both a table and a view
	// loads in quarantine (format 2 cannot hold one).
	{"v1-quarantine.snapshot", snapshot{Format: 1, Warehouse: "quarantined", Epoch: "1111111111111111", Generation: 2, Kinds: []group{
		{Kind: catalog.KindTable, Records: []record{{Key: "db" + tabSep + "both", Gen: 1, Value: []byte(`{}`)}}},
		{Kind: catalog.KindView, Records: []record{{Key: "db" + tabSep + "both", Gen: 2, Value: []byte(`{}`)}}},
	}}},
}

// TestGoldenSnapshots: each committed snapshot decodes to its state and
// the state encodes to the committed bytes.
func TestGoldenSnapshots(t *testing.T) {
	for _, tc := range goldenSnapshots {
		t.Run(tc.file, func(t *testing.T) {
			enc, err := encode(&tc.s)
			if err != nil {
				t.Fatal(err)
			}
			raw := golden(t, tc.file, enc)
			got, err := decode(raw, tc.s.Warehouse, tc.s.Format)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			if !reflect.DeepEqual(*got, tc.s) {
				t.Fatalf("decoded\n %+v\nwant\n %+v", *got, tc.s)
			}
			if tc.s.Format == formatV1 {
				if _, err := decode(raw, tc.s.Warehouse, formatV2); err == nil {
					t.Fatal("a v1 snapshot loads in a process that has seen v2")
				}
			}
		})
	}
}

// TestGoldenSnapshotsServed: a Backing opened on a store holding the
// committed snapshots serves their records with "<epoch>.<gen>" versions,
// reports each warehouse's format and quarantines the colliding one.
func TestGoldenSnapshotsServed(t *testing.T) {
	if *update {
		t.Skip("updating")
	}
	ctx := context.Background()
	st := newStore(t) // storetest.Open: fsck at cleanup
	if err := st.EnsureSystemBucket(ctx, Bucket); err != nil {
		t.Fatal(err)
	}
	for _, tc := range goldenSnapshots {
		raw, err := os.ReadFile(filepath.Join("testdata", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		putRaw(t, st, tc.s.Warehouse, raw)
	}
	b := openBacking(t, st, Options{})
	if u := b.Unhealthy(); len(u) != 0 {
		t.Fatalf("unhealthy: %v", u)
	}
	reads := []struct {
		wh      string
		kind    catalog.Kind
		key     string
		value   string
		version string
	}{
		{"", catalog.KindWarehouse, "lake2", `{"name":"lake2","created":"2026-03-14T15:00:01Z"}`, "00000000000000aa.2"},
		{"lake1", catalog.KindNamespace, "db", `{"properties":{"owner":"ana"},"created":"2026-03-14T15:00:00Z"}`, "0123456789abcdef.2"},
		{"lake1", catalog.KindNamespace, "empty-value", "", "0123456789abcdef.3"},
		{"lake1", catalog.KindTable, "db" + nsSep + "raw" + tabSep + "ünïcode", "\x00\xff binary", "0123456789abcdef.5"},
		{"lake2", catalog.KindPrefix, "db/events/", `{"ident":{"namespace":["db"],"name":"events"},"kind":"table"}`, "fedcba9876543210.4"},
		{"lake2", catalog.KindView, "db" + tabSep + "recent", `{"metadata-location":"s3://lake/db/recent/metadata/v1.json","location":"s3://lake/db/recent","updated":"2026-03-14T15:10:00Z"}`, "fedcba9876543210.5"},
	}
	for _, r := range reads {
		got, err := b.Get(ctx, r.wh, r.kind, r.key)
		if err != nil {
			t.Fatalf("%q %s %q: %v", r.wh, r.kind, r.key, err)
		}
		if string(got.Value) != r.value || got.Version != r.version {
			t.Fatalf("%q %s %q = %q %q, want %q %q", r.wh, r.kind, r.key, got.Value, got.Version, r.value, r.version)
		}
	}
	for wh, want := range map[string]int{"lake1": 1, "lake2": 2, "quarantined": 1} {
		if cur, hwm := b.Format(wh); cur != want || hwm != want {
			t.Fatalf("Format(%s) = %d %d, want %d", wh, cur, hwm, want)
		}
	}
	if q := b.Quarantined(); len(q) != 1 || !slices.Equal(q["quarantined"], []string{"db" + tabSep + "both"}) {
		t.Fatalf("quarantined: %q", q)
	}
}
