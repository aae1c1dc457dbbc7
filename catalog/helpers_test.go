package catalog_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/cairnstore/cairn/catalog"
	"github.com/cairnstore/cairn/catalog/objectbacked"
	"github.com/cairnstore/cairn/catalog/strong"
	"github.com/cairnstore/cairn/objstore"
	"github.com/cairnstore/cairn/objstore/storetest"
)

// env is a catalog on a real store in a temporary directory.
type env struct {
	t     testing.TB
	dir   string
	store *objstore.Store
	svc   *catalog.Service
	// durable opens the durable-strong backing instead of the object one.
	durable bool
}

func storeOptions(dir string) objstore.Options {
	return objstore.Options{Dir: dir, DriveCount: 3, Parity: 1, BlockSize: 64 << 10, MinPartSize: 1, NoBackground: true}
}

// newEnv opens a store and a Service on it, with warehouse "lake" and
// namespace ["ns"].
func newEnv(t testing.TB, opt ...func(*catalog.Options)) *env {
	t.Helper()
	e := &env{t: t, dir: t.TempDir()}
	e.open(opt...)
	ctx := context.Background()
	if _, err := e.svc.CreateWarehouse(ctx, "lake"); err != nil {
		t.Fatal(err)
	}
	if err := e.svc.CreateNamespace(ctx, "lake", []string{"ns"}, map[string]string{"owner": "t"}); err != nil {
		t.Fatal(err)
	}
	return e
}

// open opens (or reopens) the store and a Service on it.
func (e *env) open(opt ...func(*catalog.Options)) {
	e.t.Helper()
	e.openWith(storeOptions(e.dir), opt...)
}

// openWith is open with the given store options.
func (e *env) openWith(so objstore.Options, opt ...func(*catalog.Options)) {
	e.t.Helper()
	ctx := context.Background()
	st := storetest.Open(e.t, so)
	e.store = st
	e.t.Cleanup(func() { _ = st.Close() }) // a second Close after reopen is harmless
	var b catalog.Backing
	var err error
	if e.durable {
		b, err = strong.Open(ctx, st, strong.Options{})
	} else {
		b, err = objectbacked.New(ctx, st)
	}
	if err != nil {
		e.t.Fatal(err)
	}
	var o catalog.Options
	o.S3Endpoint = "http://127.0.0.1:9000"
	for _, f := range opt {
		f(&o)
	}
	svc, err := catalog.New(st, b, o)
	if err != nil {
		e.t.Fatal(err)
	}
	e.svc = svc
}

// reopen closes the store and opens it again, as a restart does.
func (e *env) reopen(opt ...func(*catalog.Options)) {
	e.t.Helper()
	if err := e.store.Close(); err != nil {
		e.t.Fatal(err)
	}
	e.open(opt...)
}

func id(name string) catalog.Ident { return catalog.Ident{Namespace: []string{"ns"}, Name: name} }

const schemaJSON = `{"type":"struct","schema-id":0,"fields":[
 {"id":1,"name":"id","type":"long","required":true},
 {"id":2,"name":"data","type":"string","required":false}]}`

func createBody(name string) []byte {
	return []byte(`{"name":"` + name + `","schema":` + schemaJSON + `}`)
}

// mustCreate creates table ns.name.
func (e *env) mustCreate(name string) catalog.TableResult {
	e.t.Helper()
	r, err := e.svc.CreateTable(context.Background(), "lake", []string{"ns"}, createBody(name))
	if err != nil {
		e.t.Fatalf("create %s: %v", name, err)
	}
	return r
}

// meta decodes a result's metadata.
func meta(t testing.TB, raw json.RawMessage) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("metadata: %v", err)
	}
	return m
}

func wantErr(t testing.TB, err, want error) {
	t.Helper()
	if want == nil && err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if want != nil && !errors.Is(err, want) {
		t.Fatalf("error %v, want %v", err, want)
	}
}
