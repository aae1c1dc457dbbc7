package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairnstore/cairn/objstore"
	"github.com/cairnstore/cairn/objstore/drive"
	"github.com/cairnstore/cairn/objstore/meta"
)

// Engine is what a store of the suite runs on.
type Engine struct {
	// Index opens a new, empty index for one test.
	Index func(t *testing.T) meta.Index
	// OpenDrive, when set, is the stores' Options.OpenDrive (drives
	// other than the local directories, or wrapped ones); nil means the
	// local directories.
	OpenDrive func(dir string) func(ctx context.Context, set string, index int) (drive.Drive, bool, error)
	// Options, when set, completes each store's options once the suite
	// has set its own (and OpenDrive's): an engine whose stores need
	// more than an index and drives sets the rest here, as a cluster
	// node's drive count, writer id and drives. It is called once per
	// store, before the store is first opened; cleanups it registers on
	// t run after the store's close and fsck.
	Options func(t *testing.T, opt *objstore.Options)
}

// Run runs the store suite on stores over what e opens.
func Run(t *testing.T, e Engine) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s *objstore.Store)
	}{
		{"Buckets", testBuckets},
		{"PutGet", testPutGet},
		{"Ranges", testRanges},
		{"Overwrite", testOverwrite},
		{"Conditional", testConditional},
		{"Delete", testDelete},
		{"Versioning", testVersioning},
		{"List", testList},
		{"Copy", testCopy},
		{"Rename", testRename},
		{"RenamePrefix", testRenamePrefix},
		{"Multipart", testMultipart},
		{"Append", testAppend},
		{"Patch", testPatch},
		{"ReaderSurvivesOverwrite", testReaderSurvivesOverwrite},
		{"ConcurrentWriters", testConcurrentWriters},
		{"Watch", testWatch},
		{"ObjectLock", testObjectLock},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := Open(t, options(t, e, e.Index(t)))
			tc.fn(t, s)
		})
	}
	t.Run("Restart", func(t *testing.T) { testRestart(t, e) })
}

// options are the suite's store options: three drives with parity one
// and small blocks, so that objects of a few hundred KiB span blocks;
// small objects are packed.
func options(t *testing.T, e Engine, idx meta.Index) objstore.Options {
	opt := objstore.Options{Index: idx, Dir: t.TempDir(), DriveCount: 3, Parity: 1, BlockSize: 64 << 10, MinPartSize: 1, NoBackground: true}
	if e.OpenDrive != nil {
		opt.OpenDrive = e.OpenDrive(opt.Dir)
	}
	if e.Options != nil {
		e.Options(t, &opt)
	}
	return opt
}

