package objstore

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestSentinelsListed: every package-level `ErrX = errors.New(...)` of
// the package is in sentinels(), so IsStoreError knows it, wrapped or
// not; other errors are not the store's.
func TestSentinelsListed(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, s := range sentinels() {
		listed[s.Error()] = true
	}
	found := 0
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
					call, ok := vs.Values[i].(*ast.CallExpr)
					if !ok || len(call.Args) != 1 {
						continue
					}
					if sel, ok := call.Fun.(*ast.SelectorExpr); !ok || sel.Sel.Name != "New" {
						continue
					}
					lit, ok := call.Args[0].(*ast.BasicLit)
					if !ok {
						continue
					}
					msg, err := strconv.Unquote(lit.Value)
					if err != nil {
						t.Fatalf("%s: %s: %v", f, id.Name, err)
					}
					found++
					if !listed[msg] {
						t.Errorf("%s (%s) is not in sentinels(): add it there", id.Name, f)
					}
				}
			}
		}
	}
	if found != len(sentinels()) {
		t.Errorf("found %d sentinels in the sources, sentinels() lists %d", found, len(sentinels()))
	}
	for _, s := range sentinels() {
		if !IsStoreError(s) || !IsStoreError(fmt.Errorf("catalog: x: %w", s)) || !IsStoreError(&PartError{Number: 1, Err: s}) {
			t.Errorf("IsStoreError misses %v", s)
		}
	}
	for _, e := range []error{nil, errors.New("no such key"), fmt.Errorf("x: %v", ErrNoSuchKey)} {
		if IsStoreError(e) {
			t.Errorf("IsStoreError(%v) = true, want false", e)
		}
	}
}
