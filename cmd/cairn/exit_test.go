package main

import (
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnstore/cairn/objstore"
)

func TestExitStatus(t *testing.T) {
	tests := []struct {
		name     string
		cmd      string
		err      error
		wantCode int
		wantMsg  []string // substrings of the message
	}{
		{name: "success", err: nil, wantCode: exitOK},
		{name: "usage", err: usageErrorf("serve", "--data is required"), wantCode: exitError,
			wantMsg: []string{"cairn serve: --data is required", "for usage"}},
		{name: "usage before a command", err: usageErrorf("", "no command given"), wantCode: exitError,
			wantMsg: []string{"cairn: no command given"}},
		{name: "invalid argument", cmd: "serve", err: fmt.Errorf("open: %w: at most 256 drives", objstore.ErrInvalidArgument),
			wantCode: exitError, wantMsg: []string{"cairn serve: open: invalid argument: at most 256 drives", "for usage"}},
		{name: "problems", cmd: "admin fsck", err: fmt.Errorf("%w: 2 missing", errProblems), wantCode: exitProblems,
			wantMsg: []string{"cairn admin fsck: problems found: 2 missing"}},
		{name: "quorum", cmd: "admin heal", err: fmt.Errorf("heal: %w", objstore.ErrQuorumLost), wantCode: exitError,
			wantMsg: []string{"drive quorum lost", "--drive"}},
		{name: "interrupted", cmd: "admin fsck", err: fmt.Errorf("fsck: %w", context.Canceled), wantCode: exitInterrupted,
			wantMsg: []string{"cairn admin fsck: interrupted"}},
		{name: "anything else", cmd: "serve", err: errors.New("listen: address already in use"), wantCode: exitError,
			wantMsg: []string{"cairn serve: listen: address already in use"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, msg := exitStatus(tt.cmd, tt.err)
			if code != tt.wantCode {
				t.Fatalf("code %d, want %d (message %q)", code, tt.wantCode, msg)
			}
			if tt.err == nil && msg != "" {
				t.Fatalf("message %q for success", msg)
			}
			for _, want := range tt.wantMsg {
				if !strings.Contains(msg, want) {
					t.Errorf("message %q does not contain %q", msg, want)
				}
			}
		})
	}
}

// TestExitRulesCoverSentinels fails when objstore grows a sentinel that
// exitRules does not list: each one needs a decision on what to tell the
// operator.
func TestExitRulesCoverSentinels(t *testing.T) {
	listed := map[string]bool{}
	for _, r := range exitRules() {
		listed[r.err.Error()] = true
	}
	for name, msg := range objstoreSentinels(t) {
		t.Run(name, func(t *testing.T) {
			if !listed[msg] {
				t.Fatalf("objstore.%s (%q) has no entry in exitRules (cmd/cairn/exit.go)", name, msg)
			}
		})
	}
}

// objstoreSentinels finds the package-level `ErrX = errors.New("msg")`
// declarations of package objstore and returns name -> message.
func objstoreSentinels(t *testing.T) map[string]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "objstore", "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("find objstore sources: %v (%d files)", err, len(files))
	}
	out := map[string]string{}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatalf("parse %s: %v", f, err)
		}
		for _, decl := range file.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.VAR {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, id := range vs.Names {
					if !strings.HasPrefix(id.Name, "Err") || i >= len(vs.Values) {
						continue
					}
					if msg, ok := errorsNewMessage(vs.Values[i]); ok {
						out[id.Name] = msg
					}
				}
			}
		}
	}
	if len(out) == 0 {
		t.Fatal("no sentinels found in objstore; has errors.go moved?")
	}
	return out
}

// errorsNewMessage returns msg for the expression errors.New("msg").
func errorsNewMessage(e ast.Expr) (string, bool) {
	call, ok := e.(*ast.CallExpr)
	if !ok || len(call.Args) != 1 {
		return "", false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "New" {
		return "", false
	}
	if pkg, ok := sel.X.(*ast.Ident); !ok || pkg.Name != "errors" {
		return "", false
	}
	lit, ok := call.Args[0].(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	return strings.Trim(lit.Value, "\"`"), true
}
