package integration

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TestFSKeepCache checks the kernel's page cache of a file across opens:
// a file read again is served from memory while its version stays the
// same (FOPEN_KEEP_CACHE), and never holds on to data of another
// version: after an overwrite through S3 of the same size, and after a
// write through the mount, read through a new descriptor at once. Residency is read with mincore(2) on a
// mapping made right after open, before anything reads it.
func TestFSKeepCache(t *testing.T) {
	srv, mnt := startMount(t)
	c := fsClient(srv)
	dir := fsBucket(t, c, mnt, "keepcache")
	p := filepath.Join(dir, "f")
	const size = 1 << 20
	random := func() []byte {
		b := make([]byte, size)
		if _, err := rand.Read(b); err != nil {
			t.Fatal(err)
		}
		return b
	}
	// resident opens p, says how many of its pages the page cache holds
	// at once, and returns the content read through the same mapping.
	resident := func(what string) (int, []byte) {
		t.Helper()
		f, err := os.Open(p)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		defer f.Close()
		m, err := unix.Mmap(int(f.Fd()), 0, size, unix.PROT_READ, unix.MAP_SHARED)
		if err != nil {
			t.Fatalf("%s: mmap: %v", what, err)
		}
		defer func() { _ = unix.Munmap(m) }()
		vec := make([]byte, (size+os.Getpagesize()-1)/os.Getpagesize())
		if _, _, e := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)), uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
			t.Fatalf("%s: mincore: %v", what, e)
		}
		n := 0
		for _, v := range vec {
			n += int(v & 1)
		}
		return n, bytes.Clone(m)
	}
	pages := size / os.Getpagesize()

	v1 := random()
	fsPut(t, c, "keepcache", "f", v1, nil)
	// The kernel may evict the pages (or forget the inode) between the
	// read and the reopen when the machine is short of memory, as under
	// the whole suite with -race. A mount that does not keep the cache
	// has it dropped at every open, so no attempt could ever see it all:
	// a few attempts tell eviction from a missing FOPEN_KEEP_CACHE.
	const attempts = 5
	var seen []int
	for len(seen) < attempts {
		if got, err := os.ReadFile(p); err != nil || !bytes.Equal(got, v1) {
			t.Fatalf("read: %d bytes, %v", len(got), err)
		}
		n, got := resident("second open")
		if !bytes.Equal(got, v1) {
			t.Fatal("second open of an unchanged file reads another content")
		}
		if n == pages {
			break
		}
		seen = append(seen, n)
	}
	if len(seen) == attempts {
		t.Errorf("second open of an unchanged file: of %d pages, %v cached in %d attempts (want all in one)", pages, seen, attempts)
	}

	v2 := random()
	fsPut(t, c, "keepcache", "f", v2, nil)
	if _, got := resident("open after an S3 overwrite"); !bytes.Equal(got, v2) {
		t.Error("after an S3 overwrite of the same size the mount reads the old content")
	}

	v3 := random()
	if err := os.WriteFile(p, v3, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, got := resident("open after a write on the mount"); !bytes.Equal(got, v3) {
		t.Error("after a write on the mount a new descriptor reads another content")
	}
	if got := fsGet(t, c, "keepcache", "f"); !bytes.Equal(got, v3) {
		t.Error("S3 reads another content than the mount wrote")
	}
	// Once the writer is gone (readers bypass the cache for a moment
	// after a passthrough writer), a file read once stays cached.
	fsEventually(t, "a reopen of the written file served from the cache", func() error {
		if got, err := os.ReadFile(p); err != nil || !bytes.Equal(got, v3) {
			return fmt.Errorf("read %d bytes: %v", len(got), err)
		}
		if n, got := resident("open after reading it"); n != pages || !bytes.Equal(got, v3) {
			return fmt.Errorf("%d of %d pages cached, content equal %v", n, pages, bytes.Equal(got, v3))
		}
		return nil
	})
}

