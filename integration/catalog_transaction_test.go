package integration

import (
	"context"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cairnstore/cairn/catalog"
	"github.com/cairnstore/cairn/catalog/objectbacked"
	"github.com/cairnstore/cairn/catalog/strong"
	"github.com/cairnstore/cairn/objstore"
	"github.com/cairnstore/cairn/objstore/storetest"
)

// TestCatalogMultiTableTransaction: POST .../transactions/commit of three
// tables moves all of them, and none when one requirement fails, on both
// backings.
func TestCatalogMultiTableTransaction(t *testing.T) {
	change := func(name, req, v string) string {
		return `{"identifier":{"namespace":["ns"],"name":"` + name + `"},"requirements":` + req +
			`,"updates":[{"action":"set-properties","updates":{"txn":"` + v + `"}}]}`
	}
	txn := func(changes ...string) string { return `{"table-changes":[` + strings.Join(changes, ",") + `]}` }
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
			for _, n := range []string{"u", "v"} {
				cfWant(t, s, http.MethodPost, "/iceberg/v1/"+cfA+"/namespaces/ns/tables", `{"name":"`+n+`","schema":`+cfSchema+`}`, http.StatusOK, nil)
			}
			r := cfCall(t, s, cfRoot, http.MethodPost, path, txn(change("t", "[]", "1"), change("u", "[]", "1"), change("v", "[]", "1")))
			if r.status != http.StatusNoContent {
				t.Fatalf("transaction: %s, want 204", r)
			}
			before := map[string]restTable{}
			for _, n := range []string{"t", "u", "v"} {
				before[n] = load(t, s, n)
				if got := before[n].Metadata.Properties["txn"]; got != "1" {
					t.Fatalf("after the transaction %s has txn %q, want 1", n, got)
				}
			}
			bad := `[{"type":"assert-table-uuid","uuid":"00000000-0000-0000-0000-000000000000"}]`
			r = cfCall(t, s, cfRoot, http.MethodPost, path, txn(change("t", "[]", "2"), change("u", "[]", "2"), change("v", bad, "2")))
			cfWantErr(t, "a failed requirement", r, http.StatusConflict, "CommitFailedException")
			for _, n := range []string{"t", "u", "v"} {
				if got := load(t, s, n); got.MetadataLocation != before[n].MetadataLocation || got.Metadata.Properties["txn"] != "1" {
					t.Fatalf("a failed transaction moved %s: %s %v", n, got.MetadataLocation, got.Metadata.Properties)
				}
			}
			cfStop(t, s)
		})
	}
}

// TestCatalogTransactionCrash SIGKILLs a process committing
// transactions of three tables in a loop (integration/internal/txncrash)
// at a random moment, on both backings, three times each: after every
// kill the three tables are at one round (all of a transaction or none),
// no acknowledged round is lost, and fsck finds the store clean.
func TestCatalogTransactionCrash(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "txncrash")
	if err := goBuild(context.Background(), bin, "./integration/internal/txncrash"); err != nil {
		t.Fatalf("build txncrash: %v", err)
	}
	for _, backing := range []string{catalog.BackingObject, catalog.BackingDurableStrong} {
		t.Run(backing, func(t *testing.T) {
			dir := t.TempDir()
			acked := 0
			for kill := range 3 {
				last := killTxnWorker(t, bin, dir, backing, acked+3)
				round := txnRound(t, dir, backing)
				if round < last || round > last+1 {
					t.Fatalf("kill %d: the tables are at round %d; the worker had acknowledged %d (at most one more may have landed)", kill, round, last)
				}
				t.Logf("kill %d: acknowledged %d, found %d", kill, last, round)
				acked = round
			}
		})
	}
}

// killTxnWorker runs the worker on dir until it has acknowledged at least
// atLeast rounds, SIGKILLs it a random moment later, and returns the last
// round it acknowledged.
func killTxnWorker(t *testing.T, bin, dir, backing string, atLeast int) int {
	t.Helper()
	cmd, lines, stderr := startLineWorker(t, bin, "-data", dir, "-backing", backing)
	last, killAt := 0, time.Time{}
	timeout := time.After(catalogCrashWait)
	for {
		var tick <-chan time.Time
		if !killAt.IsZero() {
			tick = time.After(time.Until(killAt))
		}
		select {
		case l, ok := <-lines:
			if !ok {
				_ = cmd.Wait()
				t.Fatalf("worker exited (%v) after round %d\nstderr:\n%s", cmd.ProcessState, last, stderr.String())
			}
			if n, found := strings.CutPrefix(l, "ROUND "); found {
				last, _ = strconv.Atoi(n)
			}
			if last >= atLeast && killAt.IsZero() {
				killAt = time.Now().Add(time.Duration(rand.IntN(40)) * time.Millisecond)
			}
		case <-tick:
			_ = cmd.Process.Signal(syscall.SIGKILL)
			_ = cmd.Wait()
			for l := range lines { // what it printed before it died
				if n, found := strings.CutPrefix(l, "ROUND "); found {
					last, _ = strconv.Atoi(n)
				}
			}
			return last
		case <-timeout:
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			t.Fatalf("worker acknowledged %d rounds in %v, want %d\nstderr:\n%s", last, catalogCrashWait, atLeast, stderr.String())
		}
	}
}

// txnRound opens the store in-process after a kill, checks that the
// three tables are at one round and returns it, then closes the store
// and runs fsck.
func txnRound(t *testing.T, dir, backing string) int {
	t.Helper()
	ctx := context.Background()
	opt := objstore.Options{Dir: dir, Parity: -1, Index: storetest.OpenBolt(t, dir)}
	st, err := objstore.Open(ctx, opt)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	var b catalog.Backing
	if backing == catalog.BackingObject {
		b, err = objectbacked.New(ctx, st)
	} else {
		b, err = strong.Open(ctx, st, strong.Options{})
	}
	if err != nil {
		_ = st.Close()
		t.Fatalf("backing: %v", err)
	}
	svc, err := catalog.New(st, b, catalog.Options{})
	if err != nil {
		_ = st.Close()
		t.Fatal(err)
	}
	var rounds []string
	for _, n := range []string{"t1", "t2", "t3"} {
		l, err := svc.LoadTable(ctx, "txnlake", catalog.Ident{Namespace: []string{"ns"}, Name: n}, "")
		if err != nil {
			_ = st.Close()
			t.Fatalf("load %s: %v", n, err)
		}
		rounds = append(rounds, metadataProps(t, l.Metadata)["round"])
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if rounds[0] != rounds[1] || rounds[1] != rounds[2] {
		t.Fatalf("after the kill the tables are at rounds %v: a transaction landed in part", rounds)
	}
	opt.Index = storetest.OpenBolt(t, dir)
	rep, err := objstore.Fsck(ctx, opt, nil)
	if err != nil {
		t.Fatalf("fsck: %v", err)
	}
	if !rep.Clean() {
		t.Fatalf("fsck after the kill: %s", fsckSummary(rep))
	}
	round, _ := strconv.Atoi(rounds[0]) // "" before the first: 0
	return round
}
