package integration

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestFSSmallFileRun: after a run of small files the mount writes new
// files through itself instead of passthrough; a large file written then
// (beyond the in-memory buffer, so it moves to a staging file mid-write),
// and the small files after it, still read back whole, on the mount and
// over S3.
func TestFSSmallFileRun(t *testing.T) {
	srv, mnt := startMount(t)
	c := fsClient(srv)
	dir := fsBucket(t, c, mnt, "smallrun")
	want := map[string][]byte{}
	write := func(name string, size int) {
		t.Helper()
		b := make([]byte, size)
		_, _ = rand.Read(b)
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
		want[name] = b
	}
	for i := range 20 {
		write(fmt.Sprintf("small-%02d", i), 4096)
	}
	write("large-1", 3<<20+17)
	write("large-2", 300<<10)
	for i := range 12 {
		write(fmt.Sprintf("after-%02d", i), 1000+i)
	}
	for name, b := range want {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || !bytes.Equal(got, b) {
			t.Fatalf("%s on the mount: %d bytes, %v; want %d", name, len(got), err, len(b))
		}
		if got := fsGet(t, c, "smallrun", name); !bytes.Equal(got, b) {
			t.Fatalf("%s over S3: %d bytes, want %d", name, len(got), len(b))
		}
	}
}

// TestFSSmallRunDirectIO: files created in a run of small files are
// written with direct I/O (no security.capability lookup per file); what
// the page cache used to give them still holds: a shared mapping of a new
// file writes it, a descriptor reads back what it wrote, and a write by a
// user without CAP_FSETID clears the set-ID bits that user set on it (as
// the kernel does through the page cache).
func TestFSSmallRunDirectIO(t *testing.T) {
	requireFUSE(t)
	mnt := reachableMountPoint(t, "dio-mnt-")
	srv := startMountAt(t, t.TempDir(), mnt)
	c := fsClient(srv)
	dir := fsBucket(t, c, mnt, "dio")
	shared := filepath.Join(dir, "shared")
	if err := os.Mkdir(shared, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(shared, 0o777); err != nil {
		t.Fatal(err)
	}
	for i := range 12 {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("small-%02d", i)), []byte("small"), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("shared mapping of a new file", func(t *testing.T) {
		want := bytes.Repeat([]byte("mapped!"), 1500)
		f, err := os.OpenFile(filepath.Join(dir, "mapped"), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := f.Truncate(int64(len(want))); err != nil {
			t.Fatal(err)
		}
		m, err := syscall.Mmap(int(f.Fd()), 0, len(want), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
		if err != nil {
			t.Fatalf("mmap MAP_SHARED of a file made in a small-file run: %v", err)
		}
		copy(m, want)
		if err := unix.Msync(m, unix.MS_SYNC); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Munmap(m); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		if got, err := os.ReadFile(filepath.Join(dir, "mapped")); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("mapped file on the mount: %d bytes, %v", len(got), err)
		}
		if got := fsGet(t, c, "dio", "mapped"); !bytes.Equal(got, want) {
			t.Fatalf("mapped file over S3: %q...", got[:min(len(got), 16)])
		}
	})

	t.Run("read back through the writing descriptor", func(t *testing.T) {
		f, err := os.OpenFile(filepath.Join(dir, "rw"), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString("hello, direct world"); err != nil {
			t.Fatal(err)
		}
		got := make([]byte, 6)
		if _, err := f.ReadAt(got, 7); err != nil || string(got) != "direct" {
			t.Fatalf("pread through the writer: %q, %v", got, err)
		}
	})

	t.Run("a write clears the writer's own set-ID bits", func(t *testing.T) {
		// fchmod through the new descriptor, then write through it, as a
		// user without CAP_FSETID; 1234 is one of that user's groups.
		script := `import os, sys
path, mode = sys.argv[1], int(sys.argv[2], 8)
fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
os.fchown(fd, -1, 1234)
os.fchmod(fd, mode)
os.write(fd, b"data")
os.close(fd)
print(oct(os.stat(path).st_mode & 0o7777))`
		for _, tc := range []struct{ name, mode, want string }{
			{"suid", "4755", "0o755"},
			{"sgid-gx", "2775", "0o775"},
			{"sgid-member", "2765", "0o2765"}, // not group-executable, writer in the group: kept
		} {
			out, err := runAsOther(t, "python3", "-c", script, filepath.Join(shared, "setid-"+tc.name), tc.mode)
			if err != nil || strings.TrimSpace(out) != tc.want {
				t.Errorf("%s: mode after a write %q, %v; want %s", tc.name, strings.TrimSpace(out), err, tc.want)
			}
		}
	})
}