// TestFSOpensBesideWriter opens a file again while a writer has it open
// (written with passthrough on the mount), and right after the writer
// closes it: readers see what was written so far, a second writer's
// writes land in the same file, and no open fails (the kernel refuses
// any open of an inode with a backing file that does not pass through
// to the same one, which it reports as EIO).
func TestFSOpensBesideWriter(t *testing.T) {
	srv, mnt := startMount(t)
	c := fsClient(srv)
	dir := fsBucket(t, c, mnt, "beside")
	p := filepath.Join(dir, "f")
	body := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB

	w, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(body); err != nil {
		t.Fatal(err)
	}
	r, err := os.Open(p)
	if err != nil {
		t.Fatalf("open for reading beside a writer: %v", err)
	}
	got := make([]byte, len(body))
	if n, err := r.ReadAt(got, 0); n != len(body) || !bytes.Equal(got, body) {
		t.Errorf("reader beside the writer read %d bytes (%v), equal %v", n, err, bytes.Equal(got, body))
	}
	w2, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		t.Fatalf("second writer: %v", err)
	}
	if _, err := w2.WriteAt([]byte("XY"), 0); err != nil {
		t.Fatalf("second writer writes: %v", err)
	}
	if _, err := r.ReadAt(got[:2], 0); err != nil || string(got[:2]) != "XY" {
		t.Errorf("reader after the second writer's write: %q %v", got[:2], err)
	}
	for _, f := range []*os.File{w2, w} {
		if err := f.Close(); err != nil {
			t.Errorf("close %v: %v", f.Name(), err)
		}
	}
	want := append([]byte("XY"), body[2:]...)
	if got := fsGet(t, c, "beside", "f"); !bytes.Equal(got, want) {
		t.Errorf("S3 reads %d bytes, equal %v", len(got), bytes.Equal(got, want))
	}

	// The writers are gone and the reader is still open: the kernel
	// keeps passing the inode through, so new opens must too.
	if got, err := os.ReadFile(p); err != nil || !bytes.Equal(got, want) {
		t.Errorf("a new reader beside the remaining one: %d bytes, %v", len(got), err)
	}
	short := []byte("rewritten while a reader has it open\n")
	if err := os.WriteFile(p, short, 0o644); err != nil {
		t.Fatalf("O_TRUNC writer beside the remaining reader: %v", err)
	}
	if got := fsGet(t, c, "beside", "f"); !bytes.Equal(got, short) {
		t.Errorf("S3 after the rewrite: %q", got)
	}
	if n, err := r.ReadAt(got[:len(short)], 0); n != len(short) || !bytes.Equal(got[:n], short) {
		t.Errorf("the remaining reader after the rewrite: %q %v", got[:n], err)
	}
	if err := r.Close(); err != nil {
		t.Error(err)
	}
	if err := os.WriteFile(p, want, 0o644); err != nil {
		t.Fatal(err)
	}

	// Right after the writers closed: a reader, and a writer beside it.
	r2, err := os.Open(p)
	if err != nil {
		t.Fatalf("open for reading right after the writers closed: %v", err)
	}
	if got, err := io.ReadAll(r2); err != nil || !bytes.Equal(got, want) {
		t.Errorf("reader after the writers: %d bytes, %v", len(got), err)
	}
	if err := os.WriteFile(p, body, 0o644); err != nil {
		t.Fatalf("rewrite beside a reader: %v", err)
	}
	if err := r2.Close(); err != nil {
		t.Error(err)
	}
	w3, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		t.Fatalf("writer after the reader closed: %v", err)
	}
	if _, err := w3.WriteAt([]byte("Z"), 5); err != nil {
		t.Fatal(err)
	}
	if err := w3.Close(); err != nil {
		t.Fatal(err)
	}
	want = append(append(bytes.Clone(body[:5]), 'Z'), body[6:]...)
	if got, err := os.ReadFile(p); err != nil || !bytes.Equal(got, want) {
		t.Errorf("final content on the mount: %d bytes, %v, equal %v", len(got), err, bytes.Equal(got, want))
	}
	if got := fsGet(t, c, "beside", "f"); !bytes.Equal(got, want) {
		t.Errorf("final content over S3: %d bytes, equal %v", len(got), bytes.Equal(got, want))
	}
}
