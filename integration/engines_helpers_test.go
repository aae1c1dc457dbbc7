package integration

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairnstore/cairn/catalog"
)

// The engine tests (engine_*_test.go) run real engines (Spark, PyIceberg,
// Trino) against the built binary. What they run is installed by
// `make engines` (integration/engines/install.sh) into a cache outside
// the repository, named to the tests by CAIRN_ENGINES; `make test` and
// `make test-engines` set it. Without it the tests skip, saying so.

// engines is an installed engine cache.
type engines struct {
	dir string
}

// requireEngines returns the engine cache named by CAIRN_ENGINES, or
// skips the test when there is none.
func requireEngines(t *testing.T) engines {
	t.Helper()
	dir := os.Getenv("CAIRN_ENGINES")
	if dir == "" {
		t.Skip("engine tests need the engines installed: run `make test-engines` (or set CAIRN_ENGINES to the cache `make engines` filled)")
	}
	if _, err := os.Stat(filepath.Join(dir, "venv", "bin", "python")); err != nil {
		t.Fatalf("CAIRN_ENGINES=%s holds no installed engines (%v): run `make engines`", dir, err)
	}
	return engines{dir: dir}
}

// python is the engines' Python interpreter (a virtualenv with pyspark,
// pyiceberg and pyarrow).
func (e engines) python() string { return filepath.Join(e.dir, "venv", "bin", "python") }

// runPython runs a Python script of the engine tests with args, bounded
// by timeout, its environment the test's plus env; it fails the test
// unless the script exits 0, and returns its standard output.
func (e engines) runPython(t *testing.T, timeout time.Duration, env []string, script string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, e.python(), append([]string{script}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 10 * time.Second
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%s %s: still running after %v\nstdout:\n%s\nstderr:\n%s", filepath.Base(script), strings.Join(args, " "), timeout, stdout.String(), stderr.String())
	}
	if err != nil {
		t.Fatalf("%s %s: %v\nstdout:\n%s\nstderr:\n%s", filepath.Base(script), strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// engineLake is what the engine tests that cross the catalog cutover run
// against: `cairn serve --drives 4 --parity 2` with its mount, on
// loopback, holding one warehouse (a table bucket).
type engineLake struct {
	srv           *server
	data, mnt, wh string
	flags         []string
}

// startEngineLake starts the server on the object backing, with warehouse
// wh made by `cairn admin table-bucket create`.
func startEngineLake(t *testing.T, wh string) *engineLake {
	t.Helper()
	requireFUSE(t) // the cutover is driven through the mount's control file
	t.Setenv("CAIRN_TABLE_CATALOG_BACKING", "")
	l := &engineLake{data: t.TempDir(), mnt: t.TempDir(), wh: wh, flags: []string{"--drives", "4", "--parity", "2"}}
	l.srv = startMountAt(t, l.data, l.mnt, l.flags...)
	if r := runCairn(t, rbCLITimeout, "admin", "table-bucket", "create", wh, "--endpoint", l.srv.url("")); r.code != 0 {
		t.Fatalf("cairn admin table-bucket create %s: exit %d\n%s%s", wh, r.code, r.stdout, r.stderr)
	}
	return l
}

// cutover moves the warehouse to the durable-strong backing as an
// operator does on the mount: `echo materialize` into its migration file,
// then a restart with CAIRN_TABLE_CATALOG_BACKING=durable-strong. It
// checks the materialization (namespaces and tables as counted) and the
// restarted server's status, and returns the materialization for the
// caller's own checks.
func (l *engineLake) cutover(t *testing.T, namespaces, tables int) *catalog.MaterializeResult {
	t.Helper()
	fsSh(t, "echo materialize > "+rbControlPath(l.mnt, l.wh, "migration"))
	var out rbMigrationOutcome
	raw := rbReadJSON(t, rbControlPath(l.mnt, l.wh, "last-result"), &out)
	if out.State != "succeeded" || out.Word != "materialize" || out.Result == nil || out.Result.Materialize == nil {
		t.Fatalf("last-result after echo materialize: %s; want state succeeded with the materialize result", raw)
	}
	m := out.Result.Materialize
	if m.Status != catalog.StatusSnapshotMaterialized || !m.ReadyToEnableDurableStrong || !m.ObjectBackedWritesFenced ||
		m.NamespaceCount != namespaces || m.TableCount != tables {
		t.Fatalf("materialize: %+v; want SNAPSHOT_MATERIALIZED, ready, fenced, %d namespaces and %d tables", m, namespaces, tables)
	}
	stopMount(t, l.srv, l.mnt)
	if t.Failed() {
		t.FailNow()
	}
	t.Setenv("CAIRN_TABLE_CATALOG_BACKING", catalog.BackingDurableStrong)
	l.srv = startMountAt(t, l.data, l.mnt, l.flags...)
	var st catalog.Status
	rbReadJSON(t, rbControlPath(l.mnt, l.wh, "status"), &st)
	if st.Backing != catalog.BackingDurableStrong || !st.Served || st.TableCount != tables {
		t.Fatalf("status of %s after the restart: %+v; want backing durable-strong, served, %d tables", l.wh, st, tables)
	}
	return m
}
