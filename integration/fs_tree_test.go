package integration

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// fsTreeFiles writes the 1 000-file tree of the copy test under root:
// ten top directories of five subdirectories each, every third file one
// level deeper, sizes cycling through small values (0 bytes included) and
// three files of 1 to 3 MiB, plus two empty directories. It returns the
// files (relative path -> size) and the directories.
func fsTreeFiles(t *testing.T, root string) (files map[string]int64, dirs []string) {
	t.Helper()
	sizes := []int{0, 1, 17, 100, 511, 4096, 4097, 8191, 12345, 30000}
	big := map[int]int{100: 1 * mib, 500: 2*mib + 3, 900: 3*mib - 1}
	files = map[string]int64{}
	dirSet := map[string]bool{}
	for i := range 1000 {
		dir := fmt.Sprintf("d%d/s%d", i%10, (i/10)%5)
		if i%3 == 0 {
			dir += "/deep"
		}
		size := sizes[i%len(sizes)]
		if b, ok := big[i]; ok {
			size = b
		}
		rel := fmt.Sprintf("%s/f%04d.dat", dir, i)
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, randomBytes(uint64(i), size), 0o644); err != nil {
			t.Fatal(err)
		}
		files[rel] = int64(size)
		for d := filepath.Dir(rel); d != "."; d = filepath.Dir(d) {
			dirSet[d] = true
		}
	}
	for _, d := range []string{"empty", "d3/s2/hollow"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
		dirSet[d] = true
	}
	return files, fsSortedKeys(dirSet)
}

// lsEntry is one line of `ls -lR`: the permission string and, for
// anything but a directory, the size.
type lsEntry struct {
	perm string
	size int64
}

// parseLsLR parses `ls -lR` output into "dir/name" -> entry, relative to
// the directory listed.
func parseLsLR(t *testing.T, out, top string) map[string]lsEntry {
	t.Helper()
	entries := map[string]lsEntry{}
	section := ""
	for _, line := range strings.Split(out, "\n") {
		switch {
		case line == "" || strings.HasPrefix(line, "total "):
		case strings.HasSuffix(line, ":") && strings.HasPrefix(line, top):
			section = strings.TrimPrefix(strings.TrimPrefix(strings.TrimSuffix(line, ":"), top), "/")
		default:
			f := strings.Fields(line)
			if len(f) < 9 {
				t.Fatalf("ls -lR: cannot parse %q", line)
			}
			size, err := strconv.ParseInt(f[4], 10, 64)
			if err != nil {
				t.Fatalf("ls -lR: size of %q: %v", line, err)
			}
			e := lsEntry{perm: f[0]}
			if !strings.HasPrefix(f[0], "d") {
				e.size = size
			}
			entries[filepath.Join(section, strings.Join(f[8:], " "))] = e
		}
	}
	return entries
}

