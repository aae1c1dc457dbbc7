package integration

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"testing"
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
