package objstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// shadowedKeys is the reference definition of BucketStatus.Shadowed: the
// keys K for which another key starts with K+"/".
func shadowedKeys(keys []string) []string {
	var out []string
	for _, k := range keys {
		for _, o := range keys {
			if o != k && strings.HasPrefix(o, k+"/") {
				out = append(out, k)
				break
			}
		}
	}
	return out
}

func TestStatusBuckets(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		keys     []string
		deleted  []string // deleted after the puts, in a versioned bucket
		shadowed int64
	}{
		{name: "empty"},
		{name: "flat", keys: []string{"a", "b", "c"}},
		{name: "file under file", keys: []string{"a/b", "a/b/c"}, shadowed: 1},
		{name: "chain", keys: []string{"a", "a/b", "a/b/c"}, shadowed: 2},
		{name: "deep child counts once", keys: []string{"a", "a/x/y", "a/z"}, shadowed: 1},
		// "-" and "." sort before "/": the shadowing key is not the next one.
		{name: "gap before slash", keys: []string{"a", "a-b", "a.c", "a/x"}, shadowed: 1},
		{name: "dir marker shadows file", keys: []string{"a", "a/"}, shadowed: 1},
		{name: "marker is a directory", keys: []string{"a/", "a/b"}},
		{name: "prefix without slash", keys: []string{"ab", "abc", "ab-c/d"}},
		{name: "list keys", keys: listKeys, shadowed: int64(len(shadowedKeys(listKeys)))},
		{name: "delete marker does not shadow", keys: []string{"a", "a/b"}, deleted: []string{"a/b"}},
		{name: "delete marker is no object", keys: []string{"a", "b/c", "b"}, deleted: []string{"a"}, shadowed: 1},
	}
	ctx := context.Background()
	s, _ := newTestStore(t, 4, 2)
	type want struct {
		objects, bytes, shadowed int64
	}
	wants := map[string]want{}
	for i, tc := range tests {
		bucket := "bucket-" + string(rune('a'+i))
		mustBucket(t, s, bucket)
		if len(tc.deleted) > 0 {
			if err := s.SetVersioning(ctx, bucket, VersioningEnabled); err != nil {
				t.Fatal(err)
			}
		}
		var w want
		for j, k := range tc.keys {
			data := randBytes(j*7, uint64(j))
			mustPut(t, s, bucket, k, data)
			if !slices.Contains(tc.deleted, k) {
				w.objects++
				w.bytes += int64(len(data))
			}
		}
		for _, k := range tc.deleted {
			if _, err := s.Delete(ctx, bucket, k, DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		w.shadowed = tc.shadowed
		wants[bucket] = w
	}
	if err := s.EnsureSystemBucket(ctx, ".sys"); err != nil {
		t.Fatal(err)
	}

	st, err := s.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.BucketCount != len(tests) {
		t.Errorf("bucket count %d, want %d", st.BucketCount, len(tests))
	}
	if len(st.Buckets) != len(tests)+1 {
		t.Fatalf("%d buckets listed, want %d", len(st.Buckets), len(tests)+1)
	}
	got := map[string]BucketStatus{}
	for _, b := range st.Buckets {
		got[b.Name] = b
	}
	if sys := got[".sys"]; !sys.System || sys.Objects != 0 {
		t.Errorf("system bucket: %+v", sys)
	}
	for i, tc := range tests {
		bucket := "bucket-" + string(rune('a'+i))
		t.Run(tc.name, func(t *testing.T) {
			b, w := got[bucket], wants[bucket]
			if b.System {
				t.Errorf("user bucket marked system")
			}
			if b.Objects != w.objects || b.Bytes != w.bytes || b.Shadowed != w.shadowed {
				t.Errorf("objects/bytes/shadowed = %d/%d/%d, want %d/%d/%d", b.Objects, b.Bytes, b.Shadowed, w.objects, w.bytes, w.shadowed)
			}
		})
	}
}

func TestStatusGeometryAndDrives(t *testing.T) {
	t.Parallel()
	tests := []struct {
		drives, parity int
		removed        []int // drive directories removed before Status
	}{
		{drives: 1, parity: 0},
		{drives: 4, parity: 2},
		{drives: 6, parity: 1, removed: []int{2, 5}},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%d+%d", tc.drives-tc.parity, tc.parity), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s, opt := newTestStore(t, tc.drives, tc.parity)
			for _, i := range tc.removed {
				if err := os.RemoveAll(s.drives[i].Root()); err != nil {
					t.Fatal(err)
				}
			}
			st, err := s.Status(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if st.DataShards != tc.drives-tc.parity || st.ParityShards != tc.parity || st.BlockSize != opt.BlockSize {
				t.Errorf("geometry %d+%d/%d, want %d+%d/%d", st.DataShards, st.ParityShards, st.BlockSize, tc.drives-tc.parity, tc.parity, opt.BlockSize)
			}
			if len(st.Drives) != tc.drives {
				t.Fatalf("%d drives, want %d", len(st.Drives), tc.drives)
			}
			for i, d := range st.Drives {
				gone := slices.Contains(tc.removed, i)
				if d.Index != i || d.Path != s.drives[i].Root() {
					t.Errorf("drive %d: index %d path %q", i, d.Index, d.Path)
				}
				if d.Online == gone || (d.Error != "") != gone {
					t.Errorf("drive %d (removed %v): online %v error %q", i, gone, d.Online, d.Error)
				}
				if !gone && (d.TotalBytes == 0 || d.FreeBytes > d.TotalBytes || d.AvailableBytes > d.FreeBytes) {
					t.Errorf("drive %d sizes: %+v", i, d)
				}
			}
			// The JSON form is the operator contract: check its names.
			raw, err := json.Marshal(st)
			if err != nil {
				t.Fatal(err)
			}
			for _, name := range []string{`"data_shards"`, `"parity_shards"`, `"block_size"`, `"drives"`, `"online"`, `"free_bytes"`, `"total_bytes"`, `"bucket_count"`, `"buckets"`} {
				if !strings.Contains(string(raw), name) {
					t.Errorf("JSON lacks %s: %s", name, raw)
				}
			}
		})
	}
}

