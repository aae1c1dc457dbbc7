package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// cleanEnv unsets every CAIRN_* variable for the test (restored after)
// and sets the given ones.
func cleanEnv(t *testing.T, set map[string]string) {
	t.Helper()
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "CAIRN_") {
			t.Setenv(k, "")
			_ = os.Unsetenv(k)
		}
	}
	for k, v := range set {
		t.Setenv(k, v)
	}
}

// mountTmpfs mounts a tmpfs of the given options on dir (created) until
// the test ends. Needs root.
func mountTmpfs(t *testing.T, dir, opts string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, opts); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, 0); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
}

// freePort returns a loopback address nothing listens on (for now).
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}

func doctor(t *testing.T, o doctorOptions) (string, error) {
	t.Helper()
	var out bytes.Buffer
	err := runDoctor(context.Background(), o, deps{stdout: &out, stderr: io.Discard, log: zerolog.Nop()})
	return out.String(), err
}

// matchAll fails the test for each pattern (multi-line mode) the output
// does not match.
func matchAll(t *testing.T, out string, patterns ...string) {
	t.Helper()
	for _, p := range patterns {
		if !regexp.MustCompile(`(?m)` + p).MatchString(out) {
			t.Errorf("doctor output does not match %s", p)
		}
	}
}

// TestDoctorHealthy: three drives on three filesystems, a free port, a
// sane environment: every check passes.
func TestDoctorHealthy(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a tmpfs per drive")
	}
	cleanEnv(t, map[string]string{"CAIRN_ROOT_USER": "admin", "CAIRN_ROOT_PASSWORD": "longenough", "CAIRN_TABLE_CATALOG_BACKING": "object"})
	data := t.TempDir()
	for i := range 3 {
		mountTmpfs(t, filepath.Join(data, "drives", fmt.Sprintf("d%d", i)), "size=64m")
	}
	out, err := doctor(t, doctorOptions{Data: data, Endpoint: freePort(t)})
	t.Logf("cairn admin doctor (healthy):\n%s", out)
	if err != nil {
		t.Fatalf("doctor on a healthy setup: %v", err)
	}
	if strings.Contains(out, "FAIL  ") {
		t.Error("a check failed on a healthy setup")
	}
	d0 := regexp.QuoteMeta(filepath.Join(data, "drives", "d0"))
	matchAll(t, out,
		`^OK    data   `+regexp.QuoteMeta(data)+` present and writable`,
		`^OK    drive  drive 0 \(`+d0+`\): present, writable \(create, fsync, remove\)$`,
		`^OK    drive  drive 2 \(.*d2\): 6\d(\.\d)? MiB of 64 MiB free \(100%\)$`,
		`^OK    drive  3 drives on 3 distinct filesystems$`,
		`^OK    clock  `,
		`^OK    port   127\.0\.0\.1:\d+ is free$`,
		`^OK    env    3 CAIRN_\* variables parse$`,
		`^doctor: 0 FAIL, \d+ WARN, \d+ OK$`,
	)
}

// TestDoctorBroken: a read-only drive, a missing one, a full one and two
// sharing a filesystem, a clock in the past and a bad environment: each
// is reported with its fix, and the run fails.
func TestDoctorBroken(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount tmpfs drives")
	}
	cleanEnv(t, map[string]string{"CAIRN_ROOT_USER": "admin", "CAIRN_TABLE_CATALOG_BACKING": "bogus", "CAIRN_ENDPONT": "http://x"})
	base := t.TempDir()
	ro := filepath.Join(base, "ro")
	mountTmpfs(t, ro, "size=16m,ro")
	full := filepath.Join(base, "full")
	mountTmpfs(t, full, "size=4m")
	if err := os.WriteFile(filepath.Join(full, "ballast"), make([]byte, 4<<20-16<<10), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(base, "missing")
	sharedA, sharedB := filepath.Join(base, "a"), filepath.Join(base, "b")
	for _, d := range []string{sharedA, sharedB} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	out, err := doctor(t, doctorOptions{
		Drive:      []string{ro, missing, full, sharedA, sharedB},
		FUSEDevice: filepath.Join(base, "no-fuse"),
		Now:        func() time.Time { return time.Date(2001, 9, 9, 0, 0, 0, 0, time.UTC) },
	})
	t.Logf("cairn admin doctor (broken):\n%s", out)
	if !errors.Is(err, errProblems) {
		t.Fatalf("doctor on a broken setup: %v, want errProblems (exit 1)", err)
	}
	matchAll(t, out,
		`^FAIL  drive  drive 0 \(`+regexp.QuoteMeta(ro)+`\): not writable: .*read-only file system\n\s+fix: the filesystem is mounted read-only: remount it read-write`,
		`^FAIL  drive  drive 1 \(`+regexp.QuoteMeta(missing)+`\): missing\n\s+fix: mount the drive's disk there .* run 'cairn admin heal'`,
		`^OK    drive  drive 2 \(`+regexp.QuoteMeta(full)+`\): present, writable`,
		`^FAIL  drive  drive 2 \(`+regexp.QuoteMeta(full)+`\): \d+ KiB of 4\.0 MiB free \(0%\), under 2%\n\s+fix: writes will soon fail`,
		`^WARN  drive  drives 3, 4 share one filesystem \(device \d+:\d+\): .*defeats erasure coding\n\s+fix: give each drive its own disk`,
		`^WARN  fuse   `+regexp.QuoteMeta(filepath.Join(base, "no-fuse"))+`: .*no such file or directory\n\s+fix: the mount .* needs it; .*modprobe fuse`,
		`^FAIL  clock  the clock says 2001-09-09T00:00:00Z, before .*\n\s+fix: set the clock`,
		`^FAIL  env    CAIRN_TABLE_CATALOG_BACKING: want object or durable-strong; serve refuses to start`,
		`^WARN  env    CAIRN_ENDPONT is not a variable cairn reads\n\s+fix: check its spelling`,
		`^FAIL  env    only one of CAIRN_ROOT_USER and CAIRN_ROOT_PASSWORD is set`,
		`^doctor: 6 FAIL, \d+ WARN, \d+ OK$`,
	)
}

