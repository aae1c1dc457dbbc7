package meta_test

// Golden files pin the index's record encodings and key layout (doc.go,
// binary.go): testdata/ holds Version and Data records in their binary
// form, the JSON records, and the keys of every table. The tests check
// both ways, against records written out here rather than derived from
// the encoder: each committed file decodes to its record, and encoding
// the record gives exactly the committed bytes, so a change made to the
// encoder and the decoder together still fails.
//
// go test ./objstore/meta -run Golden -update rewrites the files. Doing so
// means the index format changed: an index written by an earlier binary
// would no longer read the same, so that change needs a migration (or a
// decoder that keeps reading the old form), not just new fixtures.

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cairnstore/cairn/internal/goldentest"

	"github.com/cairnstore/cairn/objstore/meta"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// golden compares got with testdata/name, or writes it there with -update,
// and returns the committed bytes.
func golden(t *testing.T, name string, got []byte) []byte {
	t.Helper()
	return goldentest.Compare(t, filepath.Join("testdata", name), got, *update, "the index format")
}

var (
	t0 = time.Date(2026, 3, 14, 15, 9, 26, 535897932, time.UTC)
	t1 = time.Date(2025, 12, 31, 23, 59, 59, 0, time.UTC)
)

var goldenVersions = []struct {
	name string
	v    meta.Version
}{
	{"version-plain", meta.Version{VersionID: "null", Seq: 7, Size: 4096, ETag: "9e107d9d372bb6826bd81d3542a419d6",
		ModTime: t0, ContentType: "application/octet-stream",
		Segments: []meta.Segment{{Data: "00112233445566778899aabbccddeeff", Length: 4096}}}},
	{"version-delete-marker", meta.Version{VersionID: "000000000000002a", Seq: 42, ModTime: t1, DeleteMarker: true}},
	{"version-multipart", meta.Version{VersionID: "0000000000000101", Seq: 257, Size: 11 << 20,
		ETag: "d41d8cd98f00b204e9800998ecf8427e-3", ModTime: t0, UploadID: "upload-7f3a",
		Segments: []meta.Segment{
			{Data: "0123456789abcdef0123456789abcdef", Length: 5 << 20},
			{Data: "fedcba9876543210fedcba9876543210", Offset: 1 << 20, Length: 5 << 20},
			{Data: "not-a-hex-id", Offset: 3, Length: 1 << 20},
		},
		PartSizes: []int64{5 << 20, 5 << 20, 1 << 20}}},
	{"version-user-meta", meta.Version{VersionID: "null", Seq: 1 << 40, Size: 3, ETag: "acbd18db4cc2f85cedef654fccc4a4d8",
		ModTime: t1, ContentType: "text/plain; charset=utf-8",
		Meta:     map[string]string{"x-amz-meta-zeta": "last", "Cache-Control": "no-cache", "x-amz-meta-ünï": "ко\x00d", "mode": "0644"},
		Segments: []meta.Segment{{Data: "ffffffffffffffffffffffffffffffff", Length: 3}}}},
	{"version-empty", meta.Version{}},
	{"version-attrs", meta.Version{VersionID: "0000000000000102", Seq: 258, Size: 1, ETag: "0cc175b9c0f1b6a831c399e269772661",
		ModTime: t1, Segments: []meta.Segment{{Data: "00000000000000000000000000000001", Length: 1}},
		Attrs: meta.Attrs{Owner: "alice", Sys: map[string]string{"acl": "<x/>", "tags": "k=v"},
			Retention: meta.Retention{Mode: meta.RetentionGovernance, Until: t1.Add(24 * time.Hour)}, LegalHold: true}}},
	{"version-chunked", meta.Version{VersionID: "null", Seq: 300, Size: 3<<20 + 5, ETag: "6f5902ac237024bdd0c176cb93063dc4-1",
		ModTime: t0, ContentType: "application/x-sqlite3",
		Chunks: []meta.ChunkRef{{ID: 1, Length: 1 << 20, Segs: 64}, {ID: 0x0102030405, Length: 2<<20 + 5, Segs: 3}},
		Attrs:  meta.Attrs{Owner: "alice"}}},
}