func data(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func bucket(t *testing.T, s *objstore.Store, name string) {
	t.Helper()
	if err := s.CreateBucket(context.Background(), name, objstore.BucketOptions{}); err != nil {
		t.Fatal(err)
	}
}

func put(t *testing.T, s *objstore.Store, b, key string, body []byte, opt objstore.PutOptions) objstore.ObjectInfo {
	t.Helper()
	info, err := s.Put(context.Background(), b, key, bytes.NewReader(body), int64(len(body)), opt)
	if err != nil {
		t.Fatalf("put %s: %v", key, err)
	}
	return info
}

func read(t *testing.T, s *objstore.Store, b, key string, opt objstore.GetOptions) ([]byte, error) {
	t.Helper()
	r, err := s.Open(context.Background(), b, key, opt)
	if err != nil {
		return nil, err
	}
	defer func() { _ = r.Close() }()
	return io.ReadAll(r)
}

func mustRead(t *testing.T, s *objstore.Store, b, key string, want []byte) {
	t.Helper()
	got, err := read(t, s, b, key, objstore.GetOptions{})
	if err != nil {
		t.Fatalf("read %s: %v", key, err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("read %s: %d bytes differ from the %d written", key, len(got), len(want))
	}
}

// Keys lists one page of bucket b: its keys, then its common prefixes
// followed by "*".
func Keys(t testing.TB, s *objstore.Store, b string, opt objstore.ListOptions) []string {
	t.Helper()
	page, err := s.List(context.Background(), b, opt)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, o := range page.Objects {
		out = append(out, o.Key)
	}
	for _, p := range page.CommonPrefixes {
		out = append(out, p+"*")
	}
	return out
}

func testBuckets(t *testing.T, s *objstore.Store) {
	ctx := context.Background()
	bucket(t, s, "bk1")
	bucket(t, s, "bk2")
	for _, tc := range []struct {
		name string
		err  error
		call func() error
	}{
		{"create twice", objstore.ErrBucketExists, func() error { return s.CreateBucket(ctx, "bk1", objstore.BucketOptions{}) }},
		{"bad name", objstore.ErrInvalidBucketName, func() error { return s.CreateBucket(ctx, "No_Such", objstore.BucketOptions{}) }},
		{"head absent", objstore.ErrNoSuchBucket, func() error { _, err := s.HeadBucket(ctx, "bk3"); return err }},
		{"put into absent", objstore.ErrNoSuchBucket, func() error {
			_, err := s.Put(ctx, "bk3", "k", strings.NewReader("x"), 1, objstore.PutOptions{})
			return err
		}},
		{"delete absent", objstore.ErrNoSuchBucket, func() error { return s.DeleteBucket(ctx, "bk3") }},
	} {
		if err := tc.call(); !errors.Is(err, tc.err) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.err)
		}
	}
	put(t, s, "bk1", "k", []byte("x"), objstore.PutOptions{})
	if err := s.DeleteBucket(ctx, "bk1"); !errors.Is(err, objstore.ErrBucketNotEmpty) {
		t.Fatalf("delete of a bucket with an object: %v", err)
	}
	if err := s.DeleteBucket(ctx, "bk2"); err != nil {
		t.Fatal(err)
	}
	bs, err := s.ListBuckets(ctx)
	if err != nil || len(bs) != 1 || bs[0].Name != "bk1" {
		t.Fatalf("buckets %+v %v", bs, err)
	}
}

func testPutGet(t *testing.T, s *objstore.Store) {
	bucket(t, s, "bkt")
	for i, n := range []int{0, 1, 4 << 10, 64 << 10, 64<<10 + 1, 300 << 10} {
		key := fmt.Sprintf("obj-%d", n)
		body := data(n, uint64(i))
		info := put(t, s, "bkt", key, body, objstore.PutOptions{ContentType: "text/x", Meta: map[string]string{"a": "b"}})
		if info.Size != int64(n) || info.ETag == "" {
			t.Fatalf("put %d bytes: %+v", n, info)
		}
		mustRead(t, s, "bkt", key, body)
		head, err := s.Head(context.Background(), "bkt", key, objstore.GetOptions{})
		if err != nil || head.ETag != info.ETag || head.ContentType != "text/x" || head.Meta["a"] != "b" {
			t.Fatalf("head %s: %+v %v", key, head, err)
		}
	}
	if _, err := read(t, s, "bkt", "absent", objstore.GetOptions{}); !errors.Is(err, objstore.ErrNoSuchKey) {
		t.Fatalf("read absent: %v", err)
	}
	// A body shorter than its size leaves nothing visible.
	if _, err := s.Put(context.Background(), "bkt", "short", strings.NewReader("abc"), 10, objstore.PutOptions{}); !errors.Is(err, objstore.ErrIncompleteBody) {
		t.Fatalf("short body: %v", err)
	}
	if _, err := s.Head(context.Background(), "bkt", "short", objstore.GetOptions{}); !errors.Is(err, objstore.ErrNoSuchKey) {
		t.Fatalf("a failed put is visible: %v", err)
	}
}

func testRanges(t *testing.T, s *objstore.Store) {
	bucket(t, s, "bkt")
	body := data(200<<10, 7)
	put(t, s, "bkt", "k", body, objstore.PutOptions{})
	r, err := s.Open(context.Background(), "bkt", "k", objstore.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = r.Close() }()
	for _, tc := range []struct{ off, n int }{{0, 1}, {65535, 2}, {100 << 10, 50 << 10}, {len(body) - 3, 3}} {
		buf := make([]byte, tc.n)
		if _, err := r.ReadAt(buf, int64(tc.off)); err != nil && err != io.EOF {
			t.Fatalf("ReadAt(%d, %d): %v", tc.off, tc.n, err)
		}
		if !bytes.Equal(buf, body[tc.off:tc.off+tc.n]) {
			t.Fatalf("ReadAt(%d, %d) differs", tc.off, tc.n)
		}
	}
	if n, err := r.ReadAt(make([]byte, 10), int64(len(body))); n != 0 || err != io.EOF {
		t.Fatalf("ReadAt at the end: %d %v", n, err)
	}
}

