package strong

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/cairnstore/cairn/catalog"
	"github.com/cairnstore/cairn/catalog/backingtest"
	"github.com/cairnstore/cairn/objstore"
	"github.com/cairnstore/cairn/objstore/storetest"
)

const schemaJSON = `{"type":"struct","schema-id":0,"fields":[
 {"id":1,"name":"id","type":"long","required":true},
 {"id":2,"name":"data","type":"string","required":false}]}`

func ident(name string) catalog.Ident { return catalog.Ident{Namespace: []string{"ns"}, Name: name} }

// newService builds a catalog Service on the durable-strong backing.
func newService(t *testing.T, st *objstore.Store) (*catalog.Service, *Backing) {
	t.Helper()
	b := openBacking(t, st, Options{})
	svc, err := catalog.New(st, b, catalog.Options{S3Endpoint: "http://127.0.0.1:9000"})
	if err != nil {
		t.Fatal(err)
	}
	return svc, b
}

// TestCatalogLifecycle runs the catalog's table lifecycle on this backing,
// across a restart.
func TestCatalogLifecycle(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	so := objstore.Options{Dir: dir, DriveCount: 3, Parity: 1, BlockSize: 64 << 10, MinPartSize: 1, NoBackground: true}
	st := storetest.Open(t, so)
	svc, _ := newService(t, st)
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	_, err := svc.CreateWarehouse(ctx, "lake")
	must("create warehouse", err)
	must("create namespace", svc.CreateNamespace(ctx, "lake", []string{"ns"}, map[string]string{"owner": "t"}))
	for _, n := range []string{"t1", "t2", "t3"} {
		_, err := svc.CreateTable(ctx, "lake", []string{"ns"}, []byte(`{"name":"`+n+`","schema":`+schemaJSON+`}`))
		must("create "+n, err)
	}
	_, err = svc.CreateTable(ctx, "lake", []string{"ns"}, []byte(`{"name":"t1","schema":`+schemaJSON+`}`))
	if !errors.Is(err, catalog.ErrAlreadyExists) {
		t.Fatalf("create twice: %v", err)
	}
	body := `{"identifier":{"namespace":["ns"],"name":"t1"},"requirements":[],"updates":[{"action":"set-properties","updates":{"k":"v"}}]}`
	_, err = svc.CommitTable(ctx, "lake", ident("t1"), []byte(body))
	must("commit", err)
	must("rename", svc.RenameTable(ctx, "lake", ident("t2"), ident("moved")))
	must("drop", svc.DropTable(ctx, "lake", ident("t3"), true))

	// Restart.
	must("close", st.Close())
	st = storetest.Open(t, so)
	svc, b := newService(t, st)
	if u := b.Unhealthy(); len(u) != 0 {
		t.Fatalf("unhealthy: %v", u)
	}
	must("recover", svc.Recover(ctx))
	r, err := svc.LoadTable(ctx, "lake", ident("t1"), "")
	must("load", err)
	if string(r.Metadata) == "" || r.MetadataLocation == "" {
		t.Fatalf("loaded %+v", r)
	}
	ids, _, err := svc.ListTables(ctx, "lake", []string{"ns"}, "", 0)
	must("list", err)
	if len(ids) != 2 || ids[0].Name != "moved" || ids[1].Name != "t1" {
		t.Fatalf("tables %v", ids)
	}
	if _, err := svc.LoadTable(ctx, "lake", ident("t3"), ""); !errors.Is(err, catalog.ErrNoSuchTable) {
		t.Fatalf("dropped table: %v", err)
	}
	ws, err := svc.ListWarehouses(ctx)
	if err != nil || len(ws) != 1 || ws[0].Name != "lake" {
		t.Fatalf("warehouses %v %v", ws, err)
	}

	// Concurrent commits from two Services (two processes) on one table:
	// exactly one wins per round.
	svc2, _ := newService(t, st)
	done := make(chan error, 2)
	for i, s := range []*catalog.Service{svc, svc2} {
		go func() {
			b := fmt.Sprintf(`{"identifier":{"namespace":["ns"],"name":"t1"},"requirements":[{"type":"assert-ref-snapshot-id","ref":"main","snapshot-id":null},{"type":"assert-last-assigned-field-id","last-assigned-field-id":2}],"updates":[{"action":"set-properties","updates":{"w%d":"x"}}]}`, i)
			_, err := s.CommitTable(ctx, "lake", ident("t1"), []byte(b))
			done <- err
		}()
	}
	var ok, failed int
	for range 2 {
		switch err := <-done; {
		case err == nil:
			ok++
		case errors.Is(err, catalog.ErrCommitFailed):
			failed++
		default:
			t.Fatalf("commit: %v", err)
		}
	}
	if ok < 1 || ok+failed != 2 {
		t.Fatalf("%d won, %d failed", ok, failed)
	}
}

