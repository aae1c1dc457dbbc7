package catalog_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cairnstore/cairn/catalog"
	"github.com/cairnstore/cairn/catalog/objectbacked"
	"github.com/cairnstore/cairn/objstore"
)

// agreeCase is a state a crash and what followed left a table in, with
// one staged commit (from -> to) on table ns.t.
type agreeCase struct {
	name string
	// after runs once the commit is staged; it returns the table's
	// current metadata location (or "" when the table is gone) and may
	// break files.
	after func(t *testing.T, e *env, from, to string) (cur string)
	want  string // the recovery action: ROLL_FORWARD, ROLL_BACK or MANUAL_REVIEW
}

// TestRecoveryPathsAgree: startup recovery (Service.Recover) and the
// operator's (Inspect, then RecoverWarehouse) classify every staged
// commit the same and leave the same files, each on its own copy of the
// same state. When the current metadata file cannot be read, both leave
// the commit staged and delete nothing the table lists.
func TestRecoveryPathsAgree(t *testing.T) {
	register := func(t *testing.T, e *env, loc string) {
		t.Helper()
		if _, err := e.svc.RegisterTable(context.Background(), "lake", []string{"ns"}, "t", loc, true); err != nil {
			t.Fatal(err)
		}
	}
	commitNext := func(t *testing.T, e *env) string {
		t.Helper()
		r, err := e.commit("t", "[]", `[{"action":"set-properties","updates":{"k":"3"}}]`)
		if err != nil {
			t.Fatal(err)
		}
		return r.MetadataLocation
	}
	// movedOn: the commit landed and a later one followed, whose file
	// lists it in its metadata-log.
	movedOn := func(t *testing.T, e *env, to string) string {
		t.Helper()
		register(t, e, to)
		cur := commitNext(t, e)
		if !slices.Contains(metadataLog(t, e, cur), to) {
			t.Fatalf("%s does not list %s", cur, to)
		}
		return cur
	}
	cases := []agreeCase{
		{"pointer still on from", func(t *testing.T, e *env, from, to string) string { return from }, catalog.RecoverRollBack},
		{"pointer flipped", func(t *testing.T, e *env, from, to string) string { register(t, e, to); return to }, catalog.RecoverRollForward},
		{"moved on, listed", func(t *testing.T, e *env, from, to string) string { return movedOn(t, e, to) }, catalog.RecoverRollForward},
		{"moved on, not listed", func(t *testing.T, e *env, from, to string) string { return commitNext(t, e) }, catalog.RecoverRollBack},
		{"table dropped", func(t *testing.T, e *env, from, to string) string {
			if err := e.svc.DropTable(context.Background(), "lake", id("t"), false); err != nil {
				t.Fatal(err)
			}
			return ""
		}, catalog.RecoverRollBack},
		// The current metadata file cannot be read: fail closed.
		{"moved on, current missing", func(t *testing.T, e *env, from, to string) string {
			cur := movedOn(t, e, to)
			breakMissing(t, e, cur)
			return cur
		}, catalog.RecoverManualReview},
		{"moved on, current corrupt", func(t *testing.T, e *env, from, to string) string {
			cur := movedOn(t, e, to)
			breakCorrupt(t, e, cur)
			return cur
		}, catalog.RecoverManualReview},
		{"moved on, current store error", func(t *testing.T, e *env, from, to string) string {
			cur := movedOn(t, e, to)
			breakShards(t, e, cur)
			return cur
		}, catalog.RecoverManualReview},
		{"flipped, current corrupt", func(t *testing.T, e *env, from, to string) string {
			register(t, e, to)
			breakCorrupt(t, e, to)
			return to
		}, catalog.RecoverManualReview},
		{"pointer undecodable", func(t *testing.T, e *env, from, to string) string {
			// The object backing's record: a nonce line, then the value.
			bad := []byte("00000000000000000000000000000000\n{\"metadata-location\":")
			key := "table/lake/" + catalog.TableKey(id("t"))
			if _, err := e.store.Put(context.Background(), objectbacked.Bucket, key, bytes.NewReader(bad), int64(len(bad)), objstore.PutOptions{}); err != nil {
				t.Fatal(err)
			}
			return ""
		}, catalog.RecoverManualReview},
		{"still on from, current missing", func(t *testing.T, e *env, from, to string) string {
			breakMissing(t, e, from)
			return from
		}, catalog.RecoverManualReview},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			// The same state twice: one copy for each path.
			start, op := newEnv(t), newEnv(t)
			var files [2][]string  // from, to, cur of each copy
			var before [2][]string // its metadata files before recovery
			for i, e := range []*env{start, op} {
				from, to := stageCommit(t, e)
				cur := tc.after(t, e, from, to)
				e.reopen() // a restart: empty caches, no commit in flight
				files[i] = []string{from, to, cur}
				before[i] = metadataFiles(t, e)
			}

			rep, err := start.svc.RecoverReport(ctx)
			if err != nil {
				t.Fatalf("startup recovery: %v", err)
			}
			gotStart := map[catalog.RecoverReport]string{
				{Committed: 1}:    catalog.RecoverRollForward,
				{Abandoned: 1}:    catalog.RecoverRollBack,
				{ManualReview: 1}: catalog.RecoverManualReview,
			}[rep]

			dry, err := op.svc.Inspect(ctx, "lake")
			if err != nil {
				t.Fatalf("inspect: %v", err)
			}
			gotDry := commitAction(t, dry.Report)
			orep, err := op.svc.RecoverWarehouse(ctx, "lake", false)
			if err != nil {
				t.Fatalf("operator recovery: %v", err)
			}
			gotOp := commitAction(t, orep)

			if gotStart != tc.want || gotDry != tc.want || gotOp != tc.want {
				t.Fatalf("startup %s (%+v), inspect %s, operator %s; want %s", gotStart, rep, gotDry, gotOp, tc.want)
			}
			for i, e := range []*env{start, op} {
				staged, err := e.svc.StagedCommits(ctx, "lake")
				if err != nil {
					t.Fatal(err)
				}
				wantStaged := 0
				if tc.want == catalog.RecoverManualReview {
					wantStaged = 1
				}
				if len(staged) != wantStaged {
					t.Fatalf("path %d: %d staged commits left, want %d", i, len(staged), wantStaged)
				}
				if tc.want == catalog.RecoverManualReview && !slices.Equal(metadataFiles(t, e), before[i]) {
					t.Fatalf("path %d: metadata files %v after recovery, want all of %v", i, metadataFiles(t, e), before[i])
				}
			}
			// Both paths left the same files: from, to and the current one
			// exist in one copy exactly when they do in the other.
			for j := range files[0] {
				if files[0][j] == "" {
					continue
				}
				a, b := exists(t, start, files[0][j]), exists(t, op, files[1][j])
				if a != b {
					t.Fatalf("file %d: after startup recovery present=%v, after operator recovery present=%v", j, a, b)
				}
			}
			to := files[0][1]
			if gone := !exists(t, start, to); gone != (tc.want == catalog.RecoverRollBack) {
				t.Fatalf("the staged commit's file gone=%v after %s", gone, tc.want)
			}
			// A second startup recovery finds the same (nothing, or the
			// same manual-review commit) and still deletes nothing.
			start.reopen()
			again, err := start.svc.RecoverReport(ctx)
			wantAgain := catalog.RecoverReport{}
			if tc.want == catalog.RecoverManualReview {
				wantAgain.ManualReview = 1
			}
			if err != nil || again != wantAgain {
				t.Fatalf("second startup recovery: %+v %v, want %+v", again, err, wantAgain)
			}
			// What the test broke on purpose is deleted, as an operator
			// would, so that the fsck at cleanup checks the rest.
			forgetLost(t, start)
			forgetLost(t, op)
		})
	}
}

