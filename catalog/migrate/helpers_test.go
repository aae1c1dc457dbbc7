package migrate

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/cairnstore/cairn/catalog"
	"github.com/cairnstore/cairn/catalog/objectbacked"
	"github.com/cairnstore/cairn/catalog/strong"
	"github.com/cairnstore/cairn/objstore"
	"github.com/cairnstore/cairn/objstore/storetest"
)

// env is an object-backed catalog with its cutover on a real store.
type env struct {
	t      testing.TB
	dir    string
	store  *objstore.Store
	ob     *objectbacked.Backing
	sb     *strong.Backing
	fences *Fences
	svc    *catalog.Service
	m      *Migrator
	hooks  Hooks
	chooks catalog.Hooks
	// storeOpt overrides storeOptions (benchmarks).
	storeOpt func(dir string) objstore.Options
}

func storeOptions(dir string) objstore.Options {
	return objstore.Options{Dir: dir, DriveCount: 3, Parity: 1, BlockSize: 64 << 10, MinPartSize: 1, NoBackground: true}
}

// newEnv opens a store with warehouses "lake" and "sea", each holding
// namespace ns and table ns.t (lake also view ns.v).
func newEnv(t testing.TB) *env {
	t.Helper()
	e := &env{t: t, dir: t.TempDir()}
	e.reopen()
	ctx := context.Background()
	for _, wh := range []string{"lake", "sea"} {
		if _, err := e.svc.CreateWarehouse(ctx, wh); err != nil {
			t.Fatal(err)
		}
		if err := e.svc.CreateNamespace(ctx, wh, []string{"ns"}, map[string]string{"owner": "t"}); err != nil {
			t.Fatal(err)
		}
		e.createTable(wh, "t")
	}
	if _, err := e.svc.CreateView(ctx, "lake", []string{"ns"}, []byte(viewBody("v"))); err != nil {
		t.Fatal(err)
	}
	return e
}

// reopen simulates a restart: the store, both backings, the fences, the
// Service and the Migrator are opened again from disk.
func (e *env) reopen() {
	e.t.Helper()
	ctx := context.Background()
	if e.store != nil {
		_ = e.store.Close()
	}
	so := storeOptions(e.dir)
	if e.storeOpt != nil {
		so = e.storeOpt(e.dir)
	}
	st := storetest.Open(e.t, so)
	e.store = st
	var err error
	if e.ob, err = objectbacked.New(ctx, st); err != nil {
		e.t.Fatal(err)
	}
	if e.sb, err = strong.Open(ctx, st, strong.Options{}); err != nil {
		e.t.Fatal(err)
	}
	if e.fences, err = OpenFences(ctx, st); err != nil {
		e.t.Fatal(err)
	}
	if e.svc, err = catalog.New(st, e.ob, catalog.Options{Gate: e.fences, Hooks: e.chooks}); err != nil {
		e.t.Fatal(err)
	}
	if e.m, err = New(e.svc, e.ob, e.sb, e.fences, Options{Hooks: Hooks{At: func(p string) error {
		if e.hooks.At != nil {
			return e.hooks.At(p)
		}
		return nil
	}}}); err != nil {
		e.t.Fatal(err)
	}
}

// strongService is a Service over the durable-strong backing, as a
// server restarted with CAIRN_TABLE_CATALOG_BACKING=durable-strong has.
func (e *env) strongService() *catalog.Service {
	e.t.Helper()
	svc, err := catalog.New(e.store, e.sb, catalog.Options{})
	if err != nil {
		e.t.Fatal(err)
	}
	return svc
}

const schema = `{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","type":"long","required":true}]}`

func (e *env) createTable(wh, name string) {
	e.t.Helper()
	body := fmt.Sprintf(`{"name":%q,"schema":%s}`, name, schema)
	if _, err := e.svc.CreateTable(context.Background(), wh, []string{"ns"}, []byte(body)); err != nil {
		e.t.Fatalf("create %s.%s: %v", wh, name, err)
	}
}

func viewBody(name string) string {
	return fmt.Sprintf(`{"name":%q,"schema":%s,"view-version":{"version-id":1,"timestamp-ms":1,"schema-id":0,"summary":{},"default-namespace":["ns"],"representations":[{"type":"sql","sql":"select 1","dialect":"spark"}]},"properties":{}}`, name, schema)
}

// setProp commits a property change to table ns.t of wh on svc.
func setProp(ctx context.Context, svc *catalog.Service, wh, k, v string) error {
	body := fmt.Sprintf(`{"requirements":[],"updates":[{"action":"set-properties","updates":{%q:%q}}]}`, k, v)
	_, err := svc.CommitTable(ctx, wh, catalog.Ident{Namespace: []string{"ns"}, Name: "t"}, []byte(body))
	return err
}

func mustIs(t testing.TB, err, target error, what string) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("%s: %v, want %v", what, err, target)
	}
}
