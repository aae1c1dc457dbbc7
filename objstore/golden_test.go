package objstore_test

// TestGoldenDataDir pins the on-disk format of a whole data directory:
// testdata/datadir-v1.tar.gz is a small data directory (the bbolt index
// and 4 drives with parity 2) written by the store as it was when the
// archive was made. The test unpacks it into a temporary directory, runs
// fsck on the untouched copy, opens the store on it read-write, reads
// every object and version back byte for byte against contents the test
// makes from a seeded generator (not from the archive), finishes the
// pending multipart upload, frees the garbage, writes, and runs fsck
// again: both reports must be clean. A change of the shard, pack, drive
// or index format that the readers of today's code do not accept fails
// here, even when its writer changed along with the reader.
//
// go test ./objstore -run TestGoldenDataDir -update writes a new archive
// with the code of the day (the same scenario, goldenScenario). Doing so
// means data directories written before would no longer open or read the
// same: that is an on-disk format change, which needs a migration (or a
// reader that keeps accepting the old form), not just a new archive. The
// archive is not byte-reproducible (data ids and the drive set id are
// random), so regenerate it only for such a change.
//
// What the archive holds (bucket "plain", unversioned): a packed small
// object with content type and user metadata, a 3-block object in shard
// files (block size 4 KiB), a server-side copy of it (shared data, two
// references), a completed 3-part multipart object, a renamed key, an
// overwritten key whose old data is garbage not yet cleaned, and an
// incomplete multipart upload of 2 parts; (bucket "versioned", versioning
// enabled) a key with two versions under a delete marker and a key with
// two versions.

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairnstore/cairn/objstore"
	"github.com/cairnstore/cairn/objstore/meta"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

const goldenArchive = "testdata/datadir-v1.tar.gz"

// goldenOptions is the store configuration of the archive, and
// openGolden and fsckGolden the one place that knows how a store is
// opened on a data directory (its bbolt index opened by the caller, as
// cmd/ does): adapt them when Open's options change.
func goldenOptions(dir string) objstore.Options {
	return objstore.Options{
		Dir:          dir,
		DriveCount:   4,
		Parity:       2,
		BlockSize:    4096,
		PackMaxSize:  1024,
		MinPartSize:  4096,
		NoBackground: true,
	}
}

// goldenIndex opens dir's bbolt index; the store or fsck given it closes
// it.
func goldenIndex(t *testing.T, dir string) *meta.Bolt {
	t.Helper()
	idx, err := meta.OpenBolt(meta.BoltPath(dir), 5*time.Second)
	if err != nil {
		t.Fatalf("open the golden index: %v", err)
	}
	return idx
}

func openGolden(t *testing.T, dir string) *objstore.Store {
	t.Helper()
	opt := goldenOptions(dir)
	opt.Index = goldenIndex(t, dir)
	st, err := objstore.Open(context.Background(), opt)
	if err != nil {
		_ = opt.Index.Close()
		t.Fatalf("open the store on the golden data directory: %v", err)
	}
	return st
}

func fsckGolden(t *testing.T, dir string) objstore.FsckReport {
	t.Helper()
	opt := goldenOptions(dir)
	opt.Index = goldenIndex(t, dir)
	rep, err := objstore.Fsck(context.Background(), opt, nil)
	if err != nil {
		t.Fatalf("fsck: %v", err)
	}
	return rep
}

