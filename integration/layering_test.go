package integration

import (
	"context"
	"os/exec"
	"sort"
	"strings"
	"testing"
	"time"
)

// The import rules of the module (STYLE.md, "Layering in the linter").
// .golangci.yml states the same rules for depguard; this test is the copy
// that runs with `go test` and needs no linter. Paths are relative to the
// module ("objstore/meta"). Test imports count too.
type layerRule struct {
	name string
	// violates reports whether package pkg importing imp breaks the rule.
	violates func(pkg, imp string) bool
}

func layerRules() []layerRule {
	return []layerRule{
		{
			name: "objstore may not import catalog, frontends or fs",
			violates: func(pkg, imp string) bool {
				return under(pkg, "objstore") && (under(imp, "catalog") || under(imp, "frontends") || under(imp, "fs"))
			},
		},
		{
			name: "catalog may not import frontends or fs",
			violates: func(pkg, imp string) bool {
				return under(pkg, "catalog") && (under(imp, "frontends") || under(imp, "fs"))
			},
		},
		{
			name: "a frontend may not import another frontend (wire them in cmd/)",
			violates: func(pkg, imp string) bool {
				from, to := frontend(pkg), frontend(imp)
				return from != "" && to != "" && from != to
			},
		},
		{
			name: "fs may not import frontends/s3 or frontends/iceberg",
			violates: func(pkg, imp string) bool {
				return under(pkg, "fs") && (under(imp, "frontends/s3") || under(imp, "frontends/iceberg"))
			},
		},
		{
			name: "only catalog (and integration) may import apache/iceberg-go",
			violates: func(pkg, imp string) bool {
				return under(imp, icebergGo) && !under(pkg, "catalog") && !under(pkg, "integration")
			},
		},
		{
			name: "only objstore (and cmd, integration) may import objstore/meta, objstore/erasure, objstore/drive, objstore/blockcache",
			violates: func(pkg, imp string) bool {
				internal := under(imp, "objstore/meta") || under(imp, "objstore/erasure") || under(imp, "objstore/drive") ||
					under(imp, "objstore/blockcache")
				allowed := under(pkg, "objstore") || under(pkg, "cmd") || under(pkg, "integration")
				return internal && !allowed
			},
		},
	}
}

// icebergGo is the Iceberg library the catalog is built on; its dependency
// tree (arrow, parquet) stays out of everything else.
const icebergGo = "github.com/apache/iceberg-go"

// under reports whether path is root or below it.
func under(path, root string) bool {
	return path == root || strings.HasPrefix(path, root+"/")
}

// frontend returns "s3" for "frontends/s3/sigv4", "" outside frontends/X.
func frontend(path string) string {
	rest, ok := strings.CutPrefix(path, "frontends/")
	if !ok {
		return ""
	}
	name, _, _ := strings.Cut(rest, "/")
	return name
}

// violations applies every rule to the import graph (package -> imports,
// module-relative) and returns one line per broken rule.
func violations(graph map[string][]string) []string {
	var out []string
	for pkg, imps := range graph {
		for _, imp := range imps {
			for _, r := range layerRules() {
				if r.violates(pkg, imp) {
					out = append(out, pkg+" imports "+imp+": "+r.name)
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

func TestLayeringRules(t *testing.T) {
	tests := []struct {
		pkg, imp string
		wantRule string // substring of the broken rule's name; "" when allowed
	}{
		{"objstore", "objstore/meta", ""},
		{"objstore/objstoretest", "objstore/drive", ""},
		{"objstore", "catalog", "objstore may not import"},
		{"catalog", icebergGo + "/table", ""},
		{"catalog/objectbacked", icebergGo, ""},
		{"frontends/iceberg", icebergGo + "/table", "only catalog"},
		{"fs", icebergGo, "only catalog"},
		{"objstore", icebergGo + "/catalog/rest", "only catalog"},
		{"objstore/meta", "frontends/s3", "objstore may not import"},
		{"objstore", "fs", "objstore may not import"},
		{"objstore", "fsutil", ""}, // "fs" is a package, not a prefix
		{"catalog", "objstore", ""},
		{"catalog/migration", "frontends/control", "catalog may not import"},
		{"catalog/strong", "fs", "catalog may not import"},
		{"frontends/s3", "frontends/s3/sigv4", ""},
		{"frontends/s3", "frontends/iceberg", "frontend may not import another"},
		{"frontends/control", "frontends/health", "frontend may not import another"},
		{"frontends/iceberg", "catalog", ""},
		{"fs", "frontends/control", ""},
		{"fs", "frontends/s3", "fs may not import"},
		{"fs/node", "frontends/iceberg/rest", "fs may not import"},
		{"fs", "objstore/meta", "only objstore"},
		{"frontends/s3", "objstore/erasure", "only objstore"},
		{"catalog", "objstore/drive", "only objstore"},
		{"frontends/s3", "objstore/blockcache", "only objstore"},
		{"cmd/cairn", "objstore/blockcache", ""},
		{"cmd/cairn", "objstore/meta", ""},
		{"integration", "objstore/erasure", ""},
		{"frontends/s3", "objstore", ""},
	}
	for _, tt := range tests {
		t.Run(tt.pkg+" -> "+tt.imp, func(t *testing.T) {
			got := violations(map[string][]string{tt.pkg: {tt.imp}})
			switch {
			case tt.wantRule == "" && len(got) != 0:
				t.Fatalf("allowed import reported: %v", got)
			case tt.wantRule != "" && (len(got) != 1 || !strings.Contains(got[0], tt.wantRule)):
				t.Fatalf("got %v, want one violation of %q", got, tt.wantRule)
			}
		})
	}
}

// TestLayering checks the real import graph of the module.
func TestLayering(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	root, err := repoRoot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	modOut, err := exec.CommandContext(ctx, "go", "list", "-m").Output()
	if err != nil {
		t.Fatalf("go list -m: %v", err)
	}
	module := strings.TrimSpace(string(modOut))

	// -e: judge imports even while some package does not compile.
	const format = `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}{{range .TestImports}} {{.}}{{end}}{{range .XTestImports}} {{.}}{{end}}`
	cmd := exec.CommandContext(ctx, "go", "list", "-e", "-f", format, "./...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list ./...: %v", err)
	}

	graph := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		pkg, ok := relative(module, fields[0])
		if !ok {
			continue
		}
		for _, imp := range fields[1:] {
			if rel, ok := relative(module, imp); ok {
				graph[pkg] = append(graph[pkg], rel)
			} else if under(imp, icebergGo) {
				graph[pkg] = append(graph[pkg], imp)
			}
		}
		if _, seen := graph[pkg]; !seen {
			graph[pkg] = nil
		}
	}
	if _, ok := graph["objstore"]; !ok {
		t.Fatalf("go list did not report package objstore; is %s the cairn module?", root)
	}
	if v := violations(graph); len(v) > 0 {
		t.Fatalf("layering violated (see STYLE.md, \"Layering in the linter\"):\n  %s", strings.Join(v, "\n  "))
	}
}

// relative strips the module path: "github.com/x/cairn/objstore" -> "objstore".
func relative(module, path string) (string, bool) {
	if path == module {
		return ".", true
	}
	rest, ok := strings.CutPrefix(path, module+"/")
	return rest, ok
}