func testOverwrite(t *testing.T, s *objstore.Store) {
	bucket(t, s, "bkt")
	for i := 0; i < 5; i++ {
		body := data(1000*(i+1)+i*70000, uint64(i))
		put(t, s, "bkt", "k", body, objstore.PutOptions{})
		mustRead(t, s, "bkt", "k", body)
	}
	if _, err := s.Clean(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func testConditional(t *testing.T, s *objstore.Store) {
	bucket(t, s, "bkt")
	first := put(t, s, "bkt", "k", []byte("one"), objstore.PutOptions{IfNoneMatch: "*"})
	ctx := context.Background()
	try := func(opt objstore.PutOptions) error {
		_, err := s.Put(ctx, "bkt", "k", strings.NewReader("two"), 3, opt)
		return err
	}
	for _, tc := range []struct {
		name string
		opt  objstore.PutOptions
		err  error
	}{
		{"create only, exists", objstore.PutOptions{IfNoneMatch: "*"}, objstore.ErrPreconditionFailed},
		{"swap, wrong etag", objstore.PutOptions{IfMatch: `"0123"`}, objstore.ErrPreconditionFailed},
		{"swap, right etag", objstore.PutOptions{IfMatch: first.ETag}, nil},
		{"swap, stale etag", objstore.PutOptions{IfMatch: first.ETag}, objstore.ErrPreconditionFailed},
	} {
		if err := try(tc.opt); !errors.Is(err, tc.err) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.err)
		}
	}
	mustRead(t, s, "bkt", "k", []byte("two"))
	// Racing creators: exactly one wins.
	var wins sync.WaitGroup
	won := make(chan int, 8)
	for i := 0; i < 8; i++ {
		wins.Add(1)
		go func() {
			defer wins.Done()
			if _, err := s.Put(ctx, "bkt", "race", strings.NewReader("x"), 1, objstore.PutOptions{IfNoneMatch: "*"}); err == nil {
				won <- i
			}
		}()
	}
	wins.Wait()
	close(won)
	if n := len(won); n != 1 {
		t.Fatalf("%d racing creators won, want 1", n)
	}
}

func testDelete(t *testing.T, s *objstore.Store) {
	ctx := context.Background()
	bucket(t, s, "bkt")
	info := put(t, s, "bkt", "k", data(100<<10, 1), objstore.PutOptions{})
	if _, err := s.Delete(ctx, "bkt", "k", objstore.DeleteOptions{IfMatch: `"bad"`}); !errors.Is(err, objstore.ErrPreconditionFailed) {
		t.Fatalf("conditional delete, wrong etag: %v", err)
	}
	if _, err := s.Delete(ctx, "bkt", "k", objstore.DeleteOptions{IfMatch: info.ETag}); err != nil {
		t.Fatal(err)
	}
	if _, err := read(t, s, "bkt", "k", objstore.GetOptions{}); !errors.Is(err, objstore.ErrNoSuchKey) {
		t.Fatalf("read after delete: %v", err)
	}
	if _, err := s.Delete(ctx, "bkt", "k", objstore.DeleteOptions{}); err != nil {
		t.Fatalf("delete of an absent key is not an error in S3: %v", err)
	}
	if n, err := s.Clean(ctx); err != nil || n != 1 {
		t.Fatalf("clean after delete: %d %v", n, err)
	}
}

