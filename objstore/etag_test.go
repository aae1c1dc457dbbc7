package objstore

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"regexp"
	"testing"
)

// A write whose caller gives the ETag (PutOptions.ETag, PartOptions.ETag)
// is not hashed by the store unless a Content-MD5 is to be checked: the
// given ETag wins; an empty one gets the body's MD5 when it was hashed
// (Content-MD5 declared) and an opaque unique ETag otherwise, never the
// MD5 the store did not compute.
func TestGivenETag(t *testing.T) {
	ctx := context.Background()
	hexETag := regexp.MustCompile(`^[0-9a-f]{32}$`)
	for _, packed := range []bool{false, true} {
		s, _ := newTestStore(t, 4, 2, func(o *Options) {
			if packed {
				o.PackMaxSize = 1 << 20
			}
		})
		if err := s.CreateBucket(ctx, "bkt", BucketOptions{}); err != nil {
			t.Fatal(err)
		}
		for _, size := range []int{0, 100, 300 << 10, 2 << 20} {
			body := bytes.Repeat([]byte{'x'}, size)
			sum := md5.Sum(body)
			bodyMD5 := hex.EncodeToString(sum[:])
			bad := md5.Sum([]byte("other"))
			for _, tc := range []struct {
				name    string
				etag    string
				md5     []byte
				want    string // "" for an opaque ETag that is not the body's MD5
				wantErr error
			}{
				{name: "given", etag: "0123456789abcdef0123456789abcdef", want: "0123456789abcdef0123456789abcdef"},
				{name: "given with Content-MD5", etag: "0123456789abcdef0123456789abcdef", md5: sum[:], want: "0123456789abcdef0123456789abcdef"},
				{name: "bad Content-MD5 still refused", etag: "0123456789abcdef0123456789abcdef", md5: bad[:], wantErr: ErrBadDigest},
				{name: "empty with Content-MD5 is the MD5", md5: sum[:], want: bodyMD5},
				{name: "empty without is opaque"},
			} {
				key := tc.name
				opt := PutOptions{ContentMD5: tc.md5, ETag: func() string { return tc.etag }}
				info, err := s.Put(ctx, "bkt", key, bytes.NewReader(body), int64(size), opt)
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("packed %v size %d %s: Put: %v, want %v", packed, size, tc.name, err, tc.wantErr)
				}
				pid, err := s.CreateMultipartUpload(ctx, "bkt", key+"/mp", PutOptions{})
				if err != nil {
					t.Fatal(err)
				}
				part, perr := s.PutPart(ctx, "bkt", key+"/mp", pid, 1, bytes.NewReader(body), int64(size),
					PartOptions{ContentMD5: tc.md5, ETag: func() string { return tc.etag }})
				if !errors.Is(perr, tc.wantErr) {
					t.Fatalf("packed %v size %d %s: PutPart: %v, want %v", packed, size, tc.name, perr, tc.wantErr)
				}
				if err := s.AbortMultipartUpload(ctx, "bkt", key+"/mp", pid); err != nil {
					t.Fatal(err)
				}
				if tc.wantErr != nil {
					continue
				}
				for what, got := range map[string]string{"Put": info.ETag, "PutPart": part.ETag} {
					switch {
					case tc.want != "" && got != tc.want:
						t.Errorf("packed %v size %d %s: %s ETag %q, want %q", packed, size, tc.name, what, got, tc.want)
					case tc.want == "" && (!hexETag.MatchString(got) || (got == bodyMD5 && size > 0)):
						t.Errorf("packed %v size %d %s: %s ETag %q, want an opaque one", packed, size, tc.name, what, got)
					}
				}
				h, err := s.Head(ctx, "bkt", key, GetOptions{})
				if err != nil || h.ETag != info.ETag {
					t.Errorf("packed %v size %d %s: Head %q %v, Put said %q", packed, size, tc.name, h.ETag, err, info.ETag)
				}
			}
		}
	}
}
