package integration

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cairnstore/cairn/objstore"
	"github.com/cairnstore/cairn/objstore/storetest"
)

// crashLine mirrors the crashworker's protocol.
type crashLine struct {
	Ev     string            `json:"ev"`
	Worker string            `json:"w"`
	Op     string            `json:"op"`
	Key    string            `json:"key"`
	SHA    string            `json:"sha"`
	From   string            `json:"from"`
	To     string            `json:"to"`
	Files  map[string]string `json:"files"`
	Err    string            `json:"err"`
	N      int64             `json:"n"`
}

// crashModel is what must be in the store: key -> SHA-256 of its current
// content, for every acknowledged write; absent keys are not in the map.
type crashModel struct {
	keys    map[string]string
	pending map[string]crashLine // worker -> operation begun, not acknowledged
}

func (m *crashModel) apply(l crashLine) {
	switch l.Op {
	case "put", "multipart":
		m.keys[l.Key] = l.SHA
	case "rename":
		for f, sha := range l.Files {
			delete(m.keys, l.From+f)
			m.keys[l.To+f] = sha
		}
	}
}

// TestCrashRecovery SIGKILLs a child doing concurrent puts, overwrites,
// multipart completes, prefix renames and patches (in-place changes that
// write only their ranges; crashworker) at random points, and after each
// restart checks that every acknowledged write is readable and intact, that
// an unacknowledged one is entirely there or entirely absent, that no key
// shows mixed data, and that no orphan shard is left.
func TestCrashRecovery(t *testing.T) {
	iterations := 60
	if v, err := strconv.Atoi(os.Getenv("CAIRN_CRASH_ITERATIONS")); err == nil && v > 0 {
		iterations = v
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d, %d kills", seed, iterations)
	rng := rand.New(rand.NewPCG(seed, 1))

	bin := filepath.Join(t.TempDir(), "crashworker")
	if err := goBuild(context.Background(), bin, "./integration/internal/crashworker"); err != nil {
		t.Fatalf("build crashworker: %v", err)
	}
	dir := t.TempDir()
	m := &crashModel{keys: map[string]string{}, pending: map[string]crashLine{}}
	acked := 0
	var compactions int64 // segment compactions the workers reported
	for run := 0; run < iterations; run++ {
		lines := runUntilKilled(t, bin, dir, run, time.Duration(20+rng.IntN(600))*time.Millisecond)
		var ranCompactions int64
		for _, l := range lines {
			switch l.Ev {
			case "stats":
				ranCompactions = max(ranCompactions, l.N)
			case "fail":
				t.Fatalf("run %d: worker %s failed: %s", run, l.Worker, l.Err)
			case "begin":
				m.pending[l.Worker] = l
			case "ack":
				m.apply(m.pending[l.Worker])
				delete(m.pending, l.Worker)
				acked++
			}
		}
		compactions += ranCompactions
		verifyCrashState(t, dir, m, run)
	}
	t.Logf("%d kills, %d acknowledged writes checked, %d keys at the end, %d segment compactions seen", iterations, acked, len(m.keys), compactions)
	if iterations >= 20 && compactions == 0 {
		t.Fatal("no segment compaction ran in any run: the kills never landed among them")
	}
}

// runUntilKilled starts the worker, lets it run for d after it is ready,
// SIGKILLs it and returns every line it printed.
func runUntilKilled(t *testing.T, bin, dir string, run int, d time.Duration) []crashLine {
	t.Helper()
	cmd := exec.Command(bin, "-data", dir, "-run", strconv.Itoa(run))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan struct{})
	done := make(chan []crashLine)
	go func() {
		var lines []crashLine
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		once := false
		for sc.Scan() {
			var l crashLine
			if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
				continue // a line cut by the kill
			}
			if l.Ev == "ready" && !once {
				once = true
				close(ready)
			}
			lines = append(lines, l)
		}
		if !once {
			close(ready)
		}
		done <- lines
	}()
	select {
	case <-ready:
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("run %d: worker not ready: %s", run, stderr.String())
	}
	time.Sleep(d)
	_ = cmd.Process.Signal(syscall.SIGKILL)
	lines := <-done
	_ = cmd.Wait()
	if len(lines) == 0 || lines[0].Ev != "ready" {
		t.Fatalf("run %d: worker never got ready: %s", run, stderr.String())
	}
	return lines
}