// TestQuarantineCleanupThroughCatalog: a format-1 snapshot in which ns.t
// is both a table and a view (left by an older binary, say) makes the
// catalog answer ErrQuarantined for the colliding identifier while the
// rest is served; dropping the view is the cleanup, after which the table
// loads again.
func TestQuarantineCleanupThroughCatalog(t *testing.T) {
	ctx := context.Background()
	st := newStore(t)
	svc, b := newService(t, st)
	seedLake(t, svc, "t", "u")
	s, err := b.current(ctx, "lake")
	if err != nil {
		t.Fatal(err)
	}
	bad := s.clone()
	bad.Generation++
	key := catalog.TableKey(ident("t"))
	rec, _ := bad.get(catalog.KindTable, key)
	bad.put(catalog.KindView, key, rec.Value, bad.Generation)
	data, err := encode(bad)
	if err != nil {
		t.Fatal(err)
	}
	putRaw(t, st, "lake", data)
	svc, b = newService(t, st)
	if q := b.Quarantined()["lake"]; len(q) != 1 {
		t.Fatalf("quarantined: %v", q)
	}
	if _, err := svc.LoadTable(ctx, "lake", ident("t"), ""); !errors.Is(err, catalog.ErrQuarantined) {
		t.Fatalf("load of a colliding table: %v", err)
	}
	if _, err := svc.LoadTable(ctx, "lake", ident("u"), ""); err != nil {
		t.Fatalf("an unrelated table is still served: %v", err)
	}
	body := `{"requirements":[],"updates":[{"action":"set-properties","updates":{"k":"v"}}]}`
	if _, err := svc.CommitTable(ctx, "lake", ident("u"), []byte(body)); !errors.Is(err, catalog.ErrQuarantined) {
		t.Fatalf("a write that keeps the collision: %v", err)
	}
	if err := svc.DropView(ctx, "lake", ident("t")); err != nil {
		t.Fatalf("cleanup drop: %v", err)
	}
	if q := b.Quarantined()["lake"]; len(q) != 0 {
		t.Fatalf("still quarantined: %v", q)
	}
	if _, err := svc.LoadTable(ctx, "lake", ident("t"), ""); err != nil {
		t.Fatalf("after cleanup: %v", err)
	}
	if _, err := svc.CommitTable(ctx, "lake", ident("u"), []byte(body)); err != nil {
		t.Fatalf("write after cleanup: %v", err)
	}
}

// TestMultiTableTransaction runs the multi-table transaction suite on
// this backing.
func TestMultiTableTransaction(t *testing.T) {
	backingtest.RunTransactions(t, func(t *testing.T) backingtest.TxEnv {
		ctx := context.Background()
		st := newStore(t)
		var hook func() error
		svc, err := catalog.New(st, openBacking(t, st, Options{}), catalog.Options{Hooks: catalog.Hooks{
			BeforePointerFlip: func(context.Context, catalog.Ident, string) error {
				if h := hook; h != nil {
					hook = nil
					return h()
				}
				return nil
			},
		}})
		if err != nil {
			t.Fatal(err)
		}
		seedLake(t, svc, "t1", "t2", "t3")
		return backingtest.TxEnv{Svc: svc, Hook: &hook, Files: func() int {
			page, err := st.List(ctx, "lake", objstore.ListOptions{Prefix: "ns/"})
			if err != nil {
				t.Fatal(err)
			}
			return len(page.Objects)
		}}
	})
}

