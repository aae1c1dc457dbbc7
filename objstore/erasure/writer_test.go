package erasure

import (
	"bytes"
	"context"
	"crypto/md5"
	"errors"
	"fmt"
	"io"
	"slices"
	"testing"
	"time"
)

func TestWriterFailingSinks(t *testing.T) {
	const size = 10*testBlockSize + 3
	tests := []struct {
		g       geometry
		okCalls []int // per shard: successful WriteAts before failing; -1 never fails, 0 is a nil sink
		wantErr bool
	}{
		{geometry{2, 2}, []int{-1, -1, -1, 3}, false}, // quorum 3 of 4
		{geometry{2, 2}, []int{-1, 0, -1, 5}, true},
		{geometry{2, 2}, []int{-1, -1, 2, 5}, true},
		{geometry{2, 2}, []int{-1, -1, 0, -1}, false},
		{geometry{3, 2}, []int{-1, 4, -1, -1, 1}, false}, // quorum 3 of 5
		{geometry{3, 2}, []int{-1, 4, 0, -1, 1}, true},
		{geometry{2, 1}, []int{-1, -1, 1}, false},
		{geometry{2, 1}, []int{-1, 1, 11}, true}, // the last WriteAt (final header) fails
		{geometry{1, 1}, []int{-1, 12}, true},    // quorum 2 of 2
		{geometry{1, 0}, []int{-1}, false},
	}
	for _, tt := range tests {
		for _, inline := range []bool{false, true} {
			t.Run(fmt.Sprintf("inline=%v/%v/%v", inline, tt.g, tt.okCalls), func(t *testing.T) {
				c := newTestCodec(t, tt.g, testBlockSize)
				data := testData(size, 11)
				sinks := make([]io.WriterAt, len(tt.okCalls))
				files := make([]*MemFile, len(tt.okCalls))
				var wantFailed []int
				for i, ok := range tt.okCalls {
					switch {
					case ok == 0:
						wantFailed = append(wantFailed, i)
					case ok < 0:
						files[i] = &MemFile{}
						sinks[i] = files[i]
					default:
						fs := &flakySink{ok: int64(ok)}
						files[i], sinks[i] = &fs.MemFile, fs
						if ok <= 11 { // header + 11 blocks + final header
							wantFailed = append(wantFailed, i)
						}
					}
				}
				w, err := c.newWriter(context.Background(), Header{DataID: testID(5)}, sinks, inline)
				if err != nil {
					if tt.wantErr && errors.Is(err, ErrWriteQuorum) {
						return
					}
					t.Fatalf("NewWriter: %v", err)
				}
				var werr error
				for p := data; len(p) > 0 && werr == nil; {
					n := min(len(p), 3000)
					_, werr = w.Write(p[:n])
					p = p[n:]
				}
				cerr := w.Close()
				if tt.wantErr {
					if !errors.Is(cerr, ErrWriteQuorum) || (werr != nil && !errors.Is(werr, ErrWriteQuorum)) {
						t.Fatalf("Write %v Close %v, want ErrWriteQuorum", werr, cerr)
					}
					if !errors.Is(cerr, errSinkFailed) {
						t.Fatalf("Close %v does not carry the sink's error", cerr)
					}
					return
				}
				if werr != nil || cerr != nil {
					t.Fatalf("Write %v Close %v", werr, cerr)
				}
				if got := w.Failed(); !slices.Equal(got, wantFailed) {
					t.Fatalf("Failed %v, want %v", got, wantFailed)
				}
				hdr := Header{K: tt.g.k, M: tt.g.m, BlockSize: testBlockSize, Size: size, DataID: testID(5)}
				got, bad, err := readBlocks(c, hdr, readers(files))
				if err != nil {
					t.Fatal(err)
				}
				mustEqualBytes(t, "read", got, data)
				for _, i := range wantFailed {
					if tt.g.m > 0 && i < tt.g.k && !slices.Contains(bad, i) {
						t.Errorf("failed data shard %d not reported bad: %v", i, bad)
					}
				}
			})
		}
	}
}

