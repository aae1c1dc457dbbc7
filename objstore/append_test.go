package objstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// shardCost is what n new bytes may cost on the drives at most: their
// shards (k+m)/k of them, block checksums and one header per drive,
// rounded up generously (a block of padding per shard).
func shardCost(n int64, k, m, block int) int64 {
	perShard := (n+int64(k)-1)/int64(k) + int64(block) + 4096
	return perShard * int64(k+m)
}

// TestAppendSequence appends runs of chunks of several sizes to one
// object, in a bucket with and without versioning, checking after each
// the content, the size, the ETag's form, the parts, and that only the
// new bytes reached the drives.
func TestAppendSequence(t *testing.T) {
	t.Parallel()
	const block = 64 << 10
	chunks := []int{100, block, 3*block + 17, 1, 0, 200 << 10, 5000}
	for _, tc := range []struct {
		name      string
		versioned bool
		pack      bool
		first     int // bytes of the first version, put; -1: created by an append
	}{
		{"unversioned", false, false, 150 << 10},
		{"versioned", true, false, 150 << 10},
		{"unversioned-packed", false, true, 1000},
		{"created-by-append", false, false, -1},
		{"versioned-created-by-append", true, true, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s, _ := newTestStore(t, 4, 2, func(o *Options) {
				if tc.pack {
					o.PackMaxSize = 0 // the default, 128 KiB
				}
			})
			mustBucket(t, s, "app")
			if tc.versioned {
				if err := s.SetVersioning(ctx, "app", VersioningEnabled); err != nil {
					t.Fatal(err)
				}
			}
			var model []byte
			var versions []ObjectInfo
			var contents [][]byte
			if tc.first >= 0 {
				model = randBytes(tc.first, 1)
				versions = append(versions, mustPut(t, s, "app", "log", model))
				contents = append(contents, model)
			}
			for i, n := range chunks {
				chunk := randBytes(n, uint64(10+i))
				before := s.Stats().DriveBytesWritten
				info, err := s.Append(ctx, "app", "log", int64(len(model)), bytes.NewReader(chunk), int64(n), AppendOptions{})
				if err != nil {
					t.Fatalf("append %d (%d bytes at %d): %v", i, n, len(model), err)
				}
				wrote := s.Stats().DriveBytesWritten - before
				if limit := shardCost(int64(n), 2, 2, block); wrote > limit {
					t.Fatalf("append %d of %d bytes to %d wrote %d bytes to the drives, more than %d", i, n, len(model), wrote, limit)
				}
				if n > 0 && wrote == 0 {
					t.Fatalf("append %d of %d bytes wrote nothing to the drives", i, n)
				}
				emptyAppend := n == 0 && len(model) > 0
				model = append(model, chunk...)
				if info.Size != int64(len(model)) {
					t.Fatalf("append %d: size %d, want %d", i, info.Size, len(model))
				}
				if got := readAll(t, s, "app", "log", GetOptions{}); !bytes.Equal(got, model) {
					t.Fatalf("append %d: content differs (%d bytes, want %d)", i, len(got), len(model))
				}
				if emptyAppend {
					if last := versions[len(versions)-1]; info.ETag != last.ETag || info.VersionID != last.VersionID {
						t.Fatalf("an empty append made a new version: %+v after %+v", info, last)
					}
					continue
				}
				if len(versions) > 0 {
					if !strings.HasSuffix(info.ETag, fmt.Sprintf("-%d", info.PartsCount)) {
						t.Fatalf("append %d: ETag %s for %d parts", i, info.ETag, info.PartsCount)
					}
					var sum int64
					for _, p := range info.PartSizes {
						sum += p
					}
					if sum != info.Size || info.PartSizes[len(info.PartSizes)-1] != int64(n) {
						t.Fatalf("append %d: parts %v for %d bytes, the last %d", i, info.PartSizes, info.Size, n)
					}
					if info.ETag == versions[len(versions)-1].ETag {
						t.Fatalf("append %d kept the ETag %s", i, info.ETag)
					}
				} else if info.ETag != md5hex(chunk) {
					t.Fatalf("an append creating the object: ETag %s, want the MD5 %s", info.ETag, md5hex(chunk))
				}
				if tc.versioned == (info.VersionID == NullVersion) {
					t.Fatalf("append %d: version id %q in a bucket versioned=%v", i, info.VersionID, tc.versioned)
				}
				versions = append(versions, info)
				contents = append(contents, bytes.Clone(model))
			}
			// Nothing the current version uses is garbage: the cleaner frees
			// nothing.
			if n, err := s.Clean(ctx); err != nil || n != 0 {
				t.Fatalf("clean after appends freed %d (%v), want 0", n, err)
			}
			if got := readAll(t, s, "app", "log", GetOptions{}); !bytes.Equal(got, model) {
				t.Fatal("content differs after the cleaner ran")
			}
			if tc.versioned {
				for i, v := range versions {
					if got := readAll(t, s, "app", "log", GetOptions{VersionID: v.VersionID}); !bytes.Equal(got, contents[i]) {
						t.Fatalf("version %d (%s): content differs", i, v.VersionID)
					}
				}
			}
		})
	}
}

