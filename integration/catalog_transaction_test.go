package integration

import (
	"net/http"
	"testing"

	"github.com/cairnstore/cairn/catalog"
)

// TestCatalogMultiTableTransaction: POST .../transactions/commit of two
// tables moves both on the durable-strong backing, and neither when one
// requirement fails; the object backing answers 406 for more than one
// table.
func TestCatalogMultiTableTransaction(t *testing.T) {
	change := func(name, req, v string) string {
		return `{"identifier":{"namespace":["ns"],"name":"` + name + `"},"requirements":` + req +
			`,"updates":[{"action":"set-properties","updates":{"txn":"` + v + `"}}]}`
	}
	txn := func(a, b string) string { return `{"table-changes":[` + a + `,` + b + `]}` }
	path := "/iceberg/v1/" + cfA + "/transactions/commit"
	load := func(t *testing.T, s *server, name string) restTable {
		var lt restTable
		cfWant(t, s, http.MethodGet, "/iceberg/v1/"+cfA+"/namespaces/ns/tables/"+name, "", http.StatusOK, &lt)
		return lt
	}
	for _, backing := range []string{catalog.BackingObject, catalog.BackingDurableStrong} {
		t.Run(backing, func(t *testing.T) {
			s := cfStart(t, t.TempDir(), cfEnv{backing: backing})
			cfMakeWarehouse(t, s, cfA)
			cfWant(t, s, http.MethodPost, "/iceberg/v1/"+cfA+"/namespaces/ns/tables", `{"name":"u","schema":`+cfSchema+`}`, http.StatusOK, nil)
			r := cfCall(t, s, cfRoot, http.MethodPost, path, txn(change("t", "[]", "1"), change("u", "[]", "1")))
			if backing == catalog.BackingObject {
				cfWantErr(t, "two tables on the object backing", r, http.StatusNotAcceptable, "UnsupportedOperationException")
				if got := load(t, s, "t").Metadata.Properties["txn"]; got != "" {
					t.Fatalf("a refused transaction changed t: %q", got)
				}
				cfStop(t, s)
				return
			}
			if r.status != http.StatusNoContent {
				t.Fatalf("transaction: %s, want 204", r)
			}
			tt, u := load(t, s, "t"), load(t, s, "u")
			if tt.Metadata.Properties["txn"] != "1" || u.Metadata.Properties["txn"] != "1" {
				t.Fatalf("after the transaction: t %v, u %v", tt.Metadata.Properties, u.Metadata.Properties)
			}
			bad := `[{"type":"assert-table-uuid","uuid":"00000000-0000-0000-0000-000000000000"}]`
			r = cfCall(t, s, cfRoot, http.MethodPost, path, txn(change("t", "[]", "2"), change("u", bad, "2")))
			cfWantErr(t, "a failed requirement", r, http.StatusConflict, "CommitFailedException")
			if got := load(t, s, "t"); got.MetadataLocation != tt.MetadataLocation || got.Metadata.Properties["txn"] != "1" {
				t.Fatalf("a failed transaction moved t: %s %v", got.MetadataLocation, got.Metadata.Properties)
			}
			cfStop(t, s)
		})
	}
}
