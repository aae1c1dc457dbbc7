package sse

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"reflect"
	"runtime"
	"testing"
	"time"
)

// feed writes the stored bytes of pieces to PieceWriters of a, chunk
// bytes a write (as a store's cached blocks arrive).
func feed(a *Ahead, key, stored []byte, ps []Piece, chunk int) error {
	for _, p := range ps {
		pw, err := a.PieceWriter(key, stored[p.HeaderOff:p.HeaderOff+HeaderSize], p)
		if err != nil {
			return err
		}
		for seg := stored[p.COff : p.COff+p.CLen]; len(seg) > 0; {
			k := min(len(seg), chunk)
			if _, err := pw.Write(seg[:k]); err != nil {
				return err
			}
			seg = seg[k:]
		}
		if err := pw.Close(); err != nil {
			return err
		}
	}
	return nil
}

func makeBufs(n, size int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = make([]byte, size)
	}
	return out
}

// multipart is an object of three streams: its plaintext, stored bytes
// and layout.
func multipart(t testing.TB, key []byte) ([]byte, []byte, Layout) {
	parts := [][]byte{randBytes(40*PackageSize + 9), randBytes(5), randBytes(PackageSize), randBytes(3 * PackageSize)}
	var all, stored []byte
	var sizes []int64
	for _, p := range parts {
		ct := encrypt(t, key, p)
		all, stored = append(all, p...), append(stored, ct...)
		sizes = append(sizes, int64(len(ct)))
	}
	l, err := NewLayout(sizes)
	if err != nil {
		t.Fatal(err)
	}
	return all, stored, l
}

func TestWriteAheadRanges(t *testing.T) {
	key := randBytes(KeySize)
	all, stored, l := multipart(t, key)
	p0 := int64(40*PackageSize + 9)
	ranges := [][2]int64{
		{0, l.Size()}, {1, 2}, {PackageSize - 1, PackageSize + 2}, {p0 - 1, 7}, {l.Size() - 1, 1},
		{0, 0}, {7, 20 * PackageSize}, {17*PackageSize + 3, 23*PackageSize - 5}, {p0 + 2, PackageSize + 10},
	}
	for _, bufs := range []struct{ n, size int }{{1, PackageSize}, {2, 16 * PackageSize}, {4, 4 * PackageSize}, {3, PackageSize + 100}} {
		for i, r := range ranges {
			chunk := 10007 // odd-sized writes
			if i%2 == 0 {
				chunk = 1 << 20 // whole packages in one write
			}
			t.Run(fmt.Sprintf("%dx%d/%d+%d", bufs.n, bufs.size, r[0], r[1]), func(t *testing.T) {
				ps, err := l.Pieces(r[0], r[1])
				if err != nil {
					t.Fatal(err)
				}
				var out bytes.Buffer
				err = WriteAhead(context.Background(), &out, makeBufs(bufs.n, bufs.size), func(a *Ahead) error {
					return feed(a, key, stored, ps, chunk)
				})
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(out.Bytes(), all[r[0]:r[0]+r[1]]) {
					t.Fatalf("wrong plaintext (%d bytes, want %d)", out.Len(), r[1])
				}
			})
		}
	}
}

// failWriter fails its writes once it has taken n bytes; cancel, when
// set, is called instead at that point and the write succeeds.
type failWriter struct {
	n      int
	got    bytes.Buffer
	cancel func()
}

var errClientGone = errors.New("client gone")

func (w *failWriter) Write(b []byte) (int, error) {
	if w.got.Len()+len(b) > w.n {
		if w.cancel == nil {
			return 0, errClientGone
		}
		w.cancel()
	}
	return w.got.Write(b)
}

