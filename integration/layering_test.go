package integration

import (
	"context"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

// The import rules of the module (STYLE.md, "Layering in the linter").
// .golangci.yml states the direct rules for depguard; this test is the
// copy that runs with `go test` and needs no linter, and the only place
// that checks the transitive rules (depguard sees one file's imports, not
// what they import in turn). Paths are relative to the module
// ("objstore/meta"). Test imports count too.
type layerRule struct {
	name string
	// transitive rules judge every package pkg depends on (go list's
	// .Deps, of its tests too); the others judge only what pkg imports.
	transitive bool
	// violates reports whether package pkg importing (or, for a
	// transitive rule, depending on) imp breaks the rule.
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
		{
			name:       "objstore may not depend on catalog, frontends or fs, even transitively",
			transitive: true,
			violates: func(pkg, dep string) bool {
				return under(pkg, "objstore") && (under(dep, "catalog") || under(dep, "frontends") || under(dep, "fs"))
			},
		},
		{
			name:       "catalog may not depend on frontends or fs, even transitively",
			transitive: true,
			violates: func(pkg, dep string) bool {
				return under(pkg, "catalog") && (under(dep, "frontends") || under(dep, "fs"))
			},
		},
		{
			name:       "a frontend may not depend on another frontend, even transitively",
			transitive: true,
			violates: func(pkg, dep string) bool {
				from, to := frontend(pkg), frontend(dep)
				return from != "" && to != "" && from != to
			},
		},
		{
			name:       "fs may not depend on catalog, frontends/s3, frontends/iceberg or apache/iceberg-go, even transitively",
			transitive: true,
			violates: func(pkg, dep string) bool {
				return under(pkg, "fs") && (under(dep, "catalog") || under(dep, "frontends/s3") ||
					under(dep, "frontends/iceberg") || under(dep, icebergGo))
			},
		},
		{
			name:       "frontends/control may not depend on catalog (its catalogctl does), even transitively",
			transitive: true,
			violates: func(pkg, dep string) bool {
				return under(pkg, "frontends/control") && !under(pkg, "frontends/control/catalogctl") && under(dep, "catalog")
			},
		},
		{
			name: "only catalog, frontends/iceberg, frontends/control/catalogctl (and cmd, integration) may depend on " +
				"apache/iceberg-go, even transitively",
			transitive: true,
			violates: func(pkg, dep string) bool {
				allowed := under(pkg, "catalog") || under(pkg, "frontends/iceberg") ||
					under(pkg, "frontends/control/catalogctl") || under(pkg, "cmd") || under(pkg, "integration")
				return under(dep, icebergGo) && !allowed
			},
		},
		{
			name: "only objstore/meta/etcd (and integration) may import etcd's packages",
			violates: func(pkg, imp string) bool {
				return under(imp, etcdMod) && !under(pkg, "objstore/meta/etcd") && !under(pkg, "integration")
			},
		},
		{
			name: "only the tests of objstore/meta/etcd and its etcdtest (and integration) may depend on etcd's server, " +
				"even transitively: the binary links the client only",
			transitive: true,
			violates: func(pkg, dep string) bool {
				allowed := under(pkg, "objstore/meta/etcd") || under(pkg, "integration")
				return under(dep, etcdServer) && !allowed
			},
		},
	}
}

// icebergGo is the Iceberg library the catalog is built on; its dependency
// tree (arrow, parquet) stays out of everything else.
const icebergGo = "github.com/apache/iceberg-go"

// etcdMod is etcd's modules (client, api, server); etcdServer its server,
// which tests embed.
const (
	etcdMod    = "go.etcd.io/etcd"
	etcdServer = "go.etcd.io/etcd/server"
)

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

// graph is the module's dependency graph, module-relative, with
// apache/iceberg-go and etcd kept and other outside packages left out. A
// package's entry includes its tests' imports and dependencies.
type graph struct {
	imports map[string][]string // package -> what it imports
	deps    map[string][]string // package -> everything it depends on
}

