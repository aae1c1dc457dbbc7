package catalogctl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/cairnstore/cairn/catalog"
	"github.com/cairnstore/cairn/frontends/control"
)

// fakeCutover answers every call with its canned results and err, and
// records the calls.
type fakeCutover struct {
	err error
	// cancel is returned by Cancel also when err is set (a partial result).
	cancel catalog.CancelResult

	mu    sync.Mutex
	calls []string
}

func (f *fakeCutover) record(call, wh string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, call+" "+wh)
}

func (f *fakeCutover) Calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

func (f *fakeCutover) Preflight(_ context.Context, wh string) (catalog.Preflight, error) {
	f.record("preflight", wh)
	if f.err != nil {
		return catalog.Preflight{}, f.err
	}
	return catalog.Preflight{TableBucket: wh, SourceKind: catalog.SourceKindObjectBacked, TargetKind: catalog.TargetKindDurable,
		Status: catalog.StatusReadyToSnapshot, TableCount: 3, Blockers: []string{}, RecommendedActions: []string{catalog.ActionSnapshot},
		Rollback: catalog.DefaultRollback()}, nil
}

func (f *fakeCutover) Materialize(_ context.Context, wh string) (catalog.MaterializeResult, error) {
	f.record("materialize", wh)
	if f.err != nil {
		return catalog.MaterializeResult{}, f.err
	}
	return catalog.MaterializeResult{TableBucket: wh, Status: catalog.StatusSnapshotMaterialized, MigrationID: "m1",
		TableCount: 3, ObjectBackedWritesFenced: true, ReadyToEnableDurableStrong: true}, nil
}

func (f *fakeCutover) Cancel(_ context.Context, wh string) (catalog.CancelResult, error) {
	f.record("cancel", wh)
	switch {
	case f.err == nil:
		return catalog.CancelResult{TableBucket: wh, Status: catalog.StatusFenceReleased}, nil
	case f.cancel != (catalog.CancelResult{}):
		res := f.cancel
		res.TableBucket = wh
		return res, f.err
	}
	return catalog.CancelResult{}, f.err
}

// fakeWarehouseStatus reports a status for the warehouses it knows.
type fakeWarehouseStatus struct {
	known []string
	err   error
}

func (f fakeWarehouseStatus) Status(_ context.Context, wh string) (catalog.Status, error) {
	if f.err != nil {
		return catalog.Status{}, f.err
	}
	if !slices.Contains(f.known, wh) {
		return catalog.Status{}, fmt.Errorf("%w: %s", catalog.ErrNoSuchWarehouse, wh)
	}
	return catalog.Status{TableBucket: wh, Backing: catalog.BackingObject, Served: true, TableCount: 3}, nil
}

// catalogFixture is a catalog tree over warehouses w1 and w2 mounted as
// "catalog", as cmd/ does.
func catalogFixture(cut catalog.Cutover) *control.Dir {
	whs := []string{"w1", "w2"}
	return control.NewDir().Add("catalog", Tree(Controls{
		Warehouses: func(context.Context) ([]string, error) { return whs, nil },
		Cutover:    cut,
		Status:     fakeWarehouseStatus{known: whs},
	}))
}

// names returns the names of entries, in order.
func names(entries []control.Entry) []string {
	out := []string{}
	for _, e := range entries {
		out = append(out, e.Name)
	}
	return out
}

func findFile(t *testing.T, root *control.Dir, path string) *control.File {
	t.Helper()
	n, err := root.Find(context.Background(), path)
	if err != nil {
		t.Fatalf("Find %q: %v", path, err)
	}
	f, ok := n.(*control.File)
	if !ok {
		t.Fatalf("%q is a %T", path, n)
	}
	return f
}

func readDoc(t *testing.T, root *control.Dir, path string) string {
	t.Helper()
	doc, err := findFile(t, root, path).Read(context.Background())
	if err != nil {
		t.Fatalf("read %q: %v", path, err)
	}
	if !strings.HasSuffix(string(doc), "}\n") {
		t.Errorf("%q: %q does not end in a newline", path, doc)
	}
	return string(doc)
}

