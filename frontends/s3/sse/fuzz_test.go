package sse

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

func FuzzDecodeRecord(f *testing.F) {
	k := must(NewKeys(randBytes(KeySize), []NamedKey{{"a", randBytes(KeySize)}}))
	for _, p := range []Params{{Kind: KindS3}, {Kind: KindKMS, KMSKey: "a", Context: "e30="}, {Kind: KindC, CustomerKey: randBytes(KeySize)}} {
		_, rec, _ := k.NewObjectKey(p)
		f.Add(rec.Encode())
	}
	f.Add(`{"v":1}`)
	f.Add(`{"v":2,"k":"S3"}`)
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		rec, err := DecodeRecord(s)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v is not ErrCorrupt", err)
			}
			return
		}
		again, err := DecodeRecord(rec.Encode())
		if err != nil || again.Kind != rec.Kind || !bytes.Equal(again.Sealed, rec.Sealed) {
			t.Fatalf("re-encoding %q: %+v, %v", s, again, err)
		}
		_, _ = k.Open(rec, Params{CustomerKey: randBytes(KeySize)}) // must not panic
	})
}

func FuzzParseKeyRing(f *testing.F) {
	f.Add("a 000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\n# c\n")
	f.Add("b AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=")
	f.Add("x y z")
	f.Fuzz(func(t *testing.T, s string) {
		ring, err := ParseKeyRing(s)
		if err != nil {
			return
		}
		if _, err := NewKeys(nil, ring); err != nil {
			t.Fatalf("parsed ring refused: %v", err)
		}
	})
}

// FuzzReader decrypts corrupt streams: every read either gives the
// plaintext back or fails, never panics.
func FuzzReader(f *testing.F) {
	key := make([]byte, KeySize)
	plain := bytes.Repeat([]byte("cairn"), PackageSize/2)
	ct := encrypt(f, key, plain)
	f.Add(ct[:200], int64(0), int64(10), 0, byte(0))
	f.Add(ct, int64(PackageSize-3), int64(10), 70000, byte(1))
	f.Add(ct, int64(0), int64(len(plain)), -1, byte(0))
	f.Fuzz(func(t *testing.T, data []byte, off, n int64, flip int, mask byte) {
		data = append([]byte(nil), data...)
		if flip >= 0 && flip < len(data) {
			data[flip] ^= mask
		}
		l, err := NewLayout([]int64{int64(len(data))})
		if err != nil {
			return
		}
		rd, err := NewReader(bytes.NewReader(data), key, l, off, n)
		if err != nil {
			return
		}
		got, err := io.ReadAll(rd)
		if err == nil && int64(len(got)) != n {
			t.Fatalf("read %d bytes, want %d", len(got), n)
		}
		if err == nil && bytes.Equal(data, ct) && !bytes.Equal(got, plain[off:off+n]) {
			t.Fatal("wrong plaintext")
		}
	})
}

// FuzzPieceWriter decrypts corrupt streams written in chunks, as a GET
// does: the plaintext comes back whole and right, or the write fails.
func FuzzPieceWriter(f *testing.F) {
	key := make([]byte, KeySize)
	plain := bytes.Repeat([]byte("cairn"), PackageSize/2)
	ct := encrypt(f, key, plain)
	f.Add(ct, int64(0), int64(len(plain)), 5000, -1, byte(0))
	f.Add(ct, int64(PackageSize-3), int64(10), 70000, 100, byte(4))
	f.Add(ct[:100], int64(0), int64(5), 7, 40, byte(1))
	f.Fuzz(func(t *testing.T, data []byte, off, n int64, chunk, flip int, mask byte) {
		data = append([]byte(nil), data...)
		if flip >= 0 && flip < len(data) {
			data[flip] ^= mask
		}
		if chunk <= 0 {
			chunk = 1
		}
		l, err := NewLayout([]int64{int64(len(data))})
		if err != nil {
			return
		}
		ps, err := l.Pieces(off, n)
		if err != nil {
			return
		}
		var out bytes.Buffer
		for _, p := range ps {
			pw, err := NewPieceWriter(&out, key, data[p.HeaderOff:p.HeaderOff+HeaderSize], p)
			if err != nil {
				return
			}
			seg := data[p.COff : p.COff+p.CLen]
			for len(seg) > 0 {
				k := min(len(seg), chunk)
				if _, err := pw.Write(seg[:k]); err != nil {
					return
				}
				seg = seg[k:]
			}
			if err := pw.Close(); err != nil {
				return
			}
		}
		if int64(out.Len()) != n {
			t.Fatalf("gave %d bytes, want %d", out.Len(), n)
		}
		if bytes.Equal(data, ct) && !bytes.Equal(out.Bytes(), plain[off:off+n]) {
			t.Fatal("wrong plaintext")
		}
	})
}

// FuzzEncrypterUnknownSize encrypts a plaintext read to its EOF (a POST's
// file, outside input) in reads of any size: the stream has the size
// EncryptedSize gives and decrypts back to the plaintext.
func FuzzEncrypterUnknownSize(f *testing.F) {
	key := make([]byte, KeySize)
	f.Add([]byte("cairn"), 3)
	f.Add(bytes.Repeat([]byte{1}, PackageSize), 1000)
	f.Add(bytes.Repeat([]byte{2}, PackageSize+1), 0)
	f.Fuzz(func(t *testing.T, plain []byte, chunk int) {
		var src io.Reader = bytes.NewReader(plain)
		if chunk > 0 {
			src = &chunkReader{r: src, n: chunk}
		}
		e, err := NewEncrypter(src, -1, key, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		ct, err := io.ReadAll(e)
		if err != nil || int64(len(ct)) != EncryptedSize(int64(len(plain))) {
			t.Fatalf("%d bytes, %v; want %d", len(ct), err, EncryptedSize(int64(len(plain))))
		}
		l, err := NewLayout([]int64{int64(len(ct))})
		if err != nil {
			t.Fatal(err)
		}
		rd, err := NewReader(bytes.NewReader(ct), key, l, 0, l.Size())
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(rd)
		if err != nil || !bytes.Equal(got, plain) {
			t.Fatalf("decrypt: %v", err)
		}
	})
}

// chunkReader gives at most n bytes a read.
type chunkReader struct {
	r io.Reader
	n int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(p) > c.n {
		p = p[:c.n]
	}
	return c.r.Read(p)
}
