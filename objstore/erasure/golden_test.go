package erasure_test

// Golden files pin the shard file format (doc.go, "Shard file format,
// version 1"): testdata/ holds shard headers and the five shard files of a
// small 3+2 object as written by this package. The tests check both ways,
// against values written out here rather than derived from the encoder:
// the committed bytes decode to the expected fields and content, and
// encoding those gives exactly the committed bytes. So a change to the
// encoder and the decoder together still fails.
//
// go test ./objstore/erasure -run Golden -update rewrites the files. Doing
// so means the on-disk format changed: shard files already on drives would
// no longer read the same, so that change needs a new format version and a
// migration (or a decoder that keeps reading version 1), not just new
// fixtures.

import (
	"bytes"
	"context"
	"encoding/binary"
	"flag"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/cairnstore/cairn/internal/goldentest"

	"github.com/cairnstore/cairn/objstore/erasure"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// golden compares got with testdata/name, or writes it there with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldentest.Compare(t, filepath.Join("testdata", name), got, *update, "the shard format")
}

func readGolden(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	return b
}

func seqID(first byte) erasure.DataID {
	var id erasure.DataID
	for i := range id {
		id[i] = first + byte(i)
	}
	return id
}

var goldenHeaders = []struct {
	file string
	hdr  erasure.Header
}{
	{"header-minimal.bin", erasure.Header{K: 1, M: 0, Index: 0, BlockSize: 64, Size: 0}},
	{"header-2+2.bin", erasure.Header{K: 2, M: 2, Index: 3, BlockSize: 4096, Size: 12345,
		DataID: seqID(0x00), Bucket: "photos", Key: "2026/dir/img.jpg"}},
	{"header-unicode.bin", erasure.Header{K: 4, M: 2, Index: 1, BlockSize: 1 << 20, Size: 5 << 30,
		DataID: seqID(0xf0), Bucket: "b", Key: "naïve/ключ ☃\x01"}},
	{"header-max.bin", erasure.Header{K: 200, M: 56, Index: 255, BlockSize: erasure.MaxBlockSize, Size: 1<<40 + 3,
		DataID: seqID(0x80), Bucket: "bucket-with-a-longer-name", Key: ""}},
}

// TestGoldenHeaders: each committed header parses to its fields and
// re-encodes to the same bytes; the fixed fields also sit where doc.go
// says, read here without the decoder.
func TestGoldenHeaders(t *testing.T) {
	for _, tc := range goldenHeaders {
		t.Run(tc.file, func(t *testing.T) {
			enc, err := tc.hdr.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			golden(t, tc.file, enc)
			raw := readGolden(t, tc.file)
			got, n, err := erasure.ParseHeader(append(raw, "trailing"...))
			if err != nil {
				t.Fatalf("ParseHeader: %v", err)
			}
			if n != len(raw) || got != tc.hdr {
				t.Fatalf("ParseHeader = %+v, %d\nwant %+v, %d", got, n, tc.hdr, len(raw))
			}
			checkHeaderLayout(t, raw, tc.hdr)
		})
	}
}

// checkHeaderLayout reads raw by the table in doc.go.
func checkHeaderLayout(t *testing.T, raw []byte, h erasure.Header) {
	t.Helper()
	le := binary.LittleEndian
	bl, kl := len(h.Bucket), len(h.Key)
	if len(raw) != 46+bl+kl+4 {
		t.Fatalf("header is %d bytes, want %d", len(raw), 46+bl+kl+4)
	}
	checks := []struct {
		what      string
		got, want uint64
	}{
		{"version", uint64(le.Uint16(raw[8:])), 1},
		{"k", uint64(raw[10]), uint64(h.K)},
		{"m", uint64(raw[11]), uint64(h.M)},
		{"index", uint64(raw[12]), uint64(h.Index)},
		{"reserved", uint64(raw[13]), 0},
		{"block size", uint64(le.Uint32(raw[14:])), uint64(h.BlockSize)},
		{"size", le.Uint64(raw[18:]), uint64(h.Size)},
		{"bucket length", uint64(le.Uint16(raw[42:])), uint64(bl)},
		{"key length", uint64(le.Uint16(raw[44:])), uint64(kl)},
		{"crc32c", uint64(le.Uint32(raw[46+bl+kl:])), uint64(crc32.Checksum(raw[:46+bl+kl], crc32.MakeTable(crc32.Castagnoli)))},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: %d, want %d", c.what, c.got, c.want)
		}
	}
	if string(raw[:8]) != "CAIRNSHD" || !bytes.Equal(raw[26:42], h.DataID[:]) ||
		string(raw[46:46+bl]) != h.Bucket || string(raw[46+bl:46+bl+kl]) != h.Key {
		t.Errorf("magic, data id, bucket or key not where doc.go puts them: %x", raw)
	}
}

// The golden object: 500 bytes in blocks of 192 (192, 192, 116), 3 data
// and 2 parity shards, so shard chunks of 64, 64 and 39 bytes.
const (
	objK, objM, objBlock, objSize = 3, 2, 192, 500
)

func objHeader(index int) erasure.Header {
	return erasure.Header{K: objK, M: objM, Index: index, BlockSize: objBlock, Size: objSize,
		DataID: seqID(0x40), Bucket: "golden", Key: "dir/object.bin"}
}

