package objstore

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/reedsolomon"
)

// Benchmarks for docs/performance.md. Run them with `make bench`. Each
// sub-benchmark runs 16 concurrent clients (b.SetParallelism over
// GOMAXPROCS) against a fresh store in a temporary directory on the same
// disk as the naive baseline, so ratios within one run are comparable.

const benchClients = 16

func setClients(b *testing.B) {
	p := (benchClients + 1) / max(1, runtimeProcs())
	b.SetParallelism(max(1, p))
}

func benchSizes() []struct {
	name string
	size int
} {
	return []struct {
		name string
		size int
	}{{"4KiB", 4 << 10}, {"64MiB", 64 << 20}}
}

func BenchmarkPut(b *testing.B) {
	for _, sz := range benchSizes() {
		for _, drives := range []int{1, 4} {
			b.Run(fmt.Sprintf("%s/drives=%d", sz.name, drives), func(b *testing.B) {
				s, _ := newBenchStore(b, drives)
				data := randBytes(sz.size, 1)
				var n atomic.Int64
				b.SetBytes(int64(sz.size))
				setClients(b)
				b.ResetTimer()
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						key := fmt.Sprintf("k%d", n.Add(1)%64)
						if _, err := s.Put(context.Background(), "bench", key, bytes.NewReader(data), int64(len(data)), PutOptions{}); err != nil {
							b.Error(err)
							return
						}
					}
				})
				// The most block-buffer memory the puts held at once
				// (bounded by Options.WriteBuffers).
				b.ReportMetric(float64(s.writeBufs.Peak()), "buffer-peak-B")
			})
		}
	}
}

func BenchmarkGet(b *testing.B) {
	for _, sz := range benchSizes() {
		for _, drives := range []int{1, 4} {
			b.Run(fmt.Sprintf("%s/drives=%d", sz.name, drives), func(b *testing.B) {
				s, _ := newBenchStore(b, drives)
				data := randBytes(sz.size, 1)
				keys := 64
				if sz.size > 1<<20 {
					keys = 4
				}
				for i := 0; i < keys; i++ {
					if _, err := s.Put(context.Background(), "bench", fmt.Sprintf("k%d", i), bytes.NewReader(data), int64(len(data)), PutOptions{}); err != nil {
						b.Fatal(err)
					}
				}
				var n atomic.Int64
				b.SetBytes(int64(sz.size))
				setClients(b)
				b.ResetTimer()
				b.RunParallel(func(pb *testing.PB) {
					buf := make([]byte, 1<<20)
					for pb.Next() {
						r, err := s.Open(context.Background(), "bench", fmt.Sprintf("k%d", n.Add(1)%int64(keys)), GetOptions{})
						if err != nil {
							b.Error(err)
							return
						}
						if _, err := io.CopyBuffer(io.Discard, r, buf); err != nil {
							b.Error(err)
						}
						r.Close()
					}
				})
			})
		}
	}
}

// BenchmarkNaivePut is the yardstick: one file per put, written, fsynced
// and renamed into place (what bench/naives3 does), 16 clients.
func BenchmarkNaivePut(b *testing.B) {
	for _, sz := range benchSizes() {
		b.Run(sz.name, func(b *testing.B) {
			dir := b.TempDir()
			data := randBytes(sz.size, 1)
			var n atomic.Int64
			b.SetBytes(int64(sz.size))
			setClients(b)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					i := n.Add(1)
					tmp := filepath.Join(dir, fmt.Sprintf(".tmp%d", i))
					f, err := os.Create(tmp)
					if err == nil {
						_, err = f.Write(data)
					}
					if err == nil {
						err = f.Sync()
					}
					if f != nil {
						f.Close()
					}
					if err == nil {
						err = os.Rename(tmp, filepath.Join(dir, fmt.Sprintf("k%d", i%64)))
					}
					if err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// BenchmarkNaiveGet reads back what a one-file-per-put server stored:
// open, read whole, close, 16 clients.
func BenchmarkNaiveGet(b *testing.B) {
	for _, sz := range benchSizes() {
		b.Run(sz.name, func(b *testing.B) {
			dir := b.TempDir()
			data := randBytes(sz.size, 1)
			files := 64
			if sz.size > 1<<20 {
				files = 4
			}
			for i := 0; i < files; i++ {
				if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("k%d", i)), data, 0o644); err != nil {
					b.Fatal(err)
				}
			}
			var n atomic.Int64
			b.SetBytes(int64(sz.size))
			setClients(b)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				buf := make([]byte, 1<<20)
				for pb.Next() {
					f, err := os.Open(filepath.Join(dir, fmt.Sprintf("k%d", n.Add(1)%int64(files))))
					if err != nil {
						b.Error(err)
						return
					}
					if _, err := io.CopyBuffer(io.Discard, f, buf); err != nil {
						b.Error(err)
					}
					f.Close()
				}
			})
		})
	}
}

