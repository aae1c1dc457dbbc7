package fs

import (
	"bytes"
	"context"
	"io"
	"reflect"
	"testing"

	"github.com/cairnstore/cairn/objstore"
)

// rs is the set of ranges given as offset, length pairs.
func rs(pairs ...int64) rangeSet {
	var out rangeSet
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, objstore.Range{Offset: pairs[i], Length: pairs[i+1]})
	}
	return out
}

// TestRangeSetAdd checks the merging of changed ranges.
func TestRangeSetAdd(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   rangeSet
		off  int64
		n    int64
		want rangeSet
	}{
		{"into-empty", nil, 10, 5, rs(10, 5)},
		{"empty-write", rs(10, 5), 3, 0, rs(10, 5)},
		{"before", rs(10, 5), 0, 5, rs(0, 5, 10, 5)},
		{"after", rs(10, 5), 20, 5, rs(10, 5, 20, 5)},
		{"touching-before", rs(10, 5), 5, 5, rs(5, 10)},
		{"touching-after", rs(10, 5), 15, 5, rs(10, 10)},
		{"inside", rs(10, 10), 12, 3, rs(10, 10)},
		{"covering", rs(10, 10), 0, 100, rs(0, 100)},
		{"bridging-two", rs(0, 5, 10, 5, 30, 5), 4, 7, rs(0, 15, 30, 5)},
		{"bridging-all", rs(0, 5, 10, 5, 30, 5), 5, 25, rs(0, 35)},
		{"between", rs(0, 5, 30, 5), 10, 5, rs(0, 5, 10, 5, 30, 5)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := append(rangeSet(nil), tc.in...)
			if got := in.add(tc.off, tc.n); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("add(%d, %d) to %v = %v, want %v", tc.off, tc.n, tc.in, got, tc.want)
			}
		})
	}
}

// TestRangeSetClip checks the cutting of changed ranges by a truncation.
func TestRangeSetClip(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   rangeSet
		size int64
		want rangeSet
	}{
		{"nothing-past", rs(0, 5, 10, 5), 20, rs(0, 5, 10, 5)},
		{"at-end", rs(0, 5, 10, 5), 15, rs(0, 5, 10, 5)},
		{"cuts-one", rs(0, 5, 10, 5), 12, rs(0, 5, 10, 2)},
		{"drops-one", rs(0, 5, 10, 5), 10, rs(0, 5)},
		{"in-gap", rs(0, 5, 10, 5), 7, rs(0, 5)},
		{"to-zero", rs(0, 5, 10, 5), 0, rs()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := append(rangeSet(nil), tc.in...)
			got := in.clip(tc.size)
			if len(got) == 0 && len(tc.want) == 0 {
				return
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("clip(%d) of %v = %v, want %v", tc.size, tc.in, got, tc.want)
			}
		})
	}
}

