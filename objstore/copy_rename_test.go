package objstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"
	"testing"
)

func TestCopySharesData(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, opt := newTestStore(t, 4, 2)
	mustBucket(t, s, "csrc")
	mustBucket(t, s, "cdst")
	data := randBytes(1<<20, 1)
	src := mustPut(t, s, "csrc", "src", data)
	before := shardFileCount(t, opt)
	for _, dst := range []struct{ bucket, key string }{{"cdst", "copy"}, {"csrc", "copy2"}, {"csrc", "src"}} {
		info, err := s.Copy(ctx, "csrc", "src", dst.bucket, dst.key, CopyOptions{})
		if err != nil {
			t.Fatalf("copy to %v: %v", dst, err)
		}
		if info.ETag != src.ETag || info.Size != src.Size || info.Bucket != dst.bucket || info.Key != dst.key {
			t.Fatalf("copy to %v: %+v, source %+v", dst, info, src)
		}
	}
	mustClean(t, s)
	if got := shardFileCount(t, opt); got != before {
		t.Fatalf("copies changed the shard files: %d -> %d", before, got)
	}
	// Deleting the source leaves the copies whole, even after Clean.
	if _, err := s.Delete(ctx, "csrc", "src", DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	mustClean(t, s)
	for _, k := range []struct{ bucket, key string }{{"cdst", "copy"}, {"csrc", "copy2"}} {
		if got := readAll(t, s, k.bucket, k.key, GetOptions{}); !bytes.Equal(got, data) {
			t.Fatalf("%v differs after the source was deleted", k)
		}
	}
	if got := shardFileCount(t, opt); got != before {
		t.Fatalf("shared data freed or duplicated: %d -> %d", before, got)
	}
	// The last reference frees it.
	for _, k := range []struct{ bucket, key string }{{"cdst", "copy"}, {"csrc", "copy2"}} {
		if _, err := s.Delete(ctx, k.bucket, k.key, DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	mustClean(t, s)
	if got := shardFileCount(t, opt); got != 0 {
		t.Fatalf("after deleting every copy: %d shard files", got)
	}
}

func TestCopyMetadataAndConditions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := newTestStore(t, 4, 2)
	mustBucket(t, s, "cmeta")
	data := []byte("payload")
	src, err := s.Put(ctx, "cmeta", "src", bytes.NewReader(data), int64(len(data)),
		PutOptions{ContentType: "text/plain", Meta: map[string]string{"x-amz-meta-a": "1"}})
	if err != nil {
		t.Fatal(err)
	}
	other := mustPut(t, s, "cmeta", "exists", []byte("other"))
	for _, tc := range []struct {
		name     string
		dst      string
		opt      CopyOptions
		want     error
		wantType string
		wantMeta map[string]string
	}{
		{name: "copy directive", dst: "d1", wantType: "text/plain", wantMeta: map[string]string{"x-amz-meta-a": "1"}},
		{name: "replace directive", dst: "d2",
			opt:      CopyOptions{ReplaceMeta: true, ContentType: "application/json", Meta: map[string]string{"x-amz-meta-b": "2"}},
			wantType: "application/json", wantMeta: map[string]string{"x-amz-meta-b": "2"}},
		{name: "replace with nothing", dst: "d3", opt: CopyOptions{ReplaceMeta: true}},
		{name: "meta ignored without replace", dst: "d4", opt: CopyOptions{ContentType: "x/y", Meta: map[string]string{"x-amz-meta-c": "3"}},
			wantType: "text/plain", wantMeta: map[string]string{"x-amz-meta-a": "1"}},
		{name: "src if-match", dst: "d5", opt: CopyOptions{SrcIfMatch: src.ETag}, wantType: "text/plain", wantMeta: map[string]string{"x-amz-meta-a": "1"}},
		{name: "src if-match quoted", dst: "d6", opt: CopyOptions{SrcIfMatch: `"` + src.ETag + `"`}, wantType: "text/plain", wantMeta: map[string]string{"x-amz-meta-a": "1"}},
		{name: "src if-match wrong", dst: "e1", opt: CopyOptions{SrcIfMatch: other.ETag}, want: ErrPreconditionFailed},
		{name: "src if-none-match same", dst: "e2", opt: CopyOptions{SrcIfNoneMatch: src.ETag}, want: ErrPreconditionFailed},
		{name: "src if-none-match star", dst: "e3", opt: CopyOptions{SrcIfNoneMatch: "*"}, want: ErrPreconditionFailed},
		{name: "src if-none-match other", dst: "d7", opt: CopyOptions{SrcIfNoneMatch: other.ETag}, wantType: "text/plain", wantMeta: map[string]string{"x-amz-meta-a": "1"}},
		{name: "dest if-none-match on existing", dst: "exists", opt: CopyOptions{IfNoneMatch: "*"}, want: ErrPreconditionFailed},
		{name: "dest if-match wrong", dst: "exists", opt: CopyOptions{IfMatch: src.ETag}, want: ErrPreconditionFailed},
		{name: "dest if-match on missing", dst: "e4", opt: CopyOptions{IfMatch: src.ETag}, want: ErrNoSuchKey},
		{name: "dest if-none-match bad value", dst: "e5", opt: CopyOptions{IfNoneMatch: src.ETag}, want: ErrInvalidArgument},
		{name: "dest if-none-match on missing", dst: "d8", opt: CopyOptions{IfNoneMatch: "*"}, wantType: "text/plain", wantMeta: map[string]string{"x-amz-meta-a": "1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before, beforeErr := s.Head(ctx, "cmeta", tc.dst, GetOptions{})
			info, err := s.Copy(ctx, "cmeta", "src", "cmeta", tc.dst, tc.opt)
			if !errors.Is(err, tc.want) {
				t.Fatalf("copy: %v, want %v", err, tc.want)
			}
			h, herr := s.Head(ctx, "cmeta", tc.dst, GetOptions{})
			if tc.want != nil {
				if h.ETag != before.ETag || (herr == nil) != (beforeErr == nil) {
					t.Fatalf("a refused copy changed the destination: %+v %v", h, herr)
				}
				return
			}
			if herr != nil {
				t.Fatal(herr)
			}
			for _, got := range []ObjectInfo{info, h} {
				if got.ETag != src.ETag || got.Size != src.Size || got.ContentType != tc.wantType || !maps.Equal(got.Meta, tc.wantMeta) {
					t.Errorf("got %+v, want ETag %s type %q meta %v", got, src.ETag, tc.wantType, tc.wantMeta)
				}
			}
			if got := readAll(t, s, "cmeta", tc.dst, GetOptions{}); !bytes.Equal(got, data) {
				t.Errorf("content %q", got)
			}
		})
	}
	// The source is untouched by a REPLACE copy.
	if h := mustHead(t, s, "cmeta", "src", GetOptions{}); h.ContentType != "text/plain" || h.Meta["x-amz-meta-a"] != "1" {
		t.Fatalf("source changed: %+v", h)
	}
}

func TestCopyVersions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := newTestStore(t, 4, 2)
	mustBucket(t, s, "cver")
	if err := s.SetVersioning(ctx, "cver", VersioningEnabled); err != nil {
		t.Fatal(err)
	}
	v1 := mustPut(t, s, "cver", "k", []byte("first"))
	v2 := mustPut(t, s, "cver", "k", []byte("second"))
	for _, tc := range []struct {
		vid  string
		want string
	}{{v1.VersionID, "first"}, {v2.VersionID, "second"}, {"", "second"}} {
		info, err := s.Copy(ctx, "cver", "k", "cver", "c-"+tc.want, CopyOptions{SrcVersionID: tc.vid})
		if err != nil {
			t.Fatalf("copy of version %q: %v", tc.vid, err)
		}
		if info.VersionID == "" || info.VersionID == NullVersion || info.VersionID == tc.vid {
			t.Errorf("copy got version id %q", info.VersionID)
		}
		if got := readAll(t, s, "cver", "c-"+tc.want, GetOptions{}); string(got) != tc.want {
			t.Errorf("copy of version %q: %q, want %q", tc.vid, got, tc.want)
		}
	}
	del, err := s.Delete(ctx, "cver", "k", DeleteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name                 string
		srcBucket, dstBucket string
		key, vid             string
		want                 error
	}{
		{"deleted current", "cver", "cver", "k", "", ErrNoSuchKey},
		{"delete marker by id", "cver", "cver", "k", del.VersionID, ErrDeleteMarker},
		{"unknown version", "cver", "cver", "k", "ffffffffffffffff", ErrNoSuchVersion},
		{"missing key", "cver", "cver", "none", "", ErrNoSuchKey},
		{"missing source bucket", "nope", "cver", "k", v1.VersionID, ErrNoSuchBucket},
		{"missing destination bucket", "cver", "nope", "k", v1.VersionID, ErrNoSuchBucket},
	} {
		if _, err := s.Copy(ctx, tc.srcBucket, tc.key, tc.dstBucket, "dst", CopyOptions{SrcVersionID: tc.vid}); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	// The old version still copies after the delete marker.
	if _, err := s.Copy(ctx, "cver", "k", "cver", "restored", CopyOptions{SrcVersionID: v1.VersionID}); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, s, "cver", "restored", GetOptions{}); string(got) != "first" {
		t.Fatalf("restored %q", got)
	}
}

func TestRename(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, opt := newTestStore(t, 4, 2)
	mustBucket(t, s, "ren")
	data := randBytes(100<<10, 1)
	src, err := s.Put(ctx, "ren", "from", bytes.NewReader(data), int64(len(data)), PutOptions{ContentType: "a/b", Meta: map[string]string{"x-amz-meta-k": "v"}})
	if err != nil {
		t.Fatal(err)
	}
	srcHead := mustHead(t, s, "ren", "from", GetOptions{})
	before := shardFileCount(t, opt)
	if err := s.Rename(ctx, "ren", "from", "to", RenameOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Head(ctx, "ren", "from", GetOptions{}); !errors.Is(err, ErrNoSuchKey) {
		t.Fatalf("source after rename: %v, want ErrNoSuchKey", err)
	}
	h := mustHead(t, s, "ren", "to", GetOptions{})
	if h.ETag != src.ETag || h.Size != src.Size || !h.ModTime.Equal(srcHead.ModTime) || h.ContentType != "a/b" || h.Meta["x-amz-meta-k"] != "v" {
		t.Fatalf("renamed: %+v, source was %+v", h, srcHead)
	}
	if got := readAll(t, s, "ren", "to", GetOptions{}); !bytes.Equal(got, data) {
		t.Fatal("renamed content differs")
	}
	mustClean(t, s)
	if got := shardFileCount(t, opt); got != before {
		t.Fatalf("rename changed shard files: %d -> %d", before, got)
	}
	if vs := allVersions(t, s, "ren"); len(vs) != 1 || vs[0].Key != "to" {
		t.Fatalf("unversioned rename left versions %+v", vs)
	}

	// Conditions.
	mustPut(t, s, "ren", "a", []byte("a"))
	dst := mustPut(t, s, "ren", "b", []byte("b"))
	for _, tc := range []struct {
		name     string
		from, to string
		opt      RenameOptions
		want     error
	}{
		{"missing source", "none", "x", RenameOptions{}, ErrNoSuchKey},
		{"source if-match wrong", "a", "x", RenameOptions{IfMatch: dst.ETag}, ErrPreconditionFailed},
		{"if-none-match onto existing", "a", "b", RenameOptions{IfNoneMatch: "*"}, ErrPreconditionFailed},
		{"if-none-match bad value", "a", "x", RenameOptions{IfNoneMatch: "abc"}, ErrInvalidArgument},
		{"dest if-match wrong", "a", "b", RenameOptions{DestIfMatch: src.ETag}, ErrPreconditionFailed},
		{"dest if-match on missing", "a", "x", RenameOptions{DestIfMatch: dst.ETag}, ErrNoSuchKey},
		{"missing bucket", "a", "x", RenameOptions{}, ErrNoSuchBucket},
	} {
		bucket := "ren"
		if tc.name == "missing bucket" {
			bucket = "nope"
		}
		if err := s.Rename(ctx, bucket, tc.from, tc.to, tc.opt); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	if got := readAll(t, s, "ren", "a", GetOptions{}); string(got) != "a" {
		t.Fatal("refused renames moved the source")
	}
	// DestIfMatch right: replaces the destination, whose data goes.
	withB := shardFileCount(t, opt)
	if err := s.Rename(ctx, "ren", "a", "b", RenameOptions{DestIfMatch: `"` + dst.ETag + `"`}); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, s, "ren", "b", GetOptions{}); string(got) != "a" {
		t.Fatalf("b = %q after renaming a over it", got)
	}
	mustClean(t, s)
	if got := shardFileCount(t, opt); got != withB-4 {
		t.Fatalf("replaced destination not freed: %d shard files, want %d", got, withB-4)
	}
	// If-None-Match * onto a missing key works.
	if err := s.Rename(ctx, "ren", "b", "c", RenameOptions{IfNoneMatch: "*"}); err != nil {
		t.Fatal(err)
	}
	// Onto itself: nothing changes.
	if err := s.Rename(ctx, "ren", "c", "c", RenameOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, s, "ren", "c", GetOptions{}); string(got) != "a" {
		t.Fatalf("c = %q", got)
	}
}

func TestRenameVersioned(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := newTestStore(t, 4, 2)
	mustBucket(t, s, "renv")
	if err := s.SetVersioning(ctx, "renv", VersioningEnabled); err != nil {
		t.Fatal(err)
	}
	v := mustPut(t, s, "renv", "from", []byte("data"))
	if err := s.Rename(ctx, "renv", "from", "to", RenameOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Head(ctx, "renv", "from", GetOptions{}); !errors.Is(err, ErrNoSuchKey) {
		t.Fatalf("source: %v", err)
	}
	// The source keeps its history behind a delete marker.
	if got := readAll(t, s, "renv", "from", GetOptions{VersionID: v.VersionID}); string(got) != "data" {
		t.Fatalf("old version %q", got)
	}
	vs := allVersions(t, s, "renv")
	if len(vs) != 3 || !vs[0].DeleteMarker || vs[0].Key != "from" || vs[2].Key != "to" || vs[2].ETag != v.ETag {
		t.Fatalf("versions %+v", vs)
	}
}

func TestRenamePrefixErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := newTestStore(t, 4, 2)
	mustBucket(t, s, "rpe")
	putParallel(t, s, "rpe", []string{"a/1", "a/2", "a/b/1", "c/1", "ab"}, func(i int) []byte { return []byte{byte(i)} })
	for _, tc := range []struct {
		name     string
		from, to string
		opt      RenameOptions
		want     error
	}{
		{"dest inside source", "a/", "a/b/", RenameOptions{}, ErrInvalidArgument},
		{"source inside dest", "a/b/", "a/", RenameOptions{}, ErrInvalidArgument},
		{"dest extends source", "a", "ab/", RenameOptions{}, ErrInvalidArgument},
		{"if-none-match with keys under dest", "a/", "c/", RenameOptions{IfNoneMatch: "*"}, ErrPreconditionFailed},
		{"if-none-match bad value", "a/", "x/", RenameOptions{IfNoneMatch: "e"}, ErrInvalidArgument},
		{"empty source", "", "x/", RenameOptions{}, ErrInvalidKey},
		{"empty dest", "a/", "", RenameOptions{}, ErrInvalidKey},
		{"dest too long", "a/", strings.Repeat("x", MaxKeyLen), RenameOptions{}, ErrInvalidKey},
	} {
		if n, err := s.RenamePrefix(ctx, "rpe", tc.from, tc.to, tc.opt); !errors.Is(err, tc.want) || n != 0 {
			t.Errorf("%s: %d, %v, want %v", tc.name, n, err, tc.want)
		}
	}
	if _, err := s.RenamePrefix(ctx, "nope", "a/", "x/", RenameOptions{}); !errors.Is(err, ErrNoSuchBucket) {
		t.Errorf("missing bucket: %v", err)
	}
	p, err := s.List(ctx, "rpe", ListOptions{})
	if err != nil || len(p.Objects) != 5 {
		t.Fatalf("refused renames changed keys: %+v %v", pageKeys(p), err)
	}
	if n, err := s.RenamePrefix(ctx, "rpe", "none/", "x/", RenameOptions{}); n != 0 || err != nil {
		t.Errorf("rename of an empty prefix: %d %v", n, err)
	}
	// Without If-None-Match, keys under the destination are replaced.
	if n, err := s.RenamePrefix(ctx, "rpe", "a/", "c/", RenameOptions{}); n != 3 || err != nil {
		t.Fatalf("rename a/ -> c/: %d %v", n, err)
	}
	p, err = s.List(ctx, "rpe", ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(pageKeys(p)); got != "[ab c/1 c/2 c/b/1]" {
		t.Fatalf("keys after rename: %s", got)
	}
	if got := readAll(t, s, "rpe", "c/1", GetOptions{}); !bytes.Equal(got, []byte{0}) {
		t.Fatalf("c/1 = %v, want a/1's content", got)
	}
}

// RenamePrefix is one transaction: a concurrent lister sees all old names
// or all new names, never a mix.
func TestRenamePrefixAtomic(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := newTestStore(t, 4, 2)
	mustBucket(t, s, "atom")
	const n = 10000
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("old/%02d/%05d", i%100, i)
	}
	putParallel(t, s, "atom", keys, func(i int) []byte { return nil })

	stop := make(chan struct{})
	type result struct {
		before, after int
		err           error
	}
	res := make(chan result, 1)
	started := make(chan struct{})
	go func() {
		var r result
		defer func() { res <- r }()
		for i := 0; ; i++ {
			stopped := false
			select {
			case <-stop: // the rename returned: this listing is the last
				stopped = true
			default:
			}
			p, err := s.List(ctx, "atom", ListOptions{MaxKeys: 100000})
			if err != nil {
				r.err = err
				return
			}
			old, nw := 0, 0
			for _, o := range p.Objects {
				switch {
				case strings.HasPrefix(o.Key, "old/"):
					old++
				case strings.HasPrefix(o.Key, "new/"):
					nw++
				}
			}
			switch {
			case old == n && nw == 0:
				r.before++
			case old == 0 && nw == n:
				r.after++
			default:
				r.err = fmt.Errorf("listing %d saw %d old and %d new names (of %d listed)", i, old, nw, len(p.Objects))
				return
			}
			if i == 0 {
				close(started)
			}
			if stopped {
				return
			}
		}
	}()
	select {
	case <-started:
	case r := <-res:
		t.Fatalf("lister stopped before the rename: %v", r.err)
	}
	got, err := s.RenamePrefix(ctx, "atom", "old/", "new/", RenameOptions{})
	close(stop)
	r := <-res
	if err != nil {
		t.Fatal(err)
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
	if got != n {
		t.Fatalf("renamed %d keys, want %d", got, n)
	}
	if r.before == 0 || r.after == 0 {
		t.Fatalf("lister saw %d listings before and %d after", r.before, r.after)
	}
	t.Logf("%d listings before the rename, %d after", r.before, r.after)
	if h := mustHead(t, s, "atom", "new/42/04242", GetOptions{}); h.Size != 0 {
		t.Fatalf("head %+v", h)
	}
}

// RenamePrefix moves index entries only: no shard file is created or
// removed, whatever the objects' sizes.
func TestRenamePrefixMovesNoBytes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, opt := newTestStore(t, 4, 1)
	mustBucket(t, s, "size")
	var keys []string
	for i := range 100 {
		keys = append(keys, fmt.Sprintf("small/%03d", i), fmt.Sprintf("big/%03d", i))
	}
	body := func(i int) []byte {
		if strings.HasPrefix(keys[i], "big/") {
			return randBytes(1<<20, uint64(i))
		}
		return []byte{byte(i)}
	}
	putParallel(t, s, "size", keys, body)
	want := 200 * 4
	if got := shardFileCount(t, opt); got != want {
		t.Fatalf("%d shard files, want %d", got, want)
	}
	for _, p := range [][2]string{{"small/", "small2/"}, {"big/", "big2/"}} {
		n, err := s.RenamePrefix(ctx, "size", p[0], p[1], RenameOptions{})
		if err != nil || n != 100 {
			t.Fatalf("rename %s: %d %v", p[0], n, err)
		}
		if got := shardFileCount(t, opt); got != want {
			t.Fatalf("rename %s: %d shard files, want %d", p[0], got, want)
		}
	}
	mustClean(t, s)
	if got := shardFileCount(t, opt); got != want {
		t.Fatalf("rename left garbage: %d shard files after Clean, want %d", got, want)
	}
	for _, i := range []int{0, 77, 199} {
		to := strings.Replace(strings.Replace(keys[i], "small/", "small2/", 1), "big/", "big2/", 1)
		if got := readAll(t, s, "size", to, GetOptions{}); !bytes.Equal(got, body(i)) {
			t.Fatalf("%s differs after rename", to)
		}
	}
}

// Rename racing with writes to the same keys never loses or doubles data.
func TestRenameConcurrentWithPuts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := newTestStore(t, 4, 2)
	mustBucket(t, s, "race")
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 10 {
				k := fmt.Sprintf("k%d", (i+j)%4)
				b := []byte(k)
				if _, err := s.Put(ctx, "race", k, bytes.NewReader(b), int64(len(b)), PutOptions{}); err != nil {
					t.Error(err)
					return
				}
				err := s.Rename(ctx, "race", k, k+"-r", RenameOptions{})
				if err != nil && !errors.Is(err, ErrNoSuchKey) {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	mustClean(t, s)
	p, err := s.List(ctx, "race", ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range p.Objects {
		want := strings.TrimSuffix(o.Key, "-r")
		if got := readAll(t, s, "race", o.Key, GetOptions{}); string(got) != want {
			t.Errorf("%s = %q, want %q", o.Key, got, want)
		}
	}
}
