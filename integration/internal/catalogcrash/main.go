// Command catalogcrash is the child process of the catalog crash test
// (integration/catalog_crash_test.go). On a data directory it opens the
// store and a catalog on the object backing, as cmd/cairn wires them,
// creates warehouse "crashlake", namespace ["ns"] and table "t", commits
// one set-properties update normally, then starts a second commit whose
// failpoint hook prints "KILL ME" and blocks forever, so that the parent
// SIGKILLs it between the metadata write and the pointer flip.
//
// Protocol (stdout, one line each):
//
//	OLD <metadata-location>   the table after the first commit
//	NEW <metadata-location>   the file the second commit wrote
//	KILL ME                   the second commit is stopped at the hook
//
// -hook picks the failpoint: "before-pointer-flip" (default: the staged
// commit is on record) or "after-metadata-write" (the metadata file is
// written, the staged commit not yet recorded).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"github.com/cairnstore/cairn/catalog"
	"github.com/cairnstore/cairn/catalog/objectbacked"
	"github.com/cairnstore/cairn/integration/internal/workerstore"
)

const (
	warehouse = "crashlake"
	schema    = `{"type":"struct","schema-id":0,"fields":[` +
		`{"id":1,"name":"id","type":"long","required":true},` +
		`{"id":2,"name":"data","type":"string","required":false}]}`
	firstCommit  = `{"requirements":[],"updates":[{"action":"set-properties","updates":{"round":"1","first":"yes"}}]}`
	secondCommit = `{"requirements":[],"updates":[{"action":"set-properties","updates":{"round":"2","second":"yes"}}]}`
)

func fail(what string, err error) {
	fmt.Fprintf(os.Stderr, "catalogcrash: %s: %v\n", what, err)
	os.Exit(1)
}

func say(line string) {
	if _, err := os.Stdout.WriteString(line + "\n"); err != nil {
		os.Exit(3)
	}
	_ = os.Stdout.Sync() // unbuffered already; Sync fails harmlessly on a pipe
}

func main() {
	dir := flag.String("data", "", "data directory")
	hook := flag.String("hook", "before-pointer-flip", "failpoint: before-pointer-flip or after-metadata-write")
	flag.Parse()
	if *dir == "" {
		fail("flags", errors.New("-data is required"))
	}
	ctx := context.Background()
	st, err := workerstore.Open(ctx, *dir)
	if err != nil {
		fail("store", err)
	}
	b, err := objectbacked.New(ctx, st)
	if err != nil {
		fail("object backing", err)
	}
	id := catalog.Ident{Namespace: []string{"ns"}, Name: "t"}
	// The hook is armed only for the second commit.
	var armed atomic.Bool
	stop := func(_ context.Context, _ catalog.Ident, loc string) error {
		if !armed.Load() {
			return nil
		}
		say("NEW " + loc)
		say("KILL ME")
		for {
			time.Sleep(time.Hour)
		}
	}
	var o catalog.Options
	switch *hook {
	case "before-pointer-flip":
		o.Hooks.BeforePointerFlip = stop
	case "after-metadata-write":
		o.Hooks.AfterMetadataWrite = stop
	default:
		fail("flags", fmt.Errorf("unknown -hook %q", *hook))
	}
	svc, err := catalog.New(st, b, o)
	if err != nil {
		fail("catalog", err)
	}
	if _, err := svc.CreateWarehouse(ctx, warehouse); err != nil && !errors.Is(err, catalog.ErrAlreadyExists) {
		fail("create warehouse", err)
	}
	if err := svc.CreateNamespace(ctx, warehouse, []string{"ns"}, map[string]string{"owner": "crash"}); err != nil && !errors.Is(err, catalog.ErrAlreadyExists) {
		fail("create namespace", err)
	}
	if _, err := svc.CreateTable(ctx, warehouse, []string{"ns"}, []byte(`{"name":"t","schema":`+schema+`}`)); err != nil {
		fail("create table", err)
	}
	r, err := svc.CommitTable(ctx, warehouse, id, []byte(firstCommit))
	if err != nil {
		fail("first commit", err)
	}
	say("OLD " + r.MetadataLocation)
	armed.Store(true)
	_, err = svc.CommitTable(ctx, warehouse, id, []byte(secondCommit))
	fail("second commit returned", err) // the hook never returns
}
