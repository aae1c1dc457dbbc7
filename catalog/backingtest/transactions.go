package backingtest

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/cairnstore/cairn/catalog"
)

// TxEnv is what RunTransactions needs of a Service on the backing under
// test: the Service, with warehouse "lake", namespace ["ns"] and tables
// t1, t2 and t3 made; Hook, which the Service's BeforePointerFlip hook
// calls (once, then it is cleared) when set; and Files, the number of
// objects under lake/ns/ (metadata files).
type TxEnv struct {
	Svc   *catalog.Service
	Hook  *func() error
	Files func() int
}

// TxSchema is the schema RunTransactions' environments create tables
// with.
const TxSchema = `{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","type":"long","required":true}]}`

// RunTransactions checks multi-table transactions
// (Service.CommitTransaction) on a backing: three tables move together;
// a failed requirement on one moves none and leaves no metadata file
// behind; a table changed by another writer between the transaction's
// reads and its flip makes the whole transaction fail, nothing of it
// applied; no staged commit is left; a table named twice is a bad
// request.
func RunTransactions(t *testing.T, open func(t *testing.T) TxEnv) {
	ctx := context.Background()
	e := open(t)
	svc := e.Svc
	change := func(name, req, v string) string {
		return `{"identifier":{"namespace":["ns"],"name":"` + name + `"},"requirements":` + req +
			`,"updates":[{"action":"set-properties","updates":{"k":"` + v + `"}}]}`
	}
	txn := func(changes ...string) error {
		return svc.CommitTransaction(ctx, "lake", []byte(`{"table-changes":[`+strings.Join(changes, ",")+`]}`))
	}
	prop := func(name string) string {
		t.Helper()
		r, err := svc.LoadTable(ctx, "lake", catalog.Ident{Namespace: []string{"ns"}, Name: name}, "")
		if err != nil {
			t.Fatal(err)
		}
		var m struct {
			Properties map[string]string `json:"properties"`
		}
		if err := json.Unmarshal(r.Metadata, &m); err != nil {
			t.Fatal(err)
		}
		return m.Properties["k"]
	}
	props := func() string { return prop("t1") + "," + prop("t2") + "," + prop("t3") }

	if err := txn(change("t1", "[]", "a"), change("t2", "[]", "a"), change("t3", "[]", "a")); err != nil {
		t.Fatalf("a transaction of three tables: %v", err)
	}
	if got := props(); got != "a,a,a" {
		t.Fatalf("after the transaction: %s, want a,a,a", got)
	}
	before := e.Files()
	bad := `[{"type":"assert-table-uuid","uuid":"00000000-0000-0000-0000-000000000000"}]`
	if err := txn(change("t1", "[]", "b"), change("t2", "[]", "b"), change("t3", bad, "b")); !errors.Is(err, catalog.ErrCommitFailed) {
		t.Fatalf("a failed requirement: %v, want ErrCommitFailed", err)
	}
	if got := props(); got != "a,a,a" || e.Files() != before {
		t.Fatalf("a failed transaction changed something: %s, %d files (was %d)", got, e.Files(), before)
	}
	// t2 changes between the transaction's reads and its flip.
	*e.Hook = func() error {
		_, err := svc.CommitTable(ctx, "lake", catalog.Ident{Namespace: []string{"ns"}, Name: "t2"}, []byte(change("t2", "[]", "other")))
		return err
	}
	if err := txn(change("t1", "[]", "c"), change("t2", "[]", "c"), change("t3", "[]", "c")); !errors.Is(err, catalog.ErrCommitFailed) {
		t.Fatalf("a transaction that lost the race: %v, want ErrCommitFailed", err)
	}
	if got := props(); got != "a,other,a" {
		t.Fatalf("after the lost race: %s, want a,other,a", got)
	}
	if staged, err := svc.StagedCommits(ctx, "lake"); err != nil || len(staged) != 0 {
		t.Fatalf("staged commits left: %v %v", staged, err)
	}
	if err := txn(change("t1", "[]", "d"), change("t1", "[]", "e")); !errors.Is(err, catalog.ErrBadRequest) {
		t.Fatalf("one table twice: %v, want ErrBadRequest", err)
	}
}
