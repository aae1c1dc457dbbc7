package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestParseRehearsal(t *testing.T) {
	defaults := rehearsalOptions{
		Warehouse: "cairn-s3table-smoke", Namespace: "smoke", Table: "events", RestPath: "/iceberg/v1",
		TableLocation: "s3://cairn-s3table-smoke/tables/table-id", WriterCount: 8, MaintenanceWorkerCount: 2,
		IterationCount: 50, CatalogBacking: "object-backed-or-durable-strong",
	}
	const dr, sf = "--print-disaster-recovery-rehearsal", "--print-scale-fault-rehearsal"
	tests := []struct {
		name    string
		args    []string // after "admin catalog rehearsal"
		want    func(*rehearsalOptions)
		wantErr string
	}{
		{name: "neither", args: nil, wantErr: "exactly one of"},
		{name: "both", args: []string{dr, sf}, wantErr: "exactly one of"},
		{name: "zero writers", args: []string{dr, "--writer-count", "0"}, wantErr: "--writer-count must be a positive integer, got 0"},
		{name: "negative workers", args: []string{sf, "--maintenance-worker-count", "-1"}, wantErr: "--maintenance-worker-count must be a positive integer"},
		{name: "zero iterations", args: []string{sf, "--iteration-count=0"}, wantErr: "--iteration-count must be a positive integer"},
		{name: "count not a number", args: []string{sf, "--writer-count", "many"}, wantErr: `invalid argument "many" for "--writer-count"`},
		{name: "empty warehouse", args: []string{dr, "--warehouse", ""}, wantErr: "--warehouse must not be empty"},
		{name: "empty rest path", args: []string{dr, "--rest-path", " "}, wantErr: "--rest-path must not be empty"},
		{name: "bad backing", args: []string{dr, "--catalog-backing", "etcd"}, wantErr: `--catalog-backing "etcd"`},
		{name: "positional", args: []string{dr, "extra"}, wantErr: `unexpected argument "extra"`},

		{name: "dr defaults", args: []string{dr}, want: func(o *rehearsalOptions) { o.DisasterRecovery = true }},
		{name: "scale fault everything", args: []string{sf, "--warehouse", "wh", "--namespace", "ns", "--table", "t",
			"--rest-path", "/_iceberg/", "--table-warehouse-location", "s3://{warehouse}/loc/", "--writer-count", "3",
			"--maintenance-worker-count", "1", "--iteration-count", "7", "--catalog-backing", "object"},
			want: func(o *rehearsalOptions) {
				*o = rehearsalOptions{ScaleFault: true, Warehouse: "wh", Namespace: "ns", Table: "t", RestPath: "/_iceberg/v1",
					TableLocation: "s3://wh/loc", WriterCount: 3, MaintenanceWorkerCount: 1, IterationCount: 7, CatalogBacking: "object"}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inv, err := parseArgs(append([]string{"admin", "catalog", "rehearsal"}, tt.args...))
			if tt.wantErr != "" {
				if err == nil || !errors.Is(err, errUsage) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want a usage error containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := defaults
			tt.want(&want)
			if inv.name != "admin catalog rehearsal" {
				t.Errorf("name %q", inv.name)
			}
			if got := inv.opts.(catalogOptions); got.Verb != catalogVerbRehearsal || !reflect.DeepEqual(got.Rehearsal, want) {
				t.Errorf("opts\n got %+v\nwant %+v", got, want)
			}
		})
	}
}

func TestNormaliseRestPath(t *testing.T) {
	for in, want := range map[string]string{
		"/iceberg":                 "/iceberg/v1",
		"/iceberg/":                "/iceberg/v1",
		"/iceberg/v1":              "/iceberg/v1",
		"/iceberg/v1/":             "/iceberg/v1",
		"iceberg":                  "/iceberg/v1",
		"/_iceberg":                "/_iceberg/v1",
		"http://h:9000/iceberg":    "http://h:9000/iceberg/v1",
		"http://h:9000/iceberg/v1": "http://h:9000/iceberg/v1",
	} {
		if got := normaliseRestPath(in); got != want {
			t.Errorf("normaliseRestPath(%q) = %q, want %q", in, got, want)
		}
	}
}

// rehearsalOutput runs the command line and returns stdout.
func rehearsalOutput(t *testing.T, args ...string) []byte {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), append([]string{"admin", "catalog", "rehearsal"}, args...), &stdout, &stderr, false); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	return stdout.Bytes()
}

