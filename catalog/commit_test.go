package catalog_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cairnstore/cairn/catalog"
)

// snap1 is a snapshot taken now (the builder refuses timestamps before
// the table's last update).
func snap1() string {
	return fmt.Sprintf(`{"snapshot-id":1001,"sequence-number":1,"timestamp-ms":%d,
 "manifest-list":"s3://lake/ns/T/metadata/snap-1001.avro","summary":{"operation":"append"},"schema-id":0}`, time.Now().UnixMilli())
}

// commit sends a CommitTableRequest with the given requirements and
// updates (JSON array bodies) to table ns.name.
func (e *env) commit(name, reqs, upds string) (catalog.TableResult, error) {
	body := fmt.Sprintf(`{"identifier":{"namespace":["ns"],"name":%q},"requirements":%s,"updates":%s}`, name, reqs, upds)
	return e.svc.CommitTable(context.Background(), "lake", id(name), []byte(body))
}

func TestRequirements(t *testing.T) {
	e := newEnv(t)
	r := e.mustCreate("t")
	uuid := meta(t, r.Metadata)["table-uuid"].(string)
	set := `[{"action":"set-properties","updates":{"k":"v"}}]`
	cases := []struct {
		name string
		req  string
		want error
	}{
		{"table-uuid ok", `{"type":"assert-table-uuid","uuid":"` + uuid + `"}`, nil},
		{"table-uuid bad", `{"type":"assert-table-uuid","uuid":"00000000-0000-0000-0000-000000000001"}`, catalog.ErrCommitFailed},
		{"create on existing", `{"type":"assert-create"}`, catalog.ErrCommitFailed},
		{"ref null ok", `{"type":"assert-ref-snapshot-id","ref":"main","snapshot-id":null}`, nil},
		{"ref bad", `{"type":"assert-ref-snapshot-id","ref":"main","snapshot-id":123}`, catalog.ErrCommitFailed},
		{"last field id ok", `{"type":"assert-last-assigned-field-id","last-assigned-field-id":2}`, nil},
		{"last field id bad", `{"type":"assert-last-assigned-field-id","last-assigned-field-id":5}`, catalog.ErrCommitFailed},
		{"schema id ok", `{"type":"assert-current-schema-id","current-schema-id":0}`, nil},
		{"schema id bad", `{"type":"assert-current-schema-id","current-schema-id":1}`, catalog.ErrCommitFailed},
		{"last partition id ok", `{"type":"assert-last-assigned-partition-id","last-assigned-partition-id":999}`, nil},
		{"last partition id bad", `{"type":"assert-last-assigned-partition-id","last-assigned-partition-id":1000}`, catalog.ErrCommitFailed},
		{"default spec ok", `{"type":"assert-default-spec-id","default-spec-id":0}`, nil},
		{"default spec bad", `{"type":"assert-default-spec-id","default-spec-id":1}`, catalog.ErrCommitFailed},
		{"sort order ok", `{"type":"assert-default-sort-order-id","default-sort-order-id":0}`, nil},
		{"sort order bad", `{"type":"assert-default-sort-order-id","default-sort-order-id":1}`, catalog.ErrCommitFailed},
		{"unknown type", `{"type":"assert-nothing"}`, catalog.ErrBadRequest},
		{"missing field", `{"type":"assert-table-uuid"}`, catalog.ErrBadRequest},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before, _ := e.svc.LoadTable(context.Background(), "lake", id("t"), "")
			_, err := e.commit("t", "["+c.req+"]", set)
			wantErr(t, err, c.want)
			after, _ := e.svc.LoadTable(context.Background(), "lake", id("t"), "")
			if c.want != nil && after.MetadataLocation != before.MetadataLocation {
				t.Fatal("a failed commit moved the pointer")
			}
			if c.want == nil && after.MetadataLocation == before.MetadataLocation {
				t.Fatal("a commit did not move the pointer")
			}
		})
	}
	t.Run("assert-create creates", func(t *testing.T) {
		upds := `[{"action":"assign-uuid","uuid":"11111111-1111-1111-1111-111111111111"},
		 {"action":"upgrade-format-version","format-version":2},
		 {"action":"add-schema","schema":` + schemaJSON + `},{"action":"set-current-schema","schema-id":-1},
		 {"action":"add-spec","spec":{"spec-id":0,"fields":[]}},{"action":"set-default-spec","spec-id":-1},
		 {"action":"add-sort-order","sort-order":{"order-id":0,"fields":[]}},{"action":"set-default-sort-order","sort-order-id":-1},
		 {"action":"set-properties","updates":{"a":"b"}}]`
		res, err := e.commit("new", `[{"type":"assert-create"}]`, upds)
		wantErr(t, err, nil)
		m := meta(t, res.Metadata)
		if m["table-uuid"] != "11111111-1111-1111-1111-111111111111" || m["location"] != "s3://lake/ns/new" {
			t.Fatalf("created: %v %v", m["table-uuid"], m["location"])
		}
		_, err = e.commit("new", `[{"type":"assert-create"}]`, upds)
		wantErr(t, err, catalog.ErrCommitFailed)
		_, err = e.commit("absent", `[]`, `[{"action":"set-properties","updates":{"a":"b"}}]`)
		wantErr(t, err, catalog.ErrNoSuchTable)
	})
}

