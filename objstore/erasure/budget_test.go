package erasure

import (
	"context"
	"crypto/md5"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
	"testing"
)

// TestBudgetBoundsWriters runs many Writers on a budget of a few block
// buffers: together they never hold more than the budget, they all finish
// with their data intact, and every buffer is given back.
func TestBudgetBoundsWriters(t *testing.T) {
	for _, tc := range []struct {
		name    string
		buffers int
		inline  bool
	}{
		{"one buffer", 1, false},
		{"three buffers", 3, false},
		{"inline", 2, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newTestCodec(t, geometry{2, 2}, testBlockSize)
			b := NewBudget(int64(tc.buffers * c.bufLen()))
			const writers = 8
			var wg sync.WaitGroup
			files := make([][]*MemFile, writers)
			hdrs := make([]Header, writers)
			datas := make([][]byte, writers)
			errs := make([]error, writers)
			for i := range writers {
				datas[i] = testData(10*testBlockSize+i, uint64(i))
				wg.Go(func() {
					files[i], hdrs[i], errs[i] = encodeWithBudget(c, b, datas[i], tc.inline)
				})
			}
			wg.Wait()
			for i := range writers {
				if errs[i] != nil {
					t.Fatalf("writer %d: %v", i, errs[i])
				}
				got, _, err := readBlocks(c, hdrs[i], readers(files[i], 0))
				if err != nil {
					t.Fatalf("writer %d: read back: %v", i, err)
				}
				mustEqualBytes(t, fmt.Sprintf("writer %d", i), got, datas[i])
			}
			if p := b.Peak(); p > b.Size() || p < int64(c.bufLen()) {
				t.Errorf("peak %d bytes, budget %d, one buffer %d", p, b.Size(), c.bufLen())
			}
			if n := b.InUse(); n != 0 {
				t.Errorf("%d bytes still taken after every Writer closed", n)
			}
		})
	}
}

// encodeWithBudget is encode with the Writer on budget b, hashing too (an
// observer holds buffers as well).
func encodeWithBudget(c *Codec, b *Budget, data []byte, inline bool) ([]*MemFile, Header, error) {
	hdr := Header{DataID: testID(1), Bucket: "bucket", Key: "k", Size: int64(len(data))}
	files := make([]*MemFile, c.K()+c.M())
	sinks := make([]io.WriterAt, len(files))
	for i := range files {
		files[i] = &MemFile{}
		sinks[i] = files[i]
	}
	newW := c.NewWriter
	if inline {
		newW = c.NewInlineWriter
	}
	w, err := newW(context.Background(), hdr, sinks)
	if err != nil {
		return nil, hdr, err
	}
	w.UseBudget(b)
	w.HashWith(md5.New())
	if _, err := w.Write(data); err != nil {
		_ = w.Close()
		return nil, hdr, err
	}
	if err := w.Close(); err != nil {
		return nil, hdr, err
	}
	hdr.K, hdr.M, hdr.BlockSize = c.K(), c.M(), c.BlockSize()
	return files, hdr, nil
}

// gatedSink is a MemFile whose writes wait until gate is closed.
type gatedSink struct {
	MemFile
	gate <-chan struct{}
}

func (s *gatedSink) WriteAt(p []byte, off int64) (int, error) {
	<-s.gate
	return s.MemFile.WriteAt(p, off)
}

// TestBudgetWaits checks that a Writer with a full block while the budget
// is spent (by a block another Writer's stuck sink has not written) waits
// for it, and goes on once the holder's block is written.
func TestBudgetWaits(t *testing.T) {
	c := newTestCodec(t, geometry{2, 1}, testBlockSize)
	b := NewBudget(int64(c.bufLen()))
	ctx := context.Background()
	newW := func(sinks ...io.WriterAt) *Writer {
		w, err := c.NewWriter(ctx, Header{}, sinks)
		if err != nil {
			t.Fatal(err)
		}
		w.UseBudget(b)
		return w
	}
	gate := make(chan struct{})
	holder := newW(&gatedSink{gate: gate}, &gatedSink{gate: gate}, &gatedSink{gate: gate})
	if _, err := holder.Write(testData(testBlockSize, 1)); err != nil { // one full block, queued
		t.Fatal(err)
	}
	if b.InUse() != int64(c.bufLen()) {
		t.Fatalf("a queued block holds %d bytes of the budget, want %d", b.InUse(), c.bufLen())
	}
	waiter := newW(&MemFile{}, &MemFile{}, &MemFile{})
	done := make(chan error, 1)
	go func() {
		_, err := waiter.Write(testData(testBlockSize, 2))
		done <- err
	}()
	for b.Waiting() == 0 {
		select {
		case err := <-done:
			t.Fatalf("second Writer queued a block past a spent budget: %v", err)
		default:
			runtime.Gosched()
		}
	}
	close(gate)
	if err := holder.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("second Writer after the buffer came back: %v", err)
	}
	if err := waiter.Close(); err != nil {
		t.Fatal(err)
	}
	if b.InUse() != 0 || b.Peak() != int64(c.bufLen()) {
		t.Fatalf("in use %d, peak %d, want 0 and %d", b.InUse(), b.Peak(), c.bufLen())
	}
}

