package sse

import (
	"bytes"
	"crypto/md5"
	"crypto/rand"
	"errors"
	"io"
	"testing"
	"testing/iotest"
)

func encrypt(t testing.TB, key, plain []byte) []byte {
	t.Helper()
	e, err := NewEncrypter(bytes.NewReader(plain), int64(len(plain)), key, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(e)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(out)) != EncryptedSize(int64(len(plain))) {
		t.Fatalf("stream of %d bytes for %d, want %d", len(out), len(plain), EncryptedSize(int64(len(plain))))
	}
	return out
}

func randBytes(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return b
}

func TestPlainSizeInvertsEncryptedSize(t *testing.T) {
	for _, n := range []int64{0, 1, PackageSize - 1, PackageSize, PackageSize + 1, 3*PackageSize + 7, 64 << 20, 5 << 30} {
		got, ok := PlainSize(EncryptedSize(n))
		if !ok || got != n {
			t.Errorf("PlainSize(EncryptedSize(%d)) = %d, %v", n, got, ok)
		}
	}
	for _, c := range []int64{0, 1, HeaderSize, HeaderSize + TagSize - 1, HeaderSize + sealedSize + 1, HeaderSize + sealedSize + TagSize} {
		if n, ok := PlainSize(c); ok {
			t.Errorf("PlainSize(%d) = %d, want not ok", c, n)
		}
	}
}

func TestRoundTripRanges(t *testing.T) {
	key := randBytes(KeySize)
	sizes := []int{0, 1, 100, PackageSize, PackageSize + 1, 20*PackageSize + 3}
	for _, size := range sizes {
		plain := randBytes(size)
		ct := encrypt(t, key, plain)
		l, err := NewLayout([]int64{int64(len(ct))})
		if err != nil {
			t.Fatal(err)
		}
		if l.Size() != int64(size) {
			t.Fatalf("layout size %d, want %d", l.Size(), size)
		}
		for _, r := range [][2]int64{{0, int64(size)}, {0, min(1, int64(size))}, {int64(size) / 2, int64(size) - int64(size)/2},
			{max(0, PackageSize-1), min(2, max(0, int64(size)-PackageSize+1))}} {
			if r[0]+r[1] > int64(size) {
				continue
			}
			rd, err := NewReader(bytes.NewReader(ct), key, l, r[0], r[1])
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(rd)
			if err != nil {
				t.Fatalf("size %d range %v: %v", size, r, err)
			}
			if !bytes.Equal(got, plain[r[0]:r[0]+r[1]]) {
				t.Fatalf("size %d range %v: wrong plaintext", size, r)
			}
		}
	}
}

func TestMultiStreamRanges(t *testing.T) {
	key := randBytes(KeySize)
	parts := [][]byte{randBytes(5*PackageSize + 11), randBytes(3), randBytes(2 * PackageSize)}
	var all, stored []byte
	var sizes []int64
	for _, p := range parts {
		ct := encrypt(t, key, p)
		all = append(all, p...)
		stored = append(stored, ct...)
		sizes = append(sizes, int64(len(ct)))
	}
	l, err := NewLayout(sizes)
	if err != nil {
		t.Fatal(err)
	}
	if got := l.PartSizes(); got[0] != int64(len(parts[0])) || got[1] != 3 || got[2] != int64(len(parts[2])) {
		t.Fatalf("part sizes %v", got)
	}
	for _, r := range [][2]int64{{0, int64(len(all))}, {int64(len(parts[0])) - 2, 6}, {int64(len(parts[0])) + 3, int64(len(parts[2]))}} {
		rd, _ := NewReader(bytes.NewReader(stored), key, l, r[0], r[1])
		var buf bytes.Buffer
		if _, err := rd.WriteTo(&buf); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(buf.Bytes(), all[r[0]:r[0]+r[1]]) {
			t.Fatalf("range %v wrong", r)
		}
	}
}

