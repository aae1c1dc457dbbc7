package integration

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
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

// TestCLIRefusesBeforeFormatting: a bad setting stops serve (and mount)
// before the store is created: a new data directory that did not exist
// is still absent, one that existed empty is still empty.
func TestCLIRefusesBeforeFormatting(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = busy.Close() }()
	tests := []struct {
		name    string
		env     map[string]string
		args    []string // after "serve --data DIR"
		wantMsg string
	}{
		{name: "address in use", args: []string{"--address", busy.Addr().String()}, wantMsg: "address already in use"},
		{name: "port out of range", args: []string{"--address", "127.0.0.1:99999"}, wantMsg: "--address"},
		{name: "address without port", args: []string{"--address", "localhost"}, wantMsg: "--address"},
		{name: "parity as many as drives", args: []string{"--drives", "4", "--parity", "4"}, wantMsg: "--parity 4 needs at least 5 drives"},
		{name: "parity beyond explicit drives", args: []string{"--drive", "DIR/a", "--drive", "DIR/b", "--parity", "2"}, wantMsg: "--parity 2"},
		{name: "catalog backing", env: map[string]string{"CAIRN_TABLE_CATALOG_BACKING": "sideways"}, wantMsg: "CAIRN_TABLE_CATALOG_BACKING"},
		{name: "snapshot gate", env: map[string]string{"CAIRN_TABLE_CATALOG_STRONG_SNAPSHOT_V2": "perhaps"}, wantMsg: "CAIRN_TABLE_CATALOG_STRONG_SNAPSHOT_V2"},
		{name: "root user without password", env: map[string]string{"CAIRN_ROOT_USER": "alice", "CAIRN_ROOT_PASSWORD": ""}, wantMsg: "CAIRN_ROOT_PASSWORD"},
		{name: "master key", env: map[string]string{"CAIRN_SSE_MASTER_KEY": "not-a-key"}, wantMsg: "CAIRN_SSE_MASTER_KEY"},
		{name: "failpoints", env: map[string]string{"CAIRN_FAILPOINTS": "no.such.point=panic"}, wantMsg: "CAIRN_FAILPOINTS"},
		{name: "s3 endpoint", env: map[string]string{"CAIRN_S3_ENDPOINT": "ftp://x"}, wantMsg: "CAIRN_S3_ENDPOINT"},
		{name: "missing mount point", args: []string{"--mount", "DIR/../no-such-mountpoint"}, wantMsg: "no-such-mountpoint does not exist"},
		{name: "bad log level", args: []string{"--log-level", "chatty"}, wantMsg: "chatty"},
		{name: "bad read cache", args: []string{"--read-cache", "lots"}, wantMsg: "--read-cache"},
	}
	for _, tt := range tests {
		for _, existing := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/existing=%v", tt.name, existing), func(t *testing.T) {
				for k, v := range tt.env {
					t.Setenv(k, v)
				}
				data := filepath.Join(t.TempDir(), "data")
				if existing {
					if err := os.Mkdir(data, 0o755); err != nil {
						t.Fatal(err)
					}
				}
				args := []string{"serve", "--data", data, "--address", freeAddr(t)}
				for _, a := range tt.args {
					args = append(args, strings.ReplaceAll(a, "DIR", data))
				}
				r := runCairn(t, runTimeout, args...)
				if r.code != 2 {
					t.Fatalf("cairn %s exited %d, want 2\nstderr: %s", strings.Join(args, " "), r.code, r.stderr)
				}
				if !strings.Contains(r.stderr, tt.wantMsg) {
					t.Errorf("stderr does not name %q:\n%s", tt.wantMsg, r.stderr)
				}
				entries, err := os.ReadDir(data)
				switch {
				case !existing && !errors.Is(err, fs.ErrNotExist):
					t.Errorf("%s was created (%v, %d entries)", data, err, len(entries))
				case existing && (err != nil || len(entries) != 0):
					t.Errorf("%s is no longer empty: %v %v", data, entries, err)
				}
			})
		}
	}

	t.Run("fsck of no store", func(t *testing.T) {
		data := filepath.Join(t.TempDir(), "typo")
		r := runCairn(t, runTimeout, "admin", "fsck", "--data", data)
		if r.code != 2 || !strings.Contains(r.stderr, "no store in") {
			t.Errorf("fsck of a missing directory: exit %d, stderr %s", r.code, r.stderr)
		}
		if _, err := os.Stat(data); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("fsck created %s: %v", data, err)
		}
	})
}