// BenchmarkReedSolomonEncode is reedsolomon's raw encode speed for the
// store's default geometry (4 drives: 2+2, 1 MiB blocks).
func BenchmarkReedSolomonEncode(b *testing.B) {
	enc, err := reedsolomon.New(2, 2)
	if err != nil {
		b.Fatal(err)
	}
	shards := make([][]byte, 4)
	for i := range shards {
		shards[i] = randBytes(512<<10, uint64(i))
	}
	b.SetBytes(1 << 20)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := enc.Encode(shards); err != nil {
			b.Fatal(err)
		}
	}
}

func newBenchStore(b *testing.B, drives int) (*Store, Options) {
	b.Helper()
	opt := Options{Dir: b.TempDir(), DriveCount: drives, Parity: -1}
	s, err := Open(context.Background(), withBolt(b, opt))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	if err := s.CreateBucket(context.Background(), "bench", BucketOptions{}); err != nil {
		b.Fatal(err)
	}
	return s, opt
}

// chunkedReader hands out its bytes at most max at a time, as a socket
// does, so a put sees the read pattern of an HTTP body.
type chunkedReader struct {
	data []byte
	max  int
}

func (r *chunkedReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), r.max)], r.data)
	r.data = r.data[n:]
	return n, nil
}

// BenchmarkPutStream is a 64 MiB put with 4 drives whose body arrives in
// 64 KiB reads, from 1 and from 16 clients: the pipeline of one put, and
// how puts share the machine.
func BenchmarkPutStream(b *testing.B) {
	for _, clients := range []int{1, benchClients} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			s, _ := newBenchStore(b, 4)
			data := randBytes(64<<20, 1)
			var n atomic.Int64
			b.SetBytes(int64(len(data)))
			b.SetParallelism(max(1, (clients+1)/max(1, runtimeProcs())))
			if clients == 1 {
				b.SetParallelism(1)
			}
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					key := fmt.Sprintf("k%d", n.Add(1)%64)
					body := &chunkedReader{data: data, max: 64 << 10}
					if _, err := s.Put(context.Background(), "bench", key, body, int64(len(data)), PutOptions{}); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// BenchmarkPutBackgroundSmall is the mount's `cp -r` of small files as the
// store sees it: one writer issuing background puts of 4 KiB under new
// keys, one after the other, without waiting; the timer stops once all
// are committed. cpu-µs/op is the process's CPU time (user and system,
// every goroutine) per put: the work a small file costs the machine.
func BenchmarkPutBackgroundSmall(b *testing.B) {
	for _, drives := range []int{1, 4} {
		b.Run(fmt.Sprintf("drives=%d", drives), func(b *testing.B) {
			s, _ := newBenchStore(b, drives)
			data := randBytes(4<<10, 1)
			ctx := context.Background()
			b.SetBytes(int64(len(data)))
			b.ResetTimer()
			cpu0 := processCPU(b)
			var last []*Pending
			for i := range b.N {
				p, err := s.PutAsync(ctx, "bench", fmt.Sprintf("d%d/f%07d", b.N, i), FromBytes(bytes.Clone(data)), PutOptions{})
				if err != nil {
					b.Fatal(err)
				}
				last = append(last, p)
			}
			for _, p := range last {
				if _, err := p.Wait(ctx); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64((processCPU(b)-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
		})
	}
}

// processCPU is the CPU time the process has used so far.
func processCPU(b *testing.B) time.Duration {
	b.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
