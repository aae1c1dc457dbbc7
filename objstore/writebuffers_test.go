package objstore

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sync"
	"testing"
)

// TestWriteBuffersBounded runs many concurrent puts on a store whose
// block-buffer budget (Options.WriteBuffers) fits a few buffers: the puts
// never hold more than the budget together, all succeed with their bytes
// intact, and every buffer is given back.
func TestWriteBuffersBounded(t *testing.T) {
	const blockSize = 64 << 10
	// A 2+2 block buffer is 4 chunks of blockSize/2 bytes and a checksum.
	const buffer = 4 * (blockSize/2 + 4)
	for _, tc := range []struct {
		name    string
		budget  int64
		size    int // object size
		unsized bool
		pack    int64 // Options.PackMaxSize
	}{
		{"streamed", 3 * buffer, 5*blockSize + 7, false, -1},
		{"one buffer", buffer, 3 * blockSize, false, -1},
		{"size unknown", 2 * buffer, 4*blockSize + 1, true, -1},
		{"packed", 2 * buffer, 3000, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := newTestStore(t, 4, 2, func(o *Options) {
				o.BlockSize, o.WriteBuffers, o.PackMaxSize = blockSize, tc.budget, tc.pack
			})
			mustBucket(t, s, "bufs")
			const puts = 16
			datas := make([][]byte, puts)
			errs := make([]error, puts)
			var wg sync.WaitGroup
			for i := range puts {
				datas[i] = randBytes(tc.size+i, uint64(i))
				wg.Go(func() {
					size := int64(len(datas[i]))
					var body io.Reader = bytes.NewReader(datas[i])
					if tc.unsized {
						size, body = -1, io.MultiReader(body) // no length to see
					}
					_, errs[i] = s.Put(context.Background(), "bufs", fmt.Sprint("k", i), body, size, PutOptions{})
				})
			}
			wg.Wait()
			for i, err := range errs {
				if err != nil {
					t.Fatalf("put %d: %v", i, err)
				}
				if got := readAll(t, s, "bufs", fmt.Sprint("k", i), GetOptions{}); !bytes.Equal(got, datas[i]) {
					t.Fatalf("k%d: read back %d bytes, not the %d put", i, len(got), len(datas[i]))
				}
			}
			b := s.writeBufs
			if b.Size() != tc.budget {
				t.Fatalf("budget %d bytes, want Options.WriteBuffers %d", b.Size(), tc.budget)
			}
			if p := b.Peak(); p > tc.budget || p < buffer {
				t.Errorf("puts held %d bytes of block buffers at most; want one buffer (%d) to the budget (%d)", p, buffer, tc.budget)
			}
			if n := b.InUse(); n != 0 {
				t.Errorf("%d bytes of block buffers still taken after every put returned", n)
			}
		})
	}
}

// TestWriteBuffersUnbounded checks that a negative Options.WriteBuffers
// turns the bound off.
func TestWriteBuffersUnbounded(t *testing.T) {
	s, _ := newTestStore(t, 4, 2, func(o *Options) { o.WriteBuffers = -1 })
	if s.writeBufs != nil {
		t.Fatalf("budget of %d bytes with WriteBuffers -1", s.writeBufs.Size())
	}
	mustBucket(t, s, "bufs")
	data := randBytes(200<<10, 1)
	mustPut(t, s, "bufs", "k", data)
	if got := readAll(t, s, "bufs", "k", GetOptions{}); !bytes.Equal(got, data) {
		t.Fatal("read back differs")
	}
}

// TestWriteBuffersSlowUploads checks that puts whose bodies stall (slow
// clients) hold none of the budget: with more of them than the budget has
// buffers, another put still goes through, and the stalled ones finish
// once their bodies do.
func TestWriteBuffersSlowUploads(t *testing.T) {
	const blockSize = 64 << 10
	const buffer = 4 * (blockSize/2 + 4)
	s, _ := newTestStore(t, 4, 2, func(o *Options) {
		o.BlockSize, o.WriteBuffers, o.PackMaxSize = blockSize, 2*buffer, -1
	})
	mustBucket(t, s, "slow")
	const slow = 6
	size := 3 * blockSize
	writers := make([]*io.PipeWriter, slow)
	errs := make(chan error, slow)
	datas := make([][]byte, slow)
	for i := range slow {
		pr, pw := io.Pipe()
		writers[i], datas[i] = pw, randBytes(size, uint64(i))
		go func() {
			_, err := s.Put(context.Background(), "slow", fmt.Sprint("slow", i), pr, int64(size), PutOptions{})
			errs <- err
		}()
		if _, err := pw.Write(datas[i][:blockSize+blockSize/2]); err != nil { // then nothing for a while
			t.Fatal(err)
		}
	}
	fast := randBytes(5*blockSize, 99)
	if _, err := s.Put(context.Background(), "slow", "fast", bytes.NewReader(fast), int64(len(fast)), PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, s, "slow", "fast", GetOptions{}); !bytes.Equal(got, fast) {
		t.Fatal("fast put read back wrong")
	}
	for i, pw := range writers {
		if _, err := pw.Write(datas[i][blockSize+blockSize/2:]); err != nil {
			t.Fatal(err)
		}
		_ = pw.Close()
	}
	for range slow {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	for i := range slow {
		if got := readAll(t, s, "slow", fmt.Sprint("slow", i), GetOptions{}); !bytes.Equal(got, datas[i]) {
			t.Fatalf("slow%d read back wrong", i)
		}
	}
	if n := s.writeBufs.InUse(); n != 0 {
		t.Fatalf("%d bytes of block buffers still taken", n)
	}
}