func TestWriterContextCancel(t *testing.T) {
	c := newTestCodec(t, geometry{2, 1}, testBlockSize)
	ctx, cancel := context.WithCancel(context.Background())
	sinks := []io.WriterAt{&MemFile{}, &MemFile{}, &MemFile{}}
	w, err := c.NewWriter(ctx, Header{}, sinks)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(testData(3*testBlockSize, 1)); err != nil {
		t.Fatal(err)
	}
	cancel()
	if _, err := w.Write([]byte("x")); !errors.Is(err, context.Canceled) {
		t.Fatalf("Write after cancel: %v", err)
	}
	done := make(chan error)
	go func() { done <- w.Close() }()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Close: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close hung after cancel")
	}
	if _, err := c.NewWriter(ctx, Header{}, sinks); !errors.Is(err, context.Canceled) {
		t.Fatalf("NewWriter on cancelled ctx: %v", err)
	}
}

// blockingSink blocks every WriteAt until its context is cancelled.
type blockingSink struct{ ctx context.Context }

func (s blockingSink) WriteAt(p []byte, _ int64) (int, error) {
	<-s.ctx.Done()
	return 0, s.ctx.Err()
}

// TestWriterBoundedQueue checks that a stuck sink stalls the writer (bounded
// memory) and that cancelling unblocks it.
func TestWriterBoundedQueue(t *testing.T) {
	c := newTestCodec(t, geometry{2, 1}, testBlockSize)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w, err := c.NewWriter(ctx, Header{}, []io.WriterAt{&MemFile{}, &MemFile{}, blockingSink{ctx}})
	if err != nil {
		t.Fatal(err)
	}
	written := make(chan error)
	go func() {
		_, err := w.Write(testData(100*testBlockSize, 2))
		written <- err
	}()
	select {
	case err := <-written:
		t.Fatalf("Write of 100 blocks finished past a stuck sink: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	cancel()
	if err := <-written; !errors.Is(err, context.Canceled) {
		t.Fatalf("Write: %v", err)
	}
	if err := w.Close(); !errors.Is(err, context.Canceled) {
		t.Fatalf("Close: %v", err)
	}
}

func TestWriterMisuse(t *testing.T) {
	c := newTestCodec(t, geometry{2, 1}, testBlockSize)
	ctx := context.Background()
	if _, err := c.NewWriter(ctx, Header{}, make([]io.WriterAt, 2)); !errors.Is(err, ErrGeometry) {
		t.Errorf("wrong sink count: %v", err)
	}
	long := Header{Key: string(make([]byte, MaxNameLen+1))}
	if _, err := c.NewWriter(ctx, long, []io.WriterAt{&MemFile{}, &MemFile{}, &MemFile{}}); !errors.Is(err, ErrBadHeader) {
		t.Errorf("long key: %v", err)
	}
	if _, err := c.NewWriter(ctx, Header{}, []io.WriterAt{&MemFile{}, nil, nil}); !errors.Is(err, ErrWriteQuorum) {
		t.Errorf("two nil sinks: %v", err)
	}
	w, err := c.NewWriter(ctx, Header{}, []io.WriterAt{&MemFile{}, &MemFile{}, &MemFile{}})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := w.Write([]byte("x")); err == nil {
		t.Error("Write after Close succeeded")
	}
}

// TestWriterHashWith checks that the hash goroutine sees every object
// byte in order, for full and short last blocks and every geometry.
func TestWriterHashWith(t *testing.T) {
	for _, g := range testGeometries {
		for _, size := range []int{1, testBlockSize - 1, 3*testBlockSize + 5, 4 * testBlockSize} {
			c := newTestCodec(t, g, testBlockSize)
			data := testData(size, uint64(size))
			sinks := make([]io.WriterAt, g.k+g.m)
			for i := range sinks {
				sinks[i] = &MemFile{}
			}
			w, err := c.NewWriter(context.Background(), Header{DataID: testID(1)}, sinks)
			if err != nil {
				t.Fatal(err)
			}
			h := md5.New()
			w.HashWith(h)
			for p := data; len(p) > 0; p = p[min(len(p), 1000):] {
				if _, err := w.Write(p[:min(len(p), 1000)]); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if want := md5.Sum(data); !bytes.Equal(h.Sum(nil), want[:]) {
				t.Fatalf("%v size %d: hash differs", g, size)
			}
		}
	}
}