func TestCorruptionFails(t *testing.T) {
	key := randBytes(KeySize)
	plain := randBytes(3*PackageSize + 5)
	ct := encrypt(t, key, plain)
	l, _ := NewLayout([]int64{int64(len(ct))})
	for name, mut := range map[string]func([]byte) []byte{
		"flip header":   func(b []byte) []byte { b[9] ^= 1; return b },
		"flip package":  func(b []byte) []byte { b[HeaderSize+sealedSize+5] ^= 1; return b },
		"flip last tag": func(b []byte) []byte { b[len(b)-1] ^= 1; return b },
		"swap packages": func(b []byte) []byte {
			p0 := append([]byte(nil), b[HeaderSize:HeaderSize+sealedSize]...)
			copy(b[HeaderSize:], b[HeaderSize+sealedSize:HeaderSize+2*sealedSize])
			copy(b[HeaderSize+sealedSize:], p0)
			return b
		},
		"bad version": func(b []byte) []byte { b[0] = 2; return b },
	} {
		bad := mut(append([]byte(nil), ct...))
		rd, _ := NewReader(bytes.NewReader(bad), key, l, 0, l.Size())
		if _, err := io.ReadAll(rd); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: err %v, want ErrCorrupt", name, err)
		}
	}
	rd, _ := NewReader(bytes.NewReader(ct), randBytes(KeySize), l, 0, 10)
	if _, err := io.ReadAll(rd); !errors.Is(err, ErrCorrupt) {
		t.Errorf("wrong key: err %v", err)
	}
	// A stream cut to a shorter stream's size: its last package is not final.
	short := ct[:HeaderSize+2*sealedSize]
	l2, err := NewLayout([]int64{int64(len(short))})
	if err != nil {
		t.Fatal(err)
	}
	rd, _ = NewReader(bytes.NewReader(short), key, l2, 0, l2.Size())
	if _, err := io.ReadAll(rd); !errors.Is(err, ErrCorrupt) {
		t.Errorf("truncated: err %v, want ErrCorrupt", err)
	}
}

func TestEncrypterDigestAndShortBody(t *testing.T) {
	key := randBytes(KeySize)
	plain := randBytes(2*PackageSize + 1)
	sum := md5.Sum(plain)
	e, _ := NewEncrypter(bytes.NewReader(plain), int64(len(plain)), key, md5.New(), sum[:])
	if _, err := io.ReadAll(e); err != nil {
		t.Fatalf("right MD5: %v", err)
	}
	if !bytes.Equal(e.Sum(), sum[:]) {
		t.Fatal("Sum is not the plaintext MD5")
	}
	wrong := md5.Sum([]byte("x"))
	e, _ = NewEncrypter(bytes.NewReader(plain), int64(len(plain)), key, md5.New(), wrong[:])
	out, err := io.ReadAll(e)
	if !errors.Is(err, ErrDigest) {
		t.Fatalf("wrong MD5: %v", err)
	}
	if int64(len(out)) >= EncryptedSize(int64(len(plain))) {
		t.Fatal("wrong MD5: the whole stream was given out")
	}
	e, _ = NewEncrypter(bytes.NewReader(plain[:10]), int64(len(plain)), key, nil, nil)
	if _, err := io.ReadAll(e); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("short body: %v", err)
	}
}

func TestKeys(t *testing.T) {
	master := randBytes(KeySize)
	ring := []NamedKey{{"alpha", randBytes(KeySize)}, {"beta", randBytes(KeySize)}}
	k, err := NewKeys(master, ring)
	if err != nil {
		t.Fatal(err)
	}
	cust := randBytes(KeySize)
	tests := []struct {
		name    string
		seal    Params
		open    Params
		keys    *Keys
		wantErr error
	}{
		{"sse-c", Params{Kind: KindC, CustomerKey: cust}, Params{CustomerKey: cust}, k, nil},
		{"sse-c wrong key", Params{Kind: KindC, CustomerKey: cust}, Params{CustomerKey: randBytes(KeySize)}, k, ErrWrongKey},
		{"sse-s3", Params{Kind: KindS3}, Params{}, k, nil},
		{"sse-s3 other master", Params{Kind: KindS3}, Params{}, must(NewKeys(randBytes(KeySize), nil)), ErrMasterKey},
		{"sse-s3 no master", Params{Kind: KindS3}, Params{}, must(NewKeys(nil, nil)), ErrNoMasterKey},
		{"kms", Params{Kind: KindKMS, KMSKey: "beta", Context: "e30="}, Params{}, k, nil},
		{"kms key gone", Params{Kind: KindKMS, KMSKey: "beta"}, Params{}, must(NewKeys(nil, ring[:1])), ErrNoSuchKey},
		{"kms key replaced", Params{Kind: KindKMS, KMSKey: "alpha"}, Params{}, must(NewKeys(nil, []NamedKey{{"alpha", randBytes(KeySize)}})), ErrMasterKey},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ok, rec, err := k.NewObjectKey(tc.seal)
			if err != nil {
				t.Fatal(err)
			}
			rec2, err := DecodeRecord(rec.Encode())
			if err != nil {
				t.Fatal(err)
			}
			got, err := tc.keys.Open(rec2, tc.open)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err %v, want %v", err, tc.wantErr)
			}
			if err == nil && !bytes.Equal(got, ok) {
				t.Fatal("opened another key")
			}
		})
	}
	if _, _, err := k.NewObjectKey(Params{Kind: KindKMS, KMSKey: "gamma"}); !errors.Is(err, ErrNoSuchKey) {
		t.Fatalf("unknown ring key: %v", err)
	}
	if k.DefaultKMSKey() != "alpha" {
		t.Fatalf("default key %q", k.DefaultKMSKey())
	}
}

