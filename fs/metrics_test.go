package fs

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cairnstore/cairn/objstore"
	"github.com/cairnstore/cairn/objstore/storetest"
)

// opLog is an OpObserver that keeps what it is told.
type opLog struct {
	mu  sync.Mutex
	ops map[string][]syscall.Errno
}

func (l *opLog) ObserveOp(op string, d time.Duration, errno syscall.Errno) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if d < 0 {
		errno = syscall.EDOM // a negative duration fails the test below
	}
	l.ops[op] = append(l.ops[op], errno)
}

func (l *opLog) seen(op string) []syscall.Errno {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.ops[op])
}

// TestOpObserver mounts a store with an observer, runs one system call
// of each kind, and checks that the observer heard of each request with
// its outcome. Needs root and /dev/fuse.
func TestOpObserver(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount FUSE without fusermount")
	}
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skipf("no /dev/fuse: %v", err)
	}
	ctx := context.Background()
	data := t.TempDir()
	st := storetest.Open(t, objstore.Options{Dir: data, DriveCount: 1})
	if err := st.CreateBucket(ctx, "bkt", objstore.BucketOptions{}); err != nil {
		t.Fatal(err)
	}
	log := &opLog{ops: map[string][]syscall.Errno{}}
	mnt := t.TempDir()
	m, err := Mount(ctx, st, mnt, Options{TmpDir: filepath.Join(data, "tmp", "mount"), Ops: log, NoPassthrough: true})
	if err != nil {
		t.Skipf("cannot mount FUSE here: %v", err)
	}
	defer func() {
		if err := m.Unmount(); err != nil {
			t.Errorf("unmount: %v", err)
		}
	}()

	f := filepath.Join(mnt, "bkt", "f")
	if err := os.WriteFile(f, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(f, f+"2"); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(f + "2"); err != nil || string(b) != "hello" {
		t.Fatalf("read back %q %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(mnt, "bkt", "absent")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("stat of an absent name: %v", err)
	}
	if err := os.Mkdir(filepath.Join(mnt, "bkt", "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := os.ReadDir(filepath.Join(mnt, "bkt")); err != nil {
		t.Fatal(err)
	}

	for _, op := range []string{"lookup", "create", "write", "flush", "rename", "open", "read", "mkdir", "opendir"} {
		got := log.seen(op)
		if len(got) == 0 {
			t.Errorf("no %s observed", op)
		}
		if slices.Contains(got, syscall.EDOM) {
			t.Errorf("%s observed with a negative duration", op)
		}
		if !slices.Contains(OpNames(), op) {
			t.Errorf("%s is not in OpNames", op)
		}
	}
	if !slices.Contains(log.seen("lookup"), syscall.ENOENT) {
		t.Errorf("the lookup of an absent name was not observed as ENOENT: %v", log.seen("lookup"))
	}
	if got := log.seen("rename"); !slices.Contains(got, 0) {
		t.Errorf("rename observed as %v, want a success", got)
	}
}
