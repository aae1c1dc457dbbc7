package erasure

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"testing/iotest"
)

func TestReaderIOTest(t *testing.T) {
	for _, g := range []geometry{{1, 0}, {2, 1}, {3, 2}} {
		for _, size := range []int{0, 1, testBlockSize, 3*testBlockSize + 7} {
			for _, drop := range [][]int{nil, {0}} {
				if len(drop) > g.m {
					continue
				}
				t.Run(fmt.Sprintf("%v/%d/drop%v", g, size, drop), func(t *testing.T) {
					c := newTestCodec(t, g, testBlockSize)
					data := testData(size, 15)
					files, hdr := encode(t, c, data)
					r := c.NewReader(context.Background(), hdr, readers(files, drop...), nil)
					if err := iotest.TestReader(r, data); err != nil {
						t.Fatal(err)
					}
				})
			}
		}
	}
}

func TestReaderReadAt(t *testing.T) {
	c := newTestCodec(t, geometry{3, 2}, testBlockSize)
	data := testData(7*testBlockSize+11, 16)
	files, hdr := encode(t, c, data)
	flip(t, files[1], hdr.BlockOffset(3)+7)

	var mu sync.Mutex
	var reported [][]int
	r := c.NewReader(context.Background(), hdr, readers(files, 4), func(s []int) {
		mu.Lock()
		defer mu.Unlock()
		reported = append(reported, s)
	})
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			rnd := rand.New(rand.NewPCG(uint64(w), 1))
			for range 200 {
				off := rnd.Int64N(int64(len(data)) + 10)
				p := make([]byte, rnd.IntN(3*testBlockSize))
				n, err := r.ReadAt(p, off)
				want := data[min(off, int64(len(data))):]
				want = want[:min(len(want), len(p))]
				if n != len(want) || (n < len(p)) != (err == io.EOF) || (err != nil && err != io.EOF) {
					t.Errorf("ReadAt(%d, %d) = %d, %v; want %d", len(p), off, n, err, len(want))
					return
				}
				mustEqualBytes(t, "ReadAt", p[:n], want)
			}
		})
	}
	wg.Wait()
	var all []int
	for _, s := range reported {
		all = append(all, s...)
	}
	slices.Sort(all)
	if !slices.Equal(all, []int{1, 4}) {
		t.Fatalf("onBad reported %v, want each of [1 4] once", reported)
	}
	if _, err := r.ReadAt(make([]byte, 1), -1); err == nil {
		t.Error("negative offset accepted")
	}
}

func TestReaderErrors(t *testing.T) {
	c := newTestCodec(t, geometry{2, 1}, testBlockSize)
	files, hdr := encode(t, c, testData(2*testBlockSize, 17))
	r := c.NewReader(context.Background(), hdr, readers(files, 0, 1), nil)
	if _, err := io.ReadAll(r); !errors.Is(err, ErrReadQuorum) {
		t.Errorf("two missing: %v", err)
	}
	r = c.NewReader(context.Background(), hdr, readers(files)[:2], nil)
	if _, err := r.Read(make([]byte, 10)); !errors.Is(err, ErrGeometry) {
		t.Errorf("short srcs: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r = c.NewReader(ctx, hdr, readers(files), nil)
	if _, err := r.Read(make([]byte, 10)); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	r = c.NewReader(context.Background(), hdr, readers(files), nil)
	for _, tt := range []struct {
		off    int64
		whence int
		want   int64
		ok     bool
	}{{5, io.SeekStart, 5, true}, {5, io.SeekCurrent, 10, true}, {-1, io.SeekEnd, hdr.Size - 1, true},
		{-1, io.SeekStart, 0, false}, {0, 9, 0, false}} {
		got, err := r.Seek(tt.off, tt.whence)
		if (err == nil) != tt.ok || (tt.ok && got != tt.want) {
			t.Errorf("Seek(%d, %d) = %d, %v", tt.off, tt.whence, got, err)
		}
	}
}