// content is the deterministic body named name: size bytes from a PRNG
// seeded by the name.
func content(name string, size int) []byte {
	h := fnv.New64a()
	_, _ = h.Write([]byte(name))
	r := rand.New(rand.NewPCG(h.Sum64(), uint64(size)))
	b := make([]byte, size)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func md5hex(b []byte) string { s := md5.Sum(b); return hex.EncodeToString(s[:]) }

// multipartETag is the S3 multipart ETag of parts: md5 of the part md5s,
// "-N".
func multipartETag(parts ...[]byte) string {
	var sums []byte
	for _, p := range parts {
		s := md5.Sum(p)
		sums = append(sums, s[:]...)
	}
	return fmt.Sprintf("%s-%d", md5hex(sums), len(parts))
}

// The scenario's sizes, shared by the generator and the checks.
var (
	smallBody   = func() []byte { return content("small.txt", 100) }
	largeBody   = func() []byte { return content("dir/large.bin", 3*4096-100) }
	renamedBody = func() []byte { return content("old/name.txt", 2000) }
	overV1      = func() []byte { return content("overwritten#1", 1500) }
	overV2      = func() []byte { return content("overwritten#2", 3000) }
	mpParts     = func() [][]byte {
		return [][]byte{content("multi/upload.bin#1", 5000), content("multi/upload.bin#2", 5000), content("multi/upload.bin#3", 1234)}
	}
	pendingParts = func() [][]byte {
		return [][]byte{content("multi/pending.bin#1", 4096), content("multi/pending.bin#2", 700)}
	}
	docV1  = func() []byte { return content("doc.txt#1", 500) }
	docV2  = func() []byte { return content("doc.txt#2", 6000) }
	keepV1 = func() []byte { return content("keep.txt#1", 50) }
	keepV2 = func() []byte { return content("keep.txt#2", 60) }
)

var smallMeta = map[string]string{"x-amz-meta-color": "blue", "x-amz-meta-owner": "ana"}

// goldenScenario writes the archive's contents into an open, empty store.
func goldenScenario(t *testing.T, st *objstore.Store) {
	t.Helper()
	ctx := context.Background()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	put := func(bucket, key string, body []byte, opt objstore.PutOptions) {
		t.Helper()
		_, err := st.Put(ctx, bucket, key, bytes.NewReader(body), int64(len(body)), opt)
		must(err)
	}
	must(st.CreateBucket(ctx, "plain", objstore.BucketOptions{}))
	put("plain", "small.txt", smallBody(), objstore.PutOptions{ContentType: "text/plain", Meta: smallMeta})
	put("plain", "dir/large.bin", largeBody(), objstore.PutOptions{})
	_, err := st.Copy(ctx, "plain", "dir/large.bin", "plain", "copy.bin", objstore.CopyOptions{})
	must(err)
	put("plain", "old/name.txt", renamedBody(), objstore.PutOptions{})
	must(st.Rename(ctx, "plain", "old/name.txt", "new/name.txt", objstore.RenameOptions{}))
	put("plain", "overwritten", overV1(), objstore.PutOptions{})
	put("plain", "overwritten", overV2(), objstore.PutOptions{})
	upload := func(key string, parts [][]byte, complete bool) {
		t.Helper()
		id, err := st.CreateMultipartUpload(ctx, "plain", key, objstore.PutOptions{ContentType: "application/octet-stream"})
		must(err)
		var cps []objstore.CompletePart
		for i, p := range parts {
			pi, err := st.PutPart(ctx, "plain", key, id, i+1, bytes.NewReader(p), int64(len(p)), objstore.PartOptions{})
			must(err)
			cps = append(cps, objstore.CompletePart{Number: i + 1, ETag: pi.ETag})
		}
		if complete {
			_, err := st.CompleteMultipartUpload(ctx, "plain", key, id, cps, objstore.PutOptions{})
			must(err)
		}
	}
	upload("multi/upload.bin", mpParts(), true)
	upload("multi/pending.bin", pendingParts(), false)

	must(st.CreateBucket(ctx, "versioned", objstore.BucketOptions{}))
	must(st.SetVersioning(ctx, "versioned", objstore.VersioningEnabled))
	put("versioned", "doc.txt", docV1(), objstore.PutOptions{})
	put("versioned", "doc.txt", docV2(), objstore.PutOptions{})
	_, err = st.Delete(ctx, "versioned", "doc.txt", objstore.DeleteOptions{})
	must(err)
	put("versioned", "keep.txt", keepV1(), objstore.PutOptions{})
	put("versioned", "keep.txt", keepV2(), objstore.PutOptions{})
}

func TestGoldenDataDir(t *testing.T) {
	if *update {
		writeGoldenArchive(t)
	}
	dir := t.TempDir()
	unpack(t, goldenArchive, dir)

	// fsck first, on the copy exactly as committed: Open sweeps files no
	// committed write references, which would hide orphans.
	if rep := fsckGolden(t, dir); !rep.Clean() || rep.Versions == 0 {
		t.Fatalf("fsck of the committed data directory: %+v", rep)
	}

	ctx := context.Background()
	st := openGolden(t, dir)
	defer func() { _ = st.Close() }()
	checkBuckets(t, st)
	checkPlain(t, st)
	checkVersioned(t, st)
	checkPendingUpload(t, st)

	// The committed index takes writes: free the overwritten data, put.
	if n, err := st.Clean(ctx); err != nil || n != 1 {
		t.Fatalf("Clean = %d, %v; want the overwritten version's data freed", n, err)
	}
	fresh := content("fresh", 5000)
	if _, err := st.Put(ctx, "versioned", "fresh", bytes.NewReader(fresh), int64(len(fresh)), objstore.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	mustRead(t, st, "versioned", "fresh", "", fresh)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if rep := fsckGolden(t, dir); !rep.Clean() {
		t.Fatalf("fsck after use: %+v", rep)
	}
}

func checkBuckets(t *testing.T, st *objstore.Store) {
	t.Helper()
	bs, err := st.ListBuckets(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, b := range bs {
		got = append(got, b.Name+":"+b.Versioning)
	}
	if want := []string{"plain:", "versioned:Enabled"}; !slices.Equal(got, want) {
		t.Fatalf("buckets %q, want %q", got, want)
	}
}

// mustRead opens bucket/key (at version vid, "" for the current one) and
// checks its bytes, and returns its info.
func mustRead(t *testing.T, st *objstore.Store, bucket, key, vid string, want []byte) objstore.ObjectInfo {
	t.Helper()
	r, err := st.Open(context.Background(), bucket, key, objstore.GetOptions{VersionID: vid})
	if err != nil {
		t.Fatalf("open %s/%s@%q: %v", bucket, key, vid, err)
	}
	defer func() { _ = r.Close() }()
	got, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("read %s/%s@%q: %v", bucket, key, vid, err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s/%s@%q: %d bytes that differ from the %d expected", bucket, key, vid, len(got), len(want))
	}
	// A range from the middle, across a block boundary when there is one.
	if len(want) > 10 {
		off := int64(len(want) / 3)
		buf := make([]byte, len(want)/2)
		if n, err := r.ReadAt(buf, off); n != len(buf) || (err != nil && !errors.Is(err, io.EOF)) || !bytes.Equal(buf, want[off:off+int64(len(buf))]) {
			t.Fatalf("%s/%s@%q: ReadAt(%d, %d) = %d, %v", bucket, key, vid, len(buf), off, n, err)
		}
	}
	return r.Info()
}

func checkPlain(t *testing.T, st *objstore.Store) {
	t.Helper()
	parts := mpParts()
	want := []struct {
		key   string
		body  []byte
		etag  string
		ctype string
		meta  map[string]string
		parts int
	}{
		{"copy.bin", largeBody(), md5hex(largeBody()), "", nil, 0},
		{"dir/large.bin", largeBody(), md5hex(largeBody()), "", nil, 0},
		{"multi/upload.bin", bytes.Join(parts, nil), multipartETag(parts...), "application/octet-stream", nil, 3},
		{"new/name.txt", renamedBody(), md5hex(renamedBody()), "", nil, 0},
		{"overwritten", overV2(), md5hex(overV2()), "", nil, 0},
		{"small.txt", smallBody(), md5hex(smallBody()), "text/plain", smallMeta, 0},
	}
	page, err := st.List(context.Background(), "plain", objstore.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Objects) != len(want) || page.IsTruncated {
		var keys []string
		for _, o := range page.Objects {
			keys = append(keys, o.Key)
		}
		t.Fatalf("plain lists %q, want %d keys", keys, len(want))
	}
	for i, w := range want {
		o := page.Objects[i]
		if o.Key != w.key || o.Size != int64(len(w.body)) || o.ETag != w.etag {
			t.Fatalf("listed %s size %d etag %s, want %s %d %s", o.Key, o.Size, o.ETag, w.key, len(w.body), w.etag)
		}
		info := mustRead(t, st, "plain", w.key, "", w.body)
		if info.ETag != w.etag || info.ContentType != w.ctype || info.PartsCount != w.parts || info.VersionID != objstore.NullVersion {
			t.Fatalf("%s: etag %s ctype %q parts %d version %s", w.key, info.ETag, info.ContentType, info.PartsCount, info.VersionID)
		}
		for k, v := range w.meta {
			if info.Meta[k] != v {
				t.Fatalf("%s: meta %v, want %v among them", w.key, info.Meta, w.meta)
			}
		}
	}
	if sizes := mustInfo(t, st, "multi/upload.bin").PartSizes; !slices.Equal(sizes, []int64{5000, 5000, 1234}) {
		t.Fatalf("part sizes %v", sizes)
	}
	if _, err := st.Head(context.Background(), "plain", "old/name.txt", objstore.GetOptions{}); !errors.Is(err, objstore.ErrNoSuchKey) {
		t.Fatalf("the rename's source: %v, want ErrNoSuchKey", err)
	}
}

func mustInfo(t *testing.T, st *objstore.Store, key string) objstore.ObjectInfo {
	t.Helper()
	info, err := st.Head(context.Background(), "plain", key, objstore.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return info
}

func checkVersioned(t *testing.T, st *objstore.Store) {
	t.Helper()
	ctx := context.Background()
	page, err := st.ListVersions(ctx, "versioned", objstore.ListVersionsOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		key    string
		body   []byte // nil: a delete marker
		latest bool
	}{
		{"doc.txt", nil, true},
		{"doc.txt", docV2(), false},
		{"doc.txt", docV1(), false},
		{"keep.txt", keepV2(), true},
		{"keep.txt", keepV1(), false},
	}
	if len(page.Versions) != len(want) || page.IsTruncated {
		t.Fatalf("versioned lists %d versions (truncated %v), want %d", len(page.Versions), page.IsTruncated, len(want))
	}
	seen := map[string]bool{}
	for i, w := range want {
		v := page.Versions[i]
		if v.Key != w.key || v.DeleteMarker != (w.body == nil) || v.IsLatest != w.latest || v.VersionID == objstore.NullVersion || seen[v.VersionID] {
			t.Fatalf("version %d: %s id %s marker %v latest %v", i, v.Key, v.VersionID, v.DeleteMarker, v.IsLatest)
		}
		seen[v.VersionID] = true
		if w.body != nil {
			if v.Size != int64(len(w.body)) || v.ETag != md5hex(w.body) {
				t.Fatalf("version %d of %s: size %d etag %s", i, v.Key, v.Size, v.ETag)
			}
			mustRead(t, st, "versioned", w.key, v.VersionID, w.body)
		}
	}
	if _, err := st.Open(ctx, "versioned", "doc.txt", objstore.GetOptions{}); !errors.Is(err, objstore.ErrNoSuchKey) {
		t.Fatalf("current doc.txt behind its delete marker: %v, want ErrNoSuchKey", err)
	}
	mustRead(t, st, "versioned", "keep.txt", "", keepV2())
}

func checkPendingUpload(t *testing.T, st *objstore.Store) {
	t.Helper()
	ctx := context.Background()
	ups, truncated, err := st.ListMultipartUploads(ctx, "plain", objstore.ListUploadsOptions{})
	if err != nil || truncated || len(ups) != 1 || ups[0].Key != "multi/pending.bin" {
		t.Fatalf("uploads %+v truncated %v: %v", ups, truncated, err)
	}
	parts, truncated, err := st.ListParts(ctx, "plain", "multi/pending.bin", ups[0].UploadID, 0, 0)
	if err != nil || truncated || len(parts) != 2 {
		t.Fatalf("parts %+v truncated %v: %v", parts, truncated, err)
	}
	body := pendingParts()
	var cps []objstore.CompletePart
	for i, p := range parts {
		if p.Number != i+1 || p.Size != int64(len(body[i])) || p.ETag != md5hex(body[i]) {
			t.Fatalf("part %d: %+v", i+1, p)
		}
		cps = append(cps, objstore.CompletePart{Number: p.Number, ETag: p.ETag})
	}
	info, err := st.CompleteMultipartUpload(ctx, "plain", "multi/pending.bin", ups[0].UploadID, cps, objstore.PutOptions{})
	if err != nil || info.ETag != multipartETag(body...) {
		t.Fatalf("complete the committed upload: %+v, %v", info, err)
	}
	mustRead(t, st, "plain", "multi/pending.bin", "", bytes.Join(body, nil))
}

// writeGoldenArchive runs the scenario on a fresh data directory and
// archives its files.
func writeGoldenArchive(t *testing.T) {
	t.Helper()
	dir := t.TempDir()
	st := openGolden(t, dir)
	goldenScenario(t, st)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if rep := fsckGolden(t, dir); !rep.Clean() {
		t.Fatalf("fsck of the new data directory: %+v", rep)
	}
	var buf bytes.Buffer
	if err := pack(dir, &buf); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(goldenArchive), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(goldenArchive, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s: %d bytes", goldenArchive, buf.Len())
}

// pack writes the regular files under dir, in path order, as a gzipped
// tar with fixed modes and times. Directories are left out: the store
// makes its empty ones at open.
func pack(dir string, w io.Writer) error {
	files := map[string]fs.FileInfo{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		info, err := d.Info()
		files[filepath.ToSlash(rel)] = info
		return err
	})
	if err != nil {
		return err
	}
	zw, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(zw)
	for _, name := range slices.Sorted(maps.Keys(files)) {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg, Format: tar.FormatPAX}); err != nil {
			return err
		}
		if _, err := tw.Write(data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return zw.Close()
}

// unpack extracts a pack archive into dir.
func unpack(t *testing.T, archive, dir string) {
	t.Helper()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	defer func() { _ = f.Close() }()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	n := 0
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag != tar.TypeReg || !filepath.IsLocal(h.Name) || strings.Contains(h.Name, "\\") {
			t.Fatalf("%s: unexpected entry %q (type %c)", archive, h.Name, h.Typeflag)
		}
		p := filepath.Join(dir, filepath.FromSlash(h.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		out, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(out, tr); err != nil {
			t.Fatal(err)
		}
		if err := out.Close(); err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n == 0 {
		t.Fatalf("%s holds no files", archive)
	}
}
