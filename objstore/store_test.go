package objstore

import (
	"bytes"
	"context"
	"testing"
)

func TestPutGetSizes(t *testing.T) {
	s, _ := newTestStore(t, 4, 2)
	mustBucket(t, s, "bkt")
	for i, n := range []int{0, 1, 4096, 64<<10 - 1, 64 << 10, 64<<10 + 1, 1<<20 + 1} {
		data := randBytes(n, uint64(i))
		key := "obj/" + string(rune('a'+i))
		info := mustPut(t, s, "bkt", key, data)
		if info.Size != int64(n) {
			t.Fatalf("size %d, want %d", info.Size, n)
		}
		if got := readAll(t, s, "bkt", key, GetOptions{}); !bytes.Equal(got, data) {
			t.Fatalf("%d bytes: read back differs", n)
		}
		h, err := s.Head(context.Background(), "bkt", key, GetOptions{})
		if err != nil || h.ETag != info.ETag || h.Size != int64(n) {
			t.Fatalf("head %+v %v", h, err)
		}
	}
}
