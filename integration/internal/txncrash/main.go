// Command txncrash is the child process of the multi-table transaction
// crash test (integration/catalog_transaction_test.go). On a data
// directory it opens the store and a catalog on the backing -backing
// names, as cmd/cairn wires them, creates warehouse "txnlake", namespace
// ["ns"] and tables t1, t2 and t3 (unless they exist), then commits
// transactions of the three tables in a loop, each setting property
// "round" to its number on all of them, until it is killed.
//
// Protocol (stdout, one line each):
//
//	READY        the tables exist; the loop starts
//	ROUND <n>    transaction n committed (acknowledged)
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/cairnstore/cairn/catalog"
	"github.com/cairnstore/cairn/catalog/objectbacked"
	"github.com/cairnstore/cairn/catalog/strong"
	"github.com/cairnstore/cairn/integration/internal/workerstore"
)

const (
	warehouse = "txnlake"
	schema    = `{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","type":"long","required":true}]}`
)

func fail(what string, err error) {
	_, _ = fmt.Fprintf(os.Stderr, "txncrash: %s: %v\n", what, err)
	os.Exit(1)
}

func say(line string) {
	if _, err := os.Stdout.WriteString(line + "\n"); err != nil {
		os.Exit(3)
	}
}

func main() {
	dir := flag.String("data", "", "data directory")
	backing := flag.String("backing", catalog.BackingObject, "catalog backing: "+catalog.BackingObject+" or "+catalog.BackingDurableStrong)
	flag.Parse()
	if *dir == "" {
		fail("flags", errors.New("-data is required"))
	}
	ctx := context.Background()
	st, err := workerstore.Open(ctx, *dir)
	if err != nil {
		fail("store", err)
	}
	var b catalog.Backing
	switch *backing {
	case catalog.BackingObject:
		b, err = objectbacked.New(ctx, st)
	case catalog.BackingDurableStrong:
		b, err = strong.Open(ctx, st, strong.Options{})
	default:
		err = fmt.Errorf("unknown backing %q", *backing)
	}
	if err != nil {
		fail("backing", err)
	}
	svc, err := catalog.New(st, b, catalog.Options{})
	if err != nil {
		fail("catalog", err)
	}
	if _, err := svc.CreateWarehouse(ctx, warehouse); err != nil && !errors.Is(err, catalog.ErrAlreadyExists) {
		fail("create warehouse", err)
	}
	if err := svc.CreateNamespace(ctx, warehouse, []string{"ns"}, nil); err != nil && !errors.Is(err, catalog.ErrAlreadyExists) {
		fail("create namespace", err)
	}
	tables := []string{"t1", "t2", "t3"}
	for _, n := range tables {
		if _, err := svc.CreateTable(ctx, warehouse, []string{"ns"}, []byte(`{"name":"`+n+`","schema":`+schema+`}`)); err != nil && !errors.Is(err, catalog.ErrAlreadyExists) {
			fail("create table", err)
		}
	}
	say("READY")
	for round := 1; ; round++ {
		changes := make([]string, len(tables))
		for i, n := range tables {
			changes[i] = `{"identifier":{"namespace":["ns"],"name":"` + n + `"},"requirements":[],` +
				`"updates":[{"action":"set-properties","updates":{"round":"` + strconv.Itoa(round) + `"}}]}`
		}
		body := `{"table-changes":[` + strings.Join(changes, ",") + `]}`
		if err := svc.CommitTransaction(ctx, warehouse, []byte(body)); err != nil {
			fail(fmt.Sprintf("transaction %d", round), err)
		}
		say("ROUND " + strconv.Itoa(round))
	}
}