func readMigrationOutcome(t *testing.T, root *control.Dir, path string) (control.Outcome[*MigrationResult], string) {
	t.Helper()
	raw := readDoc(t, root, path)
	var out control.Outcome[*MigrationResult]
	if err := json.Unmarshal([]byte(raw), &out); err != nil {
		t.Fatalf("%q: %v", raw, err)
	}
	return out, raw
}

func TestTreeList(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	boom := errors.New("registry on fire")
	tests := []struct {
		name    string
		whs     []string
		err     error
		want    []string
		wantErr error
	}{
		{name: "warehouses", whs: []string{"w1", "w2"}, want: []string{"w1", "w2"}},
		{name: "none", want: []string{}},
		{name: "invalid and repeated names left out", whs: []string{"w1", "", "..", "a/b", "w1", "w2"}, want: []string{"w1", "w2"}},
		{name: "list fails", err: boom, wantErr: boom},
		{name: "unavailable", err: fmt.Errorf("%w: w1", catalog.ErrUnavailable), wantErr: catalog.ErrUnavailable},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := Tree(Controls{
				Warehouses: func(context.Context) ([]string, error) { return tc.whs, tc.err },
				Cutover:    &fakeCutover{},
				Status:     fakeWarehouseStatus{},
			})
			entries, err := d.List(ctx)
			if !errors.Is(err, tc.wantErr) || (err == nil) != (tc.wantErr == nil) {
				t.Fatalf("List: %v, want %v", err, tc.wantErr)
			}
			if tc.wantErr != nil {
				if _, err := d.Find(ctx, "w1/status"); !errors.Is(err, tc.wantErr) {
					t.Errorf("Find: %v, want %v", err, tc.wantErr)
				}
				return
			}
			if got := names(entries); !slices.Equal(got, tc.want) {
				t.Errorf("List = %q, want %q", got, tc.want)
			}
			for _, e := range entries {
				wh, ok := e.Node.(*control.Dir)
				if !ok {
					t.Fatalf("%s: %T", e.Name, e.Node)
				}
				files, err := wh.List(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if got := names(files); !slices.Equal(got, []string{"migration", "last-result", "status"}) {
					t.Errorf("%s: %q", e.Name, got)
				}
			}
			if _, err := d.Find(ctx, "nope/migration"); !errors.Is(err, control.ErrNotFound) || control.Errno(err) != syscall.ENOENT {
				t.Errorf("unknown warehouse: %v (%v), want ENOENT", err, control.Errno(err))
			}
		})
	}
}

