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
