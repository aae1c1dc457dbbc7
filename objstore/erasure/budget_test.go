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

// TestBudgetWaits checks that a Writer needing a buffer while the budget
// is spent waits for it, and goes on once the holder gives it back.
func TestBudgetWaits(t *testing.T) {
	c := newTestCodec(t, geometry{2, 1}, testBlockSize)
	b := NewBudget(int64(c.bufLen()))
	ctx := context.Background()
	newW := func() *Writer {
		w, err := c.NewWriter(ctx, Header{}, []io.WriterAt{&MemFile{}, &MemFile{}, &MemFile{}})
		if err != nil {
			t.Fatal(err)
		}
		w.UseBudget(b)
		return w
	}
	holder := newW()
	if _, err := holder.Write(testData(testBlockSize/2, 1)); err != nil {
		t.Fatal(err)
	}
	waiter := newW()
	done := make(chan error, 1)
	go func() {
		_, err := waiter.Write(testData(testBlockSize/2, 2))
		done <- err
	}()
	for b.Waiting() == 0 {
		select {
		case err := <-done:
			t.Fatalf("second Writer wrote past a spent budget: %v", err)
		default:
			runtime.Gosched()
		}
	}
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