// forgetLost deletes the objects of the warehouse whose data is lost
// (breakShards made them).
func forgetLost(t *testing.T, e *env) {
	t.Helper()
	ctx := context.Background()
	page, err := e.store.List(ctx, "lake", objstore.ListOptions{MaxKeys: 1000})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range page.Objects {
		r, err := e.store.Open(ctx, "lake", o.Key, objstore.GetOptions{})
		if err == nil {
			_, err = io.Copy(io.Discard, r)
			_ = r.Close()
		}
		if errors.Is(err, objstore.ErrDataCorrupt) {
			if _, err := e.store.Delete(ctx, "lake", o.Key, objstore.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// stageCommit creates ns.t, commits once, then stops a second commit
// before its pointer flip and restarts: one staged commit from -> to.
func stageCommit(t *testing.T, e *env) (from, to string) {
	t.Helper()
	ctx := context.Background()
	e.mustCreate("t")
	r, err := e.commit("t", "[]", `[{"action":"set-properties","updates":{"k":"1"}}]`)
	if err != nil {
		t.Fatal(err)
	}
	e.reopen(func(o *catalog.Options) {
		o.Hooks.BeforePointerFlip = func(context.Context, catalog.Ident, string) error { return errors.New("crash") }
	})
	if _, err := e.commit("t", "[]", `[{"action":"set-properties","updates":{"k":"2"}}]`); !errors.Is(err, catalog.ErrCommitStateUnknown) {
		t.Fatalf("stopped commit: %v", err)
	}
	e.reopen()
	staged, err := e.svc.StagedCommits(ctx, "lake")
	if err != nil || len(staged) != 1 || staged[0].From != r.MetadataLocation {
		t.Fatalf("staged: %+v %v", staged, err)
	}
	return staged[0].From, staged[0].To
}

// commitAction returns the action of the one commit finding of a
// recovery report.
func commitAction(t *testing.T, rep catalog.RecoveryReport) string {
	t.Helper()
	var got []catalog.RecoveryItem
	for _, it := range append(slices.Clone(rep.Repaired), rep.ManualReview...) {
		if it.Kind == "commit" {
			got = append(got, it)
		}
	}
	if len(got) != 1 {
		t.Fatalf("%d commit findings, want 1: %+v", len(got), rep)
	}
	t.Logf("%s: %s", got[0].Action, got[0].Reason)
	return got[0].Action
}

// metadataFiles lists the locations in ns/t/metadata/.
func metadataFiles(t *testing.T, e *env) []string {
	t.Helper()
	page, err := e.store.List(context.Background(), "lake", objstore.ListOptions{Prefix: "ns/t/metadata/"})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, o := range page.Objects {
		out = append(out, "s3://lake/"+o.Key)
	}
	return out
}

// metadataLog returns the metadata-log of the table's current metadata.
func metadataLog(t *testing.T, e *env, cur string) []string {
	t.Helper()
	l, err := e.svc.LoadTable(context.Background(), "lake", id("t"), "")
	if err != nil || l.MetadataLocation != cur {
		t.Fatalf("load: %v %s, want %s", err, l.MetadataLocation, cur)
	}
	var out []string
	for _, e := range meta(t, l.Metadata)["metadata-log"].([]any) {
		out = append(out, e.(map[string]any)["metadata-file"].(string))
	}
	return out
}

func keyOf(loc string) string { return strings.TrimPrefix(loc, "s3://lake/") }

func exists(t *testing.T, e *env, loc string) bool {
	t.Helper()
	_, err := e.store.Head(context.Background(), "lake", keyOf(loc), objstore.GetOptions{})
	if errors.Is(err, objstore.ErrNoSuchKey) {
		return false
	}
	if err != nil {
		t.Fatalf("head %s: %v", loc, err)
	}
	return true
}

// breakMissing deletes the metadata file at loc.
func breakMissing(t *testing.T, e *env, loc string) {
	t.Helper()
	if _, err := e.store.Delete(context.Background(), "lake", keyOf(loc), objstore.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
}

// breakCorrupt overwrites the metadata file at loc with cut-off JSON.
func breakCorrupt(t *testing.T, e *env, loc string) {
	t.Helper()
	bad := []byte(`{"format-version":2,"metadata-log":[{"metadata-file":`)
	if _, err := e.store.Put(context.Background(), "lake", keyOf(loc), bytes.NewReader(bad), int64(len(bad)), objstore.PutOptions{}); err != nil {
		t.Fatal(err)
	}
}

// breakShards rewrites the metadata file at loc into shard files of its
// own (packing off) and removes two of its three shards: the store still
// lists the object but cannot read it.
func breakShards(t *testing.T, e *env, loc string) {
	t.Helper()
	ctx := context.Background()
	r, err := e.store.Open(ctx, "lake", keyOf(loc), objstore.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var data bytes.Buffer
	_, err = data.ReadFrom(r)
	_ = r.Close()
	if err != nil {
		t.Fatal(err)
	}
	if err := e.store.Close(); err != nil {
		t.Fatal(err)
	}
	so := storeOptions(e.dir)
	so.PackMaxSize = -1
	e.openWith(so)
	shards := func() []string {
		files, err := filepath.Glob(filepath.Join(e.dir, "drives", "d*", "data", "*", "*"))
		if err != nil {
			t.Fatal(err)
		}
		return files
	}
	before := shards()
	if _, err := e.store.Put(ctx, "lake", keyOf(loc), bytes.NewReader(data.Bytes()), int64(data.Len()), objstore.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := e.store.Close(); err != nil {
		t.Fatal(err)
	}
	var fresh []string
	for _, f := range shards() {
		if !slices.Contains(before, f) {
			fresh = append(fresh, f)
		}
	}
	if len(fresh) != 3 {
		t.Fatalf("%d new shard files, want 3: %v", len(fresh), fresh)
	}
	for _, f := range fresh[:2] {
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
	}
	e.open()
	if _, err := e.svc.LoadTable(ctx, "lake", id("t"), ""); err == nil || errors.Is(err, catalog.ErrNotFound) {
		t.Fatalf("load with two shards gone: %v, want a store error", err)
	}
}

// TestRecoverUndecodableCommit: an undecodable commit record is a
// manual-review finding of both paths; startup recovery logs it and goes
// on instead of failing the start.
func TestRecoverUndecodableCommit(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	bad := []byte("00000000000000000000000000000000\n{\"id\":")
	if _, err := e.store.Put(ctx, objectbacked.Bucket, "commit/lake/0000000000000001-x", bytes.NewReader(bad), int64(len(bad)), objstore.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	e.reopen()
	rep, err := e.svc.RecoverReport(ctx)
	if err != nil || rep != (catalog.RecoverReport{ManualReview: 1}) {
		t.Fatalf("startup recovery: %+v %v", rep, err)
	}
	orep, err := e.svc.RecoverWarehouse(ctx, "lake", false)
	if err != nil || commitAction(t, orep) != catalog.RecoverManualReview {
		t.Fatalf("operator recovery: %+v %v", orep, err)
	}
}
