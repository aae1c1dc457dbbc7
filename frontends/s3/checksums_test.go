package s3

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/cairnstore/cairn/objstore"
)

func TestParseUploadChecksum(t *testing.T) {
	for _, tc := range []struct {
		algo, typ string
		want      uploadChecksum
		err       bool
	}{
		{"", "", uploadChecksum{}, false},
		{"CRC32", "", uploadChecksum{"crc32", checksumComposite}, false},
		{"crc32c", "FULL_OBJECT", uploadChecksum{"crc32c", checksumFullObject}, false},
		{"CRC64NVME", "", uploadChecksum{"crc64nvme", checksumFullObject}, false},
		{"CRC64NVME", "COMPOSITE", uploadChecksum{}, true},
		{"SHA1", "FULL_OBJECT", uploadChecksum{}, true},
		{"SHA256", "composite", uploadChecksum{"sha256", checksumComposite}, false},
		{"MD5", "", uploadChecksum{}, true},
		{"", "COMPOSITE", uploadChecksum{}, true},
		{"CRC32", "PARTIAL", uploadChecksum{}, true},
	} {
		h := http.Header{}
		if tc.algo != "" {
			h.Set("x-amz-checksum-algorithm", tc.algo)
		}
		if tc.typ != "" {
			h.Set("x-amz-checksum-type", tc.typ)
		}
		got, err := parseUploadChecksum(h)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("%q %q: %+v %v, want %+v (error %v)", tc.algo, tc.typ, got, err, tc.want, tc.err)
		}
		if err == nil && got.algo != "" {
			if back := decodeUploadChecksum(map[string]string{sysChecksum: got.String()}); back != got {
				t.Errorf("%q %q: record round trip gave %+v", tc.algo, tc.typ, back)
			}
		}
	}
}

func FuzzParseUploadChecksum(f *testing.F) {
	f.Add("CRC32", "FULL_OBJECT")
	f.Add("sha256", "")
	f.Add("", "COMPOSITE")
	f.Fuzz(func(t *testing.T, algo, typ string) {
		h := http.Header{"X-Amz-Checksum-Algorithm": {algo}, "X-Amz-Checksum-Type": {typ}}
		got, err := parseUploadChecksum(h)
		if err != nil || got.algo == "" {
			return
		}
		if got.typ != checksumComposite && got.typ != checksumFullObject {
			t.Fatalf("type %q accepted", got.typ)
		}
		if back := decodeUploadChecksum(map[string]string{sysChecksum: got.String()}); back != got {
			t.Fatalf("round trip %+v -> %+v", got, back)
		}
	})
}

func TestObjectPartsOf(t *testing.T) {
	sized := objstore.ObjectInfo{PartsCount: 3, PartSizes: []int64{5, 6, 7}}
	summed := sized
	summed.Attrs.Sys = map[string]string{sysChecksum: "crc32 COMPOSITE", sysPartSums: "AAAAAQ== AAAAAg== AAAAAw=="}
	for _, tc := range []struct {
		name        string
		info        objstore.ObjectInfo
		max, marker string
		want        []int // part numbers
		truncated   bool
		next        int
		sums        bool
		err         bool
	}{
		{"all, no checksums", sized, "", "", []int{1, 2, 3}, false, 3, false, false},
		{"all, checksums", summed, "", "", []int{1, 2, 3}, false, 3, true, false},
		{"one after 1", sized, "1", "1", []int{2}, true, 2, false, false},
		{"rest after 1", summed, "10", "1", []int{2, 3}, false, 3, true, false},
		{"past the end", sized, "10", "3", nil, false, 0, false, false},
		{"max 0", sized, "0", "", nil, true, 0, false, false},
		{"bad max", sized, "x", "", nil, false, 0, false, true},
		{"negative marker", sized, "", "-1", nil, false, 0, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/b/k?attributes", nil)
			if tc.max != "" {
				r.Header.Set("x-amz-max-parts", tc.max)
			}
			if tc.marker != "" {
				r.Header.Set("x-amz-part-number-marker", tc.marker)
			}
			out, err := objectPartsOf(&request{Request: r}, tc.info)
			if (err != nil) != tc.err {
				t.Fatalf("err %v", err)
			}
			if err != nil {
				return
			}
			if out.TotalPartsCount != 3 || out.IsTruncated != tc.truncated || out.NextPartNumberMarker != tc.next || len(out.Parts) != len(tc.want) {
				t.Fatalf("got %+v", out)
			}
			for i, p := range out.Parts {
				if p.PartNumber != tc.want[i] || p.Size != tc.info.PartSizes[p.PartNumber-1] || (p.ChecksumCRC32 != "") != tc.sums {
					t.Fatalf("part %d: %+v", i, p)
				}
			}
		})
	}
}

func TestCheckCompleteType(t *testing.T) {
	comp := uploadChecksum{algo: "sha256", typ: checksumComposite}
	for _, tc := range []struct {
		name, sent string
		up         uploadChecksum
		bad        bool
	}{
		{"not sent", "", comp, false},
		{"same", "COMPOSITE", comp, false},
		{"same, lower case", "composite", comp, false},
		{"other", "FULL_OBJECT", comp, true},
		{"garbage", "NEITHER", comp, true},
		{"upload without checksum", "FULL_OBJECT", uploadChecksum{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			if tc.sent != "" {
				h.Set("x-amz-checksum-type", tc.sent)
			}
			err := checkCompleteType(h, tc.up)
			var ae *APIError
			if tc.bad != (err != nil) || (err != nil && (!errors.As(err, &ae) || ae.Code != "BadDigest")) {
				t.Fatalf("err %v, want BadDigest %v", err, tc.bad)
			}
		})
	}
}
