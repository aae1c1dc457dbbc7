package catalog

// Golden files pin the JSON values of the records the catalog keeps in
// its backing (records.go): testdata/records/ holds one of each kind. The
// test checks both ways, against records written out here rather than
// derived from the encoder: each committed file decodes to its record, and
// encoding the record gives exactly the committed bytes, so renaming a
// JSON tag (which changes encoder and decoder together) fails.
//
// go test ./catalog -run Golden -update rewrites the files. Doing so means
// the record format changed: records already in a backing (either one)
// would no longer read the same, so that change needs a migration or a
// decoder that keeps reading the old form, not just new fixtures.

import (
	"encoding/json"
	"flag"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/cairnstore/cairn/internal/goldentest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

func TestGoldenRecords(t *testing.T) {
	t0 := time.Date(2026, 3, 14, 15, 9, 26, 535897932, time.UTC)
	t1 := time.Date(2026, 3, 15, 0, 0, 0, 0, time.UTC)
	events := Ident{Namespace: []string{"db", "raw"}, Name: "events"}
	cases := []struct {
		name string
		rec  any
		zero func() any
	}{
		{"warehouse", warehouseRec{Name: "lake", Created: t0}, func() any { return &warehouseRec{} }},
		{"namespace", namespaceRec{Properties: map[string]string{"owner": "ana", "comment": "raw ingest"}, Created: t0},
			func() any { return &namespaceRec{} }},
		{"pointer", pointerRec{MetadataLocation: "s3://lake/db/raw/events/metadata/00001-x.metadata.json",
			Location: "s3://lake/db/raw/events", Updated: t1}, func() any { return &pointerRec{} }},
		{"commit-staged", commitRec{ID: "0000018e3a1b2c3d-1b4e28ba-2fa1-4d3b-8c1e-6f9a7b5c3d2e", Kind: KindTable, Ident: events,
			FromVersion: "0123456789abcdef.4", From: "s3://lake/db/raw/events/metadata/00000-a.metadata.json",
			To: "s3://lake/db/raw/events/metadata/00001-x.metadata.json", State: commitStaged, Created: t0, Updated: t0},
			func() any { return &commitRec{} }},
		{"commit-create", commitRec{ID: "0000018e3a1b2c3e-view", Kind: KindView, Ident: Ident{Namespace: []string{"db"}, Name: "recent"},
			To: "s3://lake/db/recent/metadata/v1.json", State: commitCommitted, Created: t0, Updated: t1},
			func() any { return &commitRec{} }},
		{"idempotency", idempotencyRec{Status: 200, Body: []byte(`{"metadata-location":"s3://x"}`), Expires: t1},
			func() any { return &idempotencyRec{} }},
		{"prefix", prefixRec{Ident: events, Kind: KindTable}, func() any { return &prefixRec{} }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			enc, err := json.Marshal(tc.rec) // as putJSON writes it
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", "records", tc.name+".json")
			raw := goldentest.Compare(t, path, enc, *update, "the record format")
			got := tc.zero()
			if err := json.Unmarshal(raw, got); err != nil { // as getJSON reads it
				t.Fatal(err)
			}
			if g := reflect.ValueOf(got).Elem().Interface(); !reflect.DeepEqual(g, tc.rec) {
				t.Fatalf("decoded\n %+v\nwant\n %+v", g, tc.rec)
			}
		})
	}
}
