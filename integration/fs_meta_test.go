package integration

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/pkg/xattr"
	"golang.org/x/sys/unix"
)

// fsRunQuiet runs a command (bounded by fsCmdTimeout) and fails the test
// unless it succeeds and prints nothing on stderr.
func fsRunQuiet(t *testing.T, name string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), fsCmdTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.WaitDelay = 2 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil || stderr.Len() > 0 {
		t.Fatalf("%s %s: %v\nstderr:\n%s\nstdout:\n%s", name, strings.Join(args, " "), err, tail(stderr.String(), 20), tail(stdout.String(), 10))
	}
}

// fsTimes are a path's mtime and ctime as stat(2) shows them.
func fsTimes(t *testing.T, p string) (mtime, ctime time.Time) {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat(p, &st); err != nil {
		t.Fatalf("stat %s: %v", p, err)
	}
	return time.Unix(st.Mtim.Unix()), time.Unix(st.Ctim.Unix())
}

// TestFSMeta: the metadata operators see through the mount. Copies across
// buckets (cp -a, rsync -aX, mv) are silent and keep user attributes, the
// read-only user.cairn.* facts are read by name but not listed, a
// directory that only keys imply has its newest file's mtime, statfs's
// inodes are plausible, and a setxattr moves the ctime, never the mtime
// (after a remount too).
func TestFSMeta(t *testing.T) {
	data, mnt := t.TempDir(), t.TempDir()
	srv := startMountAt(t, data, mnt)
	c := fsClient(srv)
	src := fsBucket(t, c, mnt, "meta-src")
	dst := fsBucket(t, c, mnt, "meta-dst")

	// A tree on the mount whose files carry user attributes, set both
	// ways: setfattr(1) and Go's xattr.
	tree := map[string]string{"a.txt": "alpha\n", "sub/b.txt": "bravo\n", "sub/deep/c.bin": strings.Repeat("c", 200<<10)}
	makeTree := func(t *testing.T, root string) {
		t.Helper()
		for rel, body := range tree {
			p := filepath.Join(root, rel)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(body), 0o640); err != nil {
				t.Fatal(err)
			}
			fsMust(t, "setfattr", "-n", "user.foo", "-v", "foo-"+rel, p)
			if err := xattr.Set(p, "user.bar", []byte("bar-"+rel)); err != nil {
				t.Fatalf("setxattr user.bar %s: %v", rel, err)
			}
		}
	}
	// checkCopy checks a copy of the tree: content, user attributes, and
	// facts of its own.
	checkCopy := func(t *testing.T, root string) {
		t.Helper()
		for rel, body := range tree {
			p := filepath.Join(root, rel)
			got, err := os.ReadFile(p)
			if err != nil || string(got) != body {
				t.Errorf("%s: %d bytes, %v; want %d bytes", rel, len(got), err, len(body))
				continue
			}
			for attr, want := range map[string]string{"user.foo": "foo-" + rel, "user.bar": "bar-" + rel} {
				if v, err := xattr.Get(p, attr); err != nil || string(v) != want {
					t.Errorf("%s: %s = %q, %v; want %q", rel, attr, v, err, want)
				}
			}
			names, err := xattr.List(p)
			if err != nil {
				t.Fatalf("listxattr %s: %v", rel, err)
			}
			slices.Sort(names)
			if !slices.Equal(names, []string{"user.bar", "user.foo"}) {
				t.Errorf("%s: listxattr %q, want [user.bar user.foo]", rel, names)
			}
			bucket, key := fsSplit(t, mnt, p)
			etag := strings.Trim(aws.ToString(fsHead(t, c, bucket, key).ETag), `"`)
			if v, err := xattr.Get(p, "user.cairn.etag"); err != nil || string(v) != etag {
				t.Errorf("%s: user.cairn.etag = %q, %v; want the copy's ETag %s", rel, v, err, etag)
			}
		}
	}

	t.Run("cp -a across buckets", func(t *testing.T) {
		from := filepath.Join(src, "cp")
		makeTree(t, from)
		fsRunQuiet(t, "cp", "-a", from, filepath.Join(dst, "cp"))
		checkCopy(t, filepath.Join(dst, "cp"))
	})

	t.Run("rsync -aX across buckets", func(t *testing.T) {
		from := filepath.Join(src, "rsync")
		makeTree(t, from)
		fsRunQuiet(t, "rsync", "-aX", from+"/", filepath.Join(dst, "rsync")+"/")
		checkCopy(t, filepath.Join(dst, "rsync"))
		// A second run finds nothing to do, and says nothing either.
		fsRunQuiet(t, "rsync", "-aX", from+"/", filepath.Join(dst, "rsync")+"/")
		checkCopy(t, filepath.Join(dst, "rsync"))
	})

	t.Run("mv across buckets", func(t *testing.T) {
		from := filepath.Join(src, "mv")
		makeTree(t, from)
		fsRunQuiet(t, "mv", from, filepath.Join(dst, "mv"))
		checkCopy(t, filepath.Join(dst, "mv"))
		if _, err := os.Stat(from); !os.IsNotExist(err) {
			t.Errorf("source after mv: %v, want gone", err)
		}
	})

	t.Run("facts by name, not listed", func(t *testing.T) {
		p := filepath.Join(src, "facts.txt")
		if err := os.WriteFile(p, []byte("facts\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		fsMust(t, "setfattr", "-n", "user.foo", "-v", "1", p)
		dump := fsMust(t, "getfattr", "--absolute-names", "-d", "-m", "-", p)
		if !strings.Contains(dump, "user.foo") || strings.Contains(dump, "user.cairn.") {
			t.Errorf("getfattr -d -m -: %q, want user.foo and no user.cairn.*", dump)
		}
		h := fsHead(t, c, "meta-src", "facts.txt")
		for attr, want := range map[string]string{
			"user.cairn.etag":    strings.Trim(aws.ToString(h.ETag), `"`),
			"user.cairn.size":    "6",
			"user.cairn.version": aws.ToString(h.VersionId),
		} {
			v, err := xattr.Get(p, attr)
			if err != nil {
				t.Errorf("getxattr %s: %v", attr, err)
				continue
			}
			if want != "" && string(v) != want {
				t.Errorf("%s = %q, want %q", attr, v, want)
			}
		}
		if out := fsMust(t, "getfattr", "--absolute-names", "--only-values", "-n", "user.cairn.size", p); out != "6" {
			t.Errorf("getfattr -n user.cairn.size: %q", out)
		}
		etag, _ := xattr.Get(p, "user.cairn.etag")
		if err := xattr.Set(p, "user.cairn.etag", etag); err != nil {
			t.Errorf("setxattr user.cairn.etag to its own value: %v", err)
		}
		wantErrno(t, "setxattr user.cairn.etag to another value", xattr.Set(p, "user.cairn.etag", []byte("forged")), unix.EPERM)
		fsEventually(t, "the log line of the refused setxattr", func() error {
			if !strings.Contains(srv.stderr.String(), "user.cairn.* attributes are read-only") {
				return fmt.Errorf("not in cairn serve's stderr")
			}
			return nil
		})
	})

	t.Run("implied directory mtime", func(t *testing.T) {
		// Keys put over S3 make directories with no marker object.
		fsPut(t, c, "meta-src", "implied/only/one", []byte("1"), nil)
		time.Sleep(20 * time.Millisecond)
		fsPut(t, c, "meta-src", "implied/only/two", []byte("2"), nil)
		dir := filepath.Join(src, "implied", "only")
		var newest time.Time
		fsEventually(t, "implied/only/two on the mount", func() error {
			_, err := os.Stat(filepath.Join(dir, "two"))
			return err
		})
		for _, name := range []string{"one", "two"} {
			if m, _ := fsTimes(t, filepath.Join(dir, name)); m.After(newest) {
				newest = m
			}
		}
		got, _ := fsTimes(t, dir)
		if got.Year() < 2000 {
			t.Errorf("implied directory mtime %v", got)
		}
		if !got.Equal(newest) {
			t.Errorf("implied directory mtime %v, want its newest file's %v", got, newest)
		}
		// A directory holding only directories has the bucket's time.
		bucketTime, _ := fsTimes(t, src)
		if got, _ := fsTimes(t, filepath.Join(src, "implied")); !got.Equal(bucketTime) || got.Year() < 2000 {
			t.Errorf("directory of directories: mtime %v, want the bucket's %v", got, bucketTime)
		}
		// ls -l and find see the same.
		out := fsMust(t, "find", dir, "-maxdepth", "0", "-newermt", "2000-01-01")
		if strings.TrimSpace(out) != dir {
			t.Errorf("find -newermt 2000-01-01: %q", out)
		}
	})

	t.Run("statfs inodes", func(t *testing.T) {
		var st unix.Statfs_t
		if err := unix.Statfs(mnt, &st); err != nil {
			t.Fatalf("statfs: %v", err)
		}
		used := st.Files - st.Ffree
		var objects int64
		for _, b := range readFSStatus(t, mnt).Buckets {
			objects += b.Objects
		}
		t.Logf("statfs: %d inodes, %d free, %d used; status: %d objects", st.Files, st.Ffree, used, objects)
		if st.Ffree > st.Files || st.Ffree == 0 || st.Ffree >= 1<<32 {
			t.Errorf("statfs: %d free inodes of %d", st.Ffree, st.Files)
		}
		if d := int64(used) - objects; d < -objects/10-5 || d > objects/10+5 {
			t.Errorf("statfs: %d inodes used, the store holds %d objects", used, objects)
		}
		if used*10 > st.Files*8 {
			t.Errorf("statfs: %d of %d inodes used", used, st.Files)
		}
		// stat -f agrees (the free inodes follow the free blocks, which
		// other writers on the drives' filesystem move meanwhile).
		out := fsMust(t, "stat", "-f", "-c", "%c %d", mnt)
		var files, free uint64
		if _, err := fmt.Sscanf(out, "%d %d", &files, &free); err != nil {
			t.Fatalf("stat -f: %q: %v", out, err)
		}
		if files-free != used || free >= 1<<32 || free == 0 {
			t.Errorf("stat -f: %d inodes, %d free; statfs said %d used", files, free, used)
		}
	})

	// Files whose mtime is in their metadata (written on the mount) and
	// whose mtime is their version's time (over S3): a setxattr, a new
	// version in the store, changes the ctime alone.
	files := map[string]string{"mount": filepath.Join(src, "times-mount.txt"), "s3": filepath.Join(src, "times-s3.txt")}
	if err := os.WriteFile(files["mount"], []byte("m"), 0o644); err != nil {
		t.Fatal(err)
	}
	fsPut(t, c, "meta-src", "times-s3.txt", []byte("s"), nil)
	mtimes := map[string]time.Time{}
	t.Run("setxattr moves ctime, not mtime", func(t *testing.T) {
		for _, how := range []string{"mount", "s3"} {
			p := files[how]
			fsEventually(t, p, func() error { _, err := os.Stat(p); return err })
			m, ctime := fsTimes(t, p)
			mtimes[how] = m
			time.Sleep(20 * time.Millisecond)
			fsMust(t, "setfattr", "-n", "user.k", "-v", "v", p)
			fsEventually(t, how+": ctime after setxattr", func() error {
				m2, c2 := fsTimes(t, p)
				if !m2.Equal(m) {
					return fmt.Errorf("mtime %v, was %v", m2, m)
				}
				if !c2.After(ctime) {
					return fmt.Errorf("ctime %v, was %v", c2, ctime)
				}
				return nil
			})
		}
	})

	t.Run("after remount", func(t *testing.T) {
		stopMount(t, srv, mnt)
		c = fsClient(startMountAt(t, data, mnt))
		for how, p := range files {
			if m, _ := fsTimes(t, p); !m.Equal(mtimes[how]) {
				t.Errorf("%s: mtime %v after remount, was %v before the setxattr", how, m, mtimes[how])
			}
			if v, err := xattr.Get(p, "user.k"); err != nil || string(v) != "v" {
				t.Errorf("%s: user.k = %q, %v", how, v, err)
			}
		}
		// The copies keep their attributes too.
		checkCopy(t, filepath.Join(dst, "cp"))
	})
}

// fsSplit is the bucket and key of path p on the mount mnt.
func fsSplit(t *testing.T, mnt, p string) (bucket, key string) {
	t.Helper()
	rel, err := filepath.Rel(mnt, p)
	if err != nil {
		t.Fatal(err)
	}
	bucket, key, _ = strings.Cut(filepath.ToSlash(rel), "/")
	return bucket, key
}
