package s3

import (
	"net/http"
	"testing"
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