// updateCase is one update test: setup commits (update arrays) run first,
// then upds; check inspects the resulting metadata.
type updateCase struct {
	name  string
	setup []string
	upds  string
	want  error
	check func(t *testing.T, m map[string]any)
}

func has(key string, want any) func(t *testing.T, m map[string]any) {
	return func(t *testing.T, m map[string]any) {
		t.Helper()
		if fmt.Sprint(m[key]) != fmt.Sprint(want) {
			t.Fatalf("%s = %v, want %v", key, m[key], want)
		}
	}
}

func count(key string, n int) func(t *testing.T, m map[string]any) {
	return func(t *testing.T, m map[string]any) {
		t.Helper()
		if l, _ := m[key].([]any); len(l) != n {
			t.Fatalf("%s has %d entries, want %d: %v", key, len(l), n, m[key])
		}
	}
}

func TestUpdates(t *testing.T) {
	var (
		schema2  = `{"action":"add-schema","schema":{"type":"struct","schema-id":1,"fields":[{"id":1,"name":"id","type":"long","required":true},{"id":2,"name":"data","type":"string","required":false},{"id":3,"name":"x","type":"int","required":false}]}}`
		addSpec  = `{"action":"add-spec","spec":{"spec-id":1,"fields":[{"source-id":1,"field-id":1000,"name":"id_bucket","transform":"bucket[4]"}]}}`
		addOrder = `{"action":"add-sort-order","sort-order":{"order-id":1,"fields":[{"source-id":1,"transform":"identity","direction":"asc","null-order":"nulls-first"}]}}`
		addSnap  = `{"action":"add-snapshot","snapshot":` + snap1() + `}`
		setMain  = `{"action":"set-snapshot-ref","ref-name":"main","type":"branch","snapshot-id":1001}`
		stats    = `{"action":"set-statistics","statistics":{"snapshot-id":1001,"statistics-path":"s3://lake/ns/T/stats.puffin","file-size-in-bytes":10,"file-footer-size-in-bytes":5,"blob-metadata":[]}}`
		pstats   = `{"action":"set-partition-statistics","partition-statistics":{"snapshot-id":1001,"statistics-path":"s3://lake/ns/T/p.parquet","file-size-in-bytes":10}}`
	)
	cases := []updateCase{
		{name: "assign-uuid", upds: `[{"action":"assign-uuid","uuid":"22222222-2222-2222-2222-222222222222"}]`, check: has("table-uuid", "22222222-2222-2222-2222-222222222222")},
		{name: "assign-uuid bad", upds: `[{"action":"assign-uuid","uuid":"nope"}]`, want: catalog.ErrBadRequest},
		{name: "upgrade-format-version", upds: `[{"action":"upgrade-format-version","format-version":3}]`, check: has("format-version", 3)},
		{name: "upgrade-format-version downgrade", upds: `[{"action":"upgrade-format-version","format-version":1}]`, want: catalog.ErrBadRequest},
		{name: "add-schema", upds: "[" + schema2 + "]", check: count("schemas", 2)},
		{name: "add-schema bad", upds: `[{"action":"add-schema","schema":{"type":"struct","fields":[{"id":1,"name":"x","type":"nonsense"}]}}]`, want: catalog.ErrBadRequest},
		{name: "set-current-schema", upds: "[" + schema2 + `,{"action":"set-current-schema","schema-id":-1}]`, check: has("current-schema-id", 1)},
		{name: "set-current-schema unknown", upds: `[{"action":"set-current-schema","schema-id":9}]`, want: catalog.ErrBadRequest},
		{name: "remove-schemas", setup: []string{"[" + schema2 + `,{"action":"set-current-schema","schema-id":-1}]`}, upds: `[{"action":"remove-schemas","schema-ids":[0]}]`, check: count("schemas", 1)},
		{name: "remove-schemas current", upds: `[{"action":"remove-schemas","schema-ids":[0]}]`, want: catalog.ErrBadRequest},
		{name: "add-spec", upds: "[" + addSpec + "]", check: count("partition-specs", 2)},
		{name: "add-spec bad source", upds: `[{"action":"add-spec","spec":{"spec-id":1,"fields":[{"source-id":99,"field-id":1000,"name":"b","transform":"identity"}]}}]`, want: catalog.ErrBadRequest},
		{name: "set-default-spec", upds: "[" + addSpec + `,{"action":"set-default-spec","spec-id":-1}]`, check: has("default-spec-id", 1)},
		{name: "set-default-spec unknown", upds: `[{"action":"set-default-spec","spec-id":7}]`, want: catalog.ErrBadRequest},
		{name: "remove-partition-specs", setup: []string{"[" + addSpec + "]"}, upds: `[{"action":"remove-partition-specs","spec-ids":[1]}]`, check: count("partition-specs", 1)},
		{name: "remove-partition-specs default", upds: `[{"action":"remove-partition-specs","spec-ids":[0]}]`, want: catalog.ErrBadRequest},
		{name: "add-sort-order", upds: "[" + addOrder + "]", check: count("sort-orders", 2)},
		{name: "add-sort-order bad source", upds: `[{"action":"add-sort-order","sort-order":{"order-id":1,"fields":[{"source-id":99,"transform":"identity","direction":"asc","null-order":"nulls-first"}]}}]`, want: catalog.ErrBadRequest},
		{name: "set-default-sort-order", upds: "[" + addOrder + `,{"action":"set-default-sort-order","sort-order-id":-1}]`, check: has("default-sort-order-id", 1)},
		{name: "set-default-sort-order unknown", upds: `[{"action":"set-default-sort-order","sort-order-id":7}]`, want: catalog.ErrBadRequest},
		{name: "add-snapshot", upds: "[" + addSnap + "]", check: count("snapshots", 1)},
		{name: "add-snapshot bad", upds: `[{"action":"add-snapshot","snapshot":{"snapshot-id":"x"}}]`, want: catalog.ErrBadRequest},
		{name: "set-snapshot-ref", upds: "[" + addSnap + "," + setMain + "]", check: has("current-snapshot-id", 1001)},
		{name: "set-snapshot-ref unknown snapshot", upds: `[{"action":"set-snapshot-ref","ref-name":"main","type":"branch","snapshot-id":42}]`, want: catalog.ErrBadRequest},
		{name: "remove-snapshot-ref", setup: []string{"[" + addSnap + "," + setMain + `,{"action":"set-snapshot-ref","ref-name":"tag1","type":"tag","snapshot-id":1001}]`}, upds: `[{"action":"remove-snapshot-ref","ref-name":"tag1"}]`, check: func(t *testing.T, m map[string]any) {
			if refs := m["refs"].(map[string]any); refs["tag1"] != nil || refs["main"] == nil {
				t.Fatalf("refs %v", refs)
			}
		}},
		{name: "remove-snapshot-ref missing field", upds: `[{"action":"remove-snapshot-ref"}]`, want: catalog.ErrBadRequest},
		{name: "remove-snapshots", setup: []string{"[" + addSnap + "]"}, upds: `[{"action":"remove-snapshots","snapshot-ids":[1001]}]`, check: count("snapshots", 0)},
		{name: "remove-snapshots missing field", upds: `[{"action":"remove-snapshots"}]`, want: catalog.ErrBadRequest},
		{name: "set-location", upds: `[{"action":"set-location","location":"s3://lake/moved/T"}]`, check: has("location", "s3://lake/moved/T")},
		{name: "set-location outside warehouse", upds: `[{"action":"set-location","location":"s3://other/T"}]`, want: catalog.ErrBadRequest},
		{name: "set-properties", upds: `[{"action":"set-properties","updates":{"a":"1"}}]`, check: func(t *testing.T, m map[string]any) {
			if m["properties"].(map[string]any)["a"] != "1" {
				t.Fatalf("properties %v", m["properties"])
			}
		}},
		{name: "set-properties missing field", upds: `[{"action":"set-properties"}]`, want: catalog.ErrBadRequest},
		{name: "remove-properties", setup: []string{`[{"action":"set-properties","updates":{"a":"1"}}]`}, upds: `[{"action":"remove-properties","removals":["a"]}]`, check: func(t *testing.T, m map[string]any) {
			if p, _ := m["properties"].(map[string]any); p["a"] != nil {
				t.Fatalf("properties %v", p)
			}
		}},
		{name: "remove-properties missing field", upds: `[{"action":"remove-properties"}]`, want: catalog.ErrBadRequest},
		{name: "set-statistics", setup: []string{"[" + addSnap + "]"}, upds: "[" + stats + "]", check: count("statistics", 1)},
		{name: "set-statistics missing field", upds: `[{"action":"set-statistics"}]`, want: catalog.ErrBadRequest},
		{name: "remove-statistics", setup: []string{"[" + addSnap + "," + stats + "]"}, upds: `[{"action":"remove-statistics","snapshot-id":1001}]`, check: count("statistics", 0)},
		{name: "remove-statistics missing field", upds: `[{"action":"remove-statistics"}]`, want: catalog.ErrBadRequest},
		{name: "set-partition-statistics", setup: []string{"[" + addSnap + "]"}, upds: "[" + pstats + "]", check: count("partition-statistics", 1)},
		{name: "set-partition-statistics missing field", upds: `[{"action":"set-partition-statistics"}]`, want: catalog.ErrBadRequest},
		{name: "remove-partition-statistics", setup: []string{"[" + addSnap + "," + pstats + "]"}, upds: `[{"action":"remove-partition-statistics","snapshot-id":1001}]`, check: count("partition-statistics", 0)},
		{name: "remove-partition-statistics missing field", upds: `[{"action":"remove-partition-statistics"}]`, want: catalog.ErrBadRequest},
		{name: "add-encryption-key", setup: []string{`[{"action":"upgrade-format-version","format-version":3}]`}, upds: `[{"action":"add-encryption-key","encryption-key":{"key-id":"k1","encrypted-key-metadata":"AAAA"}}]`, check: count("encryption-keys", 1)},
		{name: "add-encryption-key missing field", upds: `[{"action":"add-encryption-key"}]`, want: catalog.ErrBadRequest},
		{name: "remove-encryption-key", setup: []string{`[{"action":"upgrade-format-version","format-version":3}]`, `[{"action":"add-encryption-key","encryption-key":{"key-id":"k1","encrypted-key-metadata":"AAAA"}}]`}, upds: `[{"action":"remove-encryption-key","key-id":"k1"}]`, check: count("encryption-keys", 0)},
		{name: "remove-encryption-key missing field", upds: `[{"action":"remove-encryption-key"}]`, want: catalog.ErrBadRequest},
		{name: "unknown action", upds: `[{"action":"make-coffee"}]`, want: catalog.ErrBadRequest},
		{name: "no action", upds: `[{"uuid":"x"}]`, want: catalog.ErrBadRequest},
	}
	e := newEnv(t)
	ctx := context.Background()
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			name := fmt.Sprintf("t%02d", i)
			e.mustCreate(name)
			for _, s := range c.setup {
				if _, err := e.commit(name, "[]", strings.ReplaceAll(s, "/T/", "/"+name+"/")); err != nil {
					t.Fatalf("setup: %v", err)
				}
			}
			before, _ := e.svc.LoadTable(ctx, "lake", id(name), "")
			res, err := e.commit(name, "[]", strings.ReplaceAll(c.upds, "/T/", "/"+name+"/"))
			wantErr(t, err, c.want)
			after, _ := e.svc.LoadTable(ctx, "lake", id(name), "")
			if err != nil {
				if after.MetadataLocation != before.MetadataLocation {
					t.Fatal("a failed commit moved the pointer")
				}
				return
			}
			if after.MetadataLocation != res.MetadataLocation || !strings.HasPrefix(res.MetadataLocation, "s3://lake/") {
				t.Fatalf("pointer %s, result %s", after.MetadataLocation, res.MetadataLocation)
			}
			m := meta(t, res.Metadata)
			if log, _ := m["metadata-log"].([]any); len(log) == 0 {
				t.Fatal("metadata-log does not list the previous file")
			}
			if c.check != nil {
				c.check(t, m)
			}
		})
	}
}

