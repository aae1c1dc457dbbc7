package integration

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
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

// The end-to-end tests of the mount (TestFS...) run real tools (cp, ls,
// mv, diff, rsync, tar, sh, truncate, rm) on a real FUSE mount of a
// `cairn serve --mount` process, and check the S3 face of the same store
// with aws-sdk-go-v2.

const (
	// fsCmdTimeout bounds every command run on the mount.
	fsCmdTimeout = 60 * time.Second
	// fsStopTimeout bounds a server's SIGTERM shutdown (unmount included).
	fsStopTimeout = 20 * time.Second
	// fsVisible bounds how long a change made over S3 may take to show on
	// the mount: the attribute timeout (1 s by default) plus slack.
	fsVisible = 3 * time.Second
)

// requireFUSE skips the test unless it runs as root with /dev/fuse.
func requireFUSE(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("the mount tests need root (FUSE mount without fusermount)")
	}
	fi, err := os.Stat("/dev/fuse")
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		t.Skipf("/dev/fuse is not usable here (%v)", err)
	}
}

// startMount starts `cairn serve` on a fresh data directory with the store
// mounted on a fresh directory, waits until the S3 face is ready and the
// mount is live, and on cleanup stops the server with SIGTERM and checks
// that it exited 0 and left no mount behind.
func startMount(t *testing.T) (*server, string) {
	t.Helper()
	mnt := t.TempDir()
	return startMountAt(t, t.TempDir(), mnt), mnt
}

// startMountAt is startMount on a given data directory and mount point,
// with extra serve flags.
func startMountAt(t *testing.T, data, mnt string, extra ...string) *server {
	t.Helper()
	requireFUSE(t)
	t.Setenv("CAIRN_ROOT_USER", s3User)
	t.Setenv("CAIRN_ROOT_PASSWORD", s3Secret)
	srv := startServer(t, data, append([]string{"--mount", mnt}, extra...)...)
	// Registered after startServer's cleanup, so it runs first: stop the
	// server gently, then check the mount is gone (before t.TempDir
	// removes the mount point).
	t.Cleanup(func() { stopMount(t, srv, mnt) })
	srv.waitReady(readyTimeout)
	waitMounted(t, srv, mnt)
	return srv
}

// stopMount SIGTERMs srv (unless it already exited) and checks the clean
// exit and the unmount. A mount left behind is detached so that the
// temporary directories can go.
func stopMount(t *testing.T, srv *server, mnt string) {
	t.Helper()
	select {
	case <-srv.done:
	default:
		_ = srv.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-srv.done:
			if code := srv.cmd.ProcessState.ExitCode(); code != 0 {
				t.Errorf("cairn serve exited %d after SIGTERM, want 0\nstderr:\n%s", code, tail(srv.stderr.String(), 40))
			}
		case <-time.After(fsStopTimeout):
			t.Errorf("cairn serve still running %v after SIGTERM\nstderr:\n%s", fsStopTimeout, tail(srv.stderr.String(), 40))
			_ = srv.cmd.Process.Kill()
			<-srv.done
		}
	}
	if isMountPoint(t, mnt) {
		if srv.cmd.ProcessState.ExitCode() == 0 {
			t.Errorf("%s is still a mount point after cairn serve exited", mnt)
		}
		// Mounts may be stacked (a stale one under a live one).
		for i := 0; i < 5 && isMountPoint(t, mnt); i++ {
			_ = syscall.Unmount(mnt, syscall.MNT_DETACH)
		}
	}
}

// waitMounted polls until the mount at mnt is in /proc/self/mountinfo and
// its .cairn/store/status reads as JSON.
func waitMounted(t *testing.T, srv *server, mnt string) {
	t.Helper()
	deadline := time.Now().Add(readyTimeout)
	last := "not mounted"
	for time.Now().Before(deadline) {
		select {
		case <-srv.done:
			t.Fatalf("cairn serve exited before the mount was live (%v)\nstderr:\n%s", srv.err, srv.stderr.String())
		default:
		}
		if isMountPoint(t, mnt) {
			b, err := os.ReadFile(filepath.Join(mnt, ".cairn", "store", "status"))
			if err == nil && json.Valid(b) {
				return
			}
			last = fmt.Sprintf("status: %v (%d bytes)", err, len(b))
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("mount %s not live after %v (last: %s)\nstderr:\n%s", mnt, readyTimeout, last, srv.stderr.String())
}

// isMountPoint says whether dir is a mount point in /proc/self/mountinfo.
func isMountPoint(t testing.TB, dir string) bool {
	t.Helper()
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		t.Fatalf("mountinfo: %v", err)
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) > 4 && cairnfs.UnescapeMount(fields[4]) == dir {
			return true
		}
	}
	return false
}