var goldenChunks = []struct {
	name string
	c    meta.Chunk
}{
	{"chunk", meta.Chunk{Segments: []meta.Segment{
		{Data: "0123456789abcdef0123456789abcdef", Offset: 4096, Length: 1 << 20},
		{Data: "fedcba9876543210fedcba9876543210", Length: 4096},
		{Data: "0123456789abcdef0123456789abcdef", Offset: 3 << 20, Length: 1 << 20},
	}}},
}

var goldenData = []struct {
	name string
	d    meta.Data
}{
	{"data-shard-files", meta.Data{K: 2, M: 2, BlockSize: 1 << 20, Size: 3<<20 + 17, Refs: 2,
		Bucket: "photos", Key: "2026/img.jpg", Created: t0}},
	{"data-packed", meta.Data{K: 2, M: 2, BlockSize: 4096, Size: 100, Refs: 1,
		Bucket: "small", Key: "k", Created: t1, Pack: 3, Off: 8192, Len: 170}},
	{"data-garbage", meta.Data{K: 1, M: 0, BlockSize: 64, Size: 0, Refs: 0}},
}

// TestGoldenBinaryRecords: Version and Data records, binary form.
func TestGoldenBinaryRecords(t *testing.T) {
	for _, tc := range goldenVersions {
		t.Run(tc.name, func(t *testing.T) {
			raw := golden(t, tc.name+".bin", meta.Encode(&tc.v))
			kind := byte('V')
			if len(tc.v.Chunks) > 0 {
				kind = 'W'
			}
			if raw[0] != 0x01 || raw[1] != kind {
				t.Fatalf("not a binary version record: %q", raw)
			}
			var got meta.Version
			if err := meta.Decode(raw, &got); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.v) {
				t.Fatalf("decoded\n %+v\nwant\n %+v", got, tc.v)
			}
		})
	}
	for _, tc := range goldenChunks {
		t.Run(tc.name, func(t *testing.T) {
			raw := golden(t, tc.name+".bin", meta.Encode(&tc.c))
			if raw[0] != 0x01 || raw[1] != 'K' {
				t.Fatalf("not a binary chunk record: %q", raw)
			}
			var got meta.Chunk
			if err := meta.Decode(raw, &got); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.c) {
				t.Fatalf("decoded\n %+v\nwant\n %+v", got, tc.c)
			}
			// A binary that predates chunks reads a chunked version as
			// corrupt, never as an empty one: the version decoder refuses
			// the chunk record's kind, and the chunk decoder a version's.
			var v meta.Version
			if err := meta.Decode(raw, &v); err == nil {
				t.Fatal("a chunk record decodes as a version")
			}
		})
	}
	for _, tc := range goldenData {
		t.Run(tc.name, func(t *testing.T) {
			raw := golden(t, tc.name+".bin", meta.Encode(&tc.d))
			if raw[0] != 0x01 || raw[1] != 'D' {
				t.Fatalf("not a binary data record: %q", raw)
			}
			var got meta.Data
			if err := meta.Decode(raw, &got); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.d) {
				t.Fatalf("decoded\n %+v\nwant\n %+v", got, tc.d)
			}
		})
	}
}