func testVersioning(t *testing.T, s *objstore.Store) {
	ctx := context.Background()
	bucket(t, s, "ver")
	if err := s.SetVersioning(ctx, "ver", objstore.VersioningEnabled); err != nil {
		t.Fatal(err)
	}
	v1 := put(t, s, "ver", "k", []byte("v1"), objstore.PutOptions{})
	v2 := put(t, s, "ver", "k", []byte("v2"), objstore.PutOptions{})
	if v1.VersionID == v2.VersionID || v1.VersionID == objstore.NullVersion {
		t.Fatalf("version ids %q %q", v1.VersionID, v2.VersionID)
	}
	del, err := s.Delete(ctx, "ver", "k", objstore.DeleteOptions{})
	if err != nil || !del.DeleteMarker {
		t.Fatalf("delete in a versioned bucket: %+v %v", del, err)
	}
	if _, err := read(t, s, "ver", "k", objstore.GetOptions{}); !errors.Is(err, objstore.ErrNoSuchKey) {
		t.Fatalf("read behind a delete marker: %v", err)
	}
	for _, tc := range []struct{ vid, want string }{{v1.VersionID, "v1"}, {v2.VersionID, "v2"}} {
		got, err := read(t, s, "ver", "k", objstore.GetOptions{VersionID: tc.vid})
		if err != nil || string(got) != tc.want {
			t.Fatalf("read version %s: %q %v", tc.vid, got, err)
		}
	}
	page, err := s.ListVersions(ctx, "ver", objstore.ListVersionsOptions{})
	if err != nil || len(page.Versions) != 3 || !page.Versions[0].DeleteMarker || !page.Versions[0].IsLatest {
		t.Fatalf("versions %+v %v", page.Versions, err)
	}
	// Removing the marker brings v2 back.
	if _, err := s.Delete(ctx, "ver", "k", objstore.DeleteOptions{VersionID: del.VersionID}); err != nil {
		t.Fatal(err)
	}
	mustRead(t, s, "ver", "k", []byte("v2"))
	if _, err := s.Delete(ctx, "ver", "k", objstore.DeleteOptions{VersionID: v1.VersionID}); err != nil {
		t.Fatal(err)
	}
	if _, err := read(t, s, "ver", "k", objstore.GetOptions{VersionID: v1.VersionID}); !errors.Is(err, objstore.ErrNoSuchVersion) {
		t.Fatalf("read of a removed version: %v", err)
	}
}

