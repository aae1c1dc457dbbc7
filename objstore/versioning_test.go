package objstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
)

// shardFileCount counts the shard files on every drive of a store opened
// by newTestStore (opt.Dir/drives/*/data/*/*).
func shardFileCount(t testing.TB, opt Options) int {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(opt.Dir, "drives", "*", "data", "*", "*"))
	if err != nil {
		t.Fatal(err)
	}
	return len(m)
}

// mustClean runs the cleaner by hand (the test store has no background).
func mustClean(t testing.TB, s *Store) {
	t.Helper()
	if _, err := s.Clean(context.Background()); err != nil {
		t.Fatalf("clean: %v", err)
	}
}

// putParallel puts keys[i] with body(i) from a few goroutines, so that
// their commits share group commits.
func putParallel(t testing.TB, s *Store, bucket string, keys []string, body func(i int) []byte) {
	t.Helper()
	const workers = 16
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(keys); i += workers {
				b := body(i)
				if _, err := s.Put(context.Background(), bucket, keys[i], bytes.NewReader(b), int64(len(b)), PutOptions{}); err != nil {
					errs <- fmt.Errorf("put %s: %w", keys[i], err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// allVersions lists every version of the bucket in one page.
func allVersions(t testing.TB, s *Store, bucket string) []ObjectInfo {
	t.Helper()
	p, err := s.ListVersions(context.Background(), bucket, ListVersionsOptions{MaxKeys: 100000})
	if err != nil {
		t.Fatalf("list versions: %v", err)
	}
	if p.IsTruncated {
		t.Fatal("list versions: truncated")
	}
	return p.Versions
}

func mustHead(t testing.TB, s *Store, bucket, key string, opt GetOptions) ObjectInfo {
	t.Helper()
	info, err := s.Head(context.Background(), bucket, key, opt)
	if err != nil {
		t.Fatalf("head %s %q: %v", key, opt.VersionID, err)
	}
	return info
}

func TestVersioningEnabledKeepsVersions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := newTestStore(t, 4, 2)
	mustBucket(t, s, "ver")
	if err := s.SetVersioning(ctx, "ver", VersioningEnabled); err != nil {
		t.Fatal(err)
	}
	bodies := [][]byte{[]byte("one"), randBytes(70<<10, 2), {}}
	var infos []ObjectInfo
	for _, b := range bodies {
		info := mustPut(t, s, "ver", "k", b)
		if info.VersionID == "" || info.VersionID == NullVersion {
			t.Fatalf("versioned put got version id %q", info.VersionID)
		}
		infos = append(infos, info)
	}
	seen := map[string]bool{}
	for i, info := range infos {
		if seen[info.VersionID] {
			t.Fatalf("version id %s reused", info.VersionID)
		}
		seen[info.VersionID] = true
		if got := readAll(t, s, "ver", "k", GetOptions{VersionID: info.VersionID}); !bytes.Equal(got, bodies[i]) {
			t.Errorf("version %d (%s): content differs", i, info.VersionID)
		}
		h := mustHead(t, s, "ver", "k", GetOptions{VersionID: info.VersionID})
		if h.ETag != info.ETag || h.IsLatest != (i == len(infos)-1) {
			t.Errorf("head version %d: %+v, want ETag %s latest %v", i, h, info.ETag, i == len(infos)-1)
		}
	}
	if h := mustHead(t, s, "ver", "k", GetOptions{}); h.VersionID != infos[2].VersionID {
		t.Fatalf("current is %s, want %s", h.VersionID, infos[2].VersionID)
	}

	// Delete makes a delete marker.
	res, err := s.Delete(ctx, "ver", "k", DeleteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.DeleteMarker || res.VersionID == "" || res.VersionID == NullVersion {
		t.Fatalf("delete result %+v, want a delete marker with a version id", res)
	}
	if _, err := s.Head(ctx, "ver", "k", GetOptions{}); !errors.Is(err, ErrNoSuchKey) {
		t.Fatalf("head after delete: %v, want ErrNoSuchKey", err)
	}
	if _, err := s.Open(ctx, "ver", "k", GetOptions{}); !errors.Is(err, ErrNoSuchKey) {
		t.Fatalf("open after delete: %v, want ErrNoSuchKey", err)
	}
	if h, err := s.Head(ctx, "ver", "k", GetOptions{VersionID: res.VersionID}); !errors.Is(err, ErrDeleteMarker) || !h.DeleteMarker {
		t.Fatalf("head of the marker by id: %+v %v, want DeleteMarker and ErrDeleteMarker", h, err)
	}
	page, err := s.List(ctx, "ver", ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Objects) != 0 {
		t.Fatalf("list shows %+v after delete", page.Objects)
	}
	vs := allVersions(t, s, "ver")
	if len(vs) != 4 {
		t.Fatalf("%d versions, want 3 + marker: %+v", len(vs), vs)
	}
	if !vs[0].DeleteMarker || !vs[0].IsLatest || vs[0].VersionID != res.VersionID {
		t.Fatalf("first version %+v, want the latest delete marker %s", vs[0], res.VersionID)
	}
	for i, v := range vs[1:] {
		want := infos[len(infos)-1-i]
		if v.IsLatest || v.DeleteMarker || v.VersionID != want.VersionID || v.ETag != want.ETag {
			t.Errorf("version %d: %+v, want %s (not latest)", i+1, v, want.VersionID)
		}
	}
	// Older versions stay readable.
	if got := readAll(t, s, "ver", "k", GetOptions{VersionID: infos[0].VersionID}); string(got) != "one" {
		t.Fatalf("old version after delete: %q", got)
	}

	// Deleting the marker by version id restores the previous version.
	res2, err := s.Delete(ctx, "ver", "k", DeleteOptions{VersionID: res.VersionID})
	if err != nil {
		t.Fatal(err)
	}
	if !res2.DeleteMarker || res2.VersionID != res.VersionID {
		t.Fatalf("delete marker by id: %+v", res2)
	}
	if h := mustHead(t, s, "ver", "k", GetOptions{}); h.VersionID != infos[2].VersionID || !h.IsLatest {
		t.Fatalf("after removing the marker current is %+v, want %s", h, infos[2].VersionID)
	}

	// Deleting a non-current version by id removes only it.
	if _, err := s.Delete(ctx, "ver", "k", DeleteOptions{VersionID: infos[1].VersionID}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Head(ctx, "ver", "k", GetOptions{VersionID: infos[1].VersionID}); !errors.Is(err, ErrNoSuchVersion) {
		t.Fatalf("head of removed version: %v, want ErrNoSuchVersion", err)
	}
	if _, err := s.Delete(ctx, "ver", "k", DeleteOptions{VersionID: infos[1].VersionID}); !errors.Is(err, ErrNoSuchVersion) {
		t.Fatalf("delete of removed version: %v, want ErrNoSuchVersion", err)
	}
	for _, bad := range []string{"nope", NullVersion, "ffffffffffffffff", "FFFFFFFFFFFFFFFF"} {
		if _, err := s.Head(ctx, "ver", "k", GetOptions{VersionID: bad}); !errors.Is(err, ErrNoSuchVersion) {
			t.Errorf("head version %q: %v, want ErrNoSuchVersion", bad, err)
		}
	}
	if got := len(allVersions(t, s, "ver")); got != 2 {
		t.Fatalf("%d versions left, want 2", got)
	}
}

func TestVersioningSuspendedNullVersion(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, opt := newTestStore(t, 4, 2)
	mustBucket(t, s, "sus")
	if err := s.SetVersioning(ctx, "sus", VersioningEnabled); err != nil {
		t.Fatal(err)
	}
	a := mustPut(t, s, "sus", "k", randBytes(1000, 1))
	if err := s.SetVersioning(ctx, "sus", VersioningSuspended); err != nil {
		t.Fatal(err)
	}
	if bi, err := s.HeadBucket(ctx, "sus"); err != nil || bi.Versioning != VersioningSuspended {
		t.Fatalf("head bucket: %+v %v", bi, err)
	}
	base := shardFileCount(t, opt)
	b := mustPut(t, s, "sus", "k", randBytes(1000, 2))
	if b.VersionID != NullVersion {
		t.Fatalf("suspended put got version %q, want null", b.VersionID)
	}
	withB := shardFileCount(t, opt)
	cData := randBytes(1000, 3)
	c := mustPut(t, s, "sus", "k", cData)
	if c.VersionID != NullVersion {
		t.Fatalf("suspended put got version %q, want null", c.VersionID)
	}
	vs := allVersions(t, s, "sus")
	if len(vs) != 2 || vs[0].VersionID != NullVersion || vs[0].ETag != c.ETag || vs[1].VersionID != a.VersionID {
		t.Fatalf("versions %+v, want [null(c), %s]", vs, a.VersionID)
	}
	if got := readAll(t, s, "sus", "k", GetOptions{VersionID: NullVersion}); !bytes.Equal(got, cData) {
		t.Fatal("null version is not the last write")
	}
	mustClean(t, s)
	if got := shardFileCount(t, opt); got != withB {
		t.Fatalf("after replacing the null version and Clean: %d shard files, want %d", got, withB)
	}
	if withB <= base {
		t.Fatalf("a put wrote no shard files (%d -> %d)", base, withB)
	}

	// A delete while suspended makes a null delete marker replacing the
	// null version; the versioned one survives.
	res, err := s.Delete(ctx, "sus", "k", DeleteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.DeleteMarker || res.VersionID != NullVersion {
		t.Fatalf("suspended delete: %+v, want a null delete marker", res)
	}
	vs = allVersions(t, s, "sus")
	if len(vs) != 2 || !vs[0].DeleteMarker || vs[0].VersionID != NullVersion || vs[1].VersionID != a.VersionID {
		t.Fatalf("versions after delete %+v", vs)
	}
	mustClean(t, s)
	if got := shardFileCount(t, opt); got != base {
		t.Fatalf("after the null delete marker and Clean: %d shard files, want %d", got, base)
	}
	if got := readAll(t, s, "sus", "k", GetOptions{VersionID: a.VersionID}); !bytes.Equal(got, randBytes(1000, 1)) {
		t.Fatal("versioned version lost")
	}
}

func TestUnversionedOverwriteReleasesData(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, opt := newTestStore(t, 4, 2)
	mustBucket(t, s, "plain")
	if n := shardFileCount(t, opt); n != 0 {
		t.Fatalf("new store has %d shard files", n)
	}
	first := mustPut(t, s, "plain", "k", randBytes(300<<10, 1))
	if first.VersionID != NullVersion {
		t.Fatalf("unversioned put got version %q", first.VersionID)
	}
	one := shardFileCount(t, opt)
	if one != 4 {
		t.Fatalf("one object on 4 drives: %d shard files", one)
	}
	for i := range 3 {
		data := randBytes(300<<10, uint64(10+i))
		mustPut(t, s, "plain", "k", data)
		if got := readAll(t, s, "plain", "k", GetOptions{}); !bytes.Equal(got, data) {
			t.Fatalf("overwrite %d: content differs", i)
		}
	}
	if vs := allVersions(t, s, "plain"); len(vs) != 1 || vs[0].VersionID != NullVersion {
		t.Fatalf("unversioned key has versions %+v", vs)
	}
	mustClean(t, s)
	if got := shardFileCount(t, opt); got != one {
		t.Fatalf("after overwrites and Clean: %d shard files, want %d", got, one)
	}
	if _, err := s.Delete(ctx, "plain", "k", DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	mustClean(t, s)
	if got := shardFileCount(t, opt); got != 0 {
		t.Fatalf("after delete and Clean: %d shard files, want 0", got)
	}
	if vs := allVersions(t, s, "plain"); len(vs) != 0 {
		t.Fatalf("unversioned delete left versions %+v", vs)
	}
}

type verRef struct{ key, vid string }

func TestListVersionsPaging(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := newTestStore(t, 4, 2)
	mustBucket(t, s, "pages")
	if err := s.SetVersioning(ctx, "pages", VersioningEnabled); err != nil {
		t.Fatal(err)
	}
	// Keys with 1..4 versions, some ending in a delete marker, some under
	// a "dir/" to exercise the delimiter.
	keys := []string{"a", "b", "dir/x", "dir/y", "e", "é", "z/1"}
	for i, k := range keys {
		for j := 0; j <= i%4; j++ {
			mustPut(t, s, "pages", k, []byte(fmt.Sprintf("%s-%d", k, j)))
		}
		if i%3 == 1 {
			if _, err := s.Delete(ctx, "pages", k, DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	full := allVersions(t, s, "pages")
	latest := map[verRef]bool{}
	var want []verRef
	for i, v := range full {
		r := verRef{v.Key, v.VersionID}
		want = append(want, r)
		latest[r] = v.IsLatest
		if (i == 0 || full[i-1].Key != v.Key) != v.IsLatest {
			t.Fatalf("full listing: %s %s IsLatest %v", v.Key, v.VersionID, v.IsLatest)
		}
	}
	if len(want) < 15 {
		t.Fatalf("only %d versions", len(want))
	}

	for _, tc := range []struct {
		name  string
		opt   ListVersionsOptions
		want  []verRef
		wantP []string
	}{
		{name: "all", want: want},
		{name: "prefix dir/", opt: ListVersionsOptions{Prefix: "dir/"}, want: filterRefs(want, "dir/")},
		{name: "delimiter", opt: ListVersionsOptions{Delimiter: "/"}, want: dropRefsUnder(want, "dir/", "z/"), wantP: []string{"dir/", "z/"}},
	} {
		for _, max := range []int{1, 2, 3, 4, 7, 1000} {
			t.Run(fmt.Sprintf("%s/max%d", tc.name, max), func(t *testing.T) {
				var got []verRef
				var prefixes []string
				opt := tc.opt
				opt.MaxKeys = max
				for pages := 0; ; pages++ {
					if pages > 100 {
						t.Fatal("paging does not end")
					}
					p, err := s.ListVersions(ctx, "pages", opt)
					if err != nil {
						t.Fatal(err)
					}
					if n := len(p.Versions) + len(p.CommonPrefixes); n > max || (p.IsTruncated && n == 0) {
						t.Fatalf("page of %d entries with MaxKeys %d (truncated %v)", n, max, p.IsTruncated)
					}
					for _, v := range p.Versions {
						r := verRef{v.Key, v.VersionID}
						if v.IsLatest != latest[r] {
							t.Errorf("%v: IsLatest %v, full listing says %v", r, v.IsLatest, latest[r])
						}
						got = append(got, r)
					}
					prefixes = append(prefixes, p.CommonPrefixes...)
					if !p.IsTruncated {
						if p.NextKeyMarker != "" || p.NextVersionIDMarker != "" {
							t.Errorf("last page has next markers %q %q", p.NextKeyMarker, p.NextVersionIDMarker)
						}
						break
					}
					opt.KeyMarker, opt.VersionIDMarker = p.NextKeyMarker, p.NextVersionIDMarker
				}
				if fmt.Sprint(got) != fmt.Sprint(tc.want) {
					t.Errorf("versions:\n got %v\nwant %v", got, tc.want)
				}
				if fmt.Sprint(prefixes) != fmt.Sprint(tc.wantP) {
					t.Errorf("common prefixes %q, want %q", prefixes, tc.wantP)
				}
			})
		}
	}

	// Marker errors.
	if _, err := s.ListVersions(ctx, "pages", ListVersionsOptions{VersionIDMarker: full[0].VersionID}); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("version-id marker without key marker: %v, want ErrInvalidArgument", err)
	}
	if _, err := s.ListVersions(ctx, "pages", ListVersionsOptions{MaxKeys: -1}); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("negative MaxKeys: %v, want ErrInvalidArgument", err)
	}
	if _, err := s.ListVersions(ctx, "nope", ListVersionsOptions{}); !errors.Is(err, ErrNoSuchBucket) {
		t.Errorf("missing bucket: %v, want ErrNoSuchBucket", err)
	}
}

func filterRefs(rs []verRef, prefix string) []verRef {
	var out []verRef
	for _, r := range rs {
		if len(r.key) >= len(prefix) && r.key[:len(prefix)] == prefix {
			out = append(out, r)
		}
	}
	return out
}

func dropRefsUnder(rs []verRef, prefixes ...string) []verRef {
	var out []verRef
next:
	for _, r := range rs {
		for _, p := range prefixes {
			if len(r.key) >= len(p) && r.key[:len(p)] == p {
				continue next
			}
		}
		out = append(out, r)
	}
	return out
}