// TestCLIEndpoint: the admin commands find a server that listens on
// another port than 9000 through CAIRN_ENDPOINT (HOST:PORT or URL) and
// --endpoint, with the flag before or after the name; --json lists are
// arrays, never null. A new data directory is created quietly.
func TestCLIEndpoint(t *testing.T) {
	t.Setenv("CAIRN_ROOT_USER", "rootuser")
	t.Setenv("CAIRN_ROOT_PASSWORD", "rootpassword")
	s := startServer(t, t.TempDir())
	s.waitReady(readyTimeout)
	if strings.HasSuffix(s.addr, ":9000") {
		t.Skip("the free port is 9000; the test needs another")
	}
	if msg := s.stderr.String(); strings.Contains(msg, "run heal") || !strings.Contains(msg, "created a new store") {
		t.Errorf("a new data directory should be created with one info line and no 'run heal':\n%s", msg)
	}

	type buckets struct {
		TableBuckets []struct {
			Name string `json:"name"`
		} `json:"table_buckets"`
	}
	list := func(t *testing.T, args ...string) buckets {
		t.Helper()
		r := runCairn(t, runTimeout, append([]string{"admin", "table-bucket", "list", "--json"}, args...)...)
		if r.code != 0 {
			t.Fatalf("table-bucket list: exit %d\n%s", r.code, r.stderr)
		}
		var b buckets
		if err := json.Unmarshal([]byte(r.stdout), &b); err != nil || b.TableBuckets == nil {
			t.Fatalf("table-bucket list --json printed %q (%v), want {\"table_buckets\": [...]}", r.stdout, err)
		}
		return b
	}

	t.Setenv("CAIRN_ENDPOINT", s.addr)
	if got := list(t); len(got.TableBuckets) != 0 {
		t.Fatalf("new server lists %+v", got)
	}
	for i, args := range [][]string{
		{"admin", "table-bucket", "create", "lake-env"},                                 // CAIRN_ENDPOINT=HOST:PORT
		{"admin", "table-bucket", "create", "--endpoint", s.url(""), "lake-flag-first"}, // flag before the name
		{"admin", "table-bucket", "create", "lake-flag-last", "--endpoint", s.addr},     // after it, HOST:PORT
	} {
		if i > 0 {
			t.Setenv("CAIRN_ENDPOINT", "http://127.0.0.1:1") // the flag wins over the environment
		}
		if r := runCairn(t, runTimeout, args...); r.code != 0 {
			t.Fatalf("cairn %s: exit %d\n%s", strings.Join(args, " "), r.code, r.stderr)
		}
	}
	t.Setenv("CAIRN_ENDPOINT", s.url("/"))
	var names []string
	for _, b := range list(t).TableBuckets {
		names = append(names, b.Name)
	}
	if got := strings.Join(names, ","); got != "lake-env,lake-flag-first,lake-flag-last" {
		t.Errorf("table buckets %s", got)
	}
	r := runCairn(t, runTimeout, "admin", "user", "list", "--json")
	var users struct {
		Users []any `json:"users"`
	}
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &users) != nil || users.Users == nil {
		t.Errorf("user list --json: exit %d, stdout %q, stderr %s", r.code, r.stdout, r.stderr)
	}

	t.Setenv("CAIRN_ENDPOINT", "http://127.0.0.1:1")
	if r := runCairn(t, runTimeout, "admin", "table-bucket", "list"); r.code != 2 || !strings.Contains(r.stderr, "127.0.0.1:1") {
		t.Errorf("with CAIRN_ENDPOINT at a closed port: exit %d, stderr %s", r.code, r.stderr)
	}
	t.Setenv("CAIRN_ENDPOINT", "ftp://x")
	if r := runCairn(t, runTimeout, "admin", "user", "list"); r.code != 2 || !strings.Contains(r.stderr, "$CAIRN_ENDPOINT") {
		t.Errorf("with a bad CAIRN_ENDPOINT: exit %d, stderr %s", r.code, r.stderr)
	}
	if code := s.stop(stopTimeout); code != 0 {
		t.Fatalf("cairn serve exited %d after SIGTERM", code)
	}
}

