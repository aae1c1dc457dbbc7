package integration

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// fillListingBucket puts the 2 500 listingKeys into bucket.
func fillListingBucket(t *testing.T, c *s3.Client, bucket string) {
	t.Helper()
	keys := listingKeys()
	err := parallelDo(len(keys), 16, func(i int) error {
		_, err := c.PutObject(callCtx(t), &s3.PutObjectInput{Bucket: &bucket, Key: &keys[i], Body: strings.NewReader(keys[i])})
		if err != nil {
			return fmt.Errorf("PutObject %s: %w", keys[i], err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func sdkListing(t *testing.T, srv *server, c *s3.Client, bucket string) {
	fillListingBucket(t, c, bucket)
	rootKeys, rootDirs := listingRoot()

	t.Run("V2", func(t *testing.T) {
		for _, tc := range []struct {
			name, prefix, delimiter string
			wantKeys, wantPrefixes  []string
			wantPages               int
		}{
			{"flat", "", "", listingKeys(), nil, 3},
			{"delimiter", "", "/", rootKeys, rootDirs, 3},
			{"prefix+delimiter", "obj0047", "/", []string{"obj0047"}, []string{"obj0047/"}, 1},
			{"dir", "obj0047/", "/", listingKeys()[keyIndex(t, "obj0047/f00") : keyIndex(t, "obj0047/f09")+1], nil, 1},
			{"no match", "zzz", "/", nil, nil, 1},
		} {
			t.Run(tc.name, func(t *testing.T) {
				in := &s3.ListObjectsV2Input{Bucket: &bucket, MaxKeys: aws.Int32(1000)}
				if tc.prefix != "" {
					in.Prefix = &tc.prefix
				}
				if tc.delimiter != "" {
					in.Delimiter = &tc.delimiter
				}
				var keys, prefixes []string
				pages := 0
				p := s3.NewListObjectsV2Paginator(c, in)
				for p.HasMorePages() {
					out, err := p.NextPage(callCtx(t))
					if err != nil {
						t.Fatalf("ListObjectsV2 page %d: %v", pages+1, err)
					}
					pages++
					n := len(out.Contents) + len(out.CommonPrefixes)
					if n > 1000 || int(aws.ToInt32(out.KeyCount)) != n {
						t.Fatalf("page %d: %d entries, KeyCount %d", pages, n, aws.ToInt32(out.KeyCount))
					}
					for _, o := range out.Contents {
						keys = append(keys, aws.ToString(o.Key))
					}
					for _, cp := range out.CommonPrefixes {
						prefixes = append(prefixes, aws.ToString(cp.Prefix))
					}
					if pages > 10 {
						t.Fatal("more than 10 pages")
					}
				}
				if !sort.StringsAreSorted(keys) {
					t.Error("keys are not in order")
				}
				if d := diffStrings(keys, tc.wantKeys); d != "" {
					t.Errorf("keys: %s", d)
				}
				if d := diffStrings(prefixes, tc.wantPrefixes); d != "" {
					t.Errorf("common prefixes: %s", d)
				}
				if pages != tc.wantPages {
					t.Errorf("%d pages, want %d", pages, tc.wantPages)
				}
			})
		}
	})

	t.Run("V1", func(t *testing.T) {
		for _, tc := range []struct {
			name, delimiter        string
			maxKeys                int32
			wantKeys, wantPrefixes []string
		}{
			{"flat", "", 1000, listingKeys(), nil},
			{"delimiter", "/", 1000, rootKeys, rootDirs},
			{"delimiter small pages", "/", 7, rootKeys, rootDirs},
		} {
			t.Run(tc.name, func(t *testing.T) {
				var keys, prefixes []string
				marker := ""
				for pages := 1; ; pages++ {
					in := &s3.ListObjectsInput{Bucket: &bucket, MaxKeys: aws.Int32(tc.maxKeys)}
					if tc.delimiter != "" {
						in.Delimiter = &tc.delimiter
					}
					if marker != "" {
						in.Marker = &marker
					}
					out, err := c.ListObjects(callCtx(t), in)
					if err != nil {
						t.Fatalf("ListObjects page %d: %v", pages, err)
					}
					if n := len(out.Contents) + len(out.CommonPrefixes); n > int(tc.maxKeys) {
						t.Fatalf("page %d: %d entries > MaxKeys %d", pages, n, tc.maxKeys)
					}
					for _, o := range out.Contents {
						keys = append(keys, aws.ToString(o.Key))
					}
					for _, cp := range out.CommonPrefixes {
						prefixes = append(prefixes, aws.ToString(cp.Prefix))
					}
					if !aws.ToBool(out.IsTruncated) {
						break
					}
					// S3 sends NextMarker only with a delimiter; otherwise
					// the last key is the next marker.
					switch {
					case out.NextMarker != nil:
						marker = aws.ToString(out.NextMarker)
					case tc.delimiter != "":
						t.Fatalf("page %d: truncated, with a delimiter, but no NextMarker", pages)
					default:
						marker = keys[len(keys)-1]
					}
					if pages > 2600/int(tc.maxKeys)+2 {
						t.Fatalf("too many pages (%d)", pages)
					}
				}
				if d := diffStrings(keys, tc.wantKeys); d != "" {
					t.Errorf("keys: %s", d)
				}
				if d := diffStrings(prefixes, tc.wantPrefixes); d != "" {
					t.Errorf("common prefixes: %s", d)
				}
			})
		}
	})
}

func keyIndex(t *testing.T, key string) int {
	t.Helper()
	keys := listingKeys()
	i := sort.SearchStrings(keys, key)
	if i == len(keys) || keys[i] != key {
		t.Fatalf("%s is not a listing key", key)
	}
	return i
}