// violations applies every rule to g and returns one line per broken rule
// and edge. A transitive violation names the import it goes through.
func violations(g graph) []string {
	var out []string
	rules := layerRules()
	for pkg, imps := range g.imports {
		for _, imp := range imps {
			for _, r := range rules {
				if !r.transitive && r.violates(pkg, imp) {
					out = append(out, pkg+" imports "+imp+": "+r.name)
				}
			}
		}
	}
	for pkg, deps := range g.deps {
		for _, dep := range deps {
			for _, r := range rules {
				if r.transitive && r.violates(pkg, dep) {
					out = append(out, pkg+" depends on "+dep+g.through(pkg, dep)+": "+r.name)
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

// through says how pkg comes to depend on dep: "" when it imports dep,
// else " (through imp)" for the first import imp that depends on dep.
func (g graph) through(pkg, dep string) string {
	if slices.Contains(g.imports[pkg], dep) {
		return ""
	}
	for _, imp := range g.imports[pkg] {
		if slices.Contains(g.deps[imp], dep) {
			return " (through " + imp + ")"
		}
	}
	return " (through a package outside the module)"
}

func TestLayeringRules(t *testing.T) {
	tests := []struct {
		pkg, imp string
		// dep: pkg depends on imp only through another package ("via");
		// otherwise pkg imports imp.
		dep  bool
		want []string // substrings of the broken rules, in order; nil when allowed
	}{
		{pkg: "objstore", imp: "objstore/meta"},
		{pkg: "objstore/meta/etcd", imp: etcdMod + "/client/v3"},
		{pkg: "objstore/meta/etcd/etcdtest", imp: etcdServer + "/v3/embed", dep: true},
		{pkg: "objstore", imp: etcdMod + "/client/v3", want: []string{"only objstore/meta/etcd (and integration) may import etcd"}},
		{pkg: "cmd/cairn", imp: etcdServer + "/v3/embed", dep: true, want: []string{"may depend on etcd's server"}},
		{pkg: "cmd/cairn", imp: etcdServer + "/v3/embed",
			want: []string{"may depend on etcd's server", "only objstore/meta/etcd (and integration) may import etcd"}},
		{pkg: "objstore/objstoretest", imp: "objstore/drive"},
		{pkg: "objstore", imp: "catalog", want: []string{"objstore may not depend", "objstore may not import"}},
		{pkg: "objstore", imp: "catalog/strong", dep: true, want: []string{"objstore may not depend"}},
		{pkg: "objstore/meta", imp: "fs", dep: true, want: []string{"objstore may not depend"}},
		{pkg: "catalog", imp: icebergGo + "/table"},
		{pkg: "catalog/objectbacked", imp: icebergGo},
		{pkg: "catalog/migrate", imp: icebergGo + "/arrow", dep: true},
		{pkg: "frontends/iceberg", imp: icebergGo + "/table", want: []string{"only catalog (and integration) may import"}},
		{pkg: "frontends/iceberg", imp: icebergGo + "/table", dep: true},
		{pkg: "frontends/control/catalogctl", imp: icebergGo, dep: true},
		{pkg: "frontends/control/catalogctl", imp: "catalog"},
		{pkg: "frontends/control/catalogctl", imp: "frontends/control"},
		{pkg: "frontends/control", imp: icebergGo, dep: true, want: []string{"only catalog, frontends/iceberg"}},
		{pkg: "frontends/control", imp: "catalog", want: []string{"frontends/control may not depend on catalog"}},
		{pkg: "frontends/control", imp: "catalog/migrate", dep: true, want: []string{"frontends/control may not depend on catalog"}},
		{pkg: "frontends/s3", imp: icebergGo + "/io", dep: true, want: []string{"only catalog, frontends/iceberg"}},
		{pkg: "fs", imp: icebergGo, want: []string{"fs may not depend", "only catalog, frontends/iceberg", "only catalog (and integration) may import"}},
		{pkg: "fs", imp: icebergGo + "/table", dep: true, want: []string{"fs may not depend", "only catalog, frontends/iceberg"}},
		{pkg: "fs", imp: "catalog", want: []string{"fs may not depend"}},
		{pkg: "fs/node", imp: "catalog/migrate", dep: true, want: []string{"fs may not depend"}},
		{pkg: "objstore", imp: icebergGo + "/catalog/rest",
			want: []string{"only catalog, frontends/iceberg", "only catalog (and integration) may import"}},
		{pkg: "objstore/meta", imp: "frontends/s3", want: []string{"objstore may not depend", "objstore may not import"}},
		{pkg: "objstore", imp: "fs", want: []string{"objstore may not depend", "objstore may not import"}},
		{pkg: "objstore", imp: "fsutil"}, // "fs" is a package, not a prefix
		{pkg: "catalog", imp: "objstore"},
		{pkg: "catalog/migration", imp: "frontends/control", want: []string{"catalog may not depend", "catalog may not import"}},
		{pkg: "catalog/strong", imp: "fs", want: []string{"catalog may not depend", "catalog may not import"}},
		{pkg: "catalog", imp: "frontends/control", dep: true, want: []string{"catalog may not depend"}},
		{pkg: "frontends/s3", imp: "frontends/s3/sigv4"},
		{pkg: "frontends/s3", imp: "frontends/iceberg",
			want: []string{"a frontend may not depend on another", "a frontend may not import another"}},
		{pkg: "frontends/control", imp: "frontends/health",
			want: []string{"a frontend may not depend on another", "a frontend may not import another"}},
		{pkg: "frontends/health", imp: "frontends/s3/iam", dep: true, want: []string{"a frontend may not depend on another"}},
		{pkg: "frontends/iceberg", imp: "catalog"},
		{pkg: "fs", imp: "frontends/control"},
		{pkg: "fs", imp: "frontends/s3", want: []string{"fs may not depend", "fs may not import"}},
		{pkg: "fs/node", imp: "frontends/iceberg/rest", want: []string{"fs may not depend", "fs may not import"}},
		{pkg: "fs", imp: "frontends/iceberg", dep: true, want: []string{"fs may not depend"}},
		{pkg: "fs", imp: "objstore/meta", want: []string{"only objstore"}},
		{pkg: "fs", imp: "objstore/meta", dep: true},
		{pkg: "frontends/s3", imp: "objstore/erasure", want: []string{"only objstore"}},
		{pkg: "catalog", imp: "objstore/drive", want: []string{"only objstore"}},
		{pkg: "frontends/s3", imp: "objstore/blockcache", want: []string{"only objstore"}},
		{pkg: "cmd/cairn", imp: "objstore/blockcache"},
		{pkg: "cmd/cairn", imp: "objstore/meta"},
		{pkg: "cmd/cairn", imp: icebergGo, dep: true},
		{pkg: "integration", imp: "objstore/erasure"},
		{pkg: "integration/internal/catalogcrash", imp: icebergGo, dep: true},
		{pkg: "frontends/s3", imp: "objstore"},
	}
	for _, tt := range tests {
		name := tt.pkg + " -> " + tt.imp
		if tt.dep {
			name = tt.pkg + " -> via -> " + tt.imp
		}
		t.Run(name, func(t *testing.T) {
			g := graph{
				imports: map[string][]string{tt.pkg: {tt.imp}},
				deps:    map[string][]string{tt.pkg: {tt.imp}},
			}
			if tt.dep {
				g = graph{
					imports: map[string][]string{tt.pkg: {"via"}, "via": {tt.imp}},
					deps:    map[string][]string{tt.pkg: {"via", tt.imp}, "via": {tt.imp}},
				}
			}
			var got []string // those of pkg: "via" is judged too
			for _, v := range violations(g) {
				if strings.HasPrefix(v, tt.pkg+" ") {
					got = append(got, v)
				}
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %q, want violations of %q", got, tt.want)
			}
			for i, w := range tt.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("violation %d: %q, want one of %q", i, got[i], w)
				}
				if tt.dep && !strings.Contains(got[i], "(through via)") {
					t.Errorf("violation %d: %q does not name the import it goes through", i, got[i])
				}
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

	// -e: judge imports even while some package does not compile. -test
	// lists each package's test variants too ("fs [fs.test]", "fs_test
	// [fs.test]", "fs.test"), whose imports and deps count as fs's.
	const format = `{{.ImportPath}}|{{join .Imports " "}}|{{join .Deps " "}}`
	cmd := exec.CommandContext(ctx, "go", "list", "-e", "-test", "-f", format, "./...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list ./...: %v", err)
	}

	g := graph{imports: map[string][]string{}, deps: map[string][]string{}}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Split(line, "|")
		if len(fields) != 3 {
			t.Fatalf("go list: unexpected line %q", line)
		}
		pkg, ok := relative(module, testedPackage(fields[0]))
		if !ok {
			continue
		}
		g.imports[pkg] = appendKept(g.imports[pkg], module, pkg, strings.Fields(fields[1]))
		g.deps[pkg] = appendKept(g.deps[pkg], module, pkg, strings.Fields(fields[2]))
	}
	if _, ok := g.imports["objstore"]; !ok {
		t.Fatalf("go list did not report package objstore; is %s the cairn module?", root)
	}
	// The transitive rules can fail only if the deps are there: the
	// binary links iceberg-go, and fs reaches objstore/meta through
	// objstore.
	if !slices.ContainsFunc(g.deps["cmd/cairn"], func(d string) bool { return under(d, icebergGo) }) {
		t.Fatalf("go list reports no dependency of cmd/cairn on %s: %q", icebergGo, g.deps["cmd/cairn"])
	}
	if !slices.Contains(g.deps["fs"], "objstore/meta") || slices.Contains(g.imports["fs"], "objstore/meta") {
		t.Fatalf("go list does not report fs -> objstore -> objstore/meta: imports %q, deps %q", g.imports["fs"], g.deps["fs"])
	}
	if v := violations(g); len(v) > 0 {
		t.Fatalf("layering violated (see STYLE.md, \"Layering in the linter\"):\n  %s", strings.Join(v, "\n  "))
	}
}

// testedPackage maps go list -test's names of a package's test variants to
// the package: "x [x.test]", "x_test [x.test]" and "x.test" are x.
func testedPackage(path string) string {
	path, _, _ = strings.Cut(path, " ")
	if p, ok := strings.CutSuffix(path, ".test"); ok {
		return p
	}
	if p, ok := strings.CutSuffix(path, "_test"); ok {
		return p
	}
	return path
}

// appendKept appends to list the paths (of packages pkg imports or depends
// on) that the rules judge: the module's, made relative,
// apache/iceberg-go (any of its packages, as icebergGo) and etcd (its
// server's packages as etcdServer, the others as etcdMod). Test variants
// count as their package; pkg itself and paths already in list are left
// out.
func appendKept(list []string, module, pkg string, paths []string) []string {
	for _, p := range paths {
		p = testedPackage(p)
		switch rel, ok := relative(module, p); {
		case ok:
			p = rel
		case under(p, icebergGo):
			p = icebergGo // one line per package, not per iceberg-go package
		case under(p, etcdServer):
			p = etcdServer
		case under(p, etcdMod):
			p = etcdMod
		default:
			continue
		}
		if p != pkg && !slices.Contains(list, p) {
			list = append(list, p)
		}
	}
	return list
}

// relative strips the module path: "github.com/x/cairn/objstore" -> "objstore".
func relative(module, path string) (string, bool) {
	if path == module {
		return ".", true
	}
	rest, ok := strings.CutPrefix(path, module+"/")
	return rest, ok
}
