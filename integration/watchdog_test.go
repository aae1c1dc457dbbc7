package integration

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
)

// A test that hangs ends the run at -test.timeout, and go test then
// prints the test binary's goroutines: where the test waited, not where
// the server it waited on was stuck. The watchdog, armed by runMain a
// little before that deadline, asks every cairn serve still running to
// print its own goroutines (SIGQUIT makes the Go runtime dump them to
// stderr and exit) and writes what each printed, with the test that
// started it, to the run's output.

// watchdogLead is how long before the deadline the watchdog acts: time
// for the servers to dump and for their output to be written.
const watchdogLead = 30 * time.Second

// liveServers are the servers running now, with the test that started
// each. runMain sets it before any test starts.
var liveServers *serverSet

type serverSet struct {
	mu   sync.Mutex
	live map[*server]string
}

func (ss *serverSet) add(s *server, test string) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.live[s] = test
}

func (ss *serverSet) remove(s *server) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	delete(ss.live, s)
}

// armWatchdog starts the watchdog for the run's -test.timeout (none when
// there is no timeout or it is too short to act before); the returned
// function disarms it.
func armWatchdog(ss *serverSet) func() {
	f := flag.Lookup("test.timeout")
	if f == nil {
		return func() {}
	}
	d, err := time.ParseDuration(f.Value.String())
	if err != nil || d <= 2*watchdogLead {
		return func() {}
	}
	timer := time.AfterFunc(d-watchdogLead, ss.dump)
	return func() { timer.Stop() }
}

// dump has every live server print its goroutines, and writes the end of
// each one's standard error to ours.
func (ss *serverSet) dump() {
	ss.mu.Lock()
	type entry struct {
		s    *server
		test string
	}
	var all []entry
	for s, test := range ss.live {
		all = append(all, entry{s, test})
	}
	ss.mu.Unlock()
	sort.Slice(all, func(i, j int) bool { return all[i].test < all[j].test })
	kernelSide()
	for _, e := range all {
		_ = e.s.cmd.Process.Signal(syscall.SIGQUIT)
	}
	deadline := time.After(10 * time.Second)
	for _, e := range all {
		select {
		case <-e.s.done:
		case <-deadline:
		}
		out := e.s.stderr.String()
		const tail = 256 << 10
		if len(out) > tail {
			out = "[...]\n" + out[len(out)-tail:]
		}
		fmt.Fprintf(os.Stderr, "integration: the run is about to time out; cairn serve (pid %d) of %s printed:\n%s\n",
			e.s.cmd.Process.Pid, e.test, out)
	}
}

// kernelSide writes where the kernel holds this process's threads (a
// read the mount never answers waits in request_wait_answer, a queued
// readahead in the page cache's folio waits) and every FUSE connection's
// waiting and max_background counts: what tells a request the server
// never answered from one the kernel still queues. Root reads them; a
// file that cannot be read is skipped.
func kernelSide() {
	var b strings.Builder
	stacks, _ := filepath.Glob("/proc/self/task/*/stack")
	for _, f := range stacks {
		if st, err := os.ReadFile(f); err == nil && len(st) > 0 && !strings.Contains(string(st), "do_epoll_wait") {
			fmt.Fprintf(&b, "%s:\n%s", f, st)
		}
	}
	conns, _ := filepath.Glob("/sys/fs/fuse/connections/*")
	for _, c := range conns {
		w, _ := os.ReadFile(filepath.Join(c, "waiting"))
		m, _ := os.ReadFile(filepath.Join(c, "max_background"))
		fmt.Fprintf(&b, "fuse connection %s: waiting %s, max_background %s\n", filepath.Base(c), strings.TrimSpace(string(w)), strings.TrimSpace(string(m)))
	}
	fmt.Fprintf(os.Stderr, "integration: the run is about to time out; the test process's threads in the kernel and the FUSE connections:\n%s\n", b.String())
}