// TestWriteAheadStops: a write that fails, a cancelled context or a
// corrupt package ends the response where it is, WriteAhead returns only
// once produce has, and no goroutine is left behind.
func TestWriteAheadStops(t *testing.T) {
	key := randBytes(KeySize)
	all, stored, l := multipart(t, key)
	bad := append([]byte(nil), stored...)
	ps, _ := l.Pieces(0, l.Size())
	bad[ps[0].COff+20*sealedSize+5] ^= 1 // package 20 of the first stream
	before := runtime.NumGoroutine()
	for _, tc := range []struct {
		name    string
		stored  []byte
		cancel  bool // the context is cancelled, not the write failed
		failAt  int
		want    error
		maxSent int // plaintext bytes that may reach the writer
	}{
		{name: "write fails", stored: stored, failAt: 1 << 20, want: errClientGone, maxSent: 1 << 20},
		{name: "first write fails", stored: stored, failAt: 0, want: errClientGone, maxSent: 0},
		{name: "context cancelled", stored: stored, cancel: true, failAt: 1 << 20, want: context.Canceled, maxSent: 2 << 20},
		{name: "corrupt package", stored: bad, failAt: len(all), want: ErrCorrupt, maxSent: 20 * PackageSize},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			w := &failWriter{n: tc.failAt}
			if tc.cancel {
				w.cancel = cancel
			}
			returned := make(chan struct{})
			var produceErr error
			err := WriteAhead(ctx, w, makeBufs(2, 16*PackageSize), func(a *Ahead) error {
				defer close(returned)
				produceErr = feed(a, key, tc.stored, ps, 1<<20)
				return produceErr
			})
			select {
			case <-returned:
			default:
				t.Fatal("WriteAhead returned before produce")
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			if produceErr == nil {
				t.Fatal("produce ran to its end after the response stopped")
			}
			if w.got.Len() > tc.maxSent || !bytes.Equal(w.got.Bytes(), all[:w.got.Len()]) {
				t.Fatalf("%d bytes written (at most %d), a prefix: %v", w.got.Len(), tc.maxSent, bytes.Equal(w.got.Bytes(), all[:min(w.got.Len(), len(all))]))
			}
			if tc.want == ErrCorrupt && w.got.Len() != 16*PackageSize {
				// The buffer of packages 0-15 is written; 16-19 are
				// in the buffer the failure left unsent.
				t.Fatalf("%d bytes written before the corrupt package, want %d", w.got.Len(), 16*PackageSize)
			}
		})
	}
	waitGoroutines(t, before)
}

// waitGoroutines fails when the goroutines do not come back to n: a
// goroutine ends a moment after the last thing it signals.
func waitGoroutines(t *testing.T, n int) {
	t.Helper()
	for i := 0; runtime.NumGoroutine() > n; i++ {
		if i == 500 {
			buf := make([]byte, 1<<16)
			t.Fatalf("%d goroutines, %d before:\n%s", runtime.NumGoroutine(), n, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(time.Millisecond)
	}
}

// TestWriteAheadClientCloses: the client of a TCP response hangs up
// half-way; the write fails, the decrypting goroutine ends.
func TestWriteAheadClientCloses(t *testing.T) {
	key := randBytes(KeySize)
	all, stored, l := multipart(t, key)
	ps, _ := l.Pieces(0, l.Size())
	before := runtime.NumGoroutine()
	server, client := tcpPair(t)
	go func() {
		b := make([]byte, 256<<10)
		_, _ = io.ReadFull(client, b)
		_ = client.Close()
	}()
	var err error
	for range 100 { // the kernel's buffers take the first megabytes after the close
		err = WriteAhead(context.Background(), server, makeBufs(3, 16*PackageSize), func(a *Ahead) error {
			return feed(a, key, stored, ps, 1<<20)
		})
		if err != nil {
			break
		}
	}
	if err == nil {
		t.Fatalf("%d MiB written to a closed connection without an error", 100*len(all)>>20)
	}
	_ = server.Close()
	waitGoroutines(t, before)
}

func tcpPair(t testing.TB) (net.Conn, net.Conn) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ln.Close() }()
	acc := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			c = nil
		}
		acc <- c
	}()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server := <-acc
	if server == nil {
		t.Fatal("accept failed")
	}
	return server, client
}