func testList(t *testing.T, s *objstore.Store) {
	bucket(t, s, "bkt")
	all := []string{"a", "a/b", "a/c/d", "a/c/e", "b", "b-c", "c/d"}
	for _, k := range all {
		put(t, s, "bkt", k, []byte(k), objstore.PutOptions{})
	}
	for _, tc := range []struct {
		name string
		opt  objstore.ListOptions
		want string
	}{
		{"all", objstore.ListOptions{}, "[a a/b a/c/d a/c/e b b-c c/d]"},
		{"prefix", objstore.ListOptions{Prefix: "a/"}, "[a/b a/c/d a/c/e]"},
		{"delimiter", objstore.ListOptions{Delimiter: "/"}, "[a b b-c a/* c/*]"},
		{"prefix and delimiter", objstore.ListOptions{Prefix: "a/", Delimiter: "/"}, "[a/b a/c/*]"},
		{"after", objstore.ListOptions{After: "a/c/d"}, "[a/c/e b b-c c/d]"},
		{"no match", objstore.ListOptions{Prefix: "z"}, "[]"},
	} {
		if got := fmt.Sprint(Keys(t, s, "bkt", tc.opt)); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
	// Paging two at a time sees every key once, in order.
	var seen []string
	after := ""
	for i := 0; i < 10; i++ {
		page, err := s.List(context.Background(), "bkt", objstore.ListOptions{After: after, MaxKeys: 2})
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range page.Objects {
			seen = append(seen, o.Key)
		}
		if !page.IsTruncated {
			break
		}
		after = page.NextMarker
	}
	if !sort.StringsAreSorted(seen) || fmt.Sprint(seen) != fmt.Sprint(all) {
		t.Fatalf("paged listing %v, want %v", seen, all)
	}
}

func testCopy(t *testing.T, s *objstore.Store) {
	ctx := context.Background()
	bucket(t, s, "src")
	bucket(t, s, "dst")
	body := data(150<<10, 3)
	src := put(t, s, "src", "k", body, objstore.PutOptions{Meta: map[string]string{"m": "1"}})
	info, err := s.Copy(ctx, "src", "k", "dst", "copy", objstore.CopyOptions{})
	if err != nil || info.ETag != src.ETag {
		t.Fatalf("copy: %+v %v", info, err)
	}
	// The source goes; the copy keeps its data (shared, counted).
	if _, err := s.Delete(ctx, "src", "k", objstore.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Clean(ctx); err != nil {
		t.Fatal(err)
	}
	mustRead(t, s, "dst", "copy", body)
	head, err := s.Head(ctx, "dst", "copy", objstore.GetOptions{})
	if err != nil || head.Meta["m"] != "1" {
		t.Fatalf("copied metadata: %+v %v", head, err)
	}
	if _, err := s.Copy(ctx, "src", "k", "dst", "x", objstore.CopyOptions{}); !errors.Is(err, objstore.ErrNoSuchKey) {
		t.Fatalf("copy of an absent source: %v", err)
	}
}

func testRename(t *testing.T, s *objstore.Store) {
	ctx := context.Background()
	bucket(t, s, "bkt")
	body := data(70<<10, 4)
	info := put(t, s, "bkt", "from", body, objstore.PutOptions{})
	put(t, s, "bkt", "taken", []byte("x"), objstore.PutOptions{})
	if err := s.Rename(ctx, "bkt", "from", "taken", objstore.RenameOptions{IfNoneMatch: "*"}); !errors.Is(err, objstore.ErrPreconditionFailed) {
		t.Fatalf("rename onto an existing key with If-None-Match: %v", err)
	}
	if err := s.Rename(ctx, "bkt", "from", "to", objstore.RenameOptions{IfMatch: info.ETag}); err != nil {
		t.Fatal(err)
	}
	mustRead(t, s, "bkt", "to", body)
	if _, err := read(t, s, "bkt", "from", objstore.GetOptions{}); !errors.Is(err, objstore.ErrNoSuchKey) {
		t.Fatalf("source after rename: %v", err)
	}
	if err := s.Rename(ctx, "bkt", "from", "again", objstore.RenameOptions{}); !errors.Is(err, objstore.ErrNoSuchKey) {
		t.Fatalf("rename of an absent key: %v", err)
	}
}

func testRenamePrefix(t *testing.T, s *objstore.Store) {
	ctx := context.Background()
	bucket(t, s, "bkt")
	for i := 0; i < 12; i++ {
		put(t, s, "bkt", fmt.Sprintf("stage/part-%02d", i), []byte{byte(i)}, objstore.PutOptions{})
	}
	put(t, s, "bkt", "stage-other", []byte("stays"), objstore.PutOptions{})
	n, err := s.RenamePrefix(ctx, "bkt", "stage/", "final/", objstore.RenameOptions{IfNoneMatch: "*"})
	if err != nil || n != 12 {
		t.Fatalf("rename prefix: %d %v", n, err)
	}
	if got := Keys(t, s, "bkt", objstore.ListOptions{Prefix: "stage"}); fmt.Sprint(got) != "[stage-other]" {
		t.Fatalf("left under the old prefix: %v", got)
	}
	if got := Keys(t, s, "bkt", objstore.ListOptions{Prefix: "final/"}); len(got) != 12 {
		t.Fatalf("under the new prefix: %v", got)
	}
	mustRead(t, s, "bkt", "final/part-07", []byte{7})
	// Onto a prefix holding keys, If-None-Match refuses and moves none.
	put(t, s, "bkt", "again/x", []byte("x"), objstore.PutOptions{})
	if _, err := s.RenamePrefix(ctx, "bkt", "final/", "again/", objstore.RenameOptions{IfNoneMatch: "*"}); !errors.Is(err, objstore.ErrPreconditionFailed) {
		t.Fatalf("rename onto a used prefix: %v", err)
	}
	if got := Keys(t, s, "bkt", objstore.ListOptions{Prefix: "final/"}); len(got) != 12 {
		t.Fatalf("a refused rename moved keys: %v", got)
	}
}

func testMultipart(t *testing.T, s *objstore.Store) {
	ctx := context.Background()
	bucket(t, s, "bkt")
	id, err := s.CreateMultipartUpload(ctx, "bkt", "big", objstore.PutOptions{ContentType: "app/x"})
	if err != nil {
		t.Fatal(err)
	}
	var whole []byte
	var parts []objstore.CompletePart
	for n := 1; n <= 3; n++ {
		p := data(90<<10+n, uint64(n))
		whole = append(whole, p...)
		info, err := s.PutPart(ctx, "bkt", "big", id, n, bytes.NewReader(p), int64(len(p)), objstore.PartOptions{})
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, objstore.CompletePart{Number: n, ETag: info.ETag})
	}
	if _, err := read(t, s, "bkt", "big", objstore.GetOptions{}); !errors.Is(err, objstore.ErrNoSuchKey) {
		t.Fatalf("an incomplete upload is visible: %v", err)
	}
	ups, _, err := s.ListMultipartUploads(ctx, "bkt", objstore.ListUploadsOptions{})
	if err != nil || len(ups) != 1 || ups[0].UploadID != id {
		t.Fatalf("uploads %+v %v", ups, err)
	}
	if _, err := s.CompleteMultipartUpload(ctx, "bkt", "big", id, []objstore.CompletePart{parts[1], parts[0]}, objstore.PutOptions{}); !errors.Is(err, objstore.ErrInvalidPartOrder) {
		t.Fatalf("complete out of order: %v", err)
	}
	info, err := s.CompleteMultipartUpload(ctx, "bkt", "big", id, parts, objstore.PutOptions{})
	if err != nil || !strings.HasSuffix(info.ETag, "-3") || info.Size != int64(len(whole)) {
		t.Fatalf("complete: %+v %v", info, err)
	}
	mustRead(t, s, "bkt", "big", whole)
	// An aborted upload leaves nothing.
	id2, err := s.CreateMultipartUpload(ctx, "bkt", "gone", objstore.PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutPart(ctx, "bkt", "gone", id2, 1, bytes.NewReader([]byte("p")), 1, objstore.PartOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := s.AbortMultipartUpload(ctx, "bkt", "gone", id2); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutPart(ctx, "bkt", "gone", id2, 2, bytes.NewReader([]byte("p")), 1, objstore.PartOptions{}); !errors.Is(err, objstore.ErrNoSuchUpload) {
		t.Fatalf("part of an aborted upload: %v", err)
	}
	if _, err := s.Clean(ctx); err != nil {
		t.Fatal(err)
	}
}

func testReaderSurvivesOverwrite(t *testing.T, s *objstore.Store) {
	ctx := context.Background()
	bucket(t, s, "bkt")
	old := data(200<<10, 5)
	put(t, s, "bkt", "k", old, objstore.PutOptions{})
	r, err := s.Open(ctx, "bkt", "k", objstore.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	put(t, s, "bkt", "k", []byte("new"), objstore.PutOptions{})
	if _, err := s.Delete(ctx, "bkt", "k", objstore.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Clean(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(r)
	if err != nil || !bytes.Equal(got, old) {
		t.Fatalf("a reader open across an overwrite, a delete and a clean read %d bytes, %v", len(got), err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Clean(ctx); err != nil || n == 0 {
		t.Fatalf("clean after the reader closed: %d %v", n, err)
	}
}

func testConcurrentWriters(t *testing.T, s *objstore.Store) {
	bucket(t, s, "bkt")
	const writers, each = 6, 10
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				body := data(500+i*9000, uint64(w*100+i))
				key := fmt.Sprintf("w%d/%d", w, i%4) // overwrites too
				if _, err := s.Put(context.Background(), "bkt", key, bytes.NewReader(body), int64(len(body)), objstore.PutOptions{}); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if got := Keys(t, s, "bkt", objstore.ListOptions{}); len(got) != writers*4 {
		t.Fatalf("%d keys, want %d", len(got), writers*4)
	}
	for w := 0; w < writers; w++ {
		mustRead(t, s, "bkt", fmt.Sprintf("w%d/%d", w, 1), data(500+9*9000, uint64(w*100+9)))
	}
}

func testWatch(t *testing.T, s *objstore.Store) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	bucket(t, s, "bkt")
	ev := s.Watch(ctx, "bkt", "dir/")
	put(t, s, "bkt", "other", []byte("x"), objstore.PutOptions{})
	put(t, s, "bkt", "dir/a", []byte("x"), objstore.PutOptions{})
	select {
	case e := <-ev:
		if e.Key != "dir/a" {
			t.Fatalf("watch of dir/ saw %+v first", e)
		}
	case <-ctx.Done():
		t.Fatal("no event for a put under the watched prefix")
	}
}

func testRestart(t *testing.T, e Engine) {
	idx := e.Index(t)
	reopen := Reopener(t, idx)
	opt := options(t, e, idx)
	s := Open(t, opt)
	bucket(t, s, "bkt")
	body := data(180<<10, 9)
	put(t, s, "bkt", "k", body, objstore.PutOptions{})
	put(t, s, "bkt", "small", []byte("packed"), objstore.PutOptions{})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	opt.Index = reopen()
	s = Open(t, opt)
	mustRead(t, s, "bkt", "k", body)
	mustRead(t, s, "bkt", "small", []byte("packed"))
}
