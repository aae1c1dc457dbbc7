package erasure

import (
	"context"
	"io"
	"testing"

	"github.com/klauspost/reedsolomon"
)

const benchBlockSize = 1 << 20

func BenchmarkEncode(b *testing.B) {
	enc, err := reedsolomon.New(2, 2, reedsolomon.WithAutoGoroutines(benchBlockSize/2))
	if err != nil {
		b.Fatal(err)
	}
	shards := make([][]byte, 4)
	for i := range shards {
		shards[i] = testData(benchBlockSize/2, uint64(i))
	}
	b.SetBytes(benchBlockSize)
	for b.Loop() {
		if err := enc.Encode(shards); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWriter(b *testing.B) {
	const size = 16 * benchBlockSize
	c := newTestCodec(b, geometry{2, 2}, benchBlockSize)
	data := testData(size, 20)
	sinks := []io.WriterAt{discard{}, discard{}, discard{}, discard{}}
	b.SetBytes(size)
	for b.Loop() {
		w, err := c.NewWriter(context.Background(), Header{}, sinks)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := w.Write(data); err != nil {
			b.Fatal(err)
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReadBlock(b *testing.B) {
	const blocks = 8
	c := newTestCodec(b, geometry{2, 2}, benchBlockSize)
	files, hdr := encode(b, c, testData(blocks*benchBlockSize, 21))
	for _, bc := range []struct {
		name string
		drop []int
	}{{"healthy", nil}, {"degraded", []int{0}}} {
		b.Run(bc.name, func(b *testing.B) {
			srcs := readers(files, bc.drop...)
			dst := make([]byte, benchBlockSize)
			b.SetBytes(benchBlockSize)
			i := 0
			for b.Loop() {
				if _, _, err := c.ReadBlock(context.Background(), hdr, srcs, int64(i%blocks), dst); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}