// checkSortedKeys walks a JSON document and fails on an object whose keys
// are not in ascending order.
func checkSortedKeys(t *testing.T, doc []byte) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(doc))
	type frame struct {
		object  bool
		wantKey bool
		last    string
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("invalid JSON: %v", err)
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.object && top.wantKey {
			if d, ok := tok.(json.Delim); ok && d == '}' {
				stack = stack[:len(stack)-1]
				continue
			}
			key := tok.(string)
			if top.last != "" && key <= top.last {
				t.Errorf("key %q follows %q: keys not sorted", key, top.last)
			}
			top.last, top.wantKey = key, false
			continue
		}
		if top != nil && top.object {
			top.wantKey = true // this token is a value
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{object: true, wantKey: true})
		case json.Delim('['):
			stack = append(stack, &frame{})
		case json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
	}
}

type rehearsalPlan struct {
	Mode               string   `json:"mode"`
	CIGate             string   `json:"ci_gate"`
	Preconditions      []string `json:"preconditions"`
	ExpectedInvariants []string `json:"expected_invariants"`
	Phases             []struct {
		Name      string `json:"name"`
		Objective string `json:"objective"`
		Steps     []struct {
			Name             string         `json:"name"`
			Method           string         `json:"method"`
			Path             string         `json:"path"`
			ExpectedStatus   []int          `json:"expected_status"`
			ExpectedBehavior string         `json:"expected_behavior"`
			Body             map[string]any `json:"body"`
		} `json:"steps"`
	} `json:"phases"`
}

