package erasure

import (
	"errors"
	"strings"
	"testing"
)

func TestHeaderRoundTrip(t *testing.T) {
	tests := []Header{
		{K: 1, M: 0, Index: 0, BlockSize: 64, Size: 0},
		{K: 2, M: 2, Index: 3, BlockSize: 1 << 20, Size: 5<<20 + 3, DataID: testID(7), Bucket: "b", Key: "k"},
		{K: 255, M: 1, Index: 255, BlockSize: MaxBlockSize, Size: 1 << 40, Bucket: strings.Repeat("x", MaxNameLen)},
		{K: 4, M: 4, Index: 5, BlockSize: 4096, Size: 12345, Key: strings.Repeat("k", 1000)},
	}
	for _, h := range tests {
		b, err := h.MarshalBinary()
		if err != nil {
			t.Fatalf("Marshal(%+v): %v", h, err)
		}
		if len(b) != h.EncodedLen() {
			t.Errorf("len %d, EncodedLen %d", len(b), h.EncodedLen())
		}
		got, n, err := ParseHeader(append(b, 1, 2, 3))
		if err != nil || n != len(b) || got != h {
			t.Errorf("Parse: %+v %d %v, want %+v %d", got, n, err, h, len(b))
		}
		got, n, err = ReadHeader(NewMemFile(b))
		if err != nil || n != len(b) || got != h {
			t.Errorf("ReadHeader: %+v %d %v", got.Index, n, err)
		}
	}
}

func TestHeaderFlippedByte(t *testing.T) {
	h := Header{K: 3, M: 2, Index: 4, BlockSize: 4096, Size: 99999, DataID: testID(3), Bucket: "bk", Key: "a/b"}
	b, err := h.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	for i := range b {
		for _, x := range []byte{0x01, 0x80, 0xff} {
			c := append([]byte(nil), b...)
			c[i] ^= x
			if _, _, err := ParseHeader(c); !errors.Is(err, ErrBadHeader) {
				t.Fatalf("byte %d ^ %#x: err %v, want ErrBadHeader", i, x, err)
			}
			if _, _, err := ReadHeader(NewMemFile(c)); !errors.Is(err, ErrBadHeader) {
				t.Fatalf("ReadHeader byte %d ^ %#x: err %v, want ErrBadHeader", i, x, err)
			}
		}
	}
	for n := range len(b) {
		if _, _, err := ParseHeader(b[:n]); !errors.Is(err, ErrBadHeader) {
			t.Fatalf("truncated to %d: %v", n, err)
		}
		if _, _, err := ReadHeader(NewMemFile(b[:n])); !errors.Is(err, ErrBadHeader) {
			t.Fatalf("ReadHeader truncated to %d: %v", n, err)
		}
	}
}

func TestHeaderInvalid(t *testing.T) {
	ok := Header{K: 2, M: 1, Index: 0, BlockSize: 4096, Size: 10}
	tests := []struct {
		name string
		mod  func(*Header)
		want error
	}{
		{"k0", func(h *Header) { h.K = 0 }, ErrGeometry},
		{"k256", func(h *Header) { h.K, h.M, h.BlockSize = 256, 0, 1<<20 }, ErrGeometry},
		{"m-1", func(h *Header) { h.M = -1 }, ErrGeometry},
		{"k+m>256", func(h *Header) { h.K, h.M, h.BlockSize = 200, 57, 1<<20 }, ErrGeometry},
		{"block<64k", func(h *Header) { h.BlockSize = 127 }, ErrGeometry},
		{"block>max", func(h *Header) { h.BlockSize = MaxBlockSize + 64 }, ErrGeometry},
		{"index", func(h *Header) { h.Index = 3 }, ErrBadHeader},
		{"index-1", func(h *Header) { h.Index = -1 }, ErrBadHeader},
		{"size-1", func(h *Header) { h.Size = -1 }, ErrBadHeader},
		{"bucket", func(h *Header) { h.Bucket = strings.Repeat("b", MaxNameLen+1) }, ErrBadHeader},
		{"key", func(h *Header) { h.Key = strings.Repeat("k", MaxNameLen+1) }, ErrBadHeader},
		{"overflow", func(h *Header) { h.K, h.BlockSize, h.Size = 1, 64, 1<<63-1 }, ErrBadHeader},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := ok
			tt.mod(&h)
			if _, err := h.MarshalBinary(); !errors.Is(err, tt.want) {
				t.Fatalf("Marshal: %v, want %v", err, tt.want)
			}
		})
	}
}

