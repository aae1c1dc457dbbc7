package control

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

type preflight struct {
	Blockers []string `json:"blockers"`
}

type result struct {
	Status string `json:"status"`
}

// fakeMigration runs "materialize" and "cancel"; materialize fails with
// ErrBusy while fenced.
type fakeMigration struct {
	mu     sync.Mutex
	fenced bool
	runs   []string
}

func (m *fakeMigration) op() *Op[preflight, result] {
	clock := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	return &Op[preflight, result]{
		Words: []string{"materialize", "cancel"},
		Preview: func(context.Context) (preflight, error) {
			m.mu.Lock()
			defer m.mu.Unlock()
			if m.fenced {
				return preflight{Blockers: []string{"fence held"}}, nil
			}
			return preflight{Blockers: []string{}}, nil
		},
		Run: func(_ context.Context, word string) (result, error) {
			m.mu.Lock()
			defer m.mu.Unlock()
			m.runs = append(m.runs, word)
			if word == "materialize" && m.fenced {
				return result{Status: "FENCE_HELD"}, fmt.Errorf("%w: fence held by m0", ErrBusy)
			}
			return result{Status: strings.ToUpper(word) + "D"}, nil
		},
		Now: func() time.Time { return clock },
	}
}

func readOutcome(t *testing.T, f *File) Outcome[result] {
	t.Helper()
	raw, err := f.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(string(raw), "}\n") {
		t.Errorf("last-result %q does not end in a newline", raw)
	}
	var out Outcome[result]
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("last-result %q: %v", raw, err)
	}
	return out
}

func TestOp(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		fenced    bool
		write     string
		err       error
		wantState string
		wantWord  string
		wantRes   string // Result.Status; "" means no result
		wantError string // part of Outcome.Error
		wantRuns  int
	}{
		{name: "materialize", write: "materialize\n", wantState: StateSucceeded, wantWord: "materialize", wantRes: "MATERIALIZED", wantRuns: 1},
		{name: "cancel with spaces", write: "  cancel \r\n", wantState: StateSucceeded, wantWord: "cancel", wantRes: "CANCELD", wantRuns: 1},
		{name: "busy keeps the result", fenced: true, write: "materialize", err: ErrBusy, wantState: StateFailed, wantWord: "materialize", wantRes: "FENCE_HELD", wantError: "fence held by m0", wantRuns: 1},
		{name: "unknown word", write: "explode\n", err: ErrInvalid, wantState: StateFailed, wantWord: "explode", wantError: `unknown word "explode"`},
		{name: "two words", write: "materialize now", err: ErrInvalid, wantState: StateFailed, wantError: "one word"},
		{name: "empty", write: "\n", err: ErrInvalid, wantState: StateFailed, wantError: "empty write"},
		{name: "case matters", write: "MATERIALIZE", err: ErrInvalid, wantState: StateFailed, wantWord: "MATERIALIZE"},
	}
	ctx := context.Background()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := &fakeMigration{fenced: tc.fenced}
			op := m.op()
			opFile, resFile := op.Files()
			if !opFile.Writable() || resFile.Writable() {
				t.Fatalf("writable: op %v, result %v", opFile.Writable(), resFile.Writable())
			}
			if got := readOutcome(t, resFile); got.State != StateNone || got.Result != nil {
				t.Errorf("before any run: %+v", got)
			}
			err := opFile.Write(ctx, []byte(tc.write))
			if !errors.Is(err, tc.err) || (tc.err == nil) != (err == nil) {
				t.Fatalf("write %q: %v, want %v", tc.write, err, tc.err)
			}
			got := readOutcome(t, resFile)
			if got.State != tc.wantState || got.Word != tc.wantWord || !strings.Contains(got.Error, tc.wantError) {
				t.Errorf("outcome %+v, want state %q word %q error ~%q", got, tc.wantState, tc.wantWord, tc.wantError)
			}
			if (got.Result == nil) != (tc.wantRes == "") || (got.Result != nil && got.Result.Status != tc.wantRes) {
				t.Errorf("result %+v, want %q", got.Result, tc.wantRes)
			}
			if got.Started.IsZero() || got.Finished.IsZero() {
				t.Errorf("times not set: %+v", got)
			}
			if len(m.runs) != tc.wantRuns {
				t.Errorf("Run called %d times, want %d", len(m.runs), tc.wantRuns)
			}
		})
	}
}

func TestOpPreview(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := &fakeMigration{fenced: true}
	opFile, _ := m.op().Files()
	doc, err := opFile.Read(ctx)
	if err != nil || string(doc) != "{\n  \"blockers\": [\n    \"fence held\"\n  ]\n}\n" {
		t.Errorf("preview %q, %v", doc, err)
	}

	bare := &Op[struct{}, string]{Words: []string{"go"}, Run: func(context.Context, string) (string, error) { return "", nil }}
	f, _ := bare.Files()
	if doc, err := f.Read(ctx); err != nil || string(doc) != "{\n  \"words\": [\n    \"go\"\n  ]\n}\n" {
		t.Errorf("default preview %q, %v", doc, err)
	}

	failing := &Op[int, int]{Preview: func(context.Context) (int, error) { return 0, ErrDenied }}
	f, _ = failing.Files()
	if _, err := f.Read(ctx); !errors.Is(err, ErrDenied) {
		t.Errorf("failing preview: %v", err)
	}
}

// A write while a run is in progress fails with ErrBusy and leaves the
// running outcome alone; so does an invalid one.
func TestOpExclusive(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	entered, release := make(chan struct{}), make(chan struct{})
	op := &Op[struct{}, string]{
		Run: func(_ context.Context, word string) (string, error) {
			close(entered)
			<-release
			return "done " + word, nil
		},
	}
	done := make(chan error)
	go func() {
		_, err := op.Do(ctx, "slow")
		done <- err
	}()
	<-entered
	if last := op.Last(); last.State != StateRunning || last.Word != "slow" {
		t.Errorf("while running: %+v", last)
	}
	if _, err := op.Do(ctx, "other"); !errors.Is(err, ErrBusy) {
		t.Errorf("second run: %v, want ErrBusy", err)
	}
	if _, err := op.Do(ctx, "two words"); !errors.Is(err, ErrInvalid) {
		t.Errorf("invalid write: %v, want ErrInvalid", err)
	}
	if last := op.Last(); last.State != StateRunning || last.Word != "slow" {
		t.Errorf("after refused writes: %+v", last)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if last := op.Last(); last.State != StateSucceeded || *last.Result != "done slow" {
		t.Errorf("after the run: %+v", last)
	}
}

func TestOpPanicReleases(t *testing.T) {
	t.Parallel()
	op := &Op[struct{}, int]{Run: func(_ context.Context, word string) (int, error) {
		if word == "panic" {
			panic("boom")
		}
		return 1, nil
	}}
	func() {
		defer func() { _ = recover() }()
		_, _ = op.Do(context.Background(), "panic")
	}()
	if last := op.Last(); last.State != StateFailed || last.Word != "panic" {
		t.Errorf("after panic: %+v", last)
	}
	if out, err := op.Do(context.Background(), "again"); err != nil || out.State != StateSucceeded {
		t.Errorf("after panic: %+v, %v", out, err)
	}
}