// TestFSCopyTree copies a 1 000-file tree (0 bytes to 3 MiB, nested and
// empty directories) onto the mount and back with cp -r: diff -r finds no
// difference either way, ls -l shows the right types, modes and sizes, and
// the S3 face lists every file with its size and a marker for every
// directory.
func TestFSCopyTree(t *testing.T) {
	srv, mnt := startMount(t)
	c := fsClient(srv)
	src := filepath.Join(t.TempDir(), "tree")
	files, dirs := fsTreeFiles(t, src)

	// The bucket is made with mkdir at the mount root.
	bucketDir := filepath.Join(mnt, "trees")
	fsMust(t, "mkdir", bucketDir)
	if _, err := c.HeadBucket(callCtx(t), &s3.HeadBucketInput{Bucket: aws.String("trees")}); err != nil {
		t.Fatalf("HeadBucket after mkdir on the mount root: %v", err)
	}
	onMount := filepath.Join(bucketDir, "tree")
	fsMust(t, "cp", "-r", src, onMount)
	if out, err := fsRun("diff", "-r", src, onMount); err != nil || out != "" {
		t.Fatalf("diff -r source mount: %v\n%s", err, tail(out, 30))
	}
	back := filepath.Join(t.TempDir(), "back")
	fsMust(t, "cp", "-r", onMount, back)
	if out, err := fsRun("diff", "-r", src, back); err != nil || out != "" {
		t.Fatalf("diff -r source copied-back: %v\n%s", err, tail(out, 30))
	}

	t.Run("ls -l", func(t *testing.T) {
		want := parseLsLR(t, fsMust(t, "ls", "-lR", src), src)
		got := parseLsLR(t, fsMust(t, "ls", "-lR", onMount), onMount)
		if len(want) != len(files)+len(dirs) {
			t.Fatalf("local ls -lR: %d entries, want %d", len(want), len(files)+len(dirs))
		}
		bad := 0
		for _, p := range fsSortedKeys(want) {
			if g, ok := got[p]; !ok || g != want[p] {
				if bad++; bad <= 10 {
					t.Errorf("ls -l %s: got %+v (present %v), want %+v", p, g, ok, want[p])
				}
			}
		}
		for _, p := range fsSortedKeys(got) {
			if _, ok := want[p]; !ok {
				t.Errorf("ls -l on the mount shows %s (%+v), which was not copied", p, got[p])
			}
		}
		for rel, size := range files {
			if got[rel].size != size {
				if bad++; bad <= 10 {
					t.Errorf("ls -l %s: size %d, want %d", rel, got[rel].size, size)
				}
			}
		}
	})

	t.Run("S3 listing", func(t *testing.T) {
		keys := fsListKeys(t, c, "trees", "tree/")
		for rel, size := range files {
			if got, ok := keys["tree/"+rel]; !ok || got != size {
				t.Errorf("S3 key tree/%s: size %d (present %v), want %d", rel, got, ok, size)
			}
		}
		isDir := map[string]bool{"tree/": true}
		for _, d := range dirs {
			isDir["tree/"+d+"/"] = true
		}
		for _, d := range []string{"tree/empty/", "tree/d3/s2/hollow/"} {
			if _, ok := keys[d]; !ok {
				t.Errorf("S3: no marker %s for an empty directory", d)
			}
		}
		for k, size := range keys {
			if strings.HasSuffix(k, "/") {
				if !isDir[k] || size != 0 {
					t.Errorf("S3: unexpected marker %s (%d bytes)", k, size)
				}
			} else if _, ok := files[strings.TrimPrefix(k, "tree/")]; !ok {
				t.Errorf("S3: unexpected key %s", k)
			}
		}
		big := fsGet(t, c, "trees", "tree/d0/s0/f0100.dat")
		if !bytes.Equal(big, randomBytes(100, mib)) {
			t.Errorf("S3 GetObject of the 1 MiB file: %d bytes, content differs", len(big))
		}
	})
}

// TestFSFileOps runs the everyday shell operations on the mount, each
// followed by a check of the content on the mount (cat) and over S3:
// echo >, >>, truncate (shrink and grow), overwrite, cp, rm and rm -r.
func TestFSFileOps(t *testing.T) {
	srv, mnt := startMount(t)
	c := fsClient(srv)
	dir := fsBucket(t, c, mnt, "ops")
	f := filepath.Join(dir, "notes/f.txt")
	fsMust(t, "mkdir", filepath.Join(dir, "notes"))
	steps := []struct {
		name   string
		script string
		want   string
	}{
		{"echo", "echo hello > " + f, "hello\n"},
		{"append", "echo world >> " + f, "hello\nworld\n"},
		{"append again", "printf 'tail' >> " + f, "hello\nworld\ntail"},
		{"truncate shrink", "truncate -s 3 " + f, "hel"},
		{"truncate grow", "truncate -s 10 " + f, "hel\x00\x00\x00\x00\x00\x00\x00"},
		{"overwrite", "echo x > " + f, "x\n"},
		{"truncate to zero", "truncate -s 0 " + f, ""},
		{"write after truncate", "printf 'abc' > " + f, "abc"},
		{"cp onto", "printf 'from cp' > " + f + ".src && cp " + f + ".src " + f, "from cp"},
	}
	for _, st := range steps {
		fsSh(t, st.script)
		if got := fsMust(t, "cat", f); got != st.want {
			t.Errorf("%s: cat gives %q, want %q", st.name, got, st.want)
		}
		if got := string(fsGet(t, c, "ops", "notes/f.txt")); got != st.want {
			t.Errorf("%s: S3 GetObject gives %q, want %q", st.name, got, st.want)
		}
		fi, err := os.Stat(f)
		if err != nil || fi.Size() != int64(len(st.want)) {
			t.Errorf("%s: stat size %v (%v), want %d", st.name, sizeOf(fi), err, len(st.want))
		}
	}

	t.Run("rm", func(t *testing.T) {
		fsMust(t, "rm", f+".src")
		if _, err := os.Stat(f + ".src"); !os.IsNotExist(err) {
			t.Errorf("stat after rm: %v, want not exist", err)
		}
		_, err := c.HeadObject(callCtx(t), &s3.HeadObjectInput{Bucket: aws.String("ops"), Key: aws.String("notes/f.txt.src")})
		wantAPIError(t, "HeadObject after rm", err, "NotFound", 404)
	})

	t.Run("rm -r", func(t *testing.T) {
		tree := filepath.Join(dir, "junk")
		fsSh(t, fmt.Sprintf("mkdir -p %[1]s/a/b/c %[1]s/empty && echo 1 > %[1]s/a/one && echo 2 > %[1]s/a/b/two && echo 3 > %[1]s/a/b/c/three && : > %[1]s/zero", tree))
		if n := len(fsListKeys(t, c, "ops", "junk/")); n < 5 {
			t.Fatalf("S3 lists %d keys under junk/ before rm -r, want at least 5", n)
		}
		fsMust(t, "rm", "-r", tree)
		if _, err := os.Stat(tree); !os.IsNotExist(err) {
			t.Errorf("stat after rm -r: %v, want not exist", err)
		}
		if keys := fsListKeys(t, c, "ops", "junk/"); len(keys) != 0 {
			t.Errorf("S3 still lists %v under junk/ after rm -r", fsSortedKeys(keys))
		}
		if got := fsMust(t, "ls", dir); strings.Contains(got, "junk") {
			t.Errorf("ls after rm -r: %q", got)
		}
		// The parent directory stays, now holding only notes/.
		if got := strings.Fields(fsMust(t, "ls", dir)); len(got) != 1 || got[0] != "notes" {
			t.Errorf("ls %s after rm -r: %q, want [notes]", dir, got)
		}
	})
}