// objContent is the object's bytes, from a seeded generator (not from the
// fixture).
func objContent() []byte {
	r := rand.New(rand.NewPCG(16, 500))
	b := make([]byte, objSize)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func shardFile(i int) string { return filepath.Join("shards-3+2", "shard-"+string(rune('0'+i))+".bin") }

// TestGoldenShardFiles: the Writer writes exactly the committed shard
// files; they parse to the expected headers, hold the object's bytes in
// data shard chunks laid out as doc.go says, verify clean, and decode to
// the object from any three shards (both parity shards and one data
// shard among them, which pins the Reed-Solomon matrix on the read side).
func TestGoldenShardFiles(t *testing.T) {
	ctx := context.Background()
	c, err := erasure.NewCodec(objK, objM, objBlock)
	if err != nil {
		t.Fatal(err)
	}
	content := objContent()

	files := make([]*erasure.MemFile, objK+objM)
	sinks := make([]io.WriterAt, len(files))
	for i := range files {
		files[i] = &erasure.MemFile{}
		sinks[i] = files[i]
	}
	h := objHeader(0)
	h.K, h.M, h.BlockSize, h.Size = 0, 0, 0, 0 // the codec and the Writer set these
	w, err := c.NewWriter(ctx, h, sinks)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(content); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for i, f := range files {
		golden(t, shardFile(i), f.Bytes())
	}

	committed := make([]*erasure.MemFile, objK+objM)
	for i := range committed {
		raw := readGolden(t, shardFile(i))
		committed[i] = erasure.NewMemFile(raw)
		got, n, err := erasure.ParseHeader(raw)
		if err != nil || got != objHeader(i) {
			t.Fatalf("shard %d header: %+v, %v\nwant %+v", i, got, err, objHeader(i))
		}
		checkHeaderLayout(t, raw[:n], got)
		if want := int64(n + 3*4 + 64 + 64 + 39); int64(len(raw)) != want || got.ShardFileSize() != want {
			t.Fatalf("shard %d: %d bytes, ShardFileSize %d, want %d", i, len(raw), got.ShardFileSize(), want)
		}
		checkChunks(t, i, raw[n:], content)
	}

	states, err := c.Verify(ctx, objHeader(0), srcs(committed, 0, 1, 2, 3, 4))
	if err != nil {
		t.Fatal(err)
	}
	for i, st := range states {
		if st != erasure.ShardOK {
			t.Fatalf("Verify: shard %d is %v", i, st)
		}
	}
	for _, keep := range [][]int{{0, 1, 2}, {2, 3, 4}, {0, 3, 4}, {1, 2, 4}} {
		r := c.NewReader(ctx, objHeader(0), srcs(committed, keep...), nil)
		got, err := io.ReadAll(r)
		if err != nil || !bytes.Equal(got, content) {
			t.Fatalf("read from shards %v: %d bytes, %v; content differs: %v", keep, len(got), err, !bytes.Equal(got, content))
		}
	}
}

// checkChunks reads shard i's chunks (after the header) by doc.go: per
// block a CRC32C of the shard bytes, then the bytes; data shard j of a
// block of length L holds bytes [j*ceil(L/k), ...) zero padded.
func checkChunks(t *testing.T, i int, chunks, content []byte) {
	t.Helper()
	castagnoli := crc32.MakeTable(crc32.Castagnoli)
	off := 0
	for b, l := range []int{192, 192, 116} {
		ss := (l + objK - 1) / objK
		if off+4+ss > len(chunks) {
			t.Fatalf("shard %d block %d: chunk past the end", i, b)
		}
		sum, data := binary.LittleEndian.Uint32(chunks[off:]), chunks[off+4:off+4+ss]
		if sum != crc32.Checksum(data, castagnoli) {
			t.Fatalf("shard %d block %d: checksum %08x does not match its bytes", i, b, sum)
		}
		if i < objK {
			want := make([]byte, ss)
			lo := b*objBlock + i*ss
			copy(want, content[lo:min(lo+ss, b*objBlock+l)])
			if !bytes.Equal(data, want) {
				t.Fatalf("data shard %d block %d: bytes are not the object's", i, b)
			}
		}
		off += 4 + ss
	}
	if off != len(chunks) {
		t.Fatalf("shard %d: %d trailing bytes", i, len(chunks)-off)
	}
}

func srcs(files []*erasure.MemFile, keep ...int) []io.ReaderAt {
	out := make([]io.ReaderAt, len(files))
	for _, i := range keep {
		out[i] = files[i]
	}
	return out
}

// TestGoldenFixturesUnchanged: the fixture list here and testdata/ agree,
// so a fixture cannot be dropped from the test silently.
func TestGoldenFixturesUnchanged(t *testing.T) {
	if *update {
		t.Skip("updating")
	}
	want := map[string]bool{}
	for _, h := range goldenHeaders {
		want[h.file] = true
	}
	for i := range objK + objM {
		want[shardFile(i)] = true
	}
	got := map[string]bool{}
	err := filepath.WalkDir("testdata", func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Base(p) == "README.md" {
			return err
		}
		rel, _ := filepath.Rel("testdata", p)
		got[rel] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("testdata holds %v, the tests know %v", got, want)
	}
}
