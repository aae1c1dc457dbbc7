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
