package integration

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	cairnfs "github.com/cairnstore/cairn/fs"
)

// TestFSUnshowableKeys puts keys over S3 that POSIX cannot show (empty
// segments, "." and ".."): they stay out of every listing, ls -R and find
// work, and the server keeps serving.
func TestFSUnshowableKeys(t *testing.T) {
	srv, mnt := startMount(t)
	c := fsClient(srv)
	const bucket = "oddkeys"
	dir := fsBucket(t, c, mnt, bucket)
	fsPut(t, c, bucket, "ok.txt", []byte("fine"), nil)
	var accepted []string
	for _, k := range []string{"a//b", "./x", "dir/../y", "x/./z", "trailing//", "../up", "deep/./"} {
		_, err := c.PutObject(callCtx(t), &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(k), Body: bytes.NewReader([]byte(k))})
		if err != nil {
			t.Logf("PutObject %q refused over S3: %v", k, err)
			continue
		}
		accepted = append(accepted, k)
	}
	t.Logf("keys accepted over S3: %q", accepted)
	keys := fsListKeys(t, c, bucket, "")
	for _, k := range accepted {
		if _, ok := keys[k]; !ok {
			t.Errorf("S3 does not list the key %q it accepted (lists %q)", k, fsSortedKeys(keys))
		}
	}
	out, err := fsRun("ls", "-laR", dir)
	if err != nil {
		t.Fatalf("ls -laR: %v\n%s", err, out)
	}
	// What the mount may show: ok.txt and the directories that the odd keys
	// start with, all of them empty.
	allowed := map[string]bool{"ok.txt": true, "a": true, "dir": true, "x": true, "trailing": true, "deep": true}
	found, err := fsRun("find", dir, "-mindepth", "1")
	if err != nil {
		t.Fatalf("find: %v\n%s", err, found)
	}
	var names []string
	for _, l := range strings.Split(strings.TrimSpace(found), "\n") {
		rel := strings.TrimPrefix(l, dir+"/")
		names = append(names, rel)
		if !allowed[rel] {
			t.Errorf("find shows %q", rel)
		}
	}
	sort.Strings(names)
	t.Logf("find: %q", names)
	for _, name := range []string{"a", "dir", "x"} {
		if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || !fi.IsDir() {
			t.Errorf("stat %s: %v, want the directory", name, err)
		}
	}
	for _, p := range []string{"a//b", "x/./z"} {
		// The kernel cleans these paths before the mount sees them; they
		// must not reach the odd keys.
		if b, err := os.ReadFile(filepath.Join(dir, p)); err == nil {
			t.Errorf("read %s on the mount: %q", p, b)
		}
	}
	if got := fsMust(t, "cat", filepath.Join(dir, "ok.txt")); got != "fine" {
		t.Errorf("cat ok.txt: %q", got)
	}
	fsAlive(t, srv)
	// Over S3 the odd keys are all still there.
	for _, k := range accepted {
		if got := string(fsGet(t, c, bucket, k)); got != k {
			t.Errorf("GetObject %q: %q", k, got)
		}
	}
}

// TestFSShadowedKey puts "s" and "s/t" over S3: the mount shows the
// directory s and hides the file, the status file counts one shadowed key,
// and creating a file named s on the mount fails as POSIX says.
func TestFSShadowedKey(t *testing.T) {
	srv, mnt := startMount(t)
	c := fsClient(srv)
	const bucket = "shadows"
	dir := fsBucket(t, c, mnt, bucket)
	fsPut(t, c, bucket, "s", []byte("the shadowed file"), nil)
	fsPut(t, c, bucket, "s/t", []byte("inside"), nil)
	fsPut(t, c, bucket, "plain", []byte("p"), nil)
	p := filepath.Join(dir, "s")
	fsEventually(t, "s as a directory", func() error {
		fi, err := os.Stat(p)
		if err != nil {
			return err
		}
		if !fi.IsDir() {
			return fmt.Errorf("s is %v, want a directory", fi.Mode())
		}
		return nil
	})
	if got := fsMust(t, "cat", filepath.Join(p, "t")); got != "inside" {
		t.Errorf("cat s/t: %q", got)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, fmt.Sprintf("%s:%v", e.Name(), e.IsDir()))
	}
	if strings.Join(names, " ") != "plain:false s:true" {
		t.Errorf("readdir: %q, want plain (file) and s (directory) once", names)
	}
	st := readFSStatus(t, mnt)
	var shadowed int64 = -1
	for _, b := range st.Buckets {
		if b.Name == bucket {
			shadowed = b.Shadowed
			if b.Objects != 3 {
				t.Errorf("status: bucket %s has %d objects, want 3", bucket, b.Objects)
			}
		}
	}
	if shadowed != 1 {
		t.Errorf("status: shadowed = %d for %s, want 1", shadowed, bucket)
	}
	if st.BucketCount != 1 {
		t.Errorf("status: bucket_count %d, want 1", st.BucketCount)
	}
	if _, err := fsRun("sh", "-c", "echo x > "+p); err == nil {
		t.Error("echo > s succeeded where a directory is")
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err == nil {
		_ = f.Close()
	}
	wantErrno(t, "open(O_CREAT|O_WRONLY) onto the directory s", err, syscall.EISDIR)
	if got := string(fsGet(t, c, bucket, "s")); got != "the shadowed file" {
		t.Errorf("the shadowed key over S3: %q", got)
	}
}