// goldenJSON lists the JSON records, each with a new zero value to decode
// into.
var goldenJSON = []struct {
	name string
	rec  any
	zero func() any
}{
	{"layout", meta.Layout{Set: "5f0e8c1a2b3d4e5f60718293a4b5c6d7", Drives: 4, Parity: 2, BlockSize: 1 << 20},
		func() any { return &meta.Layout{} }},
	{"bucket-plain", meta.Bucket{Name: "photos", Created: t0}, func() any { return &meta.Bucket{} }},
	{"bucket-versioned-lifecycle", meta.Bucket{Name: "logs", Created: t1, Versioning: "Enabled",
		Lifecycle: []meta.LifecycleRule{
			{ID: "abort-mpu", Prefix: "tmp/", Enabled: true, AbortIncompleteDays: 7},
			{ID: "expire", Enabled: false, ExpirationDays: 30},
		}}, func() any { return &meta.Bucket{} }},
	{"packinfo", meta.PackInfo{Created: t0, Live: 4096, End: 1 << 20}, func() any { return &meta.PackInfo{} }},
	{"packinfo-dead", meta.PackInfo{Created: t0, Live: 0, Dead: t1, End: 1 << 20}, func() any { return &meta.PackInfo{} }},
	{"lease", meta.Lease{Until: t1}, func() any { return &meta.Lease{} }},
	{"garbage", meta.GarbageEntry{Since: t1, Data: meta.Data{K: 2, M: 2, BlockSize: 4096, Size: 10, Created: t0,
		Bucket: "b", Key: "k", Pack: 1, Off: 512, Len: 80}}, func() any { return &meta.GarbageEntry{} }},
	{"upload", meta.Upload{Bucket: "b", Key: "big/file.bin", UploadID: "upload-7f3a", Initiated: t0,
		ContentType: "video/mp4", Meta: map[string]string{"x-amz-meta-b": "2", "x-amz-meta-a": "1"}},
		func() any { return &meta.Upload{} }},
	{"part", meta.Part{Number: 3, ETag: "acbd18db4cc2f85cedef654fccc4a4d8", Size: 1 << 20, ModTime: t1,
		Segments: []meta.Segment{{Data: "0123456789abcdef0123456789abcdef", Offset: 7, Length: 1 << 20}}},
		func() any { return &meta.Part{} }},
	// Versions were JSON before the binary form; an index may still hold
	// them and Decode must read them.
	{"version-json", meta.Version{VersionID: "null", Seq: 3, Size: 5, ETag: "e", ModTime: t0, ContentType: "text/plain",
		Meta: map[string]string{"k": "v"}, DeleteMarker: false,
		Segments: []meta.Segment{{Data: "00112233445566778899aabbccddeeff", Length: 5}}},
		func() any { return &meta.Version{} }},
}

// TestGoldenJSONRecords: the JSON records of records.go.
func TestGoldenJSONRecords(t *testing.T) {
	for _, tc := range goldenJSON {
		t.Run(tc.name, func(t *testing.T) {
			enc := meta.Encode(tc.rec)
			if v, ok := tc.rec.(meta.Version); ok {
				// Encode writes versions in binary; the JSON form is
				// what json.Marshal gives by the struct tags.
				var err error
				if enc, err = json.Marshal(v); err != nil {
					t.Fatal(err)
				}
			}
			raw := golden(t, tc.name+".json", enc)
			got := tc.zero()
			if err := meta.Decode(raw, got); err != nil {
				t.Fatal(err)
			}
			if g := reflect.ValueOf(got).Elem().Interface(); !reflect.DeepEqual(g, tc.rec) {
				t.Fatalf("decoded\n %+v\nwant\n %+v", g, tc.rec)
			}
		})
	}
}

func id16(first byte) [16]byte {
	var id [16]byte
	for i := range id {
		id[i] = first + byte(i)
	}
	return id
}