// fsClient is an S3 client of srv with the root credentials.
func fsClient(srv *server) *s3.Client { return sdkClient(srv, s3User, s3Secret) }

// fsBucket creates bucket over S3 and returns its directory on the mount.
func fsBucket(t *testing.T, c *s3.Client, mnt, bucket string) string {
	t.Helper()
	if _, err := c.CreateBucket(callCtx(t), &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatalf("CreateBucket %s: %v", bucket, err)
	}
	dir := filepath.Join(mnt, bucket)
	fsEventually(t, "bucket "+bucket+" on the mount", func() error {
		_, err := os.Stat(dir)
		return err
	})
	return dir
}

// fsRun runs a command (bounded by fsCmdTimeout) and returns its combined
// output and error.
func fsRun(name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), fsCmdTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.WaitDelay = 2 * time.Second
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		err = fmt.Errorf("still running after %v: %w", fsCmdTimeout, ctx.Err())
	}
	return string(out), err
}

// fsMust runs a command and fails the test unless it succeeds.
func fsMust(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := fsRun(name, args...)
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, tail(out, 30))
	}
	return out
}

// fsSh runs script with sh -c and fails the test unless it succeeds.
func fsSh(t *testing.T, script string) string {
	t.Helper()
	return fsMust(t, "sh", "-c", script)
}

// fsEventually polls f until it returns nil or fsVisible passes.
func fsEventually(t *testing.T, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(fsVisible)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: still failing after %v: %v", what, fsVisible, err)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// wantErrno fails unless err is errno.
func wantErrno(t *testing.T, what string, err error, errno syscall.Errno) {
	t.Helper()
	if !errors.Is(err, errno) {
		t.Errorf("%s: got error %v, want %v (%s)", what, err, errno, errnoName(errno))
	}
}

func errnoName(e syscall.Errno) string {
	switch e {
	case syscall.EPERM:
		return "EPERM"
	case syscall.EEXIST:
		return "EEXIST"
	case syscall.ENOTEMPTY:
		return "ENOTEMPTY"
	case syscall.EIO:
		return "EIO"
	case syscall.ENOSPC:
		return "ENOSPC"
	case syscall.EISDIR:
		return "EISDIR"
	}
	return fmt.Sprintf("errno %d", int(e))
}

// fsListKeys lists every key under prefix with ListObjectsV2.
func fsListKeys(t *testing.T, c *s3.Client, bucket, prefix string) map[string]int64 {
	t.Helper()
	keys := map[string]int64{}
	p := s3.NewListObjectsV2Paginator(c, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(prefix)})
	for p.HasMorePages() {
		page, err := p.NextPage(callCtx(t))
		if err != nil {
			t.Fatalf("ListObjectsV2 %s/%s: %v", bucket, prefix, err)
		}
		for _, o := range page.Contents {
			keys[aws.ToString(o.Key)] = aws.ToInt64(o.Size)
		}
	}
	return keys
}

// fsGet reads bucket/key over S3.
func fsGet(t *testing.T, c *s3.Client, bucket, key string) []byte {
	t.Helper()
	return sdkGet(t, c, bucket, key, "")
}

// fsPut writes bucket/key over S3 with user metadata.
func fsPut(t *testing.T, c *s3.Client, bucket, key string, body []byte, meta map[string]string) *s3.PutObjectOutput {
	t.Helper()
	out, err := c.PutObject(callCtx(t), &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader(body), Metadata: meta})
	if err != nil {
		t.Fatalf("PutObject %s/%s: %v", bucket, key, err)
	}
	return out
}

// fsFile is what a walk finds at one path: its type, permission bits,
// modification time, size, owner, and content or link target.
type fsFile struct {
	mode     fs.FileMode
	mtime    time.Time
	size     int64
	uid, gid uint32
	data     string // content of a file, target of a symlink
}

