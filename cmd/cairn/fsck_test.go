package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/cairnstore/cairn/objstore"
)

func TestRunFsck(t *testing.T) {
	missing := objstore.ShardRef{DataID: "d1", Drive: 2, Path: "drives/d2/d1", Bucket: "b", Key: "k"}
	tests := []struct {
		name     string
		json     bool
		report   objstore.FsckReport
		err      error
		wantCode int
		wantOut  string
	}{
		{name: "clean", report: objstore.FsckReport{Versions: 3}, wantCode: exitOK, wantOut: "clean"},
		{name: "clean json", json: true, report: objstore.FsckReport{Versions: 3}, wantCode: exitOK, wantOut: `"orphan_shards": []`},
		{name: "problems", report: objstore.FsckReport{MissingShards: []objstore.ShardRef{missing}},
			wantCode: exitProblems, wantOut: "drive 2 data d1 (b/k)"},
		{name: "problems json", json: true, report: objstore.FsckReport{MissingShards: []objstore.ShardRef{missing}},
			wantCode: exitProblems, wantOut: "d1"},
		{name: "error", err: fmt.Errorf("open index: %w", errors.New("locked")), wantCode: exitError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			var got objstore.Options
			d := deps{stdout: &stdout, stderr: &stderr, log: zerolog.Nop(),
				fsck: func(_ context.Context, o objstore.Options, _ func(objstore.Progress)) (objstore.FsckReport, error) {
					got = o
					return tt.report, tt.err
				}}
			opts := fsckOptions{Store: storeFlags{Data: "/d", Drives: 4, Parity: -1}, JSON: tt.json}
			code, _ := exitStatus("admin fsck", runFsck(context.Background(), opts, d))
			if code != tt.wantCode {
				t.Fatalf("exit code %d, want %d; stdout %q", code, tt.wantCode, stdout.String())
			}
			if got.Dir != "/d" || got.DriveCount != 4 || got.Parity != -1 || !got.NoBackground {
				t.Fatalf("store options %+v", got)
			}
			if !strings.Contains(stdout.String(), tt.wantOut) {
				t.Fatalf("stdout %q does not contain %q", stdout.String(), tt.wantOut)
			}
			if tt.json && tt.err == nil && !json.Valid(stdout.Bytes()) {
				t.Fatalf("--json output is not JSON: %q", stdout.String())
			}
		})
	}
}

func TestRunHeal(t *testing.T) {
	lost := objstore.ShardRef{DataID: "d9", Drive: -1}
	tests := []struct {
		name     string
		report   objstore.HealReport
		wantCode int
		wantOut  string
	}{
		{name: "healthy", report: objstore.HealReport{OrphansRemoved: 2}, wantCode: exitOK, wantOut: "healthy"},
		{name: "unrecoverable", report: objstore.HealReport{Unrecoverable: []objstore.ShardRef{lost}},
			wantCode: exitProblems, wantOut: "all drives data d9"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout bytes.Buffer
			d := deps{stdout: &stdout, stderr: &bytes.Buffer{}, log: zerolog.Nop(),
				heal: func(context.Context, objstore.Options, func(objstore.Progress)) (objstore.HealReport, error) {
					return tt.report, nil
				}}
			code, _ := exitStatus("admin heal", runHeal(context.Background(), healOptions{Store: storeFlags{Data: "/d", Parity: -1}}, d))
			if code != tt.wantCode || !strings.Contains(stdout.String(), tt.wantOut) {
				t.Fatalf("exit code %d, stdout %q; want %d and %q", code, stdout.String(), tt.wantCode, tt.wantOut)
			}
		})
	}
}

func TestProgressOffWithoutTerminal(t *testing.T) {
	var out bytes.Buffer
	p := newProgress(&out, false)
	p.update(objstore.Progress{Phase: "scan", Done: 1, Total: 2})
	p.finish()
	if out.Len() != 0 {
		t.Fatalf("progress drew %q without a terminal", out.String())
	}
	p = newProgress(&out, true)
	p.update(objstore.Progress{Phase: "scan", Done: 1, Total: 2})
	p.update(objstore.Progress{Phase: "verify", Done: 5, Total: 0})
	p.finish()
	if !strings.Contains(out.String(), "verify") {
		t.Fatalf("progress on a terminal drew %q", out.String())
	}
}

func TestVersion(t *testing.T) {
	var out bytes.Buffer
	if err := runVersion(&out, versionOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "cairn ") || !strings.Contains(out.String(), "(go") {
		t.Fatalf("version output %q", out.String())
	}
	if got := resolveVersion("v1.2.3"); got != "v1.2.3" {
		t.Fatalf("resolveVersion(v1.2.3) = %q", got)
	}
}
