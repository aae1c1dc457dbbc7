package integration

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// cairnBin is the binary TestMain builds once for the whole package. Tests
// only read it.
var cairnBin string

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "cairn-integration-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "integration:", err)
		return 1
	}
	defer func() { _ = os.RemoveAll(dir) }()
	cairnBin, err = buildBinary(context.Background(), dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "integration: build cairn:", err)
		return 1
	}
	if err := setupRaceLog(dir); err != nil {
		fmt.Fprintln(os.Stderr, "integration:", err)
		return 1
	}
	flag.Parse() // the watchdog reads -test.timeout
	liveServers = &serverSet{live: make(map[*server]string)}
	disarm := armWatchdog(liveServers)
	code := m.Run()
	disarm()
	reports, err := raceSweep()
	if err != nil {
		fmt.Fprintln(os.Stderr, "integration:", err)
		return 1
	}
	if len(reports) > 0 {
		fmt.Fprintf(os.Stderr, "integration: FAIL: %d child processes found data races:\n%s\n", len(reports), strings.Join(reports, "\n"))
		return 1
	}
	return code
}

// repoRoot returns the module root, from `go env GOMOD`.
func repoRoot(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("not inside the cairn module")
	}
	return filepath.Dir(gomod), nil
}

// buildBinary builds ./cmd/cairn into dir (with -race under -race, see
// goBuild) and returns the binary's path.
func buildBinary(ctx context.Context, dir string) (string, error) {
	bin := filepath.Join(dir, "cairn")
	if err := goBuild(ctx, bin, "./cmd/cairn"); err != nil {
		return "", err
	}
	return bin, nil
}

// freeAddr returns a 127.0.0.1 address whose port was free a moment ago.
func freeAddr(t testing.TB) string {
	t.Helper()
	return freeAddrOn(t, "127.0.0.1")
}

// freeAddrOn returns an address of host (a loopback address) whose port
// was free a moment ago.
func freeAddrOn(t testing.TB, host string) string {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		t.Fatalf("find a free port: %v", err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatalf("free port: %v", err)
	}
	return addr
}

// syncBuffer is a bytes.Buffer safe for the exec copier and the test to share.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// result is how a cairn process ended.
type result struct {
	code   int
	stdout string
	stderr string
}

// runCairn runs the binary to completion (bounded by timeout).
func runCairn(t testing.TB, timeout time.Duration, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, cairnBin, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("cairn %s: still running after %v\nstderr:\n%s", strings.Join(args, " "), timeout, stderr.String())
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("cairn %s: %v", strings.Join(args, " "), err)
	}
	failOnRace(t, "cairn "+strings.Join(args, " "), cmd.Process.Pid)
	return result{code: cmd.ProcessState.ExitCode(), stdout: stdout.String(), stderr: stderr.String()}
}

// server is a running "cairn serve".
type server struct {
	t      testing.TB
	addr   string
	data   string
	cmd    *exec.Cmd
	stdout *syncBuffer
	stderr *syncBuffer
	done   chan struct{} // closed when the process has exited
	err    error         // Wait's result, valid after done
	// cluster is set on a cluster's proxy (CAIRN_TEST_CLUSTER): the
	// nodes behind it.
	cluster *testCluster
}

// startServer starts `cairn serve --data data --address <free port>` plus
// extra flags. The process is killed at the end of the test if it is still
// running. It does not wait for readiness; call waitReady.
func startServer(t testing.TB, data string, extra ...string) *server {
	t.Helper()
	return startServerAt(t, freeAddr(t), data, extra...)
}

// startServerAt is startServer on the address addr.
func startServerAt(t testing.TB, addr, data string, extra ...string) *server {
	t.Helper()
	s := &server{t: t, addr: addr, data: data, stdout: &syncBuffer{}, stderr: &syncBuffer{}, done: make(chan struct{})}
	args := append([]string{"serve", "--data", data, "--address", s.addr}, extra...)
	s.cmd = exec.Command(cairnBin, args...)
	s.cmd.Stdout, s.cmd.Stderr = s.stdout, s.stderr
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("start cairn serve: %v", err)
	}
	go func() {
		s.err = s.cmd.Wait()
		close(s.done)
	}()
	liveServers.add(s, t.Name())
	t.Cleanup(func() {
		liveServers.remove(s)
		select {
		case <-s.done:
		default:
			_ = s.cmd.Process.Kill()
			<-s.done
		}
		failOnRace(t, "cairn serve", s.cmd.Process.Pid)
		if t.Failed() {
			t.Logf("cairn serve stderr:\n%s", s.stderr.String())
		}
	})
	return s
}

// url returns the server URL of path.
func (s *server) url(path string) string { return "http://" + s.addr + path }

// waitReady polls /health/ready until it answers 200, the process exits, or
// timeout passes.
func (s *server) waitReady(timeout time.Duration) {
	s.t.Helper()
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(timeout)
	last := "no answer"
	for time.Now().Before(deadline) {
		select {
		case <-s.done:
			s.t.Fatalf("cairn serve exited before it was ready (%v)\nstderr:\n%s", s.err, s.stderr.String())
		default:
		}
		resp, err := client.Get(s.url("/health/ready"))
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
			last = resp.Status
		} else {
			last = err.Error()
		}
		time.Sleep(50 * time.Millisecond)
	}
	s.t.Fatalf("cairn serve not ready after %v (last: %s)\nstderr:\n%s", timeout, last, s.stderr.String())
}

// signal sends sig to the server process.
func (s *server) signal(sig syscall.Signal) {
	s.t.Helper()
	if err := s.cmd.Process.Signal(sig); err != nil {
		s.t.Fatalf("signal %v: %v", sig, err)
	}
}

// wait waits up to timeout for the process to exit and returns its exit
// code (-1 when killed by a signal).
func (s *server) wait(timeout time.Duration) int {
	s.t.Helper()
	select {
	case <-s.done:
		return s.cmd.ProcessState.ExitCode()
	case <-time.After(timeout):
		s.t.Fatalf("cairn serve still running %v after being asked to stop\nstderr:\n%s", timeout, s.stderr.String())
		return 0
	}
}

// stop sends SIGTERM and returns the exit code (bounded by timeout).
func (s *server) stop(timeout time.Duration) int {
	s.t.Helper()
	s.signal(syscall.SIGTERM)
	return s.wait(timeout)
}

// kill sends SIGKILL and waits for the process to be gone (crash tests).
func (s *server) kill() {
	s.t.Helper()
	s.signal(syscall.SIGKILL)
	<-s.done
}