// TestBudgetSlowBodies checks that Writers whose bodies stall part-way
// through a block (slow uploads) hold none of the budget: with more of
// them than the budget has buffers, another Writer still goes through.
func TestBudgetSlowBodies(t *testing.T) {
	c := newTestCodec(t, geometry{2, 2}, testBlockSize)
	b := NewBudget(int64(2 * c.bufLen()))
	var stalled []*Writer
	for i := range 5 {
		w, err := c.NewWriter(context.Background(), Header{}, []io.WriterAt{&MemFile{}, &MemFile{}, &MemFile{}, &MemFile{}})
		if err != nil {
			t.Fatal(err)
		}
		w.UseBudget(b)
		// A block and a half: one block written, half of the next waiting for bytes.
		if _, err := w.Write(testData(testBlockSize+testBlockSize/2, uint64(i))); err != nil {
			t.Fatal(err)
		}
		stalled = append(stalled, w)
	}
	data := testData(6*testBlockSize+3, 9)
	files, hdr, err := encodeWithBudget(c, b, data, false)
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := readBlocks(c, hdr, readers(files, 0))
	if err != nil {
		t.Fatal(err)
	}
	mustEqualBytes(t, "writer beside stalled ones", got, data)
	for _, w := range stalled {
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if b.InUse() != 0 || b.Peak() > b.Size() {
		t.Fatalf("in use %d, peak %d of %d", b.InUse(), b.Peak(), b.Size())
	}
}

// TestBudgetReleasedOnCancel checks that a Writer stopped by its context,
// with chunks queued for a stuck sink, gives every buffer back on Close.
func TestBudgetReleasedOnCancel(t *testing.T) {
	for _, buffers := range []int{1, 2, 8, 100} {
		t.Run(fmt.Sprint(buffers), func(t *testing.T) {
			c := newTestCodec(t, geometry{2, 1}, testBlockSize)
			b := NewBudget(int64(buffers * c.bufLen()))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			w, err := c.NewWriter(ctx, Header{}, []io.WriterAt{&MemFile{}, &MemFile{}, blockingSink{ctx}})
			if err != nil {
				t.Fatal(err)
			}
			w.UseBudget(b)
			w.HashWith(md5.New())
			written := make(chan error)
			go func() {
				_, err := w.Write(testData(200*testBlockSize, 2))
				written <- err
			}()
			// The stuck sink stops the Write once its queue or the budget
			// is full; wait until some buffer is taken, then cancel.
			for b.InUse() == 0 {
				runtime.Gosched()
			}
			cancel()
			if err := <-written; !errors.Is(err, context.Canceled) {
				t.Fatalf("Write: %v", err)
			}
			if err := w.Close(); !errors.Is(err, context.Canceled) {
				t.Fatalf("Close: %v", err)
			}
			if n := b.InUse(); n != 0 {
				t.Fatalf("%d bytes still taken after Close", n)
			}
		})
	}
}

// TestBudgetLargerBuffer checks that a buffer larger than the whole budget
// takes the whole budget instead of waiting forever.
func TestBudgetLargerBuffer(t *testing.T) {
	c := newTestCodec(t, geometry{2, 2}, testBlockSize)
	b := NewBudget(int64(c.bufLen() / 3))
	data := testData(3*testBlockSize, 3)
	if _, _, err := encodeWithBudget(c, b, data, false); err != nil {
		t.Fatal(err)
	}
	if b.Peak() != b.Size() || b.InUse() != 0 {
		t.Fatalf("peak %d, in use %d; want %d and 0", b.Peak(), b.InUse(), b.Size())
	}
}
