package integration

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

const (
	readyTimeout = 20 * time.Second
	stopTimeout  = 10 * time.Second
	runTimeout   = time.Minute
)

func TestVersion(t *testing.T) {
	r := runCairn(t, runTimeout, "version")
	if r.code != 0 {
		t.Fatalf("cairn version exited %d: %s", r.code, r.stderr)
	}
	if !regexp.MustCompile(`^cairn \S+ \(go\d+\.\d+\S*\)\n$`).MatchString(r.stdout) {
		t.Fatalf("cairn version printed %q, want \"cairn <version> (<go version>)\"", r.stdout)
	}
}

func TestServeLifecycle(t *testing.T) {
	s := startServer(t, t.TempDir())
	s.waitReady(readyTimeout)

	resp, err := http.Get(s.url("/health/live"))
	if err != nil {
		t.Fatalf("GET /health/live: %v", err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /health/live: %s", resp.Status)
	}
	if !strings.Contains(s.stderr.String(), `"message":"serving"`) {
		t.Errorf("no \"serving\" log line on stderr:\n%s", s.stderr.String())
	}

	if code := s.stop(stopTimeout); code != 0 {
		t.Fatalf("cairn serve exited %d after SIGTERM, want 0\nstderr:\n%s", code, s.stderr.String())
	}
}

// TestServeMountNeedsDirectory: --mount on a directory that does not
// exist fails at start with a clear message (the mount itself is covered
// by the fs_*_test.go tests).
func TestServeMountNeedsDirectory(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing")
	s := startServer(t, t.TempDir(), "--mount", missing)
	if code := s.wait(stopTimeout); code == 0 {
		t.Fatalf("serve --mount %s: exit 0, want a failure", missing)
	}
	if !strings.Contains(s.stderr.String(), "missing") {
		t.Errorf("stderr does not name the mount point:\n%s", s.stderr.String())
	}
}

// TestServeAfterKill: a server killed with SIGKILL leaves a data directory
// that the next server opens (the index lock dies with the process).
func TestServeAfterKill(t *testing.T) {
	data := t.TempDir()
	s := startServer(t, data)
	s.waitReady(readyTimeout)
	s.kill()

	s = startServer(t, data)
	s.waitReady(readyTimeout)
	if code := s.stop(stopTimeout); code != 0 {
		t.Fatalf("exit code %d after SIGTERM, want 0\nstderr:\n%s", code, s.stderr.String())
	}
}

func TestBadCommandLines(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantMsg string
	}{
		{name: "unknown flag", args: []string{"serve", "--data", "x", "--bogus"}, wantMsg: "-bogus"},
		{name: "missing data", args: []string{"serve"}, wantMsg: "--data is required"},
		{name: "drives and drive", args: []string{"serve", "--data", "x", "--drives", "2", "--drive", "y"}, wantMsg: "--drive"},
		{name: "bad log level", args: []string{"serve", "--data", "x", "--log-level", "chatty"}, wantMsg: "chatty"},
		{name: "unknown command", args: []string{"frobnicate"}, wantMsg: "unknown command"},
		{name: "unknown admin command", args: []string{"admin", "scrub"}, wantMsg: "unknown admin command"},
		{name: "fsck without data", args: []string{"admin", "fsck"}, wantMsg: "--data is required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCairn(t, runTimeout, tt.args...)
			if r.code != 2 {
				t.Fatalf("cairn %s exited %d, want 2\nstderr: %s", strings.Join(tt.args, " "), r.code, r.stderr)
			}
			if !strings.Contains(r.stderr, tt.wantMsg) || !strings.Contains(r.stderr, "usage") {
				t.Fatalf("stderr %q should name %q and point to the usage", r.stderr, tt.wantMsg)
			}
		})
	}
}

func TestFsckAfterServe(t *testing.T) {
	data := t.TempDir()
	s := startServer(t, data)
	s.waitReady(readyTimeout)
	if code := s.stop(stopTimeout); code != 0 {
		t.Fatalf("cairn serve exited %d after SIGTERM", code)
	}

	r := runCairn(t, runTimeout, "admin", "fsck", "--data", data)
	if r.code != 0 {
		t.Fatalf("fsck of a fresh data dir exited %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}

	r = runCairn(t, runTimeout, "admin", "fsck", "--data", data, "--json")
	if r.code != 0 {
		t.Fatalf("fsck --json exited %d\nstderr: %s", r.code, r.stderr)
	}
	var report map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &report); err != nil {
		t.Fatalf("fsck --json output is not a JSON object: %v\n%s", err, r.stdout)
	}
}
