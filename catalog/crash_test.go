package catalog_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairnstore/cairn/catalog"
	"github.com/cairnstore/cairn/objstore"
)

func TestConcurrentCommits(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.mustCreate("t")
	const rounds, writers = 5, 4
	for round := range rounds {
		cur, err := e.svc.LoadTable(ctx, "lake", id("t"), "")
		if err != nil {
			t.Fatal(err)
		}
		uuid := meta(t, cur.Metadata)["table-uuid"].(string)
		// Every writer asserts the same schema id and then changes it, as
		// a client evolving the schema from the same base does.
		schemaID := round
		var wg sync.WaitGroup
		errs := make([]error, writers)
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				upd := fmt.Sprintf(`[{"action":"add-schema","schema":{"type":"struct","schema-id":%d,"fields":[{"id":1,"name":"id","type":"long","required":true},{"id":%d,"name":"c%d_%d","type":"int","required":false}]}},{"action":"set-current-schema","schema-id":-1}]`,
					schemaID+1, 3+round*writers+w, round, w)
				req := fmt.Sprintf(`[{"type":"assert-table-uuid","uuid":%q},{"type":"assert-current-schema-id","current-schema-id":%d}]`, uuid, schemaID)
				_, errs[w] = e.commit("t", req, upd)
			}()
		}
		wg.Wait()
		won := 0
		for _, err := range errs {
			switch {
			case err == nil:
				won++
			case errors.Is(err, catalog.ErrCommitFailed):
			default:
				t.Fatalf("round %d: %v", round, err)
			}
		}
		if won != 1 {
			t.Fatalf("round %d: %d winners (%v)", round, won, errs)
		}
	}
	// Losers left no staged commit and no orphan metadata file behind.
	staged, err := e.svc.StagedCommits(ctx, "lake")
	if err != nil || len(staged) != 0 {
		t.Fatalf("staged after rounds: %v %v", staged, err)
	}
	page, err := e.store.List(ctx, "lake", objstore.ListOptions{Prefix: "ns/t/metadata/"})
	if err != nil || len(page.Objects) != rounds+1 {
		t.Fatalf("%d metadata files, want %d", len(page.Objects), rounds+1)
	}
}

func TestRestartSurvival(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	r := e.mustCreate("t")
	c, err := e.commit("t", "[]", `[{"action":"set-properties","updates":{"k":"v"}}]`)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.CreateView(ctx, "lake", []string{"ns"}, []byte(viewBody)); err != nil {
		t.Fatal(err)
	}
	wantErr(t, e.svc.RememberResponse(ctx, "lake", "key-1", 204, nil), nil)
	e.reopen()
	l, err := e.svc.LoadTable(ctx, "lake", id("t"), "")
	if err != nil || l.MetadataLocation != c.MetadataLocation || l.MetadataLocation == r.MetadataLocation {
		t.Fatalf("after restart: %v %s", err, l.MetadataLocation)
	}
	if ok, _ := e.svc.ViewExists(ctx, "lake", id("v")); !ok {
		t.Fatal("view lost")
	}
	props, err := e.svc.LoadNamespace(ctx, "lake", []string{"ns"})
	if err != nil || props["owner"] != "t" {
		t.Fatalf("namespace: %v %v", props, err)
	}
	if st, _, found, _ := e.svc.RecallResponse(ctx, "lake", "key-1"); !found || st != 204 {
		t.Fatal("idempotency entry lost")
	}
}