func sizeOf(fi os.FileInfo) int64 {
	if fi == nil {
		return -1
	}
	return fi.Size()
}

// fsModesTree writes a tree with chosen modes, owners and mtimes (set with
// touch -d after the content), symlinks included.
func fsModesTree(t *testing.T, root string) {
	t.Helper()
	fsSh(t, fmt.Sprintf(`set -e
cd %s
printf 'secret\n' > a.txt && chmod 0600 a.txt && touch -d '2021-03-04 05:06:07' a.txt
printf '#!/bin/sh\necho hi\n' > run.sh && chmod 0755 run.sh && touch -d '2020-01-02 03:04:05' run.sh
mkdir -p sub/deeper empty
head -c 102400 /dev/urandom > sub/c.dat && chmod 0640 sub/c.dat && chown 1234:5678 sub/c.dat && touch -d '2019-12-31 23:59:59' sub/c.dat
head -c 1572864 /dev/urandom > sub/deeper/d.bin && chmod 0644 sub/deeper/d.bin && touch -d '2018-07-08 09:10:11' sub/deeper/d.bin
: > sub/zero && chmod 0444 sub/zero && touch -d '2017-01-01 00:00:00' sub/zero
ln -s a.txt link
ln -s ../nowhere sub/dangling
chmod 0750 sub && chmod 0700 sub/deeper && chmod 0711 empty
touch -d '2016-06-06 06:06:06' sub/deeper && touch -d '2015-05-05 05:05:05' sub && touch -d '2014-04-04 04:04:04' empty
`, root))
}