// TestFSDrivesLost loses three of the four drives (parity 2) under a
// running server: reading a file on the mount fails with EIO, and the
// server logs an error naming the drives.
func TestFSDrivesLost(t *testing.T) {
	data, mnt := t.TempDir(), t.TempDir()
	srv := startMountAt(t, data, mnt, "--drives", "4", "--parity", "2")
	c := fsClient(srv)
	dir := fsBucket(t, c, mnt, "fragile")
	body := randomBytes(5, 3*mib+17)
	p := filepath.Join(dir, "precious.bin")
	if err := os.WriteFile(p, body, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Logf("fsync: %v", err)
	}
	_ = f.Close()
	if got, err := os.ReadFile(p); err != nil || !bytes.Equal(got, body) {
		t.Fatalf("read back before the loss: %v", err)
	}
	for _, d := range []string{"d1", "d2", "d3"} {
		dd := filepath.Join(data, "drives", d)
		entries, err := os.ReadDir(dd)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if err := os.RemoveAll(filepath.Join(dd, e.Name())); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.WriteFile("/proc/sys/vm/drop_caches", []byte("3"), 0o200); err != nil {
		t.Logf("drop caches: %v", err)
	}
	_, err = os.ReadFile(p)
	wantErrno(t, "read after losing 3 of 4 drives", err, syscall.EIO)
	fsEventually(t, "an error line naming the drives", func() error {
		for _, l := range strings.Split(srv.stderr.String(), "\n") {
			if strings.Contains(l, `"level":"error"`) && strings.Contains(l, "drive") {
				return nil
			}
		}
		return errors.New("no error line mentioning \"drive\" on stderr")
	})
	fsAlive(t, srv)
}

// TestFSNoSpace serves a data directory on an 8 MiB tmpfs: writing 20 MiB
// on the mount fails with ENOSPC (not EIO) at write or close.
func TestFSNoSpace(t *testing.T) {
	requireFUSE(t)
	data := t.TempDir()
	if out, err := fsRun("mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", data); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v %s", err, out)
	}
	// Registered before the server's cleanup, so it runs after it.
	t.Cleanup(func() {
		if err := syscall.Unmount(data, 0); err != nil {
			t.Errorf("unmount the tmpfs: %v", err)
			_ = syscall.Unmount(data, syscall.MNT_DETACH)
		}
	})
	mnt := t.TempDir()
	srv := startMountAt(t, data, mnt)
	c := fsClient(srv)
	dir := fsBucket(t, c, mnt, "tiny")
	chunk := randomBytes(9, mib)
	for _, tc := range []struct {
		name  string
		open  func(p string) (*os.File, error)
		setup bool // make a small file first
	}{
		{"new file (streamed into the store)", func(p string) (*os.File, error) { return os.Create(p) }, false},
		{"existing file rewritten (staged under tmp/)", func(p string) (*os.File, error) { return os.OpenFile(p, os.O_WRONLY, 0) }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, fmt.Sprintf("big-%v.bin", tc.setup))
			if tc.setup {
				// The space of the previous subtest's failed write comes
				// back when its staging file is released, which the
				// kernel does after close returns.
				fsEventually(t, "a small file once the failed write's space is back", func() error {
					return os.WriteFile(p, []byte("small"), 0o644)
				})
			}
			f, err := tc.open(p)
			if err != nil {
				t.Fatal(err)
			}
			var werr error
			for range 20 {
				if _, werr = f.Write(chunk); werr != nil {
					break
				}
			}
			cerr := f.Close()
			t.Logf("write: %v; close: %v", werr, cerr)
			switch {
			case werr == nil && cerr == nil:
				t.Error("writing 20 MiB onto an 8 MiB filesystem succeeded")
			case werr != nil:
				wantErrno(t, "write", werr, syscall.ENOSPC)
			default:
				wantErrno(t, "close", cerr, syscall.ENOSPC)
			}
			fsAlive(t, srv)
		})
	}
	// The store still works for what fits.
	fsEventually(t, "a small write after ENOSPC", func() error {
		return os.WriteFile(filepath.Join(dir, "small.txt"), []byte("fits"), 0o644)
	})
}