func verifyCrashState(t *testing.T, dir string, m *crashModel, run int) {
	t.Helper()
	ctx := context.Background()
	opt := objstore.Options{Dir: dir, Parity: -1, NoBackground: true}
	o := opt
	o.Index = storetest.OpenBolt(t, dir)
	s, err := objstore.Open(ctx, o)
	if err != nil {
		t.Fatalf("run %d: reopen: %v", run, err)
	}
	actual := func(key string) string {
		r, err := s.Open(ctx, "crash", key, objstore.GetOptions{})
		if errors.Is(err, objstore.ErrNoSuchKey) {
			return ""
		}
		if err != nil {
			t.Fatalf("run %d: open %s: %v", run, key, err)
		}
		defer r.Close()
		h := sha256.New()
		if _, err := io.Copy(h, r); err != nil {
			t.Fatalf("run %d: read %s: %v", run, key, err)
		}
		return hex.EncodeToString(h.Sum(nil))
	}
	// Settle the writes that were in flight: each is all there or absent.
	for w, l := range m.pending {
		switch l.Op {
		case "put", "multipart":
			got := actual(l.Key)
			if got != m.keys[l.Key] && got != l.SHA {
				t.Fatalf("run %d: %s %s in flight: content %s is neither the acknowledged %s nor the new %s (mixed data?)", run, l.Op, l.Key, got, m.keys[l.Key], l.SHA)
			}
			if got == l.SHA {
				m.apply(l)
			}
		case "rename":
			moved, stayed := 0, 0
			for f, sha := range l.Files {
				if actual(l.To+f) == sha && actual(l.From+f) == "" {
					moved++
				}
				if actual(l.From+f) == sha {
					stayed++
				}
			}
			switch {
			case moved == len(l.Files):
				m.apply(l)
			case stayed == len(l.Files):
			default:
				t.Fatalf("run %d: prefix rename %s -> %s half done: %d of %d moved", run, l.From, l.To, moved, len(l.Files))
			}
		}
		delete(m.pending, w)
	}
	for key, want := range m.keys {
		if got := actual(key); got != want {
			t.Fatalf("run %d: acknowledged %s has content %q, want %q", run, key, got, want)
		}
	}
	page, err := s.List(ctx, "crash", objstore.ListOptions{MaxKeys: 1 << 20})
	if err != nil {
		t.Fatalf("run %d: list: %v", run, err)
	}
	for _, o := range page.Objects {
		if _, ok := m.keys[o.Key]; !ok {
			t.Fatalf("run %d: unexpected key %s (size %d)", run, o.Key, o.Size)
		}
	}
	if len(page.Objects) != len(m.keys) {
		t.Fatalf("run %d: %d keys listed, model has %d", run, len(page.Objects), len(m.keys))
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	opt.Index = storetest.OpenBolt(t, dir)
	rep, err := objstore.Fsck(ctx, opt, nil)
	if err != nil {
		t.Fatalf("run %d: fsck: %v", run, err)
	}
	if !rep.Clean() {
		t.Fatalf("run %d: fsck after restart: %s", run, fsckSummary(rep))
	}
}

func fsckSummary(r objstore.FsckReport) string {
	var b strings.Builder
	fmt.Fprintf(&b, "orphans %d, missing %d, corrupt %d, lost %d, dangling %d", len(r.OrphanShards), len(r.MissingShards), len(r.CorruptShards), len(r.LostData), len(r.Dangling))
	for _, d := range r.Dangling {
		fmt.Fprintf(&b, "\n  dangling: %s", d)
	}
	return b.String()
}