func TestTreeRead(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tests := []struct {
		name    string
		cut     catalog.Cutover
		path    string
		want    []string // parts of the document
		wantErr error
		errno   syscall.Errno
	}{
		{name: "preflight", cut: &fakeCutover{}, path: "catalog/w1/migration",
			want: []string{`"table_bucket": "w1"`, `"status": "READY_TO_SNAPSHOT"`, `"table_count": 3`, `"source_kind": "OBJECT_BACKED"`}},
		{name: "preflight of a vanished warehouse", cut: &fakeCutover{err: fmt.Errorf("%w: w1", catalog.ErrNoSuchWarehouse)},
			path: "catalog/w1/migration", wantErr: control.ErrNotFound, errno: syscall.ENOENT},
		{name: "preflight of a bad fence", cut: &fakeCutover{err: fmt.Errorf("%w: fence of w1: unexpected EOF", catalog.ErrBadRequest)},
			path: "catalog/w1/migration", wantErr: control.ErrInvalid, errno: syscall.EINVAL},
		{name: "durable-strong server", path: "catalog/w1/migration",
			want: []string{`"table_bucket": "w1"`, `"backing": "durable-strong"`, "served by an object-backed server"}},
		{name: "status", cut: &fakeCutover{}, path: "catalog/w2/status",
			want: []string{`"table_bucket": "w2"`, `"backing": "object"`, `"served": true`, `"table_count": 3`}},
		{name: "last-result before any run", cut: &fakeCutover{}, path: "catalog/w1/last-result",
			want: []string{`"state": "none"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := catalogFixture(tc.cut)
			f := findFile(t, root, tc.path)
			doc, err := f.Read(ctx)
			if !errors.Is(err, tc.wantErr) || (err == nil) != (tc.wantErr == nil) || control.Errno(err) != tc.errno {
				t.Fatalf("Read: %v (%v), want %v (%v)", err, control.Errno(err), tc.wantErr, tc.errno)
			}
			if err != nil {
				return
			}
			if !json.Valid(doc) || !strings.HasSuffix(string(doc), "}\n") {
				t.Errorf("not a JSON document: %q", doc)
			}
			for _, w := range tc.want {
				if !strings.Contains(string(doc), w) {
					t.Errorf("document lacks %s:\n%s", w, doc)
				}
			}
		})
	}
}

func TestTreeStatusErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tests := []struct {
		name  string
		err   error
		errno syscall.Errno
	}{
		{"no such warehouse", fmt.Errorf("%w: w1", catalog.ErrNoSuchWarehouse), syscall.ENOENT},
		{"other", errors.New("disk on fire"), syscall.EIO},
		{"cancelled", context.Canceled, syscall.EINTR},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := Tree(Controls{
				Warehouses: func(context.Context) ([]string, error) { return []string{"w1"}, nil },
				Status:     fakeWarehouseStatus{err: tc.err},
			})
			n, err := d.Find(ctx, "w1/status")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := n.(*control.File).Read(ctx); control.Errno(err) != tc.errno || !strings.Contains(err.Error(), tc.err.Error()) {
				t.Errorf("Read: %v (%v), want %v", err, control.Errno(err), tc.errno)
			}
		})
	}
}

func TestTreeWrite(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fenced := fmt.Errorf("%w: warehouse w1 is fenced by migration m0 (PREPARING)", catalog.ErrFenced)
	tests := []struct {
		name      string
		cut       *fakeCutover // nil: a durable-strong server
		write     string
		errno     syscall.Errno
		http      int
		wantCalls []string
		wantState string
		wantWord  string
		wantError string   // part of the outcome's error
		wantDoc   []string // parts of the last-result document
		noResult  bool
	}{
		{name: "materialize", cut: &fakeCutover{}, write: "materialize\n", http: http.StatusOK,
			wantCalls: []string{"materialize w1"}, wantState: control.StateSucceeded, wantWord: "materialize",
			wantDoc: []string{`"materialize": {`, `"status": "SNAPSHOT_MATERIALIZED"`, `"migration_id": "m1"`, `"ready_to_enable_durable_strong": true`}},
		{name: "preflight", cut: &fakeCutover{}, write: "preflight", http: http.StatusOK,
			wantCalls: []string{"preflight w1"}, wantState: control.StateSucceeded, wantWord: "preflight",
			wantDoc: []string{`"preflight": {`, `"status": "READY_TO_SNAPSHOT"`}},
		{name: "cancel", cut: &fakeCutover{}, write: " cancel \n", http: http.StatusOK,
			wantCalls: []string{"cancel w1"}, wantState: control.StateSucceeded, wantWord: "cancel",
			wantDoc: []string{`"cancel": {`, `"status": "FENCE_RELEASED"`}},
		{name: "fenced", cut: &fakeCutover{err: fenced}, write: "materialize\n", errno: syscall.EBUSY, http: http.StatusConflict,
			wantCalls: []string{"materialize w1"}, wantState: control.StateFailed, wantWord: "materialize",
			wantError: "fenced by migration m0 (PREPARING)", noResult: true},
		{name: "conflict keeps the partial result", write: "cancel", errno: syscall.EBUSY, http: http.StatusConflict,
			cut: &fakeCutover{err: fmt.Errorf("%w: warehouse w1 changed since migration m1 materialized it", catalog.ErrMigrationConflict),
				cancel: catalog.CancelResult{MigrationID: "m1"}},
			wantCalls: []string{"cancel w1"}, wantState: control.StateFailed, wantWord: "cancel",
			wantError: "changed since migration m1", wantDoc: []string{`"cancel": {`, `"migration_id": "m1"`}},
		{name: "unknown word", cut: &fakeCutover{}, write: "explode\n", errno: syscall.EINVAL, http: http.StatusBadRequest,
			wantState: control.StateFailed, wantWord: "explode", wantError: `unknown word "explode"`, noResult: true},
		{name: "no such warehouse", cut: &fakeCutover{err: fmt.Errorf("%w: w1", catalog.ErrNoSuchWarehouse)}, write: "materialize",
			errno: syscall.ENOENT, http: http.StatusNotFound, wantCalls: []string{"materialize w1"},
			wantState: control.StateFailed, wantWord: "materialize", wantError: "no such warehouse: w1", noResult: true},
		{name: "bad request", cut: &fakeCutover{err: fmt.Errorf("%w: malformed fence", catalog.ErrBadRequest)}, write: "preflight",
			errno: syscall.EINVAL, http: http.StatusBadRequest, wantCalls: []string{"preflight w1"},
			wantState: control.StateFailed, wantWord: "preflight", wantError: "malformed fence", noResult: true},
		{name: "catalog unsupported", cut: &fakeCutover{err: fmt.Errorf("%w: not here", catalog.ErrUnsupported)}, write: "materialize",
			errno: syscall.EPERM, http: http.StatusMethodNotAllowed, wantCalls: []string{"materialize w1"},
			wantState: control.StateFailed, wantWord: "materialize", wantError: "not here", noResult: true},
		{name: "other error", cut: &fakeCutover{err: errors.New("disk on fire")}, write: "materialize",
			errno: syscall.EIO, http: http.StatusInternalServerError, wantCalls: []string{"materialize w1"},
			wantState: control.StateFailed, wantWord: "materialize", wantError: "disk on fire", noResult: true},
		{name: "durable-strong server", write: "materialize\n", errno: syscall.EPERM, http: http.StatusMethodNotAllowed,
			wantState: control.StateFailed, wantWord: "materialize", wantError: "served by an object-backed server", noResult: true},
		{name: "durable-strong server, unknown word", write: "explode", errno: syscall.EINVAL, http: http.StatusBadRequest,
			wantState: control.StateFailed, wantWord: "explode", wantError: "unknown word", noResult: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var cut catalog.Cutover
			if tc.cut != nil {
				cut = tc.cut
			}
			root := catalogFixture(cut)
			f := findFile(t, root, "catalog/w1/migration")
			if !f.Writable() {
				t.Fatal("migration is not writable")
			}
			err := f.Write(ctx, []byte(tc.write))
			if control.Errno(err) != tc.errno || control.HTTPStatus(err) != tc.http {
				t.Fatalf("write %q: %v (%v, %d), want %v, %d", tc.write, err, control.Errno(err), control.HTTPStatus(err), tc.errno, tc.http)
			}
			if tc.cut != nil {
				if got := tc.cut.Calls(); !slices.Equal(got, tc.wantCalls) {
					t.Errorf("calls %q, want %q", got, tc.wantCalls)
				}
			}

			// A fresh lookup (which lists the warehouses again) finds the
			// same outcome.
			out, raw := readMigrationOutcome(t, root, "catalog/w1/last-result")
			if out.State != tc.wantState || out.Word != tc.wantWord || !strings.Contains(out.Error, tc.wantError) {
				t.Errorf("outcome %+v, want state %q word %q error ~%q", out, tc.wantState, tc.wantWord, tc.wantError)
			}
			if err != nil && out.Error != err.Error() {
				t.Errorf("outcome error %q, write error %q", out.Error, err)
			}
			if tc.noResult != (out.Result == nil || *out.Result == nil) {
				t.Errorf("result %s, want none: %v", raw, tc.noResult)
			}
			for _, w := range tc.wantDoc {
				if !strings.Contains(raw, w) {
					t.Errorf("last-result lacks %s:\n%s", w, raw)
				}
			}
			// The other warehouse has its own.
			if other, _ := readMigrationOutcome(t, root, "catalog/w2/last-result"); other.State != control.StateNone {
				t.Errorf("w2: %+v", other)
			}
		})
	}
}

// The warehouse directories, and so the last results, survive listings;
// concurrent use is safe.
func TestTreeKeepsWarehouses(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var mu sync.Mutex
	whs := []string{"w1", "w2"}
	cut := &fakeCutover{}
	d := Tree(Controls{
		Warehouses: func(context.Context) ([]string, error) {
			mu.Lock()
			defer mu.Unlock()
			return slices.Clone(whs), nil
		},
		Cutover: cut,
		Status:  fakeWarehouseStatus{known: whs},
	})
	first, err := d.Lookup(ctx, "w1")
	if err != nil {
		t.Fatal(err)
	}

	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 20; j++ {
				if _, err := d.List(ctx); err != nil {
					t.Error(err)
				}
				n, err := d.Find(ctx, "w2/migration")
				if err != nil {
					t.Error(err)
					return
				}
				if err := n.(*control.File).Write(ctx, []byte("preflight")); err != nil && !errors.Is(err, control.ErrBusy) {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()

	n, _ := d.Find(ctx, "w1/migration")
	if err := n.(*control.File).Write(ctx, []byte("materialize")); err != nil {
		t.Fatal(err)
	}
	// w1 leaves the listing and comes back: same directory, same result.
	mu.Lock()
	whs = []string{"w2"}
	mu.Unlock()
	if _, err := d.Lookup(ctx, "w1"); !errors.Is(err, control.ErrNotFound) {
		t.Errorf("unlisted w1: %v", err)
	}
	mu.Lock()
	whs = []string{"w2", "w1"}
	mu.Unlock()
	again, err := d.Lookup(ctx, "w1")
	if err != nil || again != first {
		t.Fatalf("w1 again: %p, %v; want %p", again, err, first)
	}
	root := control.NewDir().Add("catalog", d)
	if out, _ := readMigrationOutcome(t, root, "catalog/w1/last-result"); out.State != control.StateSucceeded || out.Word != "materialize" ||
		out.Result == nil || *out.Result == nil || (*out.Result).Materialize == nil || (*out.Result).Materialize.MigrationID != "m1" {
		t.Errorf("w1 last-result %+v", out)
	}
}

func TestTreeWiring(t *testing.T) {
	t.Parallel()
	defer func() {
		if recover() == nil {
			t.Error("Tree without Warehouses did not panic")
		}
	}()
	Tree(Controls{Cutover: &fakeCutover{}})
}

func TestTreeNoStatus(t *testing.T) {
	t.Parallel()
	d := Tree(Controls{Warehouses: func(context.Context) ([]string, error) { return []string{"w"}, nil }})
	n, err := d.Find(context.Background(), "w")
	if err != nil {
		t.Fatal(err)
	}
	files, err := n.(*control.Dir).List(context.Background())
	if err != nil || !slices.Equal(names(files), []string{"migration", "last-result"}) {
		t.Errorf("List = %q, %v", names(files), err)
	}
}

func TestCatalogError(t *testing.T) {
	t.Parallel()
	tests := []struct {
		err   error
		want  error // sentinel of the package; nil: unchanged
		errno syscall.Errno
	}{
		{nil, nil, 0},
		{fmt.Errorf("%w: by m1", catalog.ErrFenced), control.ErrBusy, syscall.EBUSY},
		{fmt.Errorf("%w: not ready", catalog.ErrMigrationConflict), control.ErrBusy, syscall.EBUSY},
		{fmt.Errorf("materialize: %w", catalog.ErrNoSuchWarehouse), control.ErrNotFound, syscall.ENOENT},
		{catalog.ErrBadRequest, control.ErrInvalid, syscall.EINVAL},
		{catalog.ErrUnsupported, control.ErrUnsupported, syscall.EPERM},
		{catalog.ErrUnavailable, nil, syscall.EIO},
		{catalog.ErrCommitFailed, nil, syscall.EIO},
		{context.DeadlineExceeded, nil, syscall.ETIMEDOUT},
		{fmt.Errorf("%w: already mapped", control.ErrDenied), nil, syscall.EACCES},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.err), func(t *testing.T) {
			got := catalogError(tc.err)
			if control.Errno(got) != tc.errno {
				t.Errorf("control.Errno = %v, want %v", control.Errno(got), tc.errno)
			}
			if tc.want == nil {
				if got != tc.err {
					t.Errorf("catalogError = %v, want it unchanged", got)
				}
				return
			}
			if !errors.Is(got, tc.want) || !errors.Is(got, tc.err) || !strings.Contains(got.Error(), tc.err.Error()) {
				t.Errorf("catalogError = %v, want %v wrapping %v", got, tc.want, tc.err)
			}
		})
	}
}