// TestAppendRefused: appends the store must refuse change nothing.
func TestAppendRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := newTestStore(t, 3, 1)
	mustBucket(t, s, "app")
	base := randBytes(1000, 2)
	cur := mustPut(t, s, "app", "k", base)
	sealed := []byte("ciphertext")
	if _, err := s.Put(ctx, "app", "enc", bytes.NewReader(sealed), int64(len(sealed)),
		PutOptions{Attrs: Attrs{Sys: map[string]string{SysEncryption: "sse-s3"}}}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		key    string
		offset int64
		opt    AppendOptions
		want   error
	}{
		{"offset short", "k", 999, AppendOptions{}, ErrInvalidWriteOffset},
		{"offset past the end", "k", 1001, AppendOptions{}, ErrInvalidWriteOffset},
		{"offset zero on an object", "k", 0, AppendOptions{}, ErrInvalidWriteOffset},
		{"offset on a missing key", "missing", 10, AppendOptions{}, ErrInvalidWriteOffset},
		{"negative offset", "k", -1, AppendOptions{}, ErrInvalidArgument},
		{"if-match another etag", "k", 1000, AppendOptions{IfMatch: md5hex([]byte("other"))}, ErrPreconditionFailed},
		{"if-match a missing key", "missing", 0, AppendOptions{IfMatch: "*"}, ErrNoSuchKey},
		{"bad content-md5", "k", 1000, AppendOptions{ContentMD5: make([]byte, 16)}, ErrBadDigest},
		{"encrypted", "enc", int64(len(sealed)), AppendOptions{}, ErrNotAppendable},
		{"hook refuses", "k", 1000, AppendOptions{Appending: func(*ObjectInfo, int64, map[string]string, *Attrs) error {
			return ErrPreconditionFailed
		}}, ErrPreconditionFailed},
		{"bad key", "", 0, AppendOptions{}, ErrInvalidKey},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.Append(ctx, "app", tc.key, tc.offset, strings.NewReader("more"), 4, tc.opt)
			if !errors.Is(err, tc.want) {
				t.Fatalf("append: %v, want %v", err, tc.want)
			}
		})
	}
	if _, err := s.Append(ctx, "nobucket", "k", 0, strings.NewReader("x"), 1, AppendOptions{}); !errors.Is(err, ErrNoSuchBucket) {
		t.Fatalf("append to a missing bucket: %v", err)
	}
	got, err := s.Head(ctx, "app", "k", GetOptions{})
	if err != nil || got.ETag != cur.ETag || got.Size != cur.Size {
		t.Fatalf("after refused appends: %+v, %v; want %+v", got, err, cur)
	}
	if !bytes.Equal(readAll(t, s, "app", "k", GetOptions{}), base) {
		t.Fatal("content changed by refused appends")
	}
	if _, err := s.Head(ctx, "app", "missing", GetOptions{}); !errors.Is(err, ErrNoSuchKey) {
		t.Fatalf("a refused append created the key: %v", err)
	}
	// The conditions that hold let the append through.
	info, err := s.Append(ctx, "app", "k", 1000, strings.NewReader("more"), 4, AppendOptions{IfMatch: cur.ETag})
	if err != nil || info.Size != 1004 {
		t.Fatalf("append with If-Match of the current ETag: %+v, %v", info, err)
	}
}