func TestCrashBeforeFlip(t *testing.T) {
	for _, hook := range []string{"after-metadata-write", "before-pointer-flip"} {
		t.Run(hook, func(t *testing.T) {
			e := newEnv(t)
			ctx := context.Background()
			old := e.mustCreate("t")
			crash := errors.New("simulated crash")
			e.reopen(func(o *catalog.Options) {
				stop := func(context.Context, catalog.Ident, string) error { return crash }
				if hook == "after-metadata-write" {
					o.Hooks.AfterMetadataWrite = stop
				} else {
					o.Hooks.BeforePointerFlip = stop
				}
			})
			_, err := e.commit("t", "[]", `[{"action":"set-properties","updates":{"k":"v"}}]`)
			if !errors.Is(err, catalog.ErrCommitStateUnknown) || !errors.Is(err, crash) {
				t.Fatalf("commit: %v", err)
			}
			e.reopen()
			l, err := e.svc.LoadTable(ctx, "lake", id("t"), "")
			if err != nil || l.MetadataLocation != old.MetadataLocation {
				t.Fatalf("after crash: %v %s", err, l.MetadataLocation)
			}
			page, _ := e.store.List(ctx, "lake", objstore.ListOptions{Prefix: "ns/t/metadata/"})
			staged, err := e.svc.StagedCommits(ctx, "lake")
			if err != nil {
				t.Fatal(err)
			}
			wantStaged := 1
			if hook == "after-metadata-write" {
				wantStaged = 0 // crashed before the staged record: an orphan file only
			}
			if len(staged) != wantStaged || len(page.Objects) != 2 {
				t.Fatalf("%d staged, %d metadata files", len(staged), len(page.Objects))
			}
			rep, err := e.svc.RecoverReport(ctx)
			if err != nil || rep.Abandoned != wantStaged || rep.Committed != 0 {
				t.Fatalf("recover: %+v %v", rep, err)
			}
			if staged, _ := e.svc.StagedCommits(ctx, "lake"); len(staged) != 0 {
				t.Fatalf("still staged: %v", staged)
			}
			page, _ = e.store.List(ctx, "lake", objstore.ListOptions{Prefix: "ns/t/metadata/"})
			if want := 2 - wantStaged; len(page.Objects) != want {
				t.Fatalf("%d metadata files after recover, want %d", len(page.Objects), want)
			}
			// The table still takes commits.
			if _, err := e.commit("t", "[]", `[{"action":"set-properties","updates":{"k":"v"}}]`); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestRecoverFlipped: a crash after the flip, before the staged entry is
// marked, is resolved as committed.
func TestRecoverFlipped(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.mustCreate("t")
	// Crash before the flip, then move the pointer to the staged target by
	// hand: the state a crash between the flip and the marking leaves.
	e.reopen(func(o *catalog.Options) {
		o.Hooks.BeforePointerFlip = func(context.Context, catalog.Ident, string) error { return errors.New("crash") }
	})
	_, err := e.commit("t", "[]", `[{"action":"set-properties","updates":{"a":"1"}}]`)
	wantErr(t, err, catalog.ErrCommitStateUnknown)
	e.reopen()
	staged, _ := e.svc.StagedCommits(ctx, "lake")
	if len(staged) != 1 {
		t.Fatalf("staged %v", staged)
	}
	// Register the staged target as the pointer: the flip happened.
	if _, err := e.svc.RegisterTable(ctx, "lake", []string{"ns"}, "t", staged[0].To, true); err != nil {
		t.Fatal(err)
	}
	rep, err := e.svc.RecoverReport(ctx)
	if err != nil || rep.Committed != 1 || rep.Abandoned != 0 {
		t.Fatalf("recover: %+v %v", rep, err)
	}
	if _, err := e.svc.LoadTable(ctx, "lake", id("t"), ""); err != nil {
		t.Fatal(err)
	}
}

// TestRecoverOrphanMetadata: a commit stopped between its metadata write
// and its staged record leaves a metadata file nothing names; recovery
// leaves it alone while it may still belong to a commit on its way, and
// removes it once it is old enough, keeping the table's own files.
func TestRecoverOrphanMetadata(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.mustCreate("t")
	if _, err := e.commit("t", "[]", `[{"action":"set-properties","updates":{"k":"1"}}]`); err != nil {
		t.Fatal(err)
	}
	e.reopen(func(o *catalog.Options) {
		o.Hooks.AfterMetadataWrite = func(context.Context, catalog.Ident, string) error { return errors.New("crash") }
	})
	if _, err := e.commit("t", "[]", `[{"action":"set-properties","updates":{"k":"2"}}]`); !errors.Is(err, catalog.ErrCommitStateUnknown) {
		t.Fatalf("commit: %v", err)
	}
	files := func() int {
		page, err := e.store.List(ctx, "lake", objstore.ListOptions{Prefix: "ns/t/metadata/"})
		if err != nil {
			t.Fatal(err)
		}
		return len(page.Objects)
	}
	if n := files(); n != 3 {
		t.Fatalf("%d metadata files, want 3 (two versions and the orphan)", n)
	}
	e.reopen()
	rep, err := e.svc.RecoverWarehouse(ctx, "lake", false)
	if err != nil || len(rep.Repaired) != 0 || files() != 3 {
		t.Fatalf("a young orphan was touched: %+v %v", rep, err)
	}
	later := time.Now().Add(time.Hour)
	e.reopen(func(o *catalog.Options) { o.Now = func() time.Time { return later } })
	rep, err = e.svc.RecoverWarehouse(ctx, "lake", true)
	if err != nil || len(rep.Repaired) != 1 || rep.Repaired[0].Action != catalog.RecoverDropOrphan || files() != 3 {
		t.Fatalf("dry run: %+v %v (%d files)", rep, err, files())
	}
	if _, err := e.svc.RecoverWarehouse(ctx, "lake", false); err != nil || files() != 2 {
		t.Fatalf("recover: %v, %d files left, want 2", err, files())
	}
	l, err := e.svc.LoadTable(ctx, "lake", id("t"), "")
	if err != nil || !strings.Contains(string(l.Metadata), `"k":"1"`) {
		t.Fatalf("table after recovery: %v", err)
	}
	if rep, err := e.svc.RecoverWarehouse(ctx, "lake", true); err != nil || len(rep.Repaired) != 0 {
		t.Fatalf("second pass: %+v %v", rep, err)
	}
}