// TestFSRsyncTar round-trips a tree with modes 0600/0755/0640/0444, owners,
// mtimes and symlinks through rsync -a and tar (create, extract onto the
// mount, create from the mount, extract back) and compares every stat.
func TestFSRsyncTar(t *testing.T) {
	srv, mnt := startMount(t)
	c := fsClient(srv)
	dir := fsBucket(t, c, mnt, "roundtrip")
	src := filepath.Join(t.TempDir(), "src")
	if err := os.Mkdir(src, 0o755); err != nil {
		t.Fatal(err)
	}
	fsModesTree(t, src)
	want := fsWalk(t, src)

	t.Run("rsync", func(t *testing.T) {
		on := filepath.Join(dir, "rs")
		fsMust(t, "rsync", "-a", src+"/", on+"/")
		fsCompareTrees(t, "rsync -a onto the mount", fsWalk(t, on), want, true, true)
		back := filepath.Join(t.TempDir(), "back")
		fsMust(t, "rsync", "-a", on+"/", back+"/")
		fsCompareTrees(t, "rsync -a back from the mount", fsWalk(t, back), want, true, true)
		// A second rsync finds nothing to transfer.
		out := fsMust(t, "rsync", "-ai", src+"/", on+"/")
		if strings.TrimSpace(out) != "" {
			t.Errorf("rsync -ai again transfers:\n%s", tail(out, 20))
		}
	})

	t.Run("tar", func(t *testing.T) {
		tdir := filepath.Join(dir, "tar")
		fsMust(t, "mkdir", "-p", filepath.Join(tdir, "x"))
		archive := filepath.Join(tdir, "a.tar")
		fsMust(t, "tar", "-C", src, "-cf", archive, ".")
		if fi, err := os.Stat(archive); err != nil || fi.Size() < 1<<20 {
			t.Fatalf("archive on the mount: %v %v", sizeOf(fi), err)
		}
		fsMust(t, "tar", "-C", filepath.Join(tdir, "x"), "-xpf", archive)
		fsCompareTrees(t, "tar -x onto the mount", fsWalk(t, filepath.Join(tdir, "x")), want, true, true)
		local := filepath.Join(t.TempDir(), "out.tar")
		fsMust(t, "tar", "-C", filepath.Join(tdir, "x"), "-cf", local, ".")
		back := filepath.Join(t.TempDir(), "back")
		if err := os.Mkdir(back, 0o755); err != nil {
			t.Fatal(err)
		}
		fsMust(t, "tar", "-C", back, "-xpf", local)
		fsCompareTrees(t, "tar from the mount, extracted locally", fsWalk(t, back), want, true, true)
	})
}

// TestFSSymlinks makes symlinks on the mount (to a file, to a directory,
// dangling), follows and reads them, copies them out with cp -a, and sees
// the target as the object's bytes over S3.
func TestFSSymlinks(t *testing.T) {
	srv, mnt := startMount(t)
	c := fsClient(srv)
	dir := fsBucket(t, c, mnt, "links")
	fsSh(t, fmt.Sprintf(`set -e
cd %s
echo target > file
mkdir sub && echo inside > sub/in
ln -s file to-file
ln -s sub to-dir
ln -s /nonexistent/path dangling`, dir))
	for _, tc := range []struct{ link, target string }{
		{"to-file", "file"}, {"to-dir", "sub"}, {"dangling", "/nonexistent/path"},
	} {
		p := filepath.Join(dir, tc.link)
		got, err := os.Readlink(p)
		if err != nil || got != tc.target {
			t.Errorf("readlink %s: %q %v, want %q", tc.link, got, err, tc.target)
		}
		fi, err := os.Lstat(p)
		if err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Errorf("lstat %s: %v %v, want a symlink", tc.link, fi, err)
		}
		if body := string(fsGet(t, c, "links", tc.link)); body != tc.target {
			t.Errorf("S3 GetObject %s: %q, want the target %q", tc.link, body, tc.target)
		}
	}
	if got := fsMust(t, "cat", filepath.Join(dir, "to-file")); got != "target\n" {
		t.Errorf("cat through the link: %q", got)
	}
	if got := fsMust(t, "cat", filepath.Join(dir, "to-dir", "in")); got != "inside\n" {
		t.Errorf("cat through the directory link: %q", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "dangling")); !os.IsNotExist(err) {
		t.Errorf("stat through the dangling link: %v, want not exist", err)
	}
	out := filepath.Join(t.TempDir(), "out")
	fsMust(t, "cp", "-a", dir, out)
	for _, l := range []string{"to-file", "to-dir", "dangling"} {
		a, _ := os.Readlink(filepath.Join(dir, l))
		b, err := os.Readlink(filepath.Join(out, l))
		if err != nil || a != b {
			t.Errorf("cp -a of %s: %q %v, want %q", l, b, err, a)
		}
	}
	// An S3-written symlink-looking object is a plain file: only the mount
	// marks symlinks.
	fsPut(t, c, "links", "plain", []byte("file"), nil)
	fsEventually(t, "S3 object on the mount", func() error {
		fi, err := os.Lstat(filepath.Join(dir, "plain"))
		if err != nil {
			return err
		}
		if !fi.Mode().IsRegular() {
			return fmt.Errorf("mode %v, want a regular file", fi.Mode())
		}
		return nil
	})
}