// TestAppendConcurrent: of appends racing at one offset exactly one
// wins, the others get ErrInvalidWriteOffset, and the object is the
// winners' bytes in order, never a mix.
func TestAppendConcurrent(t *testing.T) {
	t.Parallel()
	for _, versioned := range []bool{false, true} {
		t.Run(fmt.Sprintf("versioned=%v", versioned), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s, _ := newTestStore(t, 4, 2, func(o *Options) { o.PackMaxSize = 0 })
			mustBucket(t, s, "app")
			if versioned {
				if err := s.SetVersioning(ctx, "app", VersioningEnabled); err != nil {
					t.Fatal(err)
				}
			}
			const rounds, writers = 8, 5
			var model []byte
			for r := range rounds {
				bodies := make([][]byte, writers)
				errs := make([]error, writers)
				var wg sync.WaitGroup
				for w := range writers {
					bodies[w] = randBytes(1000+w*7000, uint64(r*writers+w+100))
					wg.Go(func() {
						_, errs[w] = s.Append(ctx, "app", "k", int64(len(model)), bytes.NewReader(bodies[w]), int64(len(bodies[w])), AppendOptions{})
					})
				}
				wg.Wait()
				winner := -1
				for w, err := range errs {
					switch {
					case err == nil && winner >= 0:
						t.Fatalf("round %d: writers %d and %d both appended at %d", r, winner, w, len(model))
					case err == nil:
						winner = w
					case !errors.Is(err, ErrInvalidWriteOffset):
						t.Fatalf("round %d: writer %d: %v, want ErrInvalidWriteOffset", r, w, err)
					}
				}
				if winner < 0 {
					t.Fatalf("round %d: no writer appended", r)
				}
				model = append(model, bodies[winner]...)
				if got := readAll(t, s, "app", "k", GetOptions{}); !bytes.Equal(got, model) {
					t.Fatalf("round %d: content is not the winners' bytes (%d bytes, want %d)", r, len(got), len(model))
				}
			}
			// The losers' data was discarded, never referenced: fsck at the
			// end of the test finds neither orphans nor wrong counts.
		})
	}
}

// TestAppendReferences follows the data references of appended versions
// through overwrites and deletes: the cleaner frees exactly the data
// that no version uses any more.
func TestAppendReferences(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		name      string
		versioned bool
		// then changes the key after three appends to a put and reports
		// how many data objects the cleaner must free then.
		then func(t *testing.T, s *Store, versions []ObjectInfo) int
		// left is the content the key must hold afterwards (nil: none).
		left func(contents [][]byte) []byte
	}{
		{"unversioned overwrite", false, func(t *testing.T, s *Store, _ []ObjectInfo) int {
			mustPut(t, s, "app", "k", []byte("new"))
			return 4 // the put and its three appends
		}, func([][]byte) []byte { return []byte("new") }},
		{"unversioned delete", false, func(t *testing.T, s *Store, _ []ObjectInfo) int {
			if _, err := s.Delete(ctx, "app", "k", DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			return 4
		}, func([][]byte) []byte { return nil }},
		{"versioned delete of the newest", true, func(t *testing.T, s *Store, vs []ObjectInfo) int {
			if _, err := s.Delete(ctx, "app", "k", DeleteOptions{VersionID: vs[3].VersionID}); err != nil {
				t.Fatal(err)
			}
			return 1 // only the last append's data: the older versions use the rest
		}, func(c [][]byte) []byte { return c[2] }},
		{"versioned delete of the oldest", true, func(t *testing.T, s *Store, vs []ObjectInfo) int {
			if _, err := s.Delete(ctx, "app", "k", DeleteOptions{VersionID: vs[0].VersionID}); err != nil {
				t.Fatal(err)
			}
			return 0 // the newer versions use all of its data
		}, func(c [][]byte) []byte { return c[3] }},
		{"versioned delete of all", true, func(t *testing.T, s *Store, vs []ObjectInfo) int {
			for _, v := range vs {
				if _, err := s.Delete(ctx, "app", "k", DeleteOptions{VersionID: v.VersionID}); err != nil {
					t.Fatal(err)
				}
			}
			return 4
		}, func([][]byte) []byte { return nil }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, _ := newTestStore(t, 3, 1)
			mustBucket(t, s, "app")
			if tc.versioned {
				if err := s.SetVersioning(ctx, "app", VersioningEnabled); err != nil {
					t.Fatal(err)
				}
			}
			model := randBytes(70<<10, 3)
			versions := []ObjectInfo{mustPut(t, s, "app", "k", model)}
			contents := [][]byte{bytes.Clone(model)}
			for i := range 3 {
				chunk := randBytes(10<<10*(i+1), uint64(4+i))
				info, err := s.Append(ctx, "app", "k", int64(len(model)), bytes.NewReader(chunk), int64(len(chunk)), AppendOptions{})
				if err != nil {
					t.Fatal(err)
				}
				model = append(model, chunk...)
				versions = append(versions, info)
				contents = append(contents, bytes.Clone(model))
			}
			if n, err := s.Clean(ctx); err != nil || n != 0 {
				t.Fatalf("clean before: freed %d (%v)", n, err)
			}
			want := tc.then(t, s, versions)
			if n, err := s.Clean(ctx); err != nil || n != want {
				t.Fatalf("clean: freed %d data objects (%v), want %d", n, err, want)
			}
			left := tc.left(contents)
			if left == nil {
				if _, err := s.Head(ctx, "app", "k", GetOptions{}); !errors.Is(err, ErrNoSuchKey) {
					t.Fatalf("head after: %v", err)
				}
				return
			}
			if got := readAll(t, s, "app", "k", GetOptions{}); !bytes.Equal(got, left) {
				t.Fatalf("content after: %d bytes, want %d", len(got), len(left))
			}
		})
	}
}