func TestWriteAheadBadBuffers(t *testing.T) {
	for _, bufs := range [][][]byte{nil, {make([]byte, PackageSize-1)}} {
		err := WriteAhead(context.Background(), io.Discard, bufs, func(*Ahead) error {
			t.Fatal("produce ran")
			return nil
		})
		if err == nil {
			t.Fatalf("%d buffers: no error", len(bufs))
		}
	}
}

// TestStreamCipherIsAssembly: the stream cipher is crypto/aes's block in
// the standard library's GCM (12-byte nonce, 16-byte tag), the type that
// has the AES-NI/PCLMULQDQ assembly; a wrapped block or another nonce
// size would be crypto/cipher's generic fallback.
func TestStreamCipherIsAssembly(t *testing.T) {
	var h [HeaderSize]byte
	h[0] = version1
	a, err := streamCipher(randBytes(KeySize), h[:])
	if err != nil {
		t.Fatal(err)
	}
	if ty := reflect.TypeOf(a); ty.String() != "*gcm.GCM" || ty.Elem().PkgPath() != "crypto/internal/fips140/aes/gcm" {
		t.Fatalf("stream cipher is %v (%s), not the standard library's AES-GCM", ty, ty.Elem().PkgPath())
	}
	if a.NonceSize() != 12 || a.Overhead() != TagSize {
		t.Fatalf("nonce %d, tag %d", a.NonceSize(), a.Overhead())
	}
}

// BenchmarkServe decrypts 64 MiB onto a loopback TCP connection that a
// goroutine drains (a GET's client), as the face does from cached blocks
// (1 MiB writes into the PieceWriter): serially, one goroutine decrypting
// and writing in turn, and ahead, with bufs of the given count and size.
func BenchmarkServe(b *testing.B) {
	key := randBytes(KeySize)
	plain := randBytes(64 << 20)
	ct := encrypt(b, key, plain)
	l, _ := NewLayout([]int64{int64(len(ct))})
	ps, _ := l.Pieces(0, l.Size())
	server, client := tcpPair(b)
	defer func() { _ = server.Close() }()
	go func() { _, _ = io.Copy(io.Discard, client) }()
	b.Run("serial", func(b *testing.B) {
		b.SetBytes(int64(len(plain)))
		for b.Loop() {
			pw, _ := NewPieceWriter(server, key, ct[:HeaderSize], ps[0])
			for seg := ct[ps[0].COff:]; len(seg) > 0; seg = seg[min(len(seg), 1<<20):] {
				if _, err := pw.Write(seg[:min(len(seg), 1<<20)]); err != nil {
					b.Fatal(err)
				}
			}
			if err := pw.Close(); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, bc := range []struct{ n, packages int }{{2, 4}, {4, 4}, {2, 8}, {2, 16}, {3, 16}, {4, 16}} {
		b.Run(fmt.Sprintf("ahead/%dx%dKiB", bc.n, bc.packages*PackageSize>>10), func(b *testing.B) {
			bufs := makeBufs(bc.n, bc.packages*PackageSize)
			b.SetBytes(int64(len(plain)))
			for b.Loop() {
				err := WriteAhead(context.Background(), server, bufs, func(a *Ahead) error {
					return feed(a, key, ct, ps, 1<<20)
				})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkGCMOpen opens packages of several sizes with the stream
// cipher: the per-package cost (nonce, GHASH of the header and lengths,
// the tag) against the per-byte cost, which the format's 64 KiB packages
// are to amortise.
func BenchmarkGCMOpen(b *testing.B) {
	var h [HeaderSize]byte
	h[0] = version1
	a, _ := streamCipher(randBytes(KeySize), h[:])
	var nb [12]byte
	for _, size := range []int{4 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20} {
		b.Run(fmt.Sprintf("%dKiB", size>>10), func(b *testing.B) {
			sealed := a.Seal(nil, nonce(&nb, 0, false), randBytes(size), h[:])
			dst := make([]byte, 0, size)
			b.SetBytes(int64(size))
			for b.Loop() {
				if _, err := a.Open(dst, nonce(&nb, 0, false), sealed, h[:]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
