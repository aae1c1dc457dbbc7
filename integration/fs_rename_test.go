package integration

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"golang.org/x/sys/unix"
)

// TestFSRenameRules checks (with rename(2) itself: os.Rename refuses any
// existing directory as the target with EEXIST before asking the kernel) the POSIX rules of rename and link on the
// mount: hard links are refused (EPERM), a directory cannot replace a
// non-empty one (ENOTEMPTY) but replaces an empty one, a file replaces a
// file, RENAME_NOREPLACE refuses an existing target (EEXIST) and
// RENAME_EXCHANGE is not offered.
func TestFSRenameRules(t *testing.T) {
	srv, mnt := startMount(t)
	c := fsClient(srv)
	dir := fsBucket(t, c, mnt, "renames")
	p := func(rel string) string { return filepath.Join(dir, rel) }
	write := func(rel, content string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p(rel)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p(rel), []byte(content), 0o644); err != nil {
			t.Fatalf("write %s: %v", rel, err)
		}
	}
	read := func(rel string) string {
		t.Helper()
		b, err := os.ReadFile(p(rel))
		if err != nil {
			t.Errorf("read %s: %v", rel, err)
		}
		return string(b)
	}

	t.Run("hard link EPERM", func(t *testing.T) {
		write("link/a", "a")
		wantErrno(t, "link", os.Link(p("link/a"), p("link/b")), unix.EPERM)
		if _, err := os.Lstat(p("link/b")); !os.IsNotExist(err) {
			t.Errorf("link target exists after the refused link: %v", err)
		}
		out, err := fsRun("ln", p("link/a"), p("link/c"))
		if err == nil || !strings.Contains(out, "Operation not permitted") {
			t.Errorf("ln: %v %q, want it to fail with 'Operation not permitted'", err, out)
		}
	})

	t.Run("directory onto a non-empty directory ENOTEMPTY", func(t *testing.T) {
		write("ne/src/one", "1")
		write("ne/dst/keep", "k")
		wantErrno(t, "rename dir onto non-empty dir", unix.Rename(p("ne/src"), p("ne/dst")), unix.ENOTEMPTY)
		if read("ne/src/one") != "1" || read("ne/dst/keep") != "k" {
			t.Error("a refused rename changed something")
		}
		out, err := fsRun("mv", "-T", p("ne/src"), p("ne/dst"))
		if err == nil {
			t.Errorf("mv -T onto a non-empty dir succeeded: %q", out)
		}
		if keys := fsListKeys(t, c, "renames", "ne/"); len(keys) != 2+countMarkers(keys) {
			t.Errorf("S3 keys after refused renames: %v", fsSortedKeys(keys))
		}
	})

	t.Run("directory onto an empty directory", func(t *testing.T) {
		write("em/src/one", "1")
		if err := os.MkdirAll(p("em/dst"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := unix.Rename(p("em/src"), p("em/dst")); err != nil {
			t.Fatalf("rename dir onto an empty dir: %v", err)
		}
		if read("em/dst/one") != "1" {
			t.Error("content not moved")
		}
		if _, err := os.Stat(p("em/src")); !os.IsNotExist(err) {
			t.Errorf("source still there: %v", err)
		}
		keys := fsListKeys(t, c, "renames", "em/")
		if _, ok := keys["em/dst/one"]; !ok || hasPrefixKey(keys, "em/src/") {
			t.Errorf("S3 keys after rename: %v", fsSortedKeys(keys))
		}
	})

	t.Run("file onto a file replaces", func(t *testing.T) {
		write("ff/a", "new")
		write("ff/b", "old")
		if err := os.Rename(p("ff/a"), p("ff/b")); err != nil {
			t.Fatalf("rename: %v", err)
		}
		if read("ff/b") != "new" {
			t.Error("target not replaced")
		}
		if got := string(fsGet(t, c, "renames", "ff/b")); got != "new" {
			t.Errorf("S3 GetObject ff/b: %q", got)
		}
		_, err := c.HeadObject(callCtx(t), &s3.HeadObjectInput{Bucket: aws.String("renames"), Key: aws.String("ff/a")})
		wantAPIError(t, "HeadObject source after rename", err, "NotFound", 404)
	})

	t.Run("RENAME_NOREPLACE", func(t *testing.T) {
		write("nr/a", "A")
		write("nr/b", "B")
		err := unix.Renameat2(unix.AT_FDCWD, p("nr/a"), unix.AT_FDCWD, p("nr/b"), unix.RENAME_NOREPLACE)
		wantErrno(t, "renameat2 NOREPLACE onto an existing file", err, unix.EEXIST)
		if read("nr/a") != "A" || read("nr/b") != "B" {
			t.Error("a refused RENAME_NOREPLACE changed something")
		}
		if err := unix.Renameat2(unix.AT_FDCWD, p("nr/a"), unix.AT_FDCWD, p("nr/c"), unix.RENAME_NOREPLACE); err != nil {
			t.Errorf("renameat2 NOREPLACE onto a free name: %v", err)
		}
		if read("nr/c") != "A" {
			t.Error("RENAME_NOREPLACE did not move the file")
		}
		err = unix.Renameat2(unix.AT_FDCWD, p("nr/b"), unix.AT_FDCWD, p("nr/c"), unix.RENAME_EXCHANGE)
		if err == nil {
			t.Error("RENAME_EXCHANGE succeeded; the store cannot swap two keys atomically")
		}
	})

	t.Run("file onto a directory EISDIR", func(t *testing.T) {
		write("fd/file", "f")
		write("fd/dir/x", "x")
		wantErrno(t, "rename file onto dir", unix.Rename(p("fd/file"), p("fd/dir")), unix.EISDIR)
	})
}

func countMarkers(keys map[string]int64) int {
	n := 0
	for k := range keys {
		if strings.HasSuffix(k, "/") {
			n++
		}
	}
	return n
}

func hasPrefixKey(keys map[string]int64, prefix string) bool {
	for k := range keys {
		if strings.HasPrefix(k, prefix) {
			return true
		}
	}
	return false
}

// TestFSMoveLargeDir moves a directory of 10 000 files with mv on the
// mount while a goroutine lists the bucket over S3 as fast as it can. The
// store renames the prefix in one transaction, so every single
// ListObjectsV2 answer must match the tree before the mv or the tree
// after it, never a mix (a listing spanning several pages is not one
// snapshot on any S3 store, so each page is checked on its own, many of
// them cut across the boundary between the two names); every listing of
// the parent with delimiter "/" must show exactly one of the two names.
// The mv moves no byte: the shard files under the drives stay the same.
func TestFSMoveLargeDir(t *testing.T) {
	srv, mnt := startMount(t)
	c := fsClient(srv)
	const bucket, n = "bigmove", 10000
	dir := fsBucket(t, c, mnt, bucket)
	// The new name sorts before the old one, so that pages of the parent
	// cross from one name to the other.
	const from, to = "job/src/", "job/dst/"
	name := func(i int) string { return fmt.Sprintf("part-%05d", i) }
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	err := parallelDo(n, 32, func(i int) error {
		_, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(from + name(i)), Body: bytes.NewReader([]byte(name(i)))})
		return err
	})
	if err != nil {
		t.Fatalf("put %d objects: %v", n, err)
	}
	t.Logf("put %d objects over S3 in %v", n, time.Since(start).Round(time.Millisecond))
	drives := filepath.Join(srv.data, "drives")
	shardsBefore := countFiles(t, drives)

	var before, after []string
	for i := range n {
		before = append(before, from+name(i))
		after = append(after, to+name(i))
	}
	// expected returns the first page (at most 1000 keys) after startAfter
	// of the tree whose sorted keys are all.
	expected := func(all []string, startAfter string) []string {
		i, _ := slices.BinarySearch(all, startAfter)
		if i < len(all) && all[i] == startAfter {
			i++
		}
		return all[i:min(i+1000, len(all))]
	}
	var (
		stop                   atomic.Bool
		pages, pre, post, both atomic.Int64
		during                 atomic.Int64 // pages asked and answered while mv ran
		mvStartNs, mvEndNs     atomic.Int64
		mu                     sync.Mutex
		mixed                  []string
		wg                     sync.WaitGroup
	)
	report := func(format string, args ...any) {
		mu.Lock()
		if len(mixed) < 10 {
			mixed = append(mixed, fmt.Sprintf(format, args...))
		}
		mu.Unlock()
	}
	lister := func(seed uint64) {
		defer wg.Done()
		r := rand.New(rand.NewPCG(seed, 1))
		for !stop.Load() {
			var sa string
			switch r.IntN(4) {
			case 0: // the page crossing from job/dst/ to job/src/
				sa = to + name(n-1-r.IntN(900))
			case 1:
				sa = to + name(r.IntN(n))
			case 2:
				sa = from + name(r.IntN(n))
			case 3:
				sa = ""
			}
			asked := time.Now().UnixNano()
			page, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String("job/"), StartAfter: aws.String(sa)})
			if s, e := mvStartNs.Load(), mvEndNs.Load(); s != 0 && asked >= s && (e == 0 || time.Now().UnixNano() <= e) {
				during.Add(1)
			}
			if err != nil {
				if !stop.Load() {
					report("ListObjectsV2 start-after %q: %v", sa, err)
				}
				return
			}
			var got []string
			for _, o := range page.Contents {
				got = append(got, aws.ToString(o.Key))
			}
			isPre, isPost := slices.Equal(got, expected(before, sa)), slices.Equal(got, expected(after, sa))
			switch {
			case isPre && isPost:
				both.Add(1)
			case isPre:
				pre.Add(1)
			case isPost:
				post.Add(1)
			default:
				report("ListObjectsV2 start-after %q: %d keys %q ... %q match neither the tree before the mv nor after it", sa, len(got), head(got), got[max(0, len(got)-3):])
			}
			pages.Add(1)
			d, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String("job/"), Delimiter: aws.String("/")})
			if err != nil {
				if !stop.Load() {
					report("ListObjectsV2 delimiter: %v", err)
				}
				return
			}
			var prefixes []string
			for _, p := range d.CommonPrefixes {
				prefixes = append(prefixes, aws.ToString(p.Prefix))
			}
			if len(prefixes) != 1 || (prefixes[0] != from && prefixes[0] != to) || len(d.Contents) != 0 {
				report("ListObjectsV2 job/ delimiter /: prefixes %q, %d keys; want exactly one of %q, %q", prefixes, len(d.Contents), from, to)
			}
		}
	}
	for i := range 3 {
		wg.Add(1)
		go lister(uint64(i))
	}
	// Let the listers run on the old tree first.
	for deadline := time.Now().Add(5 * time.Second); pre.Load() < 10 && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	mvStart := time.Now()
	mvStartNs.Store(mvStart.UnixNano())
	out, mvErr := fsRun("mv", filepath.Join(dir, "job", "src"), filepath.Join(dir, "job", "dst"))
	mvTime := time.Since(mvStart)
	mvEndNs.Store(time.Now().UnixNano())
	preAtMv := pre.Load()
	for deadline := time.Now().Add(5 * time.Second); post.Load() < 10 && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	stop.Store(true)
	wg.Wait()
	if mvErr != nil {
		t.Fatalf("mv: %v\n%s", mvErr, out)
	}
	t.Logf("mv of %d files took %v; %d pages checked (%d of the old tree, %d of the new, %d same either way; %d asked and answered while mv ran; %d of the old tree by the time mv returned)",
		n, mvTime.Round(time.Millisecond), pages.Load(), pre.Load(), post.Load(), both.Load(), during.Load(), preAtMv)
	for _, m := range mixed {
		t.Error(m)
	}
	if pre.Load() == 0 || post.Load() == 0 {
		t.Errorf("the listers saw %d pages of the old tree and %d of the new one; the test did not overlap the mv", pre.Load(), post.Load())
	}

	keys := fsListKeys(t, c, bucket, "job/")
	if len(keys) != n || hasPrefixKey(keys, from) {
		t.Errorf("after mv: %d keys under job/ (old name present: %v), want %d under %s", len(keys), hasPrefixKey(keys, from), n, to)
	}
	entries, err := os.ReadDir(filepath.Join(dir, "job", "dst"))
	if err != nil || len(entries) != n {
		t.Errorf("readdir of the moved directory: %d entries, %v; want %d", len(entries), err, n)
	}
	if _, err := os.Stat(filepath.Join(dir, "job", "src")); !os.IsNotExist(err) {
		t.Errorf("stat of the old name after mv: %v, want not exist", err)
	}
	if got := fsMust(t, "cat", filepath.Join(dir, "job", "dst", name(4321))); got != name(4321) {
		t.Errorf("content of a moved file: %q", got)
	}
	if got := countFiles(t, drives); got != shardsBefore {
		t.Errorf("shard files under %s: %d before the mv, %d after: the mv moved or rewrote data", drives, shardsBefore, got)
	}
	// No bound on mvTime: a wall-clock limit fails on a loaded machine or
	// under -race (14 s on two busy cores); the shard count above is what
	// shows the rename moved no data.
}