// TestFSSignals: SIGTERM unmounts and exits 0, even with a file held open
// on the mount; a mount left stale by SIGKILL is cleared by the next
// server on the same mount point, which serves the same data.
func TestFSSignals(t *testing.T) {
	t.Run("SIGTERM", func(t *testing.T) {
		srv, mnt := startMount(t)
		if code := srv.stop(fsStopTimeout); code != 0 {
			t.Errorf("exit code %d after SIGTERM, want 0", code)
		}
		if isMountPoint(t, mnt) {
			t.Errorf("%s still mounted after SIGTERM", mnt)
		}
		if !strings.Contains(srv.stderr.String(), `"unmounted"`) {
			t.Errorf("no 'unmounted' log line:\n%s", tail(srv.stderr.String(), 10))
		}
	})

	t.Run("SIGTERM with a file open", func(t *testing.T) {
		srv, mnt := startMount(t)
		dir := fsBucket(t, fsClient(srv), mnt, "busy")
		p := filepath.Join(dir, "held.txt")
		if err := os.WriteFile(p, []byte("held"), 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = f.Close() }()
		srv.signal(syscall.SIGTERM)
		select {
		case <-srv.done:
			if code := srv.cmd.ProcessState.ExitCode(); code != 0 {
				t.Errorf("exit code %d after SIGTERM, want 0", code)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("cairn serve still running 10 s after SIGTERM while a file is open on the mount\nstderr:\n%s", tail(srv.stderr.String(), 10))
			// Let it finish: closing the file ends the lazy unmount.
			_ = f.Close()
			select {
			case <-srv.done:
				t.Logf("it exited once the file was closed")
			case <-time.After(fsStopTimeout):
			}
		}
		if isMountPoint(t, mnt) {
			t.Errorf("%s still mounted after the server exited", mnt)
		}
	})

	// A crash leaves the mount point with a dead FUSE connection. The next
	// server must clear it, whether it starts once the kernel has noticed
	// (stat answers ENOTCONN) or at once, while the kernel still answers
	// stat of the mount root from its attribute cache (1 s), as a
	// supervisor restarting the crashed server does.
	for _, tc := range []struct {
		name string
		wait bool
	}{
		{"stale mount after SIGKILL, restart once stat fails", true},
		{"stale mount after SIGKILL, immediate restart", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, mnt := t.TempDir(), t.TempDir()
			first := startMountAt(t, data, mnt)
			c := fsClient(first)
			dir := fsBucket(t, c, mnt, "survivor")
			p := filepath.Join(dir, "kept.txt")
			f, err := os.Create(p)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.Write([]byte("kept across a crash")); err != nil {
				t.Fatal(err)
			}
			if err := f.Sync(); err != nil {
				t.Fatalf("fsync: %v", err)
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(mnt); err != nil { // fresh root attributes in the kernel
				t.Fatal(err)
			}
			first.kill()
			killed := time.Now()
			if !isMountPoint(t, mnt) {
				t.Fatalf("%s is no longer mounted after SIGKILL; expected a stale mount", mnt)
			}
			if tc.wait {
				deadline := time.Now().Add(fsVisible)
				for {
					_, err := os.Stat(mnt)
					if errors.Is(err, syscall.ENOTCONN) {
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("stat of the stale mount: %v after %v, want ENOTCONN", err, fsVisible)
					}
					time.Sleep(50 * time.Millisecond)
				}
			}
			second := startMountAt(t, data, mnt)
			t.Logf("second server mounted %v after the kill", time.Since(killed).Round(time.Millisecond))
			got, err := os.ReadFile(p)
			if err != nil || string(got) != "kept across a crash" {
				t.Errorf("read through the new mount: %q %v", got, err)
			}
			if got := string(fsGet(t, fsClient(second), "survivor", "kept.txt")); got != "kept across a crash" {
				t.Errorf("GetObject from the new server: %q", got)
			}
			if n := countMounts(t, mnt); n != 1 {
				t.Errorf("%s is mounted %d times, want once (the stale mount cleared)", mnt, n)
			}
		})
	}
}

// countMounts counts the mounts on dir in /proc/self/mountinfo.
func countMounts(t *testing.T, dir string) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) > 4 && cairnfs.UnescapeMount(f[4]) == dir {
			n++
		}
	}
	return n
}
