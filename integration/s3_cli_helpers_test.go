package integration

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// cliResult is how a client process ended.
type cliResult struct {
	code           int
	stdout, stderr string
}

func (r cliResult) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
}

// cliRun runs a client to completion, bounded by cliCmdTimeout, in dir.
func cliRun(t *testing.T, env []string, dir, bin string, args ...string) cliResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cliCmdTimeout)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env, cmd.Dir = env, dir
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%s %s: still running after %v\nstdout:\n%s\nstderr:\n%s", bin, strings.Join(args, " "), cliCmdTimeout, stdout.String(), stderr.String())
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("%s %s: %v", bin, strings.Join(args, " "), err)
	}
	return cliResult{code: cmd.ProcessState.ExitCode(), stdout: stdout.String(), stderr: stderr.String()}
}

// cliMust runs a client and fails the test unless it exits 0.
func cliMust(t *testing.T, env []string, dir, bin string, args ...string) cliResult {
	t.Helper()
	r := cliRun(t, env, dir, bin, args...)
	if r.code != 0 {
		t.Fatalf("%s %s: %s", filepath.Base(bin), strings.Join(args, " "), r)
	}
	return r
}

// cliFind returns the client binary, preferring Debian's under /usr/bin
// (what CI has after make deps), else the one on PATH; or skips the test.
func cliFind(t *testing.T, name, pkg string) string {
	t.Helper()
	if p := "/usr/bin/" + name; cliExecutable(p) {
		return p
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	t.Skipf("SKIP: %s not found: install Debian's %s (make deps) to run this test", name, pkg)
	return ""
}

func cliExecutable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

// cliSkipOnBug skips the test with msg when out shows the bug's symptom.
func cliSkipOnBug(t *testing.T, out, symptom, msg string) {
	t.Helper()
	if strings.Contains(out, symptom) {
		t.Skipf("%s\nclient output:\n%s", msg, out)
	}
}

func cliWrite(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// cliRandom returns n reproducible pseudo-random bytes.
func cliRandom(seed uint64, n int) []byte {
	var key [32]byte
	key[0], key[1] = byte(seed), byte(seed>>8)
	b := make([]byte, n)
	_, _ = rand.NewChaCha8(key).Read(b)
	return b
}

func cliMD5(b []byte) string { s := md5.Sum(b); return hex.EncodeToString(s[:]) }

// cliTree writes a small directory tree with awkward names and returns the
// relative paths (slash-separated) to their contents.
// With empty, one of the files is empty.
func cliTree(t *testing.T, dir string, empty bool) map[string][]byte {
	t.Helper()
	files := map[string][]byte{
		"a.txt":                         []byte("alpha\n"),
		"b.bin":                         cliRandom(1, 70_000),
		"sub/c.txt":                     []byte("gamma\n"),
		"sub/deeper/d.bin":              cliRandom(2, 1234),
		"sub/name with spaces+plus.txt": []byte("spaces and a plus\n"),
		"unicodé/ü-€.txt":               []byte("unicode\n"),
	}
	if empty {
		files["empty"] = []byte{}
	}
	for rel, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return files
}

// cliReadTree reads every regular file under dir.
func cliReadTree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	got := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		got[filepath.ToSlash(rel)] = data
		return err
	})
	if err != nil {
		t.Fatalf("read tree %s: %v", dir, err)
	}
	return got
}

// cliSameTree fails unless got holds exactly want.
func cliSameTree(t *testing.T, what string, got, want map[string][]byte) {
	t.Helper()
	for rel, data := range want {
		g, ok := got[rel]
		switch {
		case !ok:
			t.Errorf("%s: %s missing", what, rel)
		case !bytes.Equal(g, data):
			t.Errorf("%s: %s differs (%d bytes, want %d)", what, rel, len(g), len(data))
		}
	}
	for rel := range got {
		if _, ok := want[rel]; !ok {
			t.Errorf("%s: unexpected %s", what, rel)
		}
	}
}