// TestCLIReportsJSON: fsck and heal --json print one JSON document on
// stdout, with empty lists as [], and their logs on stderr only.
func TestCLIReportsJSON(t *testing.T) {
	data := t.TempDir()
	s := startServer(t, data)
	s.waitReady(readyTimeout)
	if code := s.stop(stopTimeout); code != 0 {
		t.Fatalf("cairn serve exited %d after SIGTERM", code)
	}
	for _, tc := range []struct {
		cmd   string
		lists []string
	}{
		{"fsck", []string{"orphan_shards", "missing_shards", "corrupt_shards", "lost_data", "dangling", "index"}},
		{"heal", []string{"healed", "unrecoverable"}},
	} {
		r := runCairn(t, runTimeout, "admin", tc.cmd, "--json", "--data", data, "--log-level", "debug")
		if r.code != 0 {
			t.Fatalf("%s --json: exit %d\n%s", tc.cmd, r.code, r.stderr)
		}
		var report map[string]any
		dec := json.NewDecoder(strings.NewReader(r.stdout))
		if err := dec.Decode(&report); err != nil || dec.More() {
			t.Fatalf("%s --json stdout is not one JSON object (%v):\n%s", tc.cmd, err, r.stdout)
		}
		for _, k := range tc.lists {
			if v, ok := report[k]; !ok || v == nil {
				t.Errorf("%s --json: %q is %v, want [] (keys: %v)", tc.cmd, k, v, report)
			}
		}
	}
}

// TestCLIHelp: the built binary answers -h and --help of a command with
// its flags and examples, and cairn --help names every admin command.
func TestCLIHelp(t *testing.T) {
	r := runCairn(t, runTimeout, "--help")
	for _, want := range []string{"cairn serve", "cairn mount", "cairn admin fsck", "cairn admin heal", "cairn admin user add", "cairn admin table-bucket create",
		"cairn admin catalog status", "cairn admin spark-conf", "cairn bench s3", "cairn completion", "cairn version"} {
		if r.code != 0 || !strings.Contains(r.stdout, want) {
			t.Errorf("cairn --help (exit %d) does not list %q:\n%s", r.code, want, r.stdout)
		}
	}
	for _, args := range [][]string{{"admin", "user", "-h"}, {"admin", "user", "add", "--help"}, {"admin", "table-bucket", "create", "-h"}} {
		r := runCairn(t, runTimeout, args...)
		if r.code != 0 || !strings.Contains(r.stdout, "Usage:") || !strings.Contains(r.stdout, "--endpoint") && !strings.Contains(r.stdout, "cairn admin user add") {
			t.Errorf("cairn %s: exit %d\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
		}
	}
	r = runCairn(t, runTimeout, "completion", "bash")
	if r.code != 0 || !strings.Contains(r.stdout, "complete") {
		t.Errorf("completion bash: exit %d\n%s", r.code, r.stderr)
	}
	r = runCairn(t, runTimeout, "admin", "table-bucket", "create", "x", "--endpont", "h:1")
	if r.code != 2 || !strings.Contains(r.stderr, "did you mean --endpoint?") {
		t.Errorf("misspelt flag: exit %d, stderr %s", r.code, r.stderr)
	}
}
