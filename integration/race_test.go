package integration

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The children's race reports. Under -race, the binaries the tests build
// are race-built too (goBuild) and TestMain points their race detector at
// files of one directory (GORACE log_path=DIR/race, one file race.PID per
// process that found a race), rather than at stderr or the exit status:
// the tests wire a child's stderr in many ways (buffers shown only on
// failure, parsed output, discarded), a report there could pass unseen
// or break a test that reads stderr, and the race detector's exit status
// (66) is set only when the process would have exited 0, never when a
// test kills it (crash tests, cleanups) or it exits with an error on
// purpose. A report file is written when the race is found, so it is
// there however the process ends. The helpers that start cairn fail the
// test whose child wrote one (failOnRace); TestMain fails the run for any
// left unclaimed (raceSweep), e.g. a crash worker's.

// goBuild builds package pkg (a path relative to the module root, such as
// "./cmd/cairn") into out, with -race when the tests run under it.
func goBuild(ctx context.Context, out, pkg string) error {
	root, err := repoRoot(ctx)
	if err != nil {
		return err
	}
	args := []string{"build"}
	if raceEnabled {
		args = append(args, "-race")
	}
	args = append(args, "-o", out, pkg)
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, b)
	}
	return nil
}

// raceLogPrefix is GORACE's log_path; "" when the tests run without -race.
// TestMain sets it once, before any test runs.
var raceLogPrefix string

// setupRaceLog makes dir/race the race detector's log path for every
// child the tests start (through the environment they inherit), after
// whatever GORACE options the caller gave. A no-op without -race.
func setupRaceLog(dir string) error {
	if !raceEnabled {
		return nil
	}
	raceLogPrefix = filepath.Join(dir, "race")
	opts := strings.TrimSpace(os.Getenv("GORACE") + " log_path=" + raceLogPrefix)
	if err := os.Setenv("GORACE", opts); err != nil {
		return fmt.Errorf("set GORACE: %w", err)
	}
	return nil
}

// raceReport returns the race report of process pid and marks it claimed
// (renamed to .seen, so that raceSweep passes it); "" when it found no
// race.
func raceReport(pid int) (string, error) {
	if raceLogPrefix == "" {
		return "", nil
	}
	name := raceLogPrefix + "." + strconv.Itoa(pid)
	b, err := os.ReadFile(name)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read race report: %w", err)
	}
	if err := os.Rename(name, name+".seen"); err != nil {
		return "", fmt.Errorf("claim race report: %w", err)
	}
	return string(b), nil
}

// failOnRace fails t when child process pid (which has exited) reported a
// data race.
func failOnRace(t testing.TB, what string, pid int) {
	t.Helper()
	report, err := raceReport(pid)
	if err != nil {
		t.Error(err)
	}
	if report != "" {
		t.Errorf("%s (pid %d) found a data race:\n%s", what, pid, report)
	}
}

// raceSweep returns the reports that no test claimed, of processes
// failOnRace did not look at; nil when there are none.
func raceSweep() ([]string, error) {
	if raceLogPrefix == "" {
		return nil, nil
	}
	names, err := filepath.Glob(raceLogPrefix + ".*")
	if err != nil {
		return nil, fmt.Errorf("race reports: %w", err)
	}
	var out []string
	for _, name := range names {
		if strings.HasSuffix(name, ".seen") {
			continue
		}
		b, err := os.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("race reports: %w", err)
		}
		out = append(out, fmt.Sprintf("%s:\n%s", filepath.Base(name), b))
	}
	return out, nil
}

// racyProgram races on purpose, then exits 3: a race report must reach
// the harness also when the child exits with an error of its own (the
// race detector's exit status 66 replaces only a 0).
const racyProgram = `package main

import "os"

func main() {
	n := 0
	done := make(chan bool)
	go func() { n++; done <- true }()
	n++
	<-done
	os.Exit(3)
}
`

// The harness catches a child's data race: goBuild race-builds it, and its
// report lands where raceReport finds it (and only once).
func TestRaceReportsOfChildren(t *testing.T) {
	if !raceEnabled {
		t.Skip("the children are race-built only under -race")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "main.go")
	if err := os.WriteFile(src, []byte(racyProgram), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "racy")
	if err := goBuild(context.Background(), bin, src); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Fatalf("racy program: %v, want exit status 3\n%s", err, out)
	}
	if strings.Contains(string(out), "DATA RACE") {
		t.Errorf("the report went to the child's output, not to the log file:\n%s", out)
	}
	pid := cmd.Process.Pid
	report, err := raceReport(pid)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(report, "WARNING: DATA RACE") || !strings.Contains(report, "main.go") {
		t.Fatalf("no race report for pid %d: %q", pid, report)
	}
	if again, err := raceReport(pid); err != nil || again != "" {
		t.Errorf("report claimed twice: %q, %v", again, err)
	}
	left, err := raceSweep()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range left {
		if strings.HasPrefix(r, "race."+strconv.Itoa(pid)+":") {
			t.Errorf("claimed report still swept: %s", r)
		}
	}
}
