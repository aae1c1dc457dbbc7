package drivetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"sync"
	"testing"

	"github.com/cairnstore/cairn/objstore/drive"
)

// Run runs the suite; newDrive returns a fresh, empty drive (cleaned up
// by the test).
func Run(t *testing.T, newDrive func(t *testing.T) drive.Drive) {
	tests := []struct {
		name string
		fn   func(t *testing.T, d drive.Drive)
	}{
		{"Describe", testDescribe},
		{"CreateWriteRead", testCreateWriteRead},
		{"CreateTruncates", testCreateTruncates},
		{"Absent", testAbsent},
		{"Remove", testRemove},
		{"Walk", testWalk},
		{"Packs", testPacks},
		{"StageCommit", testStageCommit},
		{"StageAbort", testStageAbort},
		{"Flush", testFlush},
		{"CanceledContext", testCanceled},
		{"BadNames", testBadNames},
		{"Concurrent", testConcurrent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.fn(t, newDrive(t)) })
	}
}

func payload(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = seed + byte(i*7) + byte(i>>8)
	}
	return b
}

// put creates shard name holding b, written in chunks of chunk bytes.
func put(t *testing.T, d drive.Drive, name string, b []byte, chunk int) {
	t.Helper()
	w, err := d.Create(context.Background(), name)
	if err != nil {
		t.Fatalf("create %s: %v", name, err)
	}
	for off := 0; off < len(b); off += chunk {
		end := min(off+chunk, len(b))
		if n, err := w.WriteAt(b[off:end], int64(off)); err != nil || n != end-off {
			t.Fatalf("write %s at %d: %d, %v", name, off, n, err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatalf("close %s: %v", name, err)
	}
}

// get reads the whole shard name.
func get(t *testing.T, d drive.Drive, name string) []byte {
	t.Helper()
	r, err := d.Open(context.Background(), name)
	if err != nil {
		t.Fatalf("open %s: %v", name, err)
	}
	defer func() { _ = r.Close() }()
	b, err := io.ReadAll(io.NewSectionReader(r, 0, 1<<40))
	if err != nil {
		t.Fatalf("read %s: %v", name, err)
	}
	return b
}

func walk(t *testing.T, d drive.Drive) []string {
	t.Helper()
	var names []string
	if err := d.Walk(context.Background(), func(n string) error { names = append(names, n); return nil }); err != nil {
		t.Fatalf("walk: %v", err)
	}
	slices.Sort(names)
	return names
}

func testDescribe(t *testing.T, d drive.Drive) {
	if d.String() == "" {
		t.Error("String is empty")
	}
	if d.Index() < 0 {
		t.Errorf("Index %d", d.Index())
	}
}

func testCreateWriteRead(t *testing.T, d drive.Drive) {
	for _, tc := range []struct {
		name  string
		size  int
		chunk int
	}{
		{"0a01", 1, 1},
		{"0a02", 4096, 100},
		{"0b03", 3<<20 + 17, 1 << 20},
		{"ff04", 70000, 65536},
	} {
		want := payload(tc.size, byte(tc.size))
		put(t, d, tc.name, want, tc.chunk)
		if got := get(t, d, tc.name); !bytes.Equal(got, want) {
			t.Errorf("%s: read %d bytes, want the %d written", tc.name, len(got), len(want))
		}
		r, err := d.Open(context.Background(), tc.name)
		if err != nil {
			t.Fatal(err)
		}
		var one [1]byte
		if n, err := r.ReadAt(one[:], int64(tc.size)); n != 0 || !errors.Is(err, io.EOF) {
			t.Errorf("%s: read at the end: %d, %v; want 0, io.EOF", tc.name, n, err)
		}
		_ = r.Close()
	}
	// Out of order writes, and rewriting the start last (the erasure
	// Writer's header).
	want := payload(10000, 9)
	w, err := d.Create(context.Background(), "0c05")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range [][2]int{{0, 100}, {5000, 10000}, {100, 5000}, {0, 100}} {
		if _, err := w.WriteAt(want[r[0]:r[1]], int64(r[0])); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := get(t, d, "0c05"); !bytes.Equal(got, want) {
		t.Error("out-of-order writes read back wrong")
	}
	// An aborted writer leaves whatever it left; removing it must work.
	w, err = d.Create(context.Background(), "0c06")
	if err != nil {
		t.Fatal(err)
	}
	_, _ = w.WriteAt([]byte("x"), 0)
	w.Abort()
	if err := d.Remove(context.Background(), "0c06"); err != nil {
		t.Errorf("remove after abort: %v", err)
	}
}

func testCreateTruncates(t *testing.T, d drive.Drive) {
	put(t, d, "1a00", payload(9000, 1), 9000)
	put(t, d, "1a00", []byte("short"), 5)
	if got := get(t, d, "1a00"); string(got) != "short" {
		t.Errorf("after re-create: %d bytes, want %q", len(got), "short")
	}
}

func testAbsent(t *testing.T, d drive.Drive) {
	ctx := context.Background()
	if _, err := d.Open(ctx, "2a00"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Open absent: %v, want fs.ErrNotExist", err)
	}
	if _, err := d.OpenPack(ctx, 77, false); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("OpenPack absent: %v, want fs.ErrNotExist", err)
	}
	if err := d.SyncFiles(ctx, []string{"2a00"}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("SyncFiles absent: %v, want fs.ErrNotExist", err)
	}
	if err := d.SyncPacks(ctx, []uint64{77}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("SyncPacks absent: %v, want fs.ErrNotExist", err)
	}
	if err := d.Remove(ctx, "2a00"); err != nil {
		t.Errorf("Remove absent: %v", err)
	}
	if err := d.RemovePack(ctx, 77); err != nil {
		t.Errorf("RemovePack absent: %v", err)
	}
	if names := walk(t, d); len(names) != 0 {
		t.Errorf("empty drive walks %v", names)
	}
	if segs, err := d.Packs(ctx); err != nil || len(segs) != 0 {
		t.Errorf("empty drive packs %v, %v", segs, err)
	}
}

func testRemove(t *testing.T, d drive.Drive) {
	ctx := context.Background()
	put(t, d, "3a00", []byte("gone"), 4)
	put(t, d, "3a01", []byte("kept"), 4)
	if err := d.Remove(ctx, "3a00"); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Open(ctx, "3a00"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Open removed: %v, want fs.ErrNotExist", err)
	}
	if err := d.Remove(ctx, "3a00"); err != nil {
		t.Errorf("Remove twice: %v", err)
	}
	if got := walk(t, d); !slices.Equal(got, []string{"3a01"}) {
		t.Errorf("walk %v, want [3a01]", got)
	}
}

func testWalk(t *testing.T, d drive.Drive) {
	want := []string{"00ff", "4b00", "4b01", "a", "ffee"} // sorted
	for _, n := range want {
		put(t, d, n, []byte(n), 8)
	}
	if got := walk(t, d); !slices.Equal(got, want) {
		t.Errorf("walk %v, want %v", got, want)
	}
	stop := errors.New("stop")
	calls := 0
	err := d.Walk(context.Background(), func(string) error { calls++; return stop })
	if !errors.Is(err, stop) || calls != 1 {
		t.Errorf("walk stopping at once: %d calls, %v", calls, err)
	}
	// Pack segments are not shard files.
	p, err := d.OpenPack(context.Background(), 5, true)
	if err != nil {
		t.Fatal(err)
	}
	_ = p.Close()
	if got := walk(t, d); !slices.Equal(got, want) {
		t.Errorf("walk with a pack %v, want %v", got, want)
	}
}

func testPacks(t *testing.T, d drive.Drive) {
	ctx := context.Background()
	p, err := d.OpenPack(ctx, 1, true)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := p.Size(); err != nil || n != 0 {
		t.Errorf("new segment size %d, %v", n, err)
	}
	recs := [][]byte{payload(100, 1), payload(5000, 2), payload(1, 3)}
	var off int64
	var offs []int64
	for _, r := range recs {
		if _, err := p.WriteAt(r, off); err != nil {
			t.Fatal(err)
		}
		offs = append(offs, off)
		off += int64(len(r))
	}
	if n, err := p.Size(); err != nil || n != off {
		t.Errorf("size %d, %v; want %d", n, err, off)
	}
	// Rewriting a record in place (heal does).
	if _, err := p.WriteAt(payload(5000, 9), offs[1]); err != nil {
		t.Fatal(err)
	}
	recs[1] = payload(5000, 9)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	// Reopening without create finds it; create on an existing segment
	// keeps its content.
	for _, create := range []bool{false, true} {
		p, err := d.OpenPack(ctx, 1, create)
		if err != nil {
			t.Fatalf("reopen (create %v): %v", create, err)
		}
		for i, r := range recs {
			b := make([]byte, len(r))
			if _, err := p.ReadAt(b, offs[i]); err != nil || !bytes.Equal(b, r) {
				t.Errorf("create %v: record %d: %v", create, i, err)
			}
		}
		var one [1]byte
		if n, err := p.ReadAt(one[:], off); n != 0 || !errors.Is(err, io.EOF) {
			t.Errorf("read at the end: %d, %v", n, err)
		}
		_ = p.Close()
	}
	p2, err := d.OpenPack(ctx, 1<<40, true)
	if err != nil {
		t.Fatal(err)
	}
	_ = p2.Close()
	segs, err := d.Packs(ctx)
	slices.Sort(segs)
	if err != nil || !slices.Equal(segs, []uint64{1, 1 << 40}) {
		t.Errorf("packs %v, %v", segs, err)
	}
	if err := d.SyncPacks(ctx, segs); err != nil {
		t.Errorf("SyncPacks: %v", err)
	}
	if err := d.RemovePack(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := d.OpenPack(ctx, 1, false); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("removed segment opens: %v", err)
	}
	if segs, _ := d.Packs(ctx); !slices.Equal(segs, []uint64{1 << 40}) {
		t.Errorf("packs after remove %v", segs)
	}
	if got := walk(t, d); len(got) != 0 {
		t.Errorf("segments walked as shards: %v", got)
	}
}

func testStageCommit(t *testing.T, d drive.Drive) {
	ctx := context.Background()
	put(t, d, "5a00", []byte("old content"), 64)
	st, err := d.Stage(ctx, "5a00")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.WriteAt([]byte("new"), 0); err != nil {
		t.Fatal(err)
	}
	if got := get(t, d, "5a00"); string(got) != "old content" {
		t.Errorf("before commit: %q", got)
	}
	if got := walk(t, d); !slices.Equal(got, []string{"5a00"}) {
		t.Errorf("walk while staged: %v", got)
	}
	if err := st.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := get(t, d, "5a00"); string(got) != "new" {
		t.Errorf("after commit: %q", got)
	}
	// Staging a shard that is absent (a lost shard) creates it.
	st, err = d.Stage(ctx, "5a01")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.WriteAt([]byte("rebuilt"), 0); err != nil {
		t.Fatal(err)
	}
	if err := st.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := get(t, d, "5a01"); string(got) != "rebuilt" {
		t.Errorf("staged absent shard: %q", got)
	}
	if got := walk(t, d); !slices.Equal(got, []string{"5a00", "5a01"}) {
		t.Errorf("walk after commits: %v", got)
	}
}

func testStageAbort(t *testing.T, d drive.Drive) {
	ctx := context.Background()
	put(t, d, "6a00", []byte("keep"), 4)
	st, err := d.Stage(ctx, "6a00")
	if err != nil {
		t.Fatal(err)
	}
	_, _ = st.WriteAt([]byte("lost"), 0)
	st.Abort()
	if got := get(t, d, "6a00"); string(got) != "keep" {
		t.Errorf("after abort: %q", got)
	}
	if got := walk(t, d); !slices.Equal(got, []string{"6a00"}) {
		t.Errorf("walk after abort: %v", got)
	}
}

func testFlush(t *testing.T, d drive.Drive) {
	ctx := context.Background()
	put(t, d, "7a00", []byte("a"), 1)
	put(t, d, "7b00", []byte("b"), 1)
	p, err := d.OpenPack(ctx, 3, true)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = p.WriteAt([]byte("rec"), 0)
	for _, tc := range []struct {
		name string
		fn   func() error
	}{
		{"SyncFiles", func() error { return d.SyncFiles(ctx, []string{"7a00", "7b00"}) }},
		{"SyncFiles none", func() error { return d.SyncFiles(ctx, nil) }},
		{"SyncFiles twice the same", func() error { return d.SyncFiles(ctx, []string{"7a00", "7a00"}) }},
		{"SyncPacks", func() error { return d.SyncPacks(ctx, []uint64{3}) }},
		{"SyncPacks none", func() error { return d.SyncPacks(ctx, nil) }},
		{"Sync", func() error { return d.Sync(ctx) }},
	} {
		if err := tc.fn(); err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
	_ = p.Close()
	if got := get(t, d, "7a00"); string(got) != "a" {
		t.Errorf("after flushes: %q", got)
	}
}

func testCanceled(t *testing.T, d drive.Drive) {
	put(t, d, "8a00", []byte("x"), 1)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name string
		fn   func() error
	}{
		{"Create", func() error { _, err := d.Create(ctx, "8a01"); return err }},
		{"Open", func() error { _, err := d.Open(ctx, "8a00"); return err }},
		{"Stage", func() error { _, err := d.Stage(ctx, "8a00"); return err }},
		{"OpenPack", func() error { _, err := d.OpenPack(ctx, 4, true); return err }},
		{"SyncFiles", func() error { return d.SyncFiles(ctx, []string{"8a00"}) }},
		{"SyncPacks", func() error { return d.SyncPacks(ctx, []uint64{4}) }},
		{"Walk", func() error { return d.Walk(ctx, func(string) error { return nil }) }},
	} {
		if err := tc.fn(); !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a canceled context: %v, want context.Canceled", tc.name, err)
		}
	}
}

func testBadNames(t *testing.T, d drive.Drive) {
	ctx := context.Background()
	for _, bad := range []string{"", ".", "..", "a/b", `a\b`, "../x", "/abs"} {
		for _, tc := range []struct {
			op string
			fn func() error
		}{
			{"Create", func() error { _, err := d.Create(ctx, bad); return err }},
			{"Open", func() error { _, err := d.Open(ctx, bad); return err }},
			{"Remove", func() error { return d.Remove(ctx, bad) }},
			{"Stage", func() error { _, err := d.Stage(ctx, bad); return err }},
			{"SyncFiles", func() error { return d.SyncFiles(ctx, []string{bad}) }},
		} {
			if err := tc.fn(); !errors.Is(err, drive.ErrInvalidName) {
				t.Errorf("%s(%q): %v, want drive.ErrInvalidName", tc.op, bad, err)
			}
		}
	}
	if got := walk(t, d); len(got) != 0 {
		t.Errorf("bad names left files: %v", got)
	}
}

func testConcurrent(t *testing.T, d drive.Drive) {
	ctx := context.Background()
	const workers, each = 8, 6
	p, err := d.OpenPack(ctx, 9, true)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = p.Close() }()
	const recLen = 3000
	var wg sync.WaitGroup
	errs := make(chan error, workers*each*4)
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				name := fmt.Sprintf("%02x%02x", w, i)
				b := payload(20000+w*100+i, byte(w*each+i))
				sw, err := d.Create(ctx, name)
				if err != nil {
					errs <- err
					return
				}
				for off := 0; off < len(b); off += 4096 {
					if _, err := sw.WriteAt(b[off:min(off+4096, len(b))], int64(off)); err != nil {
						errs <- err
					}
				}
				if err := sw.Close(); err != nil {
					errs <- err
				}
				slot := int64(w*each+i) * recLen
				if _, err := p.WriteAt(payload(recLen, byte(slot)), slot); err != nil {
					errs <- err
				}
				if err := d.SyncFiles(ctx, []string{name}); err != nil {
					errs <- err
				}
				if err := d.SyncPacks(ctx, []uint64{9}); err != nil {
					errs <- err
				}
				if i%3 == 0 {
					if err := d.Sync(ctx); err != nil {
						errs <- err
					}
				}
				_ = walk(t, d)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got := len(walk(t, d)); got != workers*each {
		t.Errorf("walk found %d shards, want %d", got, workers*each)
	}
	for w := range workers {
		for i := range each {
			name := fmt.Sprintf("%02x%02x", w, i)
			if got := get(t, d, name); !bytes.Equal(got, payload(20000+w*100+i, byte(w*each+i))) {
				t.Errorf("%s read back wrong", name)
			}
			slot := int64(w*each+i) * recLen
			b := make([]byte, recLen)
			if _, err := p.ReadAt(b, slot); err != nil || !bytes.Equal(b, payload(recLen, byte(slot))) {
				t.Errorf("record %d read back wrong: %v", slot, err)
			}
		}
	}
}