func must(k *Keys, err error) *Keys {
	if err != nil {
		panic(err)
	}
	return k
}

func TestParseKeyAndRing(t *testing.T) {
	hex64 := "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{hex64, true}, {" " + hex64 + "\n", true}, {"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=", true},
		{"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8", true}, {hex64[:62], false}, {"", false}, {"AAEC", false}, {"zz" + hex64[2:], false},
	} {
		if _, err := ParseKey(tc.in); (err == nil) != tc.ok {
			t.Errorf("ParseKey(%q): %v", tc.in, err)
		}
	}
	ring, err := ParseKeyRing("# keys\n\nalpha " + hex64 + "\narn:aws:kms:x/beta  " + hex64 + "\n")
	if err != nil || len(ring) != 2 || ring[1].Name != "arn:aws:kms:x/beta" {
		t.Fatalf("ring %v, %v", ring, err)
	}
	for _, bad := range []string{"alpha", "alpha " + hex64 + " x", "al pha" + hex64, "a " + hex64 + "\na " + hex64, "b@d " + hex64} {
		if _, err := ParseKeyRing(bad); err == nil {
			t.Errorf("ParseKeyRing(%q) accepted", bad)
		}
	}
}

func BenchmarkEncrypt(b *testing.B) {
	key := randBytes(KeySize)
	plain := randBytes(8 << 20)
	b.SetBytes(int64(len(plain)))
	for b.Loop() {
		e, _ := NewEncrypter(bytes.NewReader(plain), int64(len(plain)), key, nil, nil)
		if _, err := io.Copy(io.Discard, e); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecrypt(b *testing.B) {
	key := randBytes(KeySize)
	plain := randBytes(8 << 20)
	ct := encrypt(b, key, plain)
	l, _ := NewLayout([]int64{int64(len(ct))})
	b.SetBytes(int64(len(plain)))
	for b.Loop() {
		rd, _ := NewReader(bytes.NewReader(ct), key, l, 0, l.Size())
		if _, err := rd.WriteTo(io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}

func TestPieceWriter(t *testing.T) {
	key := randBytes(KeySize)
	parts := [][]byte{randBytes(3*PackageSize + 9), randBytes(5), randBytes(PackageSize)}
	var all, stored []byte
	var sizes []int64
	for _, p := range parts {
		ct := encrypt(t, key, p)
		all, stored = append(all, p...), append(stored, ct...)
		sizes = append(sizes, int64(len(ct)))
	}
	l, _ := NewLayout(sizes)
	for i, r := range [][2]int64{{0, l.Size()}, {1, 2}, {PackageSize - 1, PackageSize + 2}, {int64(len(parts[0])) - 1, 7}, {l.Size() - 1, 1}, {0, 0}, {0, l.Size()}, {7, 3 * PackageSize}} {
		chunk := 10007 // odd-sized writes, as a store's blocks arrive
		if i%2 == 0 {
			chunk = 1 << 20 // whole packages in one write
		}
		ps, err := l.Pieces(r[0], r[1])
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		for _, p := range ps {
			pw, err := NewPieceWriter(&out, key, stored[p.HeaderOff:p.HeaderOff+HeaderSize], p)
			if err != nil {
				t.Fatal(err)
			}
			seg := stored[p.COff : p.COff+p.CLen]
			for len(seg) > 0 {
				k := min(len(seg), chunk)
				if _, err := pw.Write(seg[:k]); err != nil {
					t.Fatalf("range %v: %v", r, err)
				}
				seg = seg[k:]
			}
			if err := pw.Close(); err != nil {
				t.Fatalf("range %v: close: %v", r, err)
			}
		}
		if !bytes.Equal(out.Bytes(), all[r[0]:r[0]+r[1]]) {
			t.Fatalf("range %v: wrong plaintext (%d bytes)", r, out.Len())
		}
	}
	ps, _ := l.Pieces(0, 10)
	bad := append([]byte(nil), stored...)
	bad[ps[0].COff+3] ^= 1
	pw, _ := NewPieceWriter(io.Discard, key, bad[:HeaderSize], ps[0])
	_, err := pw.Write(bad[ps[0].COff : ps[0].COff+ps[0].CLen])
	if err == nil {
		err = pw.Close()
	}
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("corrupt package: %v", err)
	}
}

func BenchmarkPieceWriter(b *testing.B) {
	key := randBytes(KeySize)
	plain := randBytes(8 << 20)
	ct := encrypt(b, key, plain)
	l, _ := NewLayout([]int64{int64(len(ct))})
	ps, _ := l.Pieces(0, l.Size())
	b.SetBytes(int64(len(plain)))
	for b.Loop() {
		pw, _ := NewPieceWriter(io.Discard, key, ct[:HeaderSize], ps[0])
		for seg := ct[ps[0].COff:]; len(seg) > 0; seg = seg[min(len(seg), 1<<20):] {
			if _, err := pw.Write(seg[:min(len(seg), 1<<20)]); err != nil {
				b.Fatal(err)
			}
		}
		if err := pw.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

func TestEncrypterReadSizes(t *testing.T) {
	key := randBytes(KeySize)
	plain := randBytes(3*PackageSize + 77)
	for _, bs := range []int{1, 1000, sealedSize - 1, sealedSize, sealedSize + 1, 1 << 20} {
		e, _ := NewEncrypter(bytes.NewReader(plain), int64(len(plain)), key, nil, nil)
		var ct bytes.Buffer
		if _, err := io.CopyBuffer(struct{ io.Writer }{&ct}, struct{ io.Reader }{e}, make([]byte, bs)); err != nil {
			t.Fatal(err)
		}
		l, err := NewLayout([]int64{int64(ct.Len())})
		if err != nil {
			t.Fatalf("reads of %d: %v", bs, err)
		}
		rd, _ := NewReader(bytes.NewReader(ct.Bytes()), key, l, 0, l.Size())
		got, err := io.ReadAll(rd)
		if err != nil || !bytes.Equal(got, plain) {
			t.Fatalf("reads of %d: %v", bs, err)
		}
	}
}

// OpaqueETag is a function of the object key and the plaintext's MD5
// alone: the same for both again (a part sent twice), another for either
// changed, and never the MD5 itself.
func TestOpaqueETag(t *testing.T) {
	k1, k2 := randBytes(KeySize), randBytes(KeySize)
	m1, m2 := md5.Sum([]byte("one")), md5.Sum([]byte("two"))
	tests := []struct {
		name       string
		ka, kb     []byte
		ma, mb     []byte
		wantEquals bool
	}{
		{"same key, same plaintext", k1, k1, m1[:], m1[:], true},
		{"same key, other plaintext", k1, k1, m1[:], m2[:], false},
		{"other key, same plaintext", k1, k2, m1[:], m1[:], false},
	}
	for _, tt := range tests {
		a, b := OpaqueETag(tt.ka, tt.ma), OpaqueETag(tt.kb, tt.mb)
		if len(a) != md5.Size || len(b) != md5.Size {
			t.Fatalf("%s: %d and %d bytes, want %d", tt.name, len(a), len(b), md5.Size)
		}
		if bytes.Equal(a, b) != tt.wantEquals {
			t.Errorf("%s: %x and %x, want equal %v", tt.name, a, b, tt.wantEquals)
		}
		if bytes.Equal(a, tt.ma) {
			t.Errorf("%s: the ETag is the plaintext's MD5", tt.name)
		}
	}
}

// A plaintext of unknown size (a POST's file) makes the same stream a
// known size does: EncryptedSize bytes that decrypt to it, whatever the
// source's read sizes; its MD5 is checked and its source's errors come
// through as they are.
func TestEncrypterUnknownSize(t *testing.T) {
	key := randBytes(KeySize)
	errSrc := errors.New("source failed")
	for _, size := range []int{0, 1, PackageSize - 1, PackageSize, PackageSize + 1, 2 * PackageSize, 3*PackageSize + 77} {
		plain := randBytes(size)
		sum := md5.Sum(plain)
		for _, tc := range []struct {
			name string
			src  io.Reader
		}{
			{"whole", bytes.NewReader(plain)},
			{"one byte", iotest.OneByteReader(bytes.NewReader(plain))},
			{"half", iotest.HalfReader(bytes.NewReader(plain))},
			{"data with EOF", iotest.DataErrReader(bytes.NewReader(plain))},
		} {
			e, err := NewEncrypter(tc.src, -1, key, md5.New(), sum[:])
			if err != nil {
				t.Fatal(err)
			}
			ct, err := io.ReadAll(e)
			if err != nil || int64(len(ct)) != EncryptedSize(int64(size)) {
				t.Fatalf("size %d %s: %d bytes, %v; want %d", size, tc.name, len(ct), err, EncryptedSize(int64(size)))
			}
			l, err := NewLayout([]int64{int64(len(ct))})
			if err != nil {
				t.Fatal(err)
			}
			rd, _ := NewReader(bytes.NewReader(ct), key, l, 0, l.Size())
			got, err := io.ReadAll(rd)
			if err != nil || !bytes.Equal(got, plain) {
				t.Fatalf("size %d %s: decrypt: %v", size, tc.name, err)
			}
		}
		wrong := md5.Sum([]byte("x"))
		e, _ := NewEncrypter(bytes.NewReader(plain), -1, key, md5.New(), wrong[:])
		if _, err := io.ReadAll(e); !errors.Is(err, ErrDigest) {
			t.Fatalf("size %d wrong MD5: %v", size, err)
		}
		e, _ = NewEncrypter(io.MultiReader(bytes.NewReader(plain), iotest.ErrReader(errSrc)), -1, key, nil, nil)
		if _, err := io.ReadAll(e); !errors.Is(err, errSrc) {
			t.Fatalf("size %d failing source: %v", size, err)
		}
	}
}

// The plaintext MD5 of a large stream is taken on goroutines beside the
// sealing: the same sum, the same Content-MD5 refusal before the last
// package, whatever the read sizes, and Close after a stream left
// half-read returns once the hashing stopped.
func TestEncrypterAsyncHash(t *testing.T) {
	key := randBytes(KeySize)
	for _, size := range []int{asyncHashSize, asyncHashSize + 1, 3*asyncHashSize + PackageSize/2} {
		plain := randBytes(size)
		sum := md5.Sum(plain)
		for _, known := range []bool{true, false} {
			n := int64(size)
			if !known {
				n = -1
			}
			for _, bs := range []int{1000, sealedSize, 1 << 20} {
				e, _ := NewEncrypter(bytes.NewReader(plain), n, key, md5.New(), sum[:])
				if e.async == nil {
					t.Fatalf("size %d: hashed in line", size)
				}
				var ct bytes.Buffer
				if _, err := io.CopyBuffer(struct{ io.Writer }{&ct}, struct{ io.Reader }{e}, make([]byte, bs)); err != nil {
					t.Fatalf("size %d known %v reads %d: %v", size, known, bs, err)
				}
				if !bytes.Equal(e.Sum(), sum[:]) || int64(ct.Len()) != EncryptedSize(int64(size)) {
					t.Fatalf("size %d known %v reads %d: sum %x, %d bytes", size, known, bs, e.Sum(), ct.Len())
				}
			}
			wrong := md5.Sum([]byte("x"))
			e, _ := NewEncrypter(bytes.NewReader(plain), n, key, md5.New(), wrong[:])
			out, err := io.ReadAll(e)
			if !errors.Is(err, ErrDigest) || int64(len(out)) >= EncryptedSize(int64(size)) {
				t.Fatalf("size %d known %v wrong MD5: %v after %d bytes", size, known, err, len(out))
			}
			h := md5.New()
			e, _ = NewEncrypter(bytes.NewReader(plain), n, key, h, nil)
			if _, err := io.ReadFull(e, make([]byte, 5*sealedSize)); err != nil {
				t.Fatal(err)
			}
			if err := e.Close(); err != nil {
				t.Fatal(err)
			}
			h.Reset() // the caller's again: races with no hashing goroutine (-race)
		}
	}
}