// TestDoctorPort: a free address, one held by a cairn server, one held by
// something else, and one that is no address.
func TestDoctorPort(t *testing.T) {
	cairn := startServer(t)
	other := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(other.Close)
	free := freePort(t)
	tests := []struct {
		name, endpoint string
		level          checkLevel
		msg            string
	}{
		{"free", free, levelOK, `^` + regexp.QuoteMeta(free) + ` is free$`},
		{"cairn", cairn.URL, levelOK, `^127\.0\.0\.1:\d+ is served by cairn \S+$`},
		{"other", other.URL, levelFail, `^127\.0\.0\.1:\d+ is taken by another program$`},
		{"not an address", "nine thousand", levelFail, `is not HOST:PORT or a URL`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := checkPort(context.Background(), tt.endpoint)
			if r.Level != tt.level || !regexp.MustCompile(tt.msg).MatchString(r.Msg) {
				t.Fatalf("checkPort(%q) = %v %q, want %v matching %s", tt.endpoint, r.Level, r.Msg, tt.level, tt.msg)
			}
			if r.Level != levelOK && r.Fix == "" {
				t.Error("no fix given")
			}
		})
	}
}

// TestDoctorEnv judges CAIRN_* values one by one.
func TestDoctorEnv(t *testing.T) {
	root := []string{"CAIRN_ROOT_USER=admin", "CAIRN_ROOT_PASSWORD=longenough"}
	tests := []struct {
		name string
		env  []string
		want checkLevel // the worst level
		msg  string
	}{
		{"none", nil, levelWarn, "not set: serve uses the default root credentials"},
		{"root only", root, levelOK, "2 CAIRN_* variables parse"},
		{"short password", []string{"CAIRN_ROOT_USER=a", "CAIRN_ROOT_PASSWORD=short"}, levelWarn, "shorter than 8"},
		{"endpoint", append([]string{"CAIRN_ENDPOINT=http://127.0.0.1:9000"}, root...), levelOK, "3 CAIRN_* variables parse"},
		{"endpoint without scheme", append([]string{"CAIRN_ENDPOINT=127.0.0.1:9000"}, root...), levelFail, "CAIRN_ENDPOINT"},
		{"gate", append([]string{"CAIRN_TABLE_CATALOG_STRONG_SNAPSHOT_V2=maybe"}, root...), levelFail, "not a boolean"},
		{"gate true", append([]string{"CAIRN_TABLE_CATALOG_STRONG_SNAPSHOT_V2=true"}, root...), levelOK, "parse"},
		{"master key", append([]string{"CAIRN_SSE_MASTER_KEY=abc"}, root...), levelFail, "CAIRN_SSE_MASTER_KEY"},
		{"domain", append([]string{"CAIRN_DOMAIN=s3.example.com, other.example"}, root...), levelOK, "parse"},
		{"bad domain", append([]string{"CAIRN_DOMAIN=S3 EXAMPLE"}, root...), levelFail, "not a host name"},
		{"failpoints", append([]string{"CAIRN_FAILPOINTS=nonsense"}, root...), levelFail, "CAIRN_FAILPOINTS"},
		{"unknown", append([]string{"CAIRN_WHATEVER=1"}, root...), levelWarn, "not a variable cairn reads"},
		{"other variables ignored", append([]string{"HOME=/root", "CAIRNX=1"}, root...), levelOK, "2 CAIRN_* variables parse"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := checkEnv(tt.env)
			worst, msgs := levelOK, ""
			for _, r := range res {
				worst = max(worst, r.Level)
				msgs += r.Level.String() + " " + r.Msg + "\n"
			}
			if worst != tt.want || !strings.Contains(msgs, tt.msg) {
				t.Fatalf("checkEnv(%q):\n%s\nwant worst %v, a message with %q", tt.env, msgs, tt.want, tt.msg)
			}
		})
	}
}

// TestDoctorUsage: doctor needs a data directory or drives.
func TestDoctorUsage(t *testing.T) {
	if _, err := doctor(t, doctorOptions{}); !errors.Is(err, errUsage) {
		t.Fatalf("doctor without --data or --drive: %v, want a usage error", err)
	}
}
