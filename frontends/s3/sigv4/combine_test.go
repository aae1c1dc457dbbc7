package sigv4

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"
)

func TestCombineChecksums(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	data := make([]byte, 70000)
	for i := range data {
		data[i] = byte(rng.IntN(256))
	}
	sum := func(algo string, b []byte) []byte {
		h, err := NewChecksum(algo)
		if err != nil {
			t.Fatal(err)
		}
		h.Write(b)
		return h.Sum(nil)
	}
	for _, algo := range []string{ChecksumCRC32, ChecksumCRC32C, ChecksumCRC64NVME} {
		for _, cut := range []int{0, 1, 7, 4096, 65537, len(data)} {
			a, b := data[:cut], data[cut:]
			got, err := CombineChecksums(algo, sum(algo, a), sum(algo, b), int64(len(b)))
			if err != nil {
				t.Fatal(err)
			}
			if want := sum(algo, data); !bytes.Equal(got, want) {
				t.Fatalf("%s cut at %d: %x, want %x", algo, cut, got, want)
			}
		}
	}
	// Three runs fold left, as a multipart object's parts do.
	parts := [][]byte{data[:100], data[100:5000], data[5000:]}
	acc := sum(ChecksumCRC32C, parts[0])
	for _, p := range parts[1:] {
		var err error
		if acc, err = CombineChecksums(ChecksumCRC32C, acc, sum(ChecksumCRC32C, p), int64(len(p))); err != nil {
			t.Fatal(err)
		}
	}
	if want := sum(ChecksumCRC32C, data); !bytes.Equal(acc, want) {
		t.Fatalf("three parts: %x, want %x", acc, want)
	}
	for _, bad := range []struct {
		algo string
		a, b []byte
	}{
		{ChecksumSHA256, make([]byte, 32), make([]byte, 32)},
		{ChecksumCRC32, make([]byte, 8), make([]byte, 4)},
	} {
		if _, err := CombineChecksums(bad.algo, bad.a, bad.b, 1); !errors.Is(err, ErrInvalidChecksum) {
			t.Fatalf("%s: %v", bad.algo, err)
		}
	}
}