func TestRehearsalPlans(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		gate       string
		phases     []string
		wantPaths  []string // METHOD path pairs that must appear
		wantText   []string // substrings of the document
		absentText []string
	}{
		{name: "disaster recovery", args: []string{"--print-disaster-recovery-rehearsal"},
			gate:   "CAIRN_TABLE_CATALOG_DR_REHEARSAL=1",
			phases: []string{"capture-baseline", "diagnose-and-repair", "rollback-or-restore", "migration-preflight", "post-recovery-validation"},
			wantPaths: []string{
				"GET /iceberg/v1/cairn-s3table-smoke/namespaces/smoke/tables/events",
				"GET /iceberg/v1/cairn-s3table-smoke/catalog/status",
				"POST /iceberg/v1/cairn-s3table-smoke/catalog/backup",
				"GET /iceberg/v1/cairn-s3table-smoke/catalog/recovery",
				"POST /iceberg/v1/cairn-s3table-smoke/catalog/recovery",
				"POST /iceberg/v1/cairn-s3table-smoke/catalog/restore",
				"DELETE /iceberg/v1/cairn-s3table-smoke/catalog/migration",
				"GET /iceberg/v1/cairn-s3table-smoke/catalog/migration",
				"POST /iceberg/v1/cairn-s3table-smoke/catalog/migration",
				"S3-PROBE s3://cairn-s3table-smoke/tables/table-id/metadata/",
			},
			wantText: []string{"READY_TO_SNAPSHOT", "SNAPSHOT_MATERIALIZED", `"expected-snapshot-etag"`}},
		{name: "disaster recovery object-backed", args: []string{"--print-disaster-recovery-rehearsal", "--catalog-backing", "object",
			"--warehouse", "dr", "--namespace", "a.b", "--table", "t 1", "--rest-path", "/_iceberg"},
			gate:   "CAIRN_TABLE_CATALOG_DR_REHEARSAL=1",
			phases: []string{"capture-baseline", "diagnose-and-repair", "rollback-or-restore", "migration-preflight", "post-recovery-validation"},
			wantPaths: []string{
				"GET /_iceberg/v1/dr/namespaces/a%1Fb/tables/t%201",
				"DELETE /_iceberg/v1/dr/catalog/migration",
				"S3-PROBE s3://dr/tables/table-id/metadata/",
			},
			absentText: []string{"catalog/backup", "catalog/restore"}},
		{name: "scale fault", args: []string{"--print-scale-fault-rehearsal", "--writer-count", "3", "--iteration-count", "4", "--maintenance-worker-count", "5"},
			gate:   "CAIRN_TABLE_CATALOG_SCALE_FAULT_REHEARSAL=1",
			phases: []string{"concurrent-commit-stress", "durable-backing-cutover-under-load", "kill-and-resume", "restart-durable-strong", "post-run-evidence"},
			wantPaths: []string{
				"CLIENT-STRESS /iceberg/v1/cairn-s3table-smoke/namespaces/smoke/tables/events",
				"CLIENT-STRESS /iceberg/v1/cairn-s3table-smoke/catalog/recovery",
				"GET /iceberg/v1/cairn-s3table-smoke/catalog/migration",
				"POST /iceberg/v1/cairn-s3table-smoke/catalog/migration",
				"DELETE /iceberg/v1/cairn-s3table-smoke/catalog/migration",
				"OPERATOR CAIRN_TABLE_CATALOG_BACKING=durable-strong",
				"EVIDENCE /iceberg/v1/cairn-s3table-smoke/catalog/status",
			},
			wantText: []string{"3 writers x 4 iterations = 12 commits", "5 maintenance workers", `"total_commits": 12`, "names the migration id", "SIGKILL"}},
	}
	methods := []string{"GET", "POST", "DELETE", "S3-PROBE", "CLIENT-STRESS", "OPERATOR", "EVIDENCE"}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := rehearsalOutput(t, tt.args...)
			if again := rehearsalOutput(t, tt.args...); !bytes.Equal(out, again) {
				t.Error("two runs printed different plans")
			}
			checkSortedKeys(t, out)

			var top map[string]json.RawMessage
			if err := json.Unmarshal(out, &top); err != nil {
				t.Fatalf("not a JSON object: %v\n%s", err, out)
			}
			var keys []string
			for k := range top {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			if want := []string{"ci_gate", "expected_invariants", "mode", "phases", "preconditions"}; !slices.Equal(keys, want) {
				t.Errorf("top-level keys %v, want %v", keys, want)
			}

			var plan rehearsalPlan
			if err := json.Unmarshal(out, &plan); err != nil {
				t.Fatal(err)
			}
			if plan.Mode != "manual-or-ci-optional" || plan.CIGate != tt.gate {
				t.Errorf("mode %q, ci_gate %q", plan.Mode, plan.CIGate)
			}
			if len(plan.Preconditions) == 0 || len(plan.ExpectedInvariants) == 0 {
				t.Error("no preconditions or invariants")
			}
			var names, pairs []string
			for _, ph := range plan.Phases {
				names = append(names, ph.Name)
				if ph.Objective == "" || len(ph.Steps) == 0 {
					t.Errorf("phase %s: empty objective or no steps", ph.Name)
				}
				for _, st := range ph.Steps {
					if st.Name == "" || st.Path == "" || st.ExpectedBehavior == "" || st.ExpectedStatus == nil {
						t.Errorf("phase %s: incomplete step %+v", ph.Name, st)
					}
					if !slices.Contains(methods, st.Method) {
						t.Errorf("step %s: method %q", st.Name, st.Method)
					}
					pairs = append(pairs, st.Method+" "+st.Path)
				}
			}
			if !slices.Equal(names, tt.phases) {
				t.Errorf("phases %v, want %v", names, tt.phases)
			}
			for _, p := range tt.wantPaths {
				if !slices.Contains(pairs, p) {
					t.Errorf("no step %q in %v", p, pairs)
				}
			}
			for _, s := range tt.wantText {
				if !bytes.Contains(out, []byte(s)) {
					t.Errorf("plan lacks %q", s)
				}
			}
			for _, s := range tt.absentText {
				if bytes.Contains(out, []byte(s)) {
					t.Errorf("plan has %q", s)
				}
			}
			if bytes.Contains(out, []byte(`\u003c`)) || bytes.Contains(out, []byte(`\u003e`)) {
				t.Error("HTML-escaped output")
			}
		})
	}
}