// TestPatchedWrites drives a large file's write state through the
// patched phase as the kernel's requests would (no mount): writes,
// reads of the merged content, a truncation and an extension, a commit,
// more writes after it (on the rebased state), and the last release;
// the stored content matches a model at each commit, and only the
// changed bytes reached the drives.
func TestPatchedWrites(t *testing.T) {
	f := newTestFS(t)
	ctx := context.Background()
	d := testBucketDir(t, f, "pbk")
	n := testFileNode(t, d, "f")
	model := bytes.Repeat([]byte("0123456789abcdef"), 40<<10) // 640 KiB
	if _, err := f.store.Put(ctx, "pbk", "f", bytes.NewReader(model), int64(len(model)), objstore.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	h, err := n.beginWrite(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	write := func(off int64, b []byte) {
		t.Helper()
		if _, err := n.writeAt(ctx, b, off); err != nil {
			t.Fatal(err)
		}
		if end := off + int64(len(b)); end > int64(len(model)) {
			model = append(model, make([]byte, end-int64(len(model)))...)
		}
		copy(model[off:], b)
	}
	truncate := func(size int64) {
		t.Helper()
		n.mu.Lock()
		err := n.truncateLocked(size)
		n.mu.Unlock()
		if err != nil {
			t.Fatal(err)
		}
		if size < int64(len(model)) {
			model = model[:size:size]
		} else {
			model = append(model, make([]byte, size-int64(len(model)))...)
		}
	}
	read := func(what string) {
		t.Helper()
		got := make([]byte, len(model)+100)
		k, err := n.readAt(ctx, h, got, 0)
		if err != nil || !bytes.Equal(got[:k], model) {
			t.Fatalf("%s: read %d bytes (%v), equal to the model (%d bytes): %v", what, k, err, len(model), bytes.Equal(got[:k], model))
		}
	}
	stored := func(what string) {
		t.Helper()
		r, err := f.store.Open(ctx, "pbk", "f", objstore.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		got, err := io.ReadAll(r)
		if err != nil || !bytes.Equal(got, model) {
			t.Fatalf("%s: stored %d bytes (%v), equal to the model (%d bytes): %v", what, len(got), err, len(model), bytes.Equal(got, model))
		}
	}
	write(1000, []byte("hello"))
	if n.ws.phase != phasePatched {
		t.Fatalf("phase %s after the first write, want patched", n.ws.phase)
	}
	write(300<<10, bytes.Repeat([]byte{7}, 5000))
	write(int64(len(model))+10, []byte("past the end")) // a hole of 10 zeros
	read("after three writes")
	truncate(200 << 10)
	read("after shrinking")
	truncate(400 << 10) // the cut bytes come back as zeros
	write(250<<10, []byte("in the zeros"))
	read("after growing")
	before := f.store.Stats().DriveBytesWritten
	if err := n.fsync(ctx, true); err != nil {
		t.Fatal(err)
	}
	if wrote := f.store.Stats().DriveBytesWritten - before; wrote > 250<<10 {
		t.Fatalf("the commit wrote %d bytes, want about the 200 KiB changed (zeros of the growth included)", wrote)
	}
	stored("after fsync")
	write(5, []byte("after the commit")) // on the state rebased on that commit
	read("after a write past the commit")
	before = f.store.Stats().DriveBytesWritten
	if err := n.fsync(ctx, true); err != nil {
		t.Fatal(err)
	}
	if wrote := f.store.Stats().DriveBytesWritten - before; wrote > 4<<10 {
		t.Fatalf("the second commit wrote %d bytes, want only the 16 changed ones (and their header)", wrote)
	}
	stored("after the second fsync")
	if errno := h.Release(ctx); errno != 0 {
		t.Fatalf("release: %v", errno)
	}
	stored("after the release")
}

// TestReaderOutlivesInterruptedOpen: the request that opens a writer's
// base (or a handle's pinned version) may be interrupted after the open
// (go-fuse cancels its context): later reads, in other requests, still
// work.
func TestReaderOutlivesInterruptedOpen(t *testing.T) {
	f := newTestFS(t)
	d := testBucketDir(t, f, "pbk")
	n := testFileNode(t, d, "f")
	content := bytes.Repeat([]byte("x"), 300<<10)
	if _, err := f.store.Put(context.Background(), "pbk", "f", bytes.NewReader(content), int64(len(content)), objstore.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	openCtx, interrupt := context.WithCancel(context.Background())
	h, err := n.beginWrite(openCtx, false)
	if err != nil {
		t.Fatal(err)
	}
	interrupt()
	buf := make([]byte, 4096)
	if k, err := n.readAt(context.Background(), h, buf, 1000); err != nil || k != len(buf) {
		t.Fatalf("read of the base after its open was interrupted: %d bytes, %v", k, err)
	}
	if errno := h.Release(context.Background()); errno != 0 {
		t.Fatal(errno)
	}
	reader := &handle{node: n}
	readCtx, interrupt2 := context.WithCancel(context.Background())
	if _, err := reader.pinned(readCtx); err != nil {
		t.Fatal(err)
	}
	interrupt2()
	if k, err := n.readAt(context.Background(), reader, buf, 2000); err != nil || k != len(buf) {
		t.Fatalf("read of a pinned version after the request that pinned it was interrupted: %d bytes, %v", k, err)
	}
	_ = reader.reader.Close()
}

// TestPatchedKept: the last release of a patched file keeps its write
// state (idle); a writer opening the file again goes on with it while the
// key holds what it describes, and starts afresh from the key once
// another face wrote it; each close is committed by the next read.
func TestPatchedKept(t *testing.T) {
	f := newTestFS(t)
	ctx := context.Background()
	d := testBucketDir(t, f, "kbk")
	n := testFileNode(t, d, "f")
	model := bytes.Repeat([]byte("0123456789abcdef"), 40<<10) // 640 KiB
	if _, err := f.store.Put(ctx, "kbk", "f", bytes.NewReader(model), int64(len(model)), objstore.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	stored := func(what string) {
		t.Helper()
		r, err := f.store.Open(ctx, "kbk", "f", objstore.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		got, err := io.ReadAll(r)
		if err != nil || !bytes.Equal(got, model) {
			t.Fatalf("%s: stored %d bytes (%v), equal to the model: %v", what, len(got), err, bytes.Equal(got, model))
		}
	}
	// writeClose opens the file for writing, writes b at off, closes it,
	// and returns the write state it used.
	writeClose := func(off int64, b []byte) *writeState {
		t.Helper()
		h, err := n.beginWrite(ctx, false)
		if err != nil {
			t.Fatal(err)
		}
		ws := n.ws
		if _, err := n.writeAt(ctx, b, off); err != nil {
			t.Fatal(err)
		}
		if errno := h.Flush(ctx); errno != 0 {
			t.Fatalf("flush: %v", errno)
		}
		if errno := h.Release(ctx); errno != 0 {
			t.Fatalf("release: %v", errno)
		}
		copy(model[off:], b)
		return ws
	}
	idle := func() *writeState {
		n.mu.Lock()
		defer n.mu.Unlock()
		return n.idle
	}

	first := writeClose(10, []byte("one"))
	if idle() != first {
		t.Fatal("the last release of a patched file did not keep its state")
	}
	if again := writeClose(20, []byte("two")); again != first {
		t.Fatal("a writer opening the file again did not go on with the kept state")
	}
	stored("after two closes") // the read lets the held patch go

	// Another face writes the key: the next writer starts from it.
	model = bytes.Repeat([]byte("fedcba9876543210"), 40<<10)
	if _, err := f.store.Put(ctx, "kbk", "f", bytes.NewReader(model), int64(len(model)), objstore.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if third := writeClose(30, []byte("three")); third == first {
		t.Fatal("a writer went on with a kept state after another face replaced the key")
	}
	stored("after a close following a put over S3")
}
