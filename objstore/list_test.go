package objstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// listKeys is the key set of the list tests: nesting, a key equal to a
// common prefix, unicode, and keys around "/" in byte order ("-" < "/" <
// "0").
var listKeys = []string{
	"a", "a-b", "a/", "a/b", "a/c/d", "a/c/e", "a0",
	"b/x/1", "b/y", "c", "z",
	"é/1", "é/2", "日本/語", "日本語",
}

func newListStore(t *testing.T) *Store {
	t.Helper()
	s, _ := newTestStore(t, 4, 2)
	mustBucket(t, s, "list")
	mustBucket(t, s, "empty")
	putParallel(t, s, "list", listKeys, func(int) []byte { return nil })
	return s
}

func pageKeys(p ListPage) []string {
	out := []string{}
	for _, o := range p.Objects {
		out = append(out, o.Key)
	}
	return out
}

func TestList(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newListStore(t)
	for _, tc := range []struct {
		name      string
		bucket    string
		opt       ListOptions
		keys      []string
		prefixes  []string
		truncated bool
		next      string
	}{
		{name: "all", opt: ListOptions{}, keys: listKeys},
		{name: "prefix a/", opt: ListOptions{Prefix: "a/"}, keys: []string{"a/", "a/b", "a/c/d", "a/c/e"}},
		{name: "prefix a", opt: ListOptions{Prefix: "a"}, keys: []string{"a", "a-b", "a/", "a/b", "a/c/d", "a/c/e", "a0"}},
		{name: "delimiter", opt: ListOptions{Delimiter: "/"},
			keys:     []string{"a", "a-b", "a0", "c", "z", "日本語"},
			prefixes: []string{"a/", "b/", "é/", "日本/"}},
		{name: "prefix and delimiter", opt: ListOptions{Prefix: "a/", Delimiter: "/"},
			keys: []string{"a/", "a/b"}, prefixes: []string{"a/c/"}},
		{name: "nested prefix and delimiter", opt: ListOptions{Prefix: "b/", Delimiter: "/"},
			prefixes: []string{"b/x/"}, keys: []string{"b/y"}},
		{name: "unicode prefix", opt: ListOptions{Prefix: "日本"}, keys: []string{"日本/語", "日本語"}},
		{name: "unicode prefix and delimiter", opt: ListOptions{Prefix: "日本", Delimiter: "/"},
			keys: []string{"日本語"}, prefixes: []string{"日本/"}},
		{name: "multi-byte delimiter", opt: ListOptions{Delimiter: "本"}, prefixes: []string{"日本"},
			keys: []string{"a", "a-b", "a/", "a/b", "a/c/d", "a/c/e", "a0", "b/x/1", "b/y", "c", "z", "é/1", "é/2"}},
		{name: "after", opt: ListOptions{After: "b/y"}, keys: []string{"c", "z", "é/1", "é/2", "日本/語", "日本語"}},
		{name: "after absent key", opt: ListOptions{After: "bz"}, keys: []string{"c", "z", "é/1", "é/2", "日本/語", "日本語"}},
		{name: "after before prefix", opt: ListOptions{Prefix: "b/", After: "a"}, keys: []string{"b/x/1", "b/y"}},
		{name: "after past prefix", opt: ListOptions{Prefix: "a/", After: "b"}, keys: []string{}},
		{name: "after common prefix", opt: ListOptions{Delimiter: "/", After: "a/"},
			keys: []string{"a0", "c", "z", "日本語"}, prefixes: []string{"b/", "é/", "日本/"}},
		{name: "after inside common prefix", opt: ListOptions{Delimiter: "/", After: "a/b"},
			keys: []string{"a0", "c", "z", "日本語"}, prefixes: []string{"a/", "b/", "é/", "日本/"}},
		{name: "after ascii", opt: ListOptions{After: "z"}, keys: []string{"é/1", "é/2", "日本/語", "日本語"}},
		{name: "after last", opt: ListOptions{After: "日本語"}, keys: []string{}},
		{name: "max keys", opt: ListOptions{MaxKeys: 3}, keys: []string{"a", "a-b", "a/"}, truncated: true, next: "a/"},
		{name: "max keys ends on common prefix", opt: ListOptions{Delimiter: "/", MaxKeys: 3},
			keys: []string{"a", "a-b"}, prefixes: []string{"a/"}, truncated: true, next: "a/"},
		{name: "max keys exactly all", opt: ListOptions{Prefix: "a/", MaxKeys: 4}, keys: []string{"a/", "a/b", "a/c/d", "a/c/e"}},
		{name: "no match", opt: ListOptions{Prefix: "nothing"}, keys: []string{}},
		{name: "no match delimiter", opt: ListOptions{Prefix: "nothing/", Delimiter: "/"}, keys: []string{}},
		{name: "empty bucket", bucket: "empty", opt: ListOptions{Delimiter: "/"}, keys: []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.bucket
			if b == "" {
				b = "list"
			}
			p, err := s.List(ctx, b, tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			if got := pageKeys(p); !slices.Equal(got, tc.keys) {
				t.Errorf("keys\n got %q\nwant %q", got, tc.keys)
			}
			if !slices.Equal(p.CommonPrefixes, tc.prefixes) {
				t.Errorf("common prefixes %q, want %q", p.CommonPrefixes, tc.prefixes)
			}
			if p.IsTruncated != tc.truncated || p.NextMarker != tc.next {
				t.Errorf("truncated %v next %q, want %v %q", p.IsTruncated, p.NextMarker, tc.truncated, tc.next)
			}
			for _, o := range p.Objects {
				if o.Bucket != b || !o.IsLatest || o.VersionID != NullVersion {
					t.Errorf("object %+v", o)
				}
			}
		})
	}
}

func TestListErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := newTestStore(t, 4, 2)
	mustBucket(t, s, "bkt")
	for _, tc := range []struct {
		name   string
		bucket string
		opt    ListOptions
		want   error
	}{
		{"missing bucket", "nope", ListOptions{}, ErrNoSuchBucket},
		{"negative max keys", "bkt", ListOptions{MaxKeys: -1}, ErrInvalidArgument},
		{"prefix not utf-8", "bkt", ListOptions{Prefix: "\xff"}, ErrInvalidKey},
		{"prefix too long", "bkt", ListOptions{Prefix: strings.Repeat("p", MaxKeyLen+1)}, ErrInvalidKey},
	} {
		if _, err := s.List(ctx, tc.bucket, tc.opt); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
}

// listModel is the S3 listing of keys (sorted) as a reference.
func listModel(keys []string, opt ListOptions) (objs, prefixes []string) {
	seen := map[string]bool{}
	for _, k := range keys {
		if !strings.HasPrefix(k, opt.Prefix) || k <= opt.After {
			continue
		}
		if opt.Delimiter != "" {
			if i := strings.Index(k[len(opt.Prefix):], opt.Delimiter); i >= 0 {
				cp := k[:len(opt.Prefix)+i+len(opt.Delimiter)]
				if !listedBefore(cp, opt.After) && !seen[cp] {
					seen[cp] = true
					prefixes = append(prefixes, cp)
				}
				continue
			}
		}
		objs = append(objs, k)
	}
	return objs, prefixes
}

// Paging with NextMarker returns every entry exactly once, whatever the
// page size, also when a common prefix ends a page.
func TestListPaging(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := newTestStore(t, 4, 2)
	mustBucket(t, s, "pgs")
	var keys []string
	for _, d := range []string{"a", "b", "c"} {
		for i := range 4 {
			keys = append(keys, fmt.Sprintf("%s/%d", d, i), fmt.Sprintf("%s/sub/%d", d, i))
		}
		keys = append(keys, d, d+".txt")
	}
	keys = append(keys, "ü/1", "ü0")
	slices.Sort(keys)
	putParallel(t, s, "pgs", keys, func(i int) []byte { return []byte{byte(i)} })

	for _, base := range []ListOptions{
		{},
		{Delimiter: "/"},
		{Prefix: "b/", Delimiter: "/"},
		{Prefix: "b"},
		{After: "b/1"},
		{Delimiter: "/", After: "b"},
	} {
		wantObjs, wantPrefixes := listModel(keys, base)
		for max := 1; max <= 8; max++ {
			t.Run(fmt.Sprintf("%+v/max%d", base, max), func(t *testing.T) {
				opt := base
				opt.MaxKeys = max
				var objs, prefixes []string
				seen := map[string]bool{}
				for pages := 0; ; pages++ {
					if pages > len(keys)+1 {
						t.Fatal("paging does not end")
					}
					p, err := s.List(ctx, "pgs", opt)
					if err != nil {
						t.Fatal(err)
					}
					n := len(p.Objects) + len(p.CommonPrefixes)
					if n > max {
						t.Fatalf("%d entries with MaxKeys %d", n, max)
					}
					for _, e := range append(pageKeys(p), p.CommonPrefixes...) {
						if seen[e] {
							t.Fatalf("%q listed twice (page %d, after %q)", e, pages, opt.After)
						}
						seen[e] = true
					}
					objs = append(objs, pageKeys(p)...)
					prefixes = append(prefixes, p.CommonPrefixes...)
					if !p.IsTruncated {
						break
					}
					if n == 0 || p.NextMarker == "" {
						t.Fatalf("truncated page with %d entries and next marker %q", n, p.NextMarker)
					}
					if last := max2(pageKeys(p), p.CommonPrefixes); p.NextMarker != last {
						t.Fatalf("next marker %q, last entry %q", p.NextMarker, last)
					}
					opt.After = p.NextMarker
				}
				if !slices.Equal(objs, wantObjs) {
					t.Errorf("objects\n got %q\nwant %q", objs, wantObjs)
				}
				if !slices.Equal(prefixes, wantPrefixes) {
					t.Errorf("prefixes\n got %q\nwant %q", prefixes, wantPrefixes)
				}
			})
		}
	}
}

// max2 returns the greatest string of both slices.
func max2(a, b []string) string {
	m := ""
	for _, s := range append(slices.Clone(a), b...) {
		m = max(m, s)
	}
	return m
}

// Deleted keys vanish from listings, and with them an emptied common
// prefix.
func TestListAfterDelete(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newListStore(t)
	for _, k := range []string{"a/b", "a/c/d", "a/c/e"} {
		if _, err := s.Delete(ctx, "list", k, DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	p, err := s.List(ctx, "list", ListOptions{Prefix: "a/", Delimiter: "/"})
	if err != nil {
		t.Fatal(err)
	}
	if got := pageKeys(p); !slices.Equal(got, []string{"a/"}) || len(p.CommonPrefixes) != 0 {
		t.Fatalf("after deletes: keys %q prefixes %q", got, p.CommonPrefixes)
	}
}