// TestGoldenKeys: the table names and the key of every table, one line
// each in testdata/keys.txt ("name hex"), and their parsers.
func TestGoldenKeys(t *testing.T) {
	keys := []struct {
		name string
		key  []byte
	}{
		{"bucket-prefix", meta.BucketPrefix("photos")},
		{"object", meta.ObjectKey("photos", "2026/dir/img.jpg")},
		{"object-unicode", meta.ObjectKey("b", "naïve/ключ")},
		{"version-prefix", meta.VersionPrefix("photos", "a/b")},
		{"version-seq-1", meta.VersionKey("photos", "a/b", 1)},
		{"version-seq-big", meta.VersionKey("photos", "a/b", 0x0102030405060708)},
		{"upload", meta.UploadKey("b", "big/file.bin", "upload-7f3a")},
		{"part-prefix", meta.PartPrefix("upload-7f3a")},
		{"part-3", meta.PartKey("upload-7f3a", 3)},
		{"part-10000", meta.PartKey("upload-7f3a", 10000)},
		{"data", meta.DataKey(id16(0xa0))},
		{"pack-1", meta.PackKey(1)},
		{"pack-big", meta.PackKey(0x1122334455667788)},
		{"packdata", meta.PackDataKey(2, id16(0x10))},
		{"lease-data", meta.LeaseKey("node-1/4242", meta.LeaseData, meta.DataKey(id16(0xc0)))},
		{"lease-segment", meta.LeaseKey("node-1/4242", meta.LeaseSegment, meta.PackKey(2))},
		{"chunk-1", meta.ChunkKey(1)},
		{"chunk-big", meta.ChunkKey(0x0102030405060708)},
	}
	var b strings.Builder
	for _, tb := range meta.AllTables {
		fmt.Fprintf(&b, "table %s\n", tb)
	}
	for _, k := range keys {
		fmt.Fprintf(&b, "%s %s\n", k.name, hex.EncodeToString(k.key))
	}
	raw := golden(t, "keys.txt", []byte(b.String()))

	committed := map[string][]byte{}
	var tables []meta.Table
	for _, line := range strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n") {
		name, val, _ := strings.Cut(line, " ")
		if name == "table" {
			tables = append(tables, meta.Table(val))
			continue
		}
		k, err := hex.DecodeString(val)
		if err != nil {
			t.Fatalf("keys.txt: %q: %v", line, err)
		}
		committed[name] = k
	}
	wantTables := []meta.Table{"settings", "buckets", "objects", "versions", "data", "garbage", "uploads", "uploadids", "parts", "packs", "packdata", "leases", "chunks"}
	if !reflect.DeepEqual(tables, wantTables) {
		t.Errorf("tables %q, want %q", tables, wantTables)
	}
	// The parsers read the committed keys back to the arguments above.
	if b, k, ok := meta.SplitObjectKey(committed["object"]); !ok || b != "photos" || k != "2026/dir/img.jpg" {
		t.Errorf("SplitObjectKey = %q %q %v", b, k, ok)
	}
	if b, k, ok := meta.SplitObjectKey(committed["object-unicode"]); !ok || b != "b" || k != "naïve/ключ" {
		t.Errorf("SplitObjectKey unicode = %q %q %v", b, k, ok)
	}
	for name, seq := range map[string]uint64{"version-seq-1": 1, "version-seq-big": 0x0102030405060708} {
		if b, k, s, ok := meta.SplitVersionKey(committed[name]); !ok || b != "photos" || k != "a/b" || s != seq {
			t.Errorf("SplitVersionKey(%s) = %q %q %#x %v", name, b, k, s, ok)
		}
	}
	if bytes.Compare(committed["version-seq-big"], committed["version-seq-1"]) >= 0 {
		t.Errorf("a newer version does not sort first")
	}
	for name, seg := range map[string]uint64{"pack-1": 1, "pack-big": 0x1122334455667788} {
		if s, ok := meta.ParsePackKey(committed[name]); !ok || s != seg {
			t.Errorf("ParsePackKey(%s) = %#x %v", name, s, ok)
		}
	}
	for name, want := range map[string]struct {
		kind byte
		id   []byte
	}{"lease-data": {'d', meta.DataKey(id16(0xc0))}, "lease-segment": {'s', meta.PackKey(2)}} {
		if h, k, id, ok := meta.SplitLeaseKey(committed[name]); !ok || h != "node-1/4242" || k != want.kind || !bytes.Equal(id, want.id) {
			t.Errorf("SplitLeaseKey(%s) = %q %q %x %v", name, h, k, id, ok)
		}
	}
	for name, id := range map[string]uint64{"chunk-1": 1, "chunk-big": 0x0102030405060708} {
		if got, ok := meta.SplitChunkKey(committed[name]); !ok || got != id {
			t.Errorf("SplitChunkKey(%s) = %#x %v", name, got, ok)
		}
	}
	if !meta.HasPrefix(committed["object"], committed["bucket-prefix"]) ||
		!meta.HasPrefix(committed["version-seq-1"], committed["version-prefix"]) ||
		!meta.HasPrefix(committed["part-3"], committed["part-prefix"]) ||
		!meta.HasPrefix(committed["packdata"], meta.PackKey(2)) {
		t.Errorf("a committed key does not start with its prefix")
	}
}