func TestStatusClosed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := Open(ctx, withBolt(t, Options{Dir: t.TempDir(), DriveCount: 2, Parity: -1, NoBackground: true}))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Status(ctx); !errors.Is(err, ErrClosed) {
		t.Errorf("Status after close: %v, want ErrClosed", err)
	}
	if _, err := s.StatFS(ctx); !errors.Is(err, ErrClosed) {
		t.Errorf("StatFS after close: %v, want ErrClosed", err)
	}
	if _, err := s.MinDriveAvail(ctx); !errors.Is(err, ErrClosed) {
		t.Errorf("MinDriveAvail on a closed store: %v, want ErrClosed", err)
	}
}

func TestStatusCancelled(t *testing.T) {
	t.Parallel()
	s, _ := newTestStore(t, 2, 1)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Status(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Status: %v, want context.Canceled", err)
	}
	if _, err := s.StatFS(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("StatFS: %v, want context.Canceled", err)
	}
}

func TestUsableSpace(t *testing.T) {
	t.Parallel()
	const g = 1 << 30
	tests := []struct {
		name    string
		samples []fsSample
		k, m    int
		want    FSStat
	}{
		{name: "none", k: 2, m: 2},
		{name: "one drive no parity", k: 1, m: 0,
			samples: []fsSample{{dev: 1, total: 10 * g, free: 6 * g, avail: 5 * g}},
			want:    FSStat{TotalBytes: 10 * g, FreeBytes: 6 * g, AvailableBytes: 5 * g}},
		{name: "four drives one filesystem", k: 2, m: 2,
			samples: []fsSample{{1, 8 * g, 4 * g, 2 * g}, {1, 8 * g, 4 * g, 2 * g}, {1, 8 * g, 4 * g, 2 * g}, {1, 8 * g, 4 * g, 2 * g}},
			want:    FSStat{TotalBytes: 4 * g, FreeBytes: 2 * g, AvailableBytes: 1 * g}},
		{name: "four disks", k: 2, m: 2,
			samples: []fsSample{{1, 8 * g, 4 * g, 4 * g}, {2, 8 * g, 4 * g, 4 * g}, {3, 8 * g, 4 * g, 4 * g}, {4, 8 * g, 4 * g, 4 * g}},
			want:    FSStat{TotalBytes: 16 * g, FreeBytes: 8 * g, AvailableBytes: 8 * g}},
		{name: "two filesystems shared", k: 4, m: 2,
			samples: []fsSample{{7, 6 * g, 3 * g, 3 * g}, {9, 3 * g, 3 * g, 0}, {7, 6 * g, 3 * g, 3 * g}, {9, 3 * g, 3 * g, 0}},
			want:    FSStat{TotalBytes: 6 * g, FreeBytes: 4 * g, AvailableBytes: 2 * g}},
		{name: "rounds down", k: 2, m: 1,
			samples: []fsSample{{1, 10, 10, 10}},
			want:    FSStat{TotalBytes: 6, FreeBytes: 6, AvailableBytes: 6}},
		{name: "no overflow", k: 3, m: 1,
			samples: []fsSample{{1, ^uint64(0), 0, 0}, {2, 1, 0, 0}},
			want:    FSStat{TotalBytes: 3<<62 - 1}}, // saturated at 2^64-1, times 3/4
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := usableSpace(tc.samples, tc.k, tc.m); got != tc.want {
				t.Errorf("usableSpace = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestStatFS(t *testing.T) {
	t.Parallel()
	tests := []struct {
		drives, parity int
		objects        int
	}{
		{drives: 1, parity: 0, objects: 3},
		{drives: 4, parity: 2, objects: 10},
		{drives: 5, parity: 1},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%d+%d", tc.drives-tc.parity, tc.parity), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s, opt := newTestStore(t, tc.drives, tc.parity)
			mustBucket(t, s, "one")
			mustBucket(t, s, "two")
			for i := 0; i < tc.objects; i++ {
				mustPut(t, s, []string{"one", "two"}[i%2], strings.Repeat("k", i+1), []byte("x"))
			}
			got, err := s.StatFS(ctx)
			if err != nil {
				t.Fatal(err)
			}
			// Every drive lives under one temporary directory: one
			// filesystem, counted once.
			var sf unix.Statfs_t
			if err := unix.Statfs(opt.Dir, &sf); err != nil {
				t.Fatal(err)
			}
			bsize := statfsUnit(&sf)
			k := tc.drives - tc.parity
			if want := scale(sf.Blocks*bsize, k, tc.parity); got.TotalBytes != want {
				t.Errorf("total %d, want %d", got.TotalBytes, want)
			}
			if got.FreeBytes > got.TotalBytes || got.AvailableBytes > got.FreeBytes {
				t.Errorf("sizes out of order: %+v", got)
			}
			if got.Files != uint64(tc.objects) {
				t.Errorf("files %d, want %d", got.Files, tc.objects)
			}
		})
	}
}

func TestStatusReadCache(t *testing.T) {
	ctx := context.Background()
	for _, blocks := range []int{0, 8} {
		s, _ := newTestStore(t, 2, 1, withCache(blocks))
		mustBucket(t, s, "bkt")
		mustPut(t, s, "bkt", "k", randBytes(3*64<<10, 9))
		st, err := s.Status(ctx)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(st)
		switch {
		case blocks == 0 && (st.ReadCache != nil || strings.Contains(string(raw), "read_cache")):
			t.Errorf("no cache, yet status says %s", raw)
		case blocks > 0 && (st.ReadCache == nil || st.ReadCache.SizeBytes != 8*64<<10 || st.ReadCache.UsedBytes != 3*64<<10 || st.ReadCache.Admitted != 3):
			t.Errorf("cache of %d blocks after a 3-block put: %s", blocks, raw)
		}
	}
}

// TestMinDriveAvail checks that the least room among the drives is
// reported: with every drive on one filesystem it is that filesystem's
// room; with one drive elsewhere (a tmpfs, when the machine has one) it
// is the smaller of the two.
func TestMinDriveAvail(t *testing.T) {
	avail := func(t *testing.T, dir string) uint64 {
		t.Helper()
		var sf unix.Statfs_t
		if err := unix.Statfs(dir, &sf); err != nil {
			t.Fatal(err)
		}
		return sf.Bavail * statfsUnit(&sf)
	}
	// near says whether got is want, give or take what other processes
	// wrote meanwhile.
	near := func(got, want uint64) bool {
		const slack = 64 << 20
		return got+slack >= want && got <= want+slack
	}
	ctx := context.Background()
	t.Run("one filesystem", func(t *testing.T) {
		s, opt := newTestStore(t, 4, 2)
		got, err := s.MinDriveAvail(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if want := avail(t, opt.Dir); !near(got, want) {
			t.Errorf("MinDriveAvail %d, want about %d", got, want)
		}
	})
	t.Run("one drive elsewhere", func(t *testing.T) {
		shm, err := os.MkdirTemp("/dev/shm", "cairn-drive-")
		if err != nil {
			t.Skipf("no /dev/shm here: %v", err)
		}
		t.Cleanup(func() { _ = os.RemoveAll(shm) })
		base := t.TempDir()
		drives := []string{filepath.Join(base, "d0"), filepath.Join(base, "d1"), shm}
		s, _ := newTestStore(t, 0, 1, func(o *Options) { o.Drives, o.DriveCount = drives, 0 })
		got, err := s.MinDriveAvail(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if want := min(avail(t, base), avail(t, shm)); !near(got, want) {
			t.Errorf("MinDriveAvail %d, want about %d (disk %d, tmpfs %d)", got, want, avail(t, base), avail(t, shm))
		}
	})
}
