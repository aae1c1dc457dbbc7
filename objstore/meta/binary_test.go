package meta

import (
	"errors"
	"reflect"
	"testing"
	"time"
)

func TestBinaryRecordsRoundTrip(t *testing.T) {
	now := time.Unix(1764460800, 123456789).UTC()
	for _, v := range []Version{
		{},
		{VersionID: "null", Seq: 7, Size: 4096, ETag: "9e107d9d372bb6826bd81d3542a419d6", ModTime: now,
			ContentType: "text/plain", Meta: map[string]string{"x-amz-meta-a": "1", "Cache-Control": "no-cache"},
			Segments: []Segment{{Data: "ff00000000000000000000000000000a", Length: 4096}}},
		{VersionID: "000000000000002a", DeleteMarker: true, ModTime: now},
		{VersionID: "v", Size: 11, ETag: "x-2", ModTime: now, UploadID: "abc",
			Segments:  []Segment{{Data: "not-hex", Offset: 3, Length: 5}, {Data: "0123456789abcdef0123456789abcdef", Offset: 1 << 40, Length: 6}},
			PartSizes: []int64{5, 6}},
		{VersionID: "w", ModTime: now, Attrs: Attrs{Owner: "alice", Sys: map[string]string{"acl": "x", "tags": "a=b"},
			Retention: Retention{Mode: RetentionCompliance, Until: now.Add(time.Hour)}, LegalHold: true}},
		{VersionID: "o", Attrs: Attrs{Owner: "bob"}},
		{VersionID: "h", Attrs: Attrs{LegalHold: true}},
		{VersionID: "c", Size: 10, Chunks: []ChunkRef{{ID: 9, Length: 4, Segs: 2}, {ID: 1 << 50, Length: 6, Segs: 64}}},
		{VersionID: "ca", Size: 1, Chunks: []ChunkRef{{ID: 1, Length: 1, Segs: 1}}, Attrs: Attrs{Owner: "o"}},
	} {
		var got Version
		if err := Decode(Encode(&v), &got); err != nil {
			t.Fatalf("%+v: %v", v, err)
		}
		if !reflect.DeepEqual(got, v) {
			t.Fatalf("round trip:\n got %+v\nwant %+v", got, v)
		}
	}
	c := Chunk{Segments: []Segment{{Data: "not-hex", Offset: 3, Length: 5}, {Data: "0123456789abcdef0123456789abcdef", Length: 1}}}
	var gotc Chunk
	if err := Decode(Encode(c), &gotc); err != nil || !reflect.DeepEqual(gotc, c) {
		t.Fatalf("chunk: %+v %v", gotc, err)
	}
	d := Data{K: 2, M: 2, BlockSize: 1 << 20, Size: 99, Refs: 3, Bucket: "b", Key: "k", Created: now, Pack: 9, Off: 4096, Len: 200}
	var got Data
	if err := Decode(Encode(d), &got); err != nil || got != d {
		t.Fatalf("data: %+v %v", got, err)
	}
	// Other records stay JSON, and JSON versions still decode.
	if raw := Encode(Bucket{Name: "b"}); raw[0] != '{' {
		t.Fatalf("bucket not JSON: %q", raw)
	}
	var old Version
	if err := Decode([]byte(`{"vid":"null","size":3}`), &old); err != nil || old.Size != 3 {
		t.Fatalf("json version: %+v %v", old, err)
	}
}

func FuzzDecodeBinary(f *testing.F) {
	f.Add(Encode(&Version{VersionID: "v", Meta: map[string]string{"a": "b"}, Segments: []Segment{{Data: "0123456789abcdef0123456789abcdef", Length: 1}}}))
	f.Add(Encode(&Data{K: 1, Created: time.Now()}))
	f.Add([]byte{binaryTag, 'V', 0xff, 0xff, 0xff})
	f.Add(Encode(&Version{VersionID: "c", Chunks: []ChunkRef{{ID: 3, Length: 8, Segs: 2}}}))
	f.Add(Encode(&Chunk{Segments: []Segment{{Data: "0123456789abcdef0123456789abcdef", Length: 8}}}))
	f.Fuzz(func(t *testing.T, raw []byte) {
		var v Version
		if err := Decode(raw, &v); err == nil && len(raw) > 0 && raw[0] == binaryTag {
			var again Version
			if err := Decode(Encode(&v), &again); err != nil {
				t.Fatalf("re-encoding a decoded version fails: %v", err)
			}
		} else if err != nil && !errors.Is(err, ErrCorruptRecord) {
			t.Fatalf("error not ErrCorruptRecord: %v", err)
		}
		var c Chunk
		if err := Decode(raw, &c); err == nil && len(raw) > 0 && raw[0] == binaryTag {
			var again Chunk
			if err := Decode(Encode(&c), &again); err != nil || !reflect.DeepEqual(again, c) {
				t.Fatalf("re-encoding a decoded chunk: %+v %v", again, err)
			}
		} else if err != nil && !errors.Is(err, ErrCorruptRecord) {
			t.Fatalf("chunk error not ErrCorruptRecord: %v", err)
		}
		var d Data
		_ = Decode(raw, &d)
	})
}