func TestHeaderGeometry(t *testing.T) {
	tests := []struct {
		k, bs    int
		size     int64
		blocks   int64
		lastLen  int
		lastSS   int
		fileData int64 // ShardFileSize - EncodedLen
	}{
		{1, 64, 0, 0, 0, 0, 0},
		{2, 4096, 1, 1, 1, 1, 5},
		{2, 4096, 4096, 1, 4096, 2048, 2052},
		{3, 4096, 4097, 2, 1, 1, (4 + 1366) + (4 + 1)},
		{3, 4096, 3*4096 + 7, 4, 7, 3, 3*(4+1366) + 4 + 3},
		{4, 1 << 20, 5<<20 + 1, 6, 1, 1, 5*(4+1<<18) + 5},
	}
	for _, tt := range tests {
		h := Header{K: tt.k, M: 1, BlockSize: tt.bs, Size: tt.size}
		if got := h.BlockCount(); got != tt.blocks {
			t.Errorf("%+v: BlockCount %d want %d", tt, got, tt.blocks)
		}
		if tt.blocks > 0 {
			last := tt.blocks - 1
			if h.BlockLen(last) != tt.lastLen || h.ShardSize(last) != tt.lastSS {
				t.Errorf("%+v: last block len %d ss %d", tt, h.BlockLen(last), h.ShardSize(last))
			}
			if got, want := h.BlockOffset(last), int64(h.EncodedLen())+last*int64(4+ceilDiv(tt.bs, tt.k)); got != want {
				t.Errorf("%+v: BlockOffset(last) %d want %d", tt, got, want)
			}
		}
		if got := h.ShardFileSize() - int64(h.EncodedLen()); got != tt.fileData {
			t.Errorf("%+v: chunk bytes %d want %d", tt, got, tt.fileData)
		}
		if h.BlockLen(-1) != 0 || h.BlockLen(tt.blocks) != 0 || h.BlockOffset(tt.blocks+5) != h.ShardFileSize() {
			t.Errorf("%+v: out of range blocks not clamped", tt)
		}
	}
}

func TestReadHeaderErrors(t *testing.T) {
	h := Header{K: 2, M: 1, BlockSize: 4096, Size: 1, Key: strings.Repeat("k", 3000)}
	b, err := h.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if got, n, err := ReadHeader(NewMemFile(b)); err != nil || n != len(b) || got != h {
		t.Fatalf("long key: %v %d", err, n)
	}
	if _, _, err := ReadHeader(NewMemFile(b[:2000])); !errors.Is(err, ErrBadHeader) {
		t.Fatalf("long key truncated: %v", err)
	}
	if _, _, err := ReadHeader(&MemFile{}); !errors.Is(err, ErrBadHeader) {
		t.Fatalf("empty: %v", err)
	}
	if _, _, err := ReadHeader(errReaderAt{}); !errors.Is(err, errRead) || errors.Is(err, ErrBadHeader) {
		t.Fatalf("read error: %v", err)
	}
}

func TestDataID(t *testing.T) {
	id := NewDataID()
	if id.IsZero() || id == NewDataID() {
		t.Fatal("NewDataID not random")
	}
	s := id.String()
	if len(s) != 32 || strings.ToLower(s) != s {
		t.Fatalf("String %q", s)
	}
	if got, err := ParseDataID(s); err != nil || got != id {
		t.Fatalf("ParseDataID(%q) = %v, %v", s, got, err)
	}
	for _, bad := range []string{"", "00", strings.Repeat("0", 31), strings.Repeat("0", 33),
		strings.Repeat("A", 32), strings.Repeat("g", 32), strings.Repeat("0", 30) + "-1"} {
		if _, err := ParseDataID(bad); err == nil {
			t.Errorf("ParseDataID(%q) succeeded", bad)
		}
	}
}

func TestDefaultParityAndQuorum(t *testing.T) {
	parity := map[int]int{-1: 0, 0: 0, 1: 0, 2: 1, 3: 1, 4: 2, 5: 2, 6: 3, 7: 3, 8: 4, 16: 4, 100: 4}
	for n, want := range parity {
		if got := DefaultParity(n); got != want {
			t.Errorf("DefaultParity(%d) = %d, want %d", n, got, want)
		}
	}
	quorum := []struct{ k, m, want int }{{1, 0, 1}, {1, 1, 2}, {2, 1, 2}, {2, 2, 3}, {4, 4, 5}, {12, 4, 12}}
	for _, q := range quorum {
		if got := WriteQuorum(q.k, q.m); got != q.want {
			t.Errorf("WriteQuorum(%d, %d) = %d, want %d", q.k, q.m, got, q.want)
		}
	}
}

func TestNewCodecGeometry(t *testing.T) {
	tests := []struct {
		k, m, bs int
		ok       bool
	}{
		{1, 0, 64, true}, {2, 2, 4096, true}, {4, 4, 256, true}, {200, 56, 1 << 20, true}, {255, 1, 1 << 20, true},
		{0, 1, 4096, false}, {1, -1, 4096, false}, {200, 57, 1 << 20, false}, {4, 4, 255, false},
		{2, 2, 0, false}, {2, 2, MaxBlockSize + 1, false},
	}
	for _, tt := range tests {
		c, err := NewCodec(tt.k, tt.m, tt.bs)
		if tt.ok != (err == nil) || (!tt.ok && !errors.Is(err, ErrGeometry)) {
			t.Errorf("NewCodec(%d, %d, %d): %v", tt.k, tt.m, tt.bs, err)
			continue
		}
		if tt.ok && (c.K() != tt.k || c.M() != tt.m || c.BlockSize() != tt.bs) {
			t.Errorf("accessors %d %d %d", c.K(), c.M(), c.BlockSize())
		}
	}
}
