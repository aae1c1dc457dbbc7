package peer

import (
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/cairnstore/cairn/objstore/drive"
)

// benchDrives are the drives the benchmarks compare: the local Dir, and
// a Drive on a Server of another Dir over loopback HTTP.
func benchDrives(b *testing.B) []struct {
	name string
	d    drive.Drive
} {
	local, _, err := drive.OpenDir(b.TempDir(), "peer-bench", testSlot)
	if err != nil {
		b.Fatal(err)
	}
	return []struct {
		name string
		d    drive.Drive
	}{
		{"local", local},
		{"peer", newFixture(b, 30*time.Second).drive},
	}
}

var benchSizes = []int{64 << 10, 1 << 20}

// BenchmarkShardWrite writes shard files the way the erasure Writer does:
// a header, chunks of 64 KiB front to back, and the header rewritten at
// offset 0 before Close. No flush: page cache speed on both sides.
func BenchmarkShardWrite(b *testing.B) {
	for _, dd := range benchDrives(b) {
		for _, size := range benchSizes {
			b.Run(fmt.Sprintf("%s/%dKiB", dd.name, size>>10), func(b *testing.B) {
				buf := payloadBytes(size)
				ctx := b.Context()
				b.SetBytes(int64(size))
				i := 0
				for b.Loop() {
					name := fmt.Sprintf("%04x", i%256)
					i++
					w, err := dd.d.Create(ctx, name)
					if err != nil {
						b.Fatal(err)
					}
					const chunk = 64 << 10
					for off := 0; off < size; off += chunk {
						if _, err := w.WriteAt(buf[off:min(off+chunk, size)], int64(off)); err != nil {
							b.Fatal(err)
						}
					}
					if _, err := w.WriteAt(buf[:64], 0); err != nil {
						b.Fatal(err)
					}
					if err := w.Close(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkShardRead opens a shard file, reads it whole in one ReadAt and
// closes it.
func BenchmarkShardRead(b *testing.B) {
	for _, dd := range benchDrives(b) {
		for _, size := range benchSizes {
			b.Run(fmt.Sprintf("%s/%dKiB", dd.name, size>>10), func(b *testing.B) {
				ctx := b.Context()
				name := fmt.Sprintf("ab%06x", size)
				putShard(b, dd.d, name, payloadBytes(size))
				p := make([]byte, size)
				b.SetBytes(int64(size))
				for b.Loop() {
					r, err := dd.d.Open(ctx, name)
					if err != nil {
						b.Fatal(err)
					}
					if n, err := r.ReadAt(p, 0); n != size || (err != nil && err != io.EOF) {
						b.Fatalf("read %d, %v", n, err)
					}
					_ = r.Close()
				}
			})
		}
	}
}

func payloadBytes(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i>>8)
	}
	return b
}