// TestAppendSegmentCap: an append past Options.MaxSegments is refused and
// changes nothing; rewriting the object lets it grow again.
func TestAppendSegmentCap(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const limit = 6
	s, _ := newTestStore(t, 2, 1, func(o *Options) { o.MaxSegments = limit; o.PackMaxSize = 0 })
	mustBucket(t, s, "app")
	var model []byte
	for i := range limit {
		chunk := []byte(fmt.Sprintf("line %d\n", i))
		if _, err := s.Append(ctx, "app", "k", int64(len(model)), bytes.NewReader(chunk), int64(len(chunk)), AppendOptions{}); err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
		model = append(model, chunk...)
	}
	info, err := s.Head(ctx, "app", "k", GetOptions{})
	if err != nil || info.PartsCount != limit {
		t.Fatalf("head: %d parts (%v), want %d", info.PartsCount, err, limit)
	}
	_, err = s.Append(ctx, "app", "k", int64(len(model)), strings.NewReader("one more"), 8, AppendOptions{})
	if !errors.Is(err, ErrTooManySegments) {
		t.Fatalf("append past the cap: %v, want ErrTooManySegments", err)
	}
	if got := readAll(t, s, "app", "k", GetOptions{}); !bytes.Equal(got, model) {
		t.Fatal("a refused append changed the content")
	}
	// A put of the whole is one segment again.
	mustPut(t, s, "app", "k", model)
	if _, err := s.Append(ctx, "app", "k", int64(len(model)), strings.NewReader("one more"), 8, AppendOptions{}); err != nil {
		t.Fatalf("append after a rewrite: %v", err)
	}
	if err := (Options{Dir: t.TempDir(), MaxSegments: MaxSegments + 1}).Validate(); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("options with MaxSegments past %d: %v", MaxSegments, err)
	}
}

// TestAppendSuspended: in a bucket whose versioning is suspended, an
// append to a version with an id makes the null version (counting every
// segment: the older version keeps its own), and an append to the null
// version replaces it, taking over its references.
func TestAppendSuspended(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := newTestStore(t, 3, 1)
	mustBucket(t, s, "app")
	if err := s.SetVersioning(ctx, "app", VersioningEnabled); err != nil {
		t.Fatal(err)
	}
	first := randBytes(80<<10, 5)
	v1 := mustPut(t, s, "app", "k", first)
	if err := s.SetVersioning(ctx, "app", VersioningSuspended); err != nil {
		t.Fatal(err)
	}
	model := bytes.Clone(first)
	for i := range 3 {
		chunk := randBytes(5000+i, uint64(50+i))
		info, err := s.Append(ctx, "app", "k", int64(len(model)), bytes.NewReader(chunk), int64(len(chunk)), AppendOptions{})
		if err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
		if info.VersionID != NullVersion {
			t.Fatalf("append %d in a suspended bucket: version %q", i, info.VersionID)
		}
		model = append(model, chunk...)
	}
	vs, err := s.ListVersions(ctx, "app", ListVersionsOptions{})
	if err != nil || len(vs.Versions) != 2 {
		t.Fatalf("versions: %d (%v), want the null one and %s", len(vs.Versions), err, v1.VersionID)
	}
	if !bytes.Equal(readAll(t, s, "app", "k", GetOptions{VersionID: v1.VersionID}), first) {
		t.Fatal("the version appended to changed")
	}
	if _, err := s.Delete(ctx, "app", "k", DeleteOptions{VersionID: v1.VersionID}); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Clean(ctx); err != nil || n != 0 {
		t.Fatalf("clean after deleting the version appended to: freed %d (%v), want 0: the null version uses its data", n, err)
	}
	if !bytes.Equal(readAll(t, s, "app", "k", GetOptions{}), model) {
		t.Fatal("the null version's content differs")
	}
	if _, err := s.Delete(ctx, "app", "k", DeleteOptions{VersionID: NullVersion}); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Clean(ctx); err != nil || n != 4 {
		t.Fatalf("clean after deleting all: freed %d (%v), want 4", n, err)
	}
}
