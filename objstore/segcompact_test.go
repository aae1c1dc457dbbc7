package objstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/cairnstore/cairn/objstore/drive/faultdrive"
	"github.com/cairnstore/cairn/objstore/meta"
)

// segsOf is a segment list of the given lengths, each of its own data.
func segsOf(lengths ...int64) []meta.Segment {
	out := make([]meta.Segment, len(lengths))
	for i, n := range lengths {
		out[i] = meta.Segment{Data: fmt.Sprintf("d%d", i), Length: n}
	}
	return out
}

func repeatLen(n int, l int64) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = l
	}
	return out
}

func sumLen(ls []int64) int64 {
	var n int64
	for _, l := range ls {
		n += l
	}
	return n
}

func TestPlanSegmentCompaction(t *testing.T) {
	t.Parallel()
	const M = 1 << 20
	cat := func(parts ...[]int64) []int64 { return slices.Concat(parts...) }
	for _, tc := range []struct {
		name    string
		lengths []int64
		size    int64 // 0: the lengths' sum
		window  int64
		target  int
		budget  int64
		want    []Range
	}{
		{"none", nil, 0, 100, 0, 0, nil},
		{"one segment", []int64{500}, 0, 100, 0, 0, nil},
		{"short enough", repeatLen(10, 10), 0, 100, 10, 0, nil},
		{"dense window", []int64{10, 10, 10, 10, 60}, 0, 100, 1, 0, []Range{{0, 100}}},
		{"two a window are left", cat([]int64{50, 50}, []int64{50, 50}), 0, 100, 1, 0, nil},
		{"adjacent windows merge", repeatLen(20, 10), 0, 100, 1, 0, []Range{{0, 200}}},
		{"most crowded first", cat(repeatLen(4, 25), repeatLen(10, 10), repeatLen(5, 20)), 0, 100, 11, 0,
			[]Range{{100, 100}}},
		{"until the target", cat(repeatLen(4, 25), repeatLen(10, 10), repeatLen(5, 20)), 0, 100, 5, 0,
			[]Range{{0, 300}}},
		{"within the budget", cat(repeatLen(4, 25), repeatLen(10, 10), repeatLen(5, 20)), 0, 100, 1, 150,
			[]Range{{100, 200}}},
		{"apart", cat(repeatLen(10, 10), []int64{100}, repeatLen(10, 10)), 0, 100, 1, 0,
			[]Range{{0, 100}, {200, 100}}},
		{"short last window", cat([]int64{200}, repeatLen(5, 10)), 0, 100, 1, 0, []Range{{200, 50}}},
		{"zero lengths ignored", []int64{50, 0, 0, 0, 0, 50}, 0, 100, 1, 0, nil},
		{"lengths not adding up", repeatLen(10, 10), 99, 100, 1, 0, nil},
		{"negative length", []int64{10, -10, 10}, 10, 100, 1, 0, nil},
		{"zero window", repeatLen(10, 10), 0, 0, 1, 0, nil},
		{"real window", cat(repeatLen(64, 4<<10), []int64{M - 256<<10}, []int64{M}), 0, segWindow, 10, segPassBudget,
			[]Range{{0, M}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			size := tc.size
			if size == 0 {
				size = sumLen(tc.lengths)
			}
			got := planSegmentCompaction(segsOf(tc.lengths...), size, tc.window, tc.target, tc.budget)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("plan = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestCompactedSegments(t *testing.T) {
	t.Parallel()
	seg := func(d string, off, n int64) meta.Segment { return meta.Segment{Data: d, Offset: off, Length: n} }
	for _, tc := range []struct {
		name   string
		segs   []meta.Segment
		ranges []Range
		want   []meta.Segment
	}{
		{"whole tail", []meta.Segment{seg("a", 0, 100), seg("seg", 0, 10), seg("c", 0, 90)}, []Range{{100, 100}},
			[]meta.Segment{seg("a", 0, 100), seg("N", 0, 100)}},
		{"cut on the left", []meta.Segment{seg("a", 0, 150), seg("seg", 0, 10), seg("c", 0, 40)}, []Range{{100, 100}},
			[]meta.Segment{seg("a", 0, 100), seg("N", 0, 100)}},
		{"cut on both sides", []meta.Segment{seg("a", 0, 50), seg("seg", 7, 100), seg("c", 3, 50)}, []Range{{0, 60}, {140, 60}},
			[]meta.Segment{seg("N", 0, 60), seg("seg", 17, 80), seg("N", 60, 60)}},
		{"middle", []meta.Segment{seg("a", 0, 50), seg("seg", 0, 5), seg("c", 0, 5), seg("d", 0, 50)}, []Range{{40, 30}},
			[]meta.Segment{seg("a", 0, 40), seg("N", 0, 30), seg("d", 10, 40)}},
		{"contiguous slices merged", []meta.Segment{seg("a", 0, 10), seg("a", 10, 10), seg("seg", 0, 5), seg("a", 20, 5)}, nil,
			[]meta.Segment{seg("a", 0, 20), seg("seg", 0, 5), seg("a", 20, 5)}},
		{"repeated data not contiguous", []meta.Segment{seg("a", 0, 10), seg("a", 0, 10)}, nil,
			[]meta.Segment{seg("a", 0, 10), seg("a", 0, 10)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := compactedSegments(tc.segs, tc.ranges, "N")
			if !slices.Equal(got, tc.want) {
				t.Fatalf("segments = %v, want %v", got, tc.want)
			}
		})
	}
}

// segTestStore is a store whose appends of up to 4 KiB go to pack
// segments, and larger data (a compaction's) to shard files.
func segTestStore(t *testing.T, tweak ...func(*Options)) *Store {
	t.Helper()
	s, _ := newTestStore(t, 4, 2, append([]func(*Options){func(o *Options) { o.PackMaxSize = 4 << 10; o.SegmentCompactMin = 8 }}, tweak...)...)
	return s
}

// appendMany appends n bodies of random sizes (1 to maxLen bytes) to
// bucket/key, keeping model in step, and returns the new model and the
// version made by each append.
func appendMany(t *testing.T, s *Store, bucket, key string, model []byte, n, maxLen int, seed uint64) ([]byte, []ObjectInfo) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, seed))
	var infos []ObjectInfo
	for i := range n {
		b := randBytes(1+r.IntN(maxLen), seed*1000+uint64(i))
		info, err := s.Append(context.Background(), bucket, key, int64(len(model)), bytes.NewReader(b), int64(len(b)), AppendOptions{})
		if err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
		model = append(model, b...)
		infos = append(infos, info)
	}
	return model, infos
}

// versionSegs returns the segments of a version.
func versionSegs(t *testing.T, s *Store, bucket, key, vid string) []meta.Segment {
	t.Helper()
	var segs []meta.Segment
	err := s.idx.View(context.Background(), func(tx meta.Tx) error {
		v, err := findVersion(tx, bucket, key, vid)
		if err == nil {
			segs, err = versionSegments(tx, v)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return segs
}

func readerBytes(t *testing.T, r *ObjectReader) []byte {
	t.Helper()
	b := make([]byte, r.Size())
	if _, err := r.ReadAt(b, 0); err != nil && err != io.EOF {
		t.Fatalf("read: %v", err)
	}
	return b
}

func sameInfo(t *testing.T, got, want ObjectInfo) {
	t.Helper()
	if got.VersionID != want.VersionID || got.ETag != want.ETag || got.Size != want.Size || !got.ModTime.Equal(want.ModTime) {
		t.Fatalf("version changed: %+v, was %+v", got, want)
	}
}

// TestCompactSegments compacts a version made by many appends, with a
// reader open across the compaction and the cleaner, in a bucket with and
// without versioning (where an older version shares the data).
func TestCompactSegments(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		name      string
		versioned bool
	}{
		{"unversioned", false},
		{"versioned", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := segTestStore(t)
			mustBucket(t, s, "seg")
			if tc.versioned {
				if err := s.SetVersioning(ctx, "seg", VersioningEnabled); err != nil {
					t.Fatal(err)
				}
			}
			model, infos := appendMany(t, s, "seg", "k", nil, 120, 3000, 1)
			older := infos[59] // a version whose data the newest shares
			olderModel := slices.Clone(model[:older.Size])
			cur := infos[len(infos)-1]
			before := versionSegs(t, s, "seg", "k", cur.VersionID)
			r0, err := s.Open(ctx, "seg", "k", GetOptions{VersionID: cur.VersionID})
			if err != nil {
				t.Fatal(err)
			}
			defer r0.Close()

			ok, err := s.CompactSegments(ctx, "seg", "k", cur.VersionID)
			if err != nil || !ok {
				t.Fatalf("CompactSegments = %v, %v", ok, err)
			}
			after := versionSegs(t, s, "seg", "k", cur.VersionID)
			if len(after) >= len(before) || len(after) > 3 {
				t.Fatalf("segments: %d before, %d after", len(before), len(after))
			}
			if got := readAll(t, s, "seg", "k", GetOptions{}); !bytes.Equal(got, model) {
				t.Fatal("content changed by the compaction")
			}
			info, err := s.Head(ctx, "seg", "k", GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			sameInfo(t, info, cur)
			if got := s.Stats().SegmentCompactions; got != 1 {
				t.Fatalf("SegmentCompactions = %d", got)
			}
			// The reader opened before still reads the old data, before
			// and after a cleaner pass.
			if !bytes.Equal(readerBytes(t, r0), model) {
				t.Fatal("reader opened before the compaction reads other bytes")
			}
			if _, err := s.Clean(ctx); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(readerBytes(t, r0), model) {
				t.Fatal("reader opened before the compaction reads other bytes after Clean")
			}
			if err := r0.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Clean(ctx); err != nil {
				t.Fatal(err)
			}
			if tc.versioned {
				if got := readAll(t, s, "seg", "k", GetOptions{VersionID: older.VersionID}); !bytes.Equal(got, olderModel) {
					t.Fatal("older version's content changed")
				}
				ok, err := s.CompactSegments(ctx, "seg", "k", older.VersionID)
				if err != nil || !ok {
					t.Fatalf("CompactSegments of the older version = %v, %v", ok, err)
				}
				if got := readAll(t, s, "seg", "k", GetOptions{VersionID: older.VersionID}); !bytes.Equal(got, olderModel) {
					t.Fatal("older version's content changed by its compaction")
				}
				if _, err := s.Clean(ctx); err != nil {
					t.Fatal(err)
				}
			}
			if got := readAll(t, s, "seg", "k", GetOptions{}); !bytes.Equal(got, model) {
				t.Fatal("content changed after Clean")
			}
			// Nothing left to do, and appending goes on from the compacted list.
			if ok, err := s.CompactSegments(ctx, "seg", "k", cur.VersionID); ok || err != nil {
				t.Fatalf("second CompactSegments = %v, %v", ok, err)
			}
			model, _ = appendMany(t, s, "seg", "k", model, 3, 100, 2)
			if got := readAll(t, s, "seg", "k", GetOptions{}); !bytes.Equal(got, model) {
				t.Fatal("append after compaction")
			}
		})
	}
}

// TestCompactSegmentsRaced changes the version between the plan and the
// commit: a change of its list makes the compaction a no-op; a change of
// its attributes only, or a newer version beside it, does not.
func TestCompactSegmentsRaced(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		name      string
		versioned bool
		change    func(t *testing.T, s *Store, model []byte) []byte
		compacted bool
	}{
		{"append", false, func(t *testing.T, s *Store, model []byte) []byte {
			m, _ := appendMany(t, s, "seg", "k", model, 1, 100, 9)
			return m
		}, false},
		// The planned version stays as it was, beside the new one.
		{"append, versioned", true, func(t *testing.T, s *Store, model []byte) []byte {
			m, _ := appendMany(t, s, "seg", "k", model, 1, 100, 9)
			return m
		}, true},
		{"overwrite", false, func(t *testing.T, s *Store, _ []byte) []byte {
			mustPut(t, s, "seg", "k", []byte("new"))
			return []byte("new")
		}, false},
		{"delete", false, func(t *testing.T, s *Store, _ []byte) []byte {
			if _, err := s.Delete(ctx, "seg", "k", DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			return nil
		}, false},
		{"attributes", false, func(t *testing.T, s *Store, model []byte) []byte {
			if _, err := s.SetAttrs(ctx, "seg", "k", "", func(_ ObjectInfo, a *Attrs) error {
				a.Owner = "someone"
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			return model
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := segTestStore(t)
			mustBucket(t, s, "seg")
			if tc.versioned {
				if err := s.SetVersioning(ctx, "seg", VersioningEnabled); err != nil {
					t.Fatal(err)
				}
			}
			model, infos := appendMany(t, s, "seg", "k", nil, 40, 2000, 3)
			vid := infos[len(infos)-1].VersionID
			p, err := s.planSegments(ctx, "seg", "k", vid)
			if err != nil || p == nil {
				t.Fatalf("plan = %v, %v", p, err)
			}
			model = tc.change(t, s, model)
			ok, err := s.applySegPlan(ctx, p)
			if err != nil || ok != tc.compacted {
				t.Fatalf("applySegPlan = %v, %v; want %v", ok, err, tc.compacted)
			}
			if model == nil {
				if _, err := s.Head(ctx, "seg", "k", GetOptions{}); err == nil {
					t.Fatal("deleted key is back")
				}
			} else if got := readAll(t, s, "seg", "k", GetOptions{}); !bytes.Equal(got, model) {
				t.Fatal("content")
			}
			if tc.name == "attributes" {
				if info, _ := s.Head(ctx, "seg", "k", GetOptions{}); info.Attrs.Owner != "someone" {
					t.Fatalf("attributes lost: %+v", info)
				}
			}
			if _, err := s.Clean(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestSegmentCompactorBackground has the background compactor pick up a
// noted version and, after a reopen, the versions Open's scan finds.
func TestSegmentCompactorBackground(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, opt := newTestStore(t, 4, 2, func(o *Options) {
		o.PackMaxSize = 4 << 10
		o.NoBackground = false
		o.SegmentCompactMin = 20
	})
	mustBucket(t, s, "seg")
	waitSegs := func(s *Store, key string, want int) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			n := len(versionSegs(t, s, "seg", key, NullVersion))
			if n <= want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s still has %d segments", key, n)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	// Appends note their versions; a note by hand as well counts once.
	model, infos := appendMany(t, s, "seg", "noted", nil, 30, 2000, 4)
	s.noteSegments("seg", "noted", infos[len(infos)-1].VersionID, 30)
	waitSegs(s, "noted", 1)
	if got := readAll(t, s, "seg", "noted", GetOptions{}); !bytes.Equal(got, model) {
		t.Fatal("content")
	}
	// A multipart object notes itself: its small parts are compacted.
	up, err := s.CreateMultipartUpload(ctx, "seg", "parts", PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var parts []CompletePart
	var whole []byte
	for i := 1; i <= 25; i++ {
		b := randBytes(1000+i, uint64(100+i))
		p, err := s.PutPart(ctx, "seg", "parts", up, i, bytes.NewReader(b), int64(len(b)), PartOptions{})
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, CompletePart{Number: i, ETag: p.ETag})
		whole = append(whole, b...)
	}
	if _, err := s.CompleteMultipartUpload(ctx, "seg", "parts", up, parts, PutOptions{}); err != nil {
		t.Fatal(err)
	}
	waitSegs(s, "parts", 1)
	if got := readAll(t, s, "seg", "parts", GetOptions{}); !bytes.Equal(got, whole) {
		t.Fatal("multipart content")
	}
	// Unnoted, the version waits for the next Open's scan.
	model2, _ := appendMany(t, s, "seg", "scanned", nil, 30, 2000, 5)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2, err := Open(ctx, withBolt(t, opt))
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	waitSegs(s2, "scanned", 1)
	if got := readAll(t, s2, "seg", "scanned", GetOptions{}); !bytes.Equal(got, model2) {
		t.Fatal("content after the scan's compaction")
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		h, err := s2.Health(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if h.SegmentBacklog == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("segment backlog stays %d", h.SegmentBacklog)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestCompactSegmentsCrash cuts the power of the drives at points of a
// segment compaction: after its data is written and before its commit,
// after a commit whose flush failed, and after its commit. The store
// opened again holds the version whole, compacted only when the commit
// was acknowledged, and fsck is clean.
func TestCompactSegmentsCrash(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		// compact runs the compaction up to the crash and reports whether
		// it was acknowledged.
		compact func(t *testing.T, s *Store, fds []*faultdrive.Drive, vid string) bool
	}{
		{"written, not committed", func(t *testing.T, s *Store, _ []*faultdrive.Drive, vid string) bool {
			p, err := s.planSegments(ctx, "seg", "k", vid)
			if err != nil || p == nil {
				t.Fatalf("plan = %v, %v", p, err)
			}
			if d, err := s.writeRanges(ctx, "seg", "k", p.v, p.old, p.ranges); d == nil || err != nil {
				t.Fatalf("writeRanges = %v, %v", d, err)
			}
			return false
		}},
		{"flush failed", func(t *testing.T, s *Store, fds []*faultdrive.Drive, vid string) bool {
			for _, fd := range fds {
				fd.SetRules([]faultdrive.Rule{{Op: faultdrive.OpSync, Err: syscall.EIO}, {Op: faultdrive.OpSyncFiles, Err: syscall.EIO}})
			}
			if ok, err := s.CompactSegments(ctx, "seg", "k", vid); ok || err == nil {
				t.Fatalf("CompactSegments with failing flushes = %v, %v", ok, err)
			}
			return false
		}},
		{"committed", func(t *testing.T, s *Store, _ []*faultdrive.Drive, vid string) bool {
			if ok, err := s.CompactSegments(ctx, "seg", "k", vid); !ok || err != nil {
				t.Fatalf("CompactSegments = %v, %v", ok, err)
			}
			return true
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			base := Options{Dir: t.TempDir(), DriveCount: 4, Parity: 2, BlockSize: 64 << 10, MinPartSize: 1,
				PackMaxSize: 4 << 10, NoBackground: true, SegmentCompactMin: 8}
			opt := base
			open, drives := powerDrives(base)
			opt.OpenDrive = open
			s, err := Open(ctx, withBolt(t, opt))
			if err != nil {
				t.Fatal(err)
			}
			mustBucket(t, s, "seg")
			model, infos := appendMany(t, s, "seg", "k", nil, 40, 3000, 7)
			vid := infos[len(infos)-1].VersionID
			before := versionSegs(t, s, "seg", "k", vid)
			acked := tc.compact(t, s, drives(), vid)
			if err := faultdrive.Crash(ctx, drives()...); err != nil {
				t.Fatalf("crash: %v", err)
			}
			_ = s.Close()

			plain := base
			plain.Parity = -1
			s2, err := Open(ctx, withBolt(t, plain))
			if err != nil {
				t.Fatal(err)
			}
			if got := readAll(t, s2, "seg", "k", GetOptions{}); !bytes.Equal(got, model) {
				t.Error("content after the crash")
			}
			after := versionSegs(t, s2, "seg", "k", vid)
			if compacted := len(after) < len(before); compacted != acked {
				t.Errorf("%d segments before, %d after the crash; compaction acknowledged: %v", len(before), len(after), acked)
			}
			if _, err := s2.Clean(ctx); err != nil {
				t.Fatal(err)
			}
			if err := s2.Close(); err != nil {
				t.Fatal(err)
			}
			rep, err := Fsck(ctx, withBolt(t, plain), nil)
			if err != nil || !rep.Clean() {
				t.Fatalf("fsck after the crash: %+v %v", rep, err)
			}
		})
	}
}

func TestSegmentCompactMinValidated(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		min int
		ok  bool
	}{
		{0, true}, {1, true}, {MaxSegments, true}, {-1, false}, {MaxSegments + 1, false},
	} {
		err := (Options{Dir: t.TempDir(), SegmentCompactMin: tc.min}).Validate()
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, ErrInvalidArgument)) {
			t.Errorf("SegmentCompactMin %d: %v", tc.min, err)
		}
	}
	if got := (Options{}).withDefaults().SegmentCompactMin; got != 256 {
		t.Errorf("default SegmentCompactMin = %d", got)
	}
}

// TestSegmentBacklog counts the noted versions in Health until the
// compactor (run by hand here) has taken them, repeats and versions with
// few segments not counted.
func TestSegmentBacklog(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := segTestStore(t)
	mustBucket(t, s, "seg")
	backlog := func(want int) {
		t.Helper()
		h, err := s.Health(ctx)
		if err != nil || h.SegmentBacklog != want {
			t.Fatalf("Health = %+v, %v; want a segment backlog of %d", h, err, want)
		}
	}
	backlog(0)
	_, infos := appendMany(t, s, "seg", "k", nil, 20, 1000, 11) // each append notes its version
	backlog(1)
	vid := infos[len(infos)-1].VersionID
	s.noteSegments("seg", "k", vid, 20)          // a repeat counts once
	s.noteSegments("seg", "few", NullVersion, 8) // not past SegmentCompactMin
	backlog(1)
	if n := s.compactQueued(ctx, 0); n != 1 {
		t.Fatalf("compactQueued = %d", n)
	}
	backlog(0)
	if got := len(versionSegs(t, s, "seg", "k", vid)); got != 1 {
		t.Fatalf("%d segments after the compaction", got)
	}
	// A version noted as current and replaced since is skipped.
	_, infos = appendMany(t, s, "seg", "v", nil, 20, 1000, 12)
	s.noteSegments("seg", "v", infos[len(infos)-1].VersionID, 20)
	if err := s.SetVersioning(ctx, "seg", VersioningEnabled); err != nil {
		t.Fatal(err)
	}
	mustPut(t, s, "seg", "v", []byte("newer"))
	if n := s.compactQueued(ctx, 0); n != 0 {
		t.Fatalf("compactQueued of a replaced version = %d", n)
	}
	// A key written to within the quiet period waits for a later pass.
	mustBucket(t, s, "quiet")
	appendMany(t, s, "quiet", "w", nil, 20, 1000, 13)
	if n := s.compactQueued(ctx, time.Hour); n != 0 {
		t.Fatalf("compactQueued of a key just written = %d", n)
	}
	backlog(1)
	if n := s.compactQueued(ctx, 0); n != 1 {
		t.Fatalf("compactQueued once quiet = %d", n)
	}
	backlog(0)
}
