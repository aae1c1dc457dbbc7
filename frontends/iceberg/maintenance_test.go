package iceberg

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/cairnstore/cairn/catalog"
)

// fakeMaintainer records the runs asked of it.
type fakeMaintainer struct {
	runs []catalog.Ident
	cat  *fakeCatalog
}

func (m *fakeMaintainer) Run(ctx context.Context, wh string, id catalog.Ident) (catalog.Maintenance, error) {
	m.runs = append(m.runs, id)
	return m.cat.Maintenance(ctx, wh, &id)
}

func TestMaintenanceRoutes(t *testing.T) {
	e := newEnv(t)
	e.seed()
	mt := &fakeMaintainer{cat: e.cat}
	e.s.opt.Maintainer = mt
	const tbl = "/iceberg/v1/wh/namespaces/a/tables/t1/maintenance"
	cases := []struct {
		name, user, method, target, body string
		want                             int
		wantType                         string
	}{
		{"get table", "reader", "GET", tbl, "", 200, ""},
		{"set table", "writer", "PUT", tbl + "/icebergSnapshotManagement", `{"enabled":true,"min-snapshots-to-keep":3,"max-snapshot-age":"48h"}`, 200, ""},
		{"reader may not set", "reader", "PUT", tbl + "/icebergCompaction", `{"enabled":true}`, 403, "ForbiddenException"},
		{"unknown job", "writer", "PUT", tbl + "/icebergSort", `{"enabled":true}`, 400, "BadRequestException"},
		{"bad duration", "writer", "PUT", tbl + "/icebergSnapshotManagement", `{"enabled":true,"max-snapshot-age":"two days"}`, 400, "BadRequestException"},
		{"not JSON", "writer", "PUT", tbl + "/icebergCompaction", `{`, 400, "BadRequestException"},
		{"bounds", "writer", "PUT", tbl + "/icebergCompaction", `{"enabled":true,"target-file-size-bytes":5}`, 400, "BadRequestException"},
		{"missing table", "reader", "GET", "/iceberg/v1/wh/namespaces/a/tables/nope/maintenance", "", 404, "NoSuchTableException"},
		{"set warehouse", "writer", "PUT", "/iceberg/v1/wh/maintenance/icebergUnreferencedFileRemoval", `{"enabled":true,"unreferenced-after":"72h"}`, 200, ""},
		{"get warehouse", "reader", "GET", "/iceberg/v1/wh/maintenance", "", 200, ""},
		{"run", "writer", "POST", tbl + "/run", "", 200, ""},
		{"reader may not run", "reader", "POST", tbl + "/run", "", 403, "ForbiddenException"},
		{"run is a POST", "writer", "GET", tbl + "/run", "", 405, "MethodNotAllowedException"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := e.do(c.user, c.method, c.target, c.body)
			if w.Code != c.want {
				t.Fatalf("%d %s, want %d", w.Code, w.Body, c.want)
			}
			if c.wantType != "" {
				if got := errorOf(t, w); got.Type != c.wantType || got.Message == "" {
					t.Fatalf("error %+v, want %s with a message", got, c.wantType)
				}
			}
		})
	}
	if len(mt.runs) != 1 || mt.runs[0].Name != "t1" {
		t.Errorf("runs %v, want the one of a.t1", mt.runs)
	}
	var m catalog.Maintenance
	if err := json.Unmarshal(e.must(200, "GET", tbl, "").Body.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	if c := m.Own[catalog.JobSnapshots]; !c.Enabled || c.MinSnapshotsToKeep != 3 || c.MaxSnapshotAge.Hours() != 48 {
		t.Errorf("table's own snapshot settings %+v", c)
	}
	if c := m.Effective[catalog.JobUnreferenced]; !c.Enabled || c.UnreferencedAfter.Hours() != 72 {
		t.Errorf("the warehouse's removal does not apply: %+v", c)
	}

	// Without a Maintainer, a run is refused as unsupported.
	e.s.opt.Maintainer = nil
	if w := e.do("writer", "POST", tbl+"/run", ""); w.Code != 406 {
		t.Errorf("run without a maintainer: %d %s, want 406", w.Code, w.Body)
	}
}