func (f fsFile) String() string {
	d := f.data
	if len(d) > 32 {
		d = fmt.Sprintf("%d bytes md5 %s", len(d), md5hex([]byte(d)))
	}
	return fmt.Sprintf("%v mtime=%s size=%d owner=%d:%d %q", f.mode, f.mtime.Format(time.RFC3339Nano), f.size, f.uid, f.gid, d)
}

// fsWalk reads the tree under root: relative path -> what is there.
// The root itself is left out.
func fsWalk(t *testing.T, root string) map[string]fsFile {
	t.Helper()
	out := map[string]fsFile{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == root {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		st := fi.Sys().(*syscall.Stat_t)
		f := fsFile{mode: fi.Mode(), mtime: fi.ModTime(), size: fi.Size(), uid: st.Uid, gid: st.Gid}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			if f.data, err = os.Readlink(p); err != nil {
				return err
			}
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			f.data = string(b)
		}
		out[rel] = f
		return nil
	})
	if err != nil {
		t.Fatalf("walk %s: %v", root, err)
	}
	return out
}

// fsCompareTrees reports every difference between two walks; what each
// check compares is chosen by the flags.
func fsCompareTrees(t *testing.T, what string, got, want map[string]fsFile, mtimes, owners bool) {
	t.Helper()
	var problems []string
	for _, p := range fsSortedKeys(want) {
		w := want[p]
		g, ok := got[p]
		if !ok {
			problems = append(problems, fmt.Sprintf("%s: missing (want %v)", p, w))
			continue
		}
		same := g.mode == w.mode && g.data == w.data
		if w.mode.IsRegular() {
			same = same && g.size == w.size
		}
		if mtimes && w.mode&fs.ModeSymlink == 0 {
			same = same && g.mtime.Equal(w.mtime)
		}
		if owners {
			same = same && g.uid == w.uid && g.gid == w.gid
		}
		if !same {
			problems = append(problems, fmt.Sprintf("%s:\n\tgot  %v\n\twant %v", p, g, w))
		}
	}
	for _, p := range fsSortedKeys(got) {
		if _, ok := want[p]; !ok {
			problems = append(problems, fmt.Sprintf("%s: unexpected (%v)", p, got[p]))
		}
	}
	if len(problems) > 0 {
		if len(problems) > 15 {
			problems = append(problems[:15], fmt.Sprintf("... and %d more", len(problems)-15))
		}
		t.Errorf("%s: %d differences:\n%s", what, len(problems), strings.Join(problems, "\n"))
	}
}

func fsSortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// fsAlive fails unless srv still runs and answers /health/live.
func fsAlive(t *testing.T, srv *server) {
	t.Helper()
	select {
	case <-srv.done:
		t.Fatalf("cairn serve exited (%v)\nstderr:\n%s", srv.err, tail(srv.stderr.String(), 40))
	default:
	}
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Get(srv.url("/health/live"))
	if err != nil {
		t.Fatalf("/health/live: %v", err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/health/live: %s", resp.Status)
	}
}

// fsStatus reads .cairn/store/status.
type fsStatus struct {
	DataShards   int `json:"data_shards"`
	ParityShards int `json:"parity_shards"`
	Drives       []struct {
		Index  int    `json:"index"`
		Path   string `json:"path"`
		Online bool   `json:"online"`
	} `json:"drives"`
	BucketCount int `json:"bucket_count"`
	Buckets     []struct {
		Name     string `json:"name"`
		System   bool   `json:"system"`
		Objects  int64  `json:"objects"`
		Bytes    int64  `json:"bytes"`
		Shadowed int64  `json:"shadowed"`
	} `json:"buckets"`
}

func readFSStatus(t *testing.T, mnt string) fsStatus {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(mnt, ".cairn", "store", "status"))
	if err != nil {
		t.Fatalf("read .cairn/store/status: %v", err)
	}
	var st fsStatus
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&st); err != nil {
		t.Fatalf(".cairn/store/status is not JSON: %v\n%s", err, b)
	}
	return st
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = append([]string{fmt.Sprintf("[... %d lines]", len(lines)-n)}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n")
}

// countFiles counts the regular files under dir.
func countFiles(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			n++
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walk %s: %v", dir, err)
	}
	return n
}
