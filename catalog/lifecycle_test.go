package catalog_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/cairnstore/cairn/catalog"
	"github.com/cairnstore/cairn/objstore"
)

func TestWarehouseLifecycle(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	if _, err := e.svc.CreateWarehouse(ctx, "lake"); !errorsIs(err, catalog.ErrAlreadyExists) {
		t.Fatalf("second create: %v", err)
	}
	if err := e.store.CreateBucket(ctx, "adopted", objstore.BucketOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.CreateWarehouse(ctx, "adopted"); err != nil {
		t.Fatalf("adopt: %v", err)
	}
	for _, bad := range []string{"", "A", ".cairn.sys", "x/y"} {
		if _, err := e.svc.CreateWarehouse(ctx, bad); !errorsIs(err, catalog.ErrBadRequest) {
			t.Errorf("create %q: %v", bad, err)
		}
	}
	ws, err := e.svc.ListWarehouses(ctx)
	if err != nil || len(ws) != 2 || ws[0].Name != "adopted" || ws[1].Name != "lake" {
		t.Fatalf("list: %v %v", ws, err)
	}
	if err := e.svc.DeleteWarehouse(ctx, "lake"); !errorsIs(err, catalog.ErrNamespaceNotEmpty) {
		t.Fatalf("delete non-empty: %v", err)
	}
	if err := e.svc.DeleteWarehouse(ctx, "adopted"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.GetWarehouse(ctx, "adopted"); !errorsIs(err, catalog.ErrNoSuchWarehouse) {
		t.Fatalf("get deleted: %v", err)
	}
	if _, _, err := e.svc.Config(ctx, "nope"); !errorsIs(err, catalog.ErrNoSuchWarehouse) {
		t.Fatalf("config unknown: %v", err)
	}
	def, over, err := e.svc.Config(ctx, "lake")
	if err != nil || over["prefix"] != "lake" || def["s3.path-style-access"] != "true" || def["s3.endpoint"] == "" || def["client.region"] == "" {
		t.Fatalf("config: %v %v %v", def, over, err)
	}
	bs, _ := e.store.ListBuckets(ctx)
	for _, b := range bs {
		if objstore.IsSystemBucket(b.Name) {
			t.Errorf("system bucket %s listed", b.Name)
		}
	}
}

func TestNamespaceLifecycle(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	svc := e.svc
	wantErr(t, svc.CreateNamespace(ctx, "lake", []string{"ns"}, nil), catalog.ErrAlreadyExists)
	wantErr(t, svc.CreateNamespace(ctx, "nope", []string{"x"}, nil), catalog.ErrNoSuchWarehouse)
	for i := range 5 {
		wantErr(t, svc.CreateNamespace(ctx, "lake", []string{fmt.Sprintf("a%d", i)}, nil), nil)
	}
	wantErr(t, svc.CreateNamespace(ctx, "lake", []string{"a0", "child"}, nil), nil)
	wantErr(t, svc.CreateNamespace(ctx, "lake", []string{"a0", "child", "deep"}, nil), nil)
	wantErr(t, svc.CreateNamespace(ctx, "lake", []string{"TEST NS"}, nil), nil)

	// Paging, one level only.
	var all [][]string
	tok := ""
	for {
		page, next, err := svc.ListNamespaces(ctx, "lake", nil, tok, 2)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, page...)
		if next == "" {
			break
		}
		tok = next
	}
	if len(all) != 7 {
		t.Fatalf("top level: %v", all)
	}
	kids, _, err := svc.ListNamespaces(ctx, "lake", []string{"a0"}, "", 0)
	if err != nil || !reflect.DeepEqual(kids, [][]string{{"a0", "child"}}) {
		t.Fatalf("children: %v %v", kids, err)
	}
	_, _, err = svc.ListNamespaces(ctx, "lake", []string{"missing"}, "", 0)
	wantErr(t, err, catalog.ErrNoSuchNamespace)

	props, err := svc.LoadNamespace(ctx, "lake", []string{"ns"})
	if err != nil || props["owner"] != "t" {
		t.Fatalf("load: %v %v", props, err)
	}
	up, rm, miss, err := svc.UpdateNamespaceProperties(ctx, "lake", []string{"ns"}, []string{"owner", "gone"}, map[string]string{"a": "1"})
	if err != nil || !reflect.DeepEqual(up, []string{"a"}) || !reflect.DeepEqual(rm, []string{"owner"}) || !reflect.DeepEqual(miss, []string{"gone"}) {
		t.Fatalf("update: %v %v %v %v", up, rm, miss, err)
	}
	_, _, _, err = svc.UpdateNamespaceProperties(ctx, "lake", []string{"ns"}, []string{"a"}, map[string]string{"a": "2"})
	wantErr(t, err, catalog.ErrUnprocessable)
	_, _, _, err = svc.UpdateNamespaceProperties(ctx, "lake", []string{"missing"}, nil, map[string]string{"a": "2"})
	wantErr(t, err, catalog.ErrNoSuchNamespace)

	ok, err := svc.NamespaceExists(ctx, "lake", []string{"a0", "child"})
	if !ok || err != nil {
		t.Fatalf("exists: %v %v", ok, err)
	}
	wantErr(t, svc.DropNamespace(ctx, "lake", []string{"a0"}), catalog.ErrNamespaceNotEmpty)
	wantErr(t, svc.DropNamespace(ctx, "lake", []string{"a0", "child", "deep"}), nil)
	wantErr(t, svc.DropNamespace(ctx, "lake", []string{"a0", "child"}), nil)
	wantErr(t, svc.DropNamespace(ctx, "lake", []string{"a0"}), nil)
	wantErr(t, svc.DropNamespace(ctx, "lake", []string{"a0"}), catalog.ErrNoSuchNamespace)
	e.mustCreate("t")
	wantErr(t, svc.DropNamespace(ctx, "lake", []string{"ns"}), catalog.ErrNamespaceNotEmpty)
}

func TestTableLifecycle(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	svc := e.svc
	r := e.mustCreate("t1")
	md := meta(t, r.Metadata)
	if md["location"] != "s3://lake/ns/t1" || r.MetadataLocation == "" || r.Config["s3.endpoint"] == "" {
		t.Fatalf("create result: %s %v", r.MetadataLocation, md["location"])
	}
	// Fresh field ids: the request's 1,2 stay 1,2; ids 3,4 would too.
	if md["last-column-id"].(float64) != 2 {
		t.Fatalf("last-column-id %v", md["last-column-id"])
	}
	_, err := svc.CreateTable(ctx, "lake", []string{"ns"}, createBody("t1"))
	wantErr(t, err, catalog.ErrAlreadyExists)
	_, err = svc.CreateTable(ctx, "lake", []string{"missing"}, createBody("t1"))
	wantErr(t, err, catalog.ErrNoSuchNamespace)
	_, err = svc.CreateTable(ctx, "lake", []string{"ns"}, []byte(`{"name":"x","location":"s3://other/x","schema":`+schemaJSON+`}`))
	wantErr(t, err, catalog.ErrBadRequest)

	// Staged create persists nothing; the commit with assert-create does.
	st, err := svc.CreateTable(ctx, "lake", []string{"ns"}, []byte(`{"name":"staged","stage-create":true,"schema":`+schemaJSON+`}`))
	if err != nil || st.MetadataLocation != "" {
		t.Fatalf("stage: %v %q", err, st.MetadataLocation)
	}
	if ok, _ := svc.TableExists(ctx, "lake", id("staged")); ok {
		t.Fatal("staged table exists")
	}

	l, err := svc.LoadTable(ctx, "lake", id("t1"), "refs")
	if err != nil || l.MetadataLocation != r.MetadataLocation || l.ETag == "" {
		t.Fatalf("load: %v", err)
	}
	_, err = svc.LoadTable(ctx, "lake", id("nope"), "")
	wantErr(t, err, catalog.ErrNoSuchTable)
	_, err = svc.LoadTable(ctx, "lake", catalog.Ident{Namespace: []string{"zz"}, Name: "t"}, "")
	wantErr(t, err, catalog.ErrNoSuchNamespace)

	for i := range 3 {
		e.mustCreate(fmt.Sprintf("p%d", i))
	}
	ids, next, err := svc.ListTables(ctx, "lake", []string{"ns"}, "", 3)
	if err != nil || len(ids) != 3 || next == "" {
		t.Fatalf("list page 1: %v %q %v", ids, next, err)
	}
	ids2, next2, err := svc.ListTables(ctx, "lake", []string{"ns"}, next, 3)
	if err != nil || len(ids2) != 1 || next2 != "" {
		t.Fatalf("list page 2: %v %q %v", ids2, next2, err)
	}

	// Prefix index.
	got, err := svc.TableForLocation(ctx, "lake", "s3://lake/ns/t1/data/x.parquet")
	if err != nil || got.Name != "t1" {
		t.Fatalf("for location: %v %v", got, err)
	}
	_, err = svc.TableForLocation(ctx, "lake", "s3://lake/elsewhere/x")
	wantErr(t, err, catalog.ErrNoSuchTable)

	// Rename keeps the files and the prefix index follows.
	wantErr(t, svc.RenameTable(ctx, "lake", id("t1"), id("p0")), catalog.ErrAlreadyExists)
	wantErr(t, svc.RenameTable(ctx, "lake", id("t1"), catalog.Ident{Namespace: []string{"zz"}, Name: "t"}), catalog.ErrNoSuchNamespace)
	wantErr(t, svc.RenameTable(ctx, "lake", id("t1"), id("renamed")), nil)
	if ok, _ := svc.TableExists(ctx, "lake", id("t1")); ok {
		t.Fatal("old name exists")
	}
	got, err = svc.TableForLocation(ctx, "lake", "s3://lake/ns/t1/data/x.parquet")
	if err != nil || got.Name != "renamed" {
		t.Fatalf("for location after rename: %v %v", got, err)
	}

	// Register adopts the metadata file under a new name.
	reg, err := svc.RegisterTable(ctx, "lake", []string{"ns"}, "reg", r.MetadataLocation, false)
	if err != nil || reg.MetadataLocation != r.MetadataLocation {
		t.Fatalf("register: %v", err)
	}
	_, err = svc.RegisterTable(ctx, "lake", []string{"ns"}, "reg", r.MetadataLocation, false)
	wantErr(t, err, catalog.ErrAlreadyExists)
	_, err = svc.RegisterTable(ctx, "lake", []string{"ns"}, "reg", r.MetadataLocation, true)
	wantErr(t, err, nil)
	_, err = svc.RegisterTable(ctx, "lake", []string{"ns"}, "reg2", "s3://lake/ns/none.metadata.json", false)
	wantErr(t, err, catalog.ErrBadRequest)
	// A metadata file the S3 face encrypted (a bucket with default
	// encryption) is refused, not parsed as ciphertext.
	enc := []byte(`{"format-version": 2}`)
	if _, err := e.store.Put(ctx, "lake", "ns/enc.metadata.json", bytesReader(enc), int64(len(enc)),
		objstore.PutOptions{Attrs: objstore.Attrs{Sys: map[string]string{objstore.SysEncryption: "record"}}}); err != nil {
		t.Fatal(err)
	}
	_, err = svc.RegisterTable(ctx, "lake", []string{"ns"}, "enc", "s3://lake/ns/enc.metadata.json", false)
	wantErr(t, err, catalog.ErrBadRequest)
	if err == nil || !strings.Contains(err.Error(), "encrypted") {
		t.Fatalf("register of an encrypted metadata file: %v, want an error saying it is encrypted", err)
	}
	wantErr(t, svc.DropTable(ctx, "lake", id("reg"), false), nil)

	// Purge deletes data and metadata under the location.
	data := []byte("parquet bytes")
	if _, err := e.store.Put(ctx, "lake", "ns/t1/data/x.parquet", bytesReader(data), int64(len(data)), objstore.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	wantErr(t, svc.DropTable(ctx, "lake", id("renamed"), true), nil)
	page, err := e.store.List(ctx, "lake", objstore.ListOptions{Prefix: "ns/t1/"})
	if err != nil || len(page.Objects) != 0 {
		t.Fatalf("after purge: %v %v", page.Objects, err)
	}
	wantErr(t, svc.DropTable(ctx, "lake", id("renamed"), false), catalog.ErrNoSuchTable)
	// A plain drop keeps the files.
	wantErr(t, svc.DropTable(ctx, "lake", id("p0"), false), nil)
	page, _ = e.store.List(ctx, "lake", objstore.ListOptions{Prefix: "ns/p0/"})
	if len(page.Objects) == 0 {
		t.Fatal("drop without purge removed files")
	}
}

const viewBody = `{"name":"v","schema":` + schemaJSON + `,
 "view-version":{"version-id":1,"schema-id":0,"timestamp-ms":1700000000000,"summary":{"engine-name":"spark"},
  "representations":[{"type":"sql","sql":"select * from ns.t","dialect":"spark"}],"default-namespace":["ns"]},
 "properties":{"comment":"c"}}`

func TestViewLifecycle(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	svc := e.svc
	r, err := svc.CreateView(ctx, "lake", []string{"ns"}, []byte(viewBody))
	if err != nil {
		t.Fatal(err)
	}
	md := meta(t, r.Metadata)
	uuid := md["view-uuid"].(string)
	_, err = svc.CreateView(ctx, "lake", []string{"ns"}, []byte(viewBody))
	wantErr(t, err, catalog.ErrAlreadyExists)
	// One identifier space.
	_, err = svc.CreateTable(ctx, "lake", []string{"ns"}, createBody("v"))
	wantErr(t, err, catalog.ErrAlreadyExists)
	e.mustCreate("t")
	_, err = svc.CreateView(ctx, "lake", []string{"ns"}, []byte(`{"name":"t"`+viewBody[len(`{"name":"v"`):]))
	wantErr(t, err, catalog.ErrAlreadyExists)

	ok, err := svc.ViewExists(ctx, "lake", id("v"))
	if !ok || err != nil {
		t.Fatalf("exists %v %v", ok, err)
	}
	if ok, _ := svc.TableExists(ctx, "lake", id("v")); ok {
		t.Fatal("view seen as table")
	}
	ids, _, err := svc.ListViews(ctx, "lake", []string{"ns"}, "", 0)
	if err != nil || len(ids) != 1 || ids[0].Name != "v" {
		t.Fatalf("list: %v %v", ids, err)
	}

	replace := `{"requirements":[{"type":"assert-view-uuid","uuid":"` + uuid + `"}],"updates":[
	 {"action":"add-view-version","view-version":{"version-id":2,"schema-id":0,"timestamp-ms":1700000001000,"summary":{"engine-name":"spark"},
	  "representations":[{"type":"sql","sql":"select id from ns.t","dialect":"spark"}],"default-namespace":["ns"]}},
	 {"action":"set-current-view-version","view-version-id":-1},
	 {"action":"set-properties","updates":{"k":"v"}}]}`
	r2, err := svc.ReplaceView(ctx, "lake", id("v"), []byte(replace))
	if err != nil {
		t.Fatal(err)
	}
	md2 := meta(t, r2.Metadata)
	if md2["current-version-id"].(float64) != 2 || r2.MetadataLocation == r.MetadataLocation {
		t.Fatalf("replace: %v", md2["current-version-id"])
	}
	bad := `{"requirements":[{"type":"assert-view-uuid","uuid":"00000000-0000-0000-0000-000000000001"}],"updates":[]}`
	_, err = svc.ReplaceView(ctx, "lake", id("v"), []byte(bad))
	wantErr(t, err, catalog.ErrCommitFailed)
	_, err = svc.ReplaceView(ctx, "lake", id("v"), []byte(`{"updates":[{"action":"bogus"}]}`))
	wantErr(t, err, catalog.ErrBadRequest)

	wantErr(t, svc.RenameView(ctx, "lake", id("v"), id("t")), catalog.ErrAlreadyExists)
	wantErr(t, svc.RenameView(ctx, "lake", id("v"), id("v2")), nil)
	l, err := svc.LoadView(ctx, "lake", id("v2"))
	if err != nil || l.MetadataLocation != r2.MetadataLocation {
		t.Fatalf("load renamed: %v", err)
	}
	wantErr(t, svc.DropView(ctx, "lake", id("v2")), nil)
	_, err = svc.LoadView(ctx, "lake", id("v2"))
	wantErr(t, err, catalog.ErrNoSuchView)
}

func TestIdempotencyAndMetrics(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	key := "0190b5e8-7f6c-7a1b-9a3e-2f1d5c4b3a29"
	_, _, found, err := e.svc.RecallResponse(ctx, "lake", key)
	if found || err != nil {
		t.Fatalf("recall empty: %v %v", found, err)
	}
	wantErr(t, e.svc.RememberResponse(ctx, "lake", key, 200, []byte(`{"a":1}`)), nil)
	st, body, found, err := e.svc.RecallResponse(ctx, "lake", key)
	if !found || err != nil || st != 200 || string(body) != `{"a":1}` {
		t.Fatalf("recall: %v %s %v %v", st, body, found, err)
	}
	wantErr(t, e.svc.RememberResponse(ctx, "lake", key, 503, nil), catalog.ErrBadRequest)
	_, _, _, err = e.svc.RecallResponse(ctx, "lake", "bad/key")
	wantErr(t, err, catalog.ErrBadRequest)

	e.mustCreate("t")
	wantErr(t, e.svc.ReportMetrics(ctx, "lake", id("t"), []byte(`{"report-type":"scan-report","table-name":"ns.t"}`)), nil)
	wantErr(t, e.svc.ReportMetrics(ctx, "lake", id("t"), []byte(`[1]`)), catalog.ErrBadRequest)
	wantErr(t, e.svc.ReportMetrics(ctx, "lake", id("t"), []byte(`{"x":1}`)), catalog.ErrBadRequest)
	wantErr(t, e.svc.ReportMetrics(ctx, "lake", id("nope"), []byte(`{"report-type":"scan-report"}`)), catalog.ErrNoSuchTable)
}