// TestCommitStats counts commits and conflicts as CommitTable answers
// them; bad requests and missing tables are neither.
func TestCommitStats(t *testing.T) {
	e := newEnv(t)
	e.mustCreate("t")
	set := `[{"action":"set-properties","updates":{"k":"v"}}]`
	steps := []struct {
		name, table, reqs  string
		commits, conflicts uint64 // after the step
	}{
		{"commit", "t", `[]`, 1, 0},
		{"another commit", "t", `[]`, 2, 0},
		{"conflict", "t", `[{"type":"assert-create"}]`, 2, 1},
		{"bad request", "t", `[{"type":"assert-nothing"}]`, 2, 1},
		{"no such table", "absent", `[]`, 2, 1},
		{"conflict again", "t", `[{"type":"assert-current-schema-id","current-schema-id":7}]`, 2, 2},
	}
	base := e.svc.CommitStats() // creating the table may have counted
	for _, st := range steps {
		_, _ = e.commit(st.table, st.reqs, set)
		got := e.svc.CommitStats()
		got.Commits -= base.Commits
		got.Conflicts -= base.Conflicts
		if got != (catalog.CommitStats{Commits: st.commits, Conflicts: st.conflicts}) {
			t.Fatalf("after %s: %+v, want %d commits, %d conflicts", st.name, got, st.commits, st.conflicts)
		}
	}
}