// TestDirectFlip: on this backing a commit flips its pointer without a
// staged record (one publish); a commit stopped before the flip leaves
// only its metadata file, which recovery removes once it is old enough.
func TestDirectFlip(t *testing.T) {
	ctx := context.Background()
	st := newStore(t)
	b := openBacking(t, st, Options{})
	var stop error
	now := time.Now()
	svc, err := catalog.New(st, b, catalog.Options{
		Now:   func() time.Time { return now },
		Hooks: catalog.Hooks{BeforePointerFlip: func(context.Context, catalog.Ident, string) error { return stop }},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateWarehouse(ctx, "lake"); err != nil {
		t.Fatal(err)
	}
	if err := svc.CreateNamespace(ctx, "lake", []string{"ns"}, nil); err != nil {
		t.Fatal(err)
	}
	created, err := svc.CreateTable(ctx, "lake", []string{"ns"}, []byte(`{"name":"t","schema":`+schemaJSON+`}`))
	if err != nil {
		t.Fatal(err)
	}
	gen := func() uint64 {
		s, err := b.current(ctx, "lake")
		if err != nil {
			t.Fatal(err)
		}
		return s.Generation
	}
	body := []byte(`{"requirements":[],"updates":[{"action":"set-properties","updates":{"k":"v"}}]}`)
	g0 := gen()
	if _, err := svc.CommitTable(ctx, "lake", ident("t"), body); err != nil {
		t.Fatal(err)
	}
	if d := gen() - g0; d != 1 {
		t.Fatalf("a commit published %d times, want once", d)
	}
	recs, _, err := b.List(ctx, "lake", catalog.KindCommit, catalog.ListOptions{})
	if err != nil || len(recs) != 0 {
		t.Fatalf("commit records: %v %v", recs, err)
	}
	stop = errors.New("crash")
	if _, err := svc.CommitTable(ctx, "lake", ident("t"), body); !errors.Is(err, catalog.ErrCommitStateUnknown) {
		t.Fatalf("stopped commit: %v", err)
	}
	stop = nil
	count := func() int {
		page, err := st.List(ctx, "lake", objstore.ListOptions{Prefix: "ns/t/metadata/"})
		if err != nil {
			t.Fatal(err)
		}
		return len(page.Objects)
	}
	if n := count(); n != 3 {
		t.Fatalf("%d metadata files, want 3 (create, commit, the stopped one)", n)
	}
	now = now.Add(time.Hour)
	rep, err := svc.RecoverWarehouse(ctx, "lake", false)
	if err != nil || len(rep.Repaired) != 1 || rep.Repaired[0].Action != catalog.RecoverDropOrphan || count() != 2 {
		t.Fatalf("recover: %+v %v, %d files", rep, err, count())
	}
	if l, err := svc.LoadTable(ctx, "lake", ident("t"), ""); err != nil || l.MetadataLocation == created.MetadataLocation {
		t.Fatalf("table after recovery: %v", err)
	}
}

// seedLake creates warehouse lake, namespace ns and the named tables.
func seedLake(t *testing.T, svc *catalog.Service, tables ...string) {
	t.Helper()
	ctx := context.Background()
	if _, err := svc.CreateWarehouse(ctx, "lake"); err != nil {
		t.Fatal(err)
	}
	if err := svc.CreateNamespace(ctx, "lake", []string{"ns"}, nil); err != nil {
		t.Fatal(err)
	}
	for _, n := range tables {
		if _, err := svc.CreateTable(ctx, "lake", []string{"ns"}, []byte(`{"name":"`+n+`","schema":`+schemaJSON+`}`)); err != nil {
			t.Fatal(err)
		}
	}
}
