package integration

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// TestS3SDK drives one real cairn server with aws-sdk-go-v2 at its default
// settings (request checksums included). Each subtest uses its own bucket.
func TestS3SDK(t *testing.T) {
	srv := startS3Server(t)
	c := sdkClient(srv, s3User, s3Secret)
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, srv *server, c *s3.Client, bucket string)
	}{
		{"BucketObjectLifecycle", sdkLifecycle},
		{"Listing", sdkListing},
		{"Multipart", sdkMultipart},
		{"Copy", sdkCopy},
		{"ConditionalPut", sdkConditionalPut},
		{"RangeAndConditionalGet", sdkRangeGet},
		{"Presigned", sdkPresigned},
		{"Versioning", sdkVersioning},
		{"DeleteObjects", sdkDeleteObjects},
		{"Errors", sdkErrors},
		{"Checksums", sdkChecksums},
		{"EdgeCases", sdkEdgeCases},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bucket := "sdk-" + strings.ToLower(tc.name)
			if _, err := c.CreateBucket(callCtx(t), &s3.CreateBucketInput{Bucket: &bucket}); err != nil {
				t.Fatalf("CreateBucket %s: %v", bucket, err)
			}
			tc.run(t, srv, c, bucket)
		})
	}
}

// sdkPut puts body at key and returns the output.
func sdkPut(t *testing.T, c *s3.Client, bucket, key string, body []byte) *s3.PutObjectOutput {
	t.Helper()
	out, err := c.PutObject(callCtx(t), &s3.PutObjectInput{Bucket: &bucket, Key: &key, Body: bytes.NewReader(body)})
	if err != nil {
		t.Fatalf("PutObject %s: %v", key, err)
	}
	return out
}

// sdkGet reads key (optionally one version) and returns its bytes.
func sdkGet(t *testing.T, c *s3.Client, bucket, key, version string) []byte {
	t.Helper()
	in := &s3.GetObjectInput{Bucket: &bucket, Key: &key}
	if version != "" {
		in.VersionId = &version
	}
	out, err := c.GetObject(callCtx(t), in)
	if err != nil {
		t.Fatalf("GetObject %s (version %q): %v", key, version, err)
	}
	defer func() { _ = out.Body.Close() }()
	b, err := io.ReadAll(out.Body)
	if err != nil {
		t.Fatalf("GetObject %s: read: %v", key, err)
	}
	return b
}

func sdkLifecycle(t *testing.T, srv *server, c *s3.Client, bucket string) {
	if _, err := c.HeadBucket(callCtx(t), &s3.HeadBucketInput{Bucket: &bucket}); err != nil {
		t.Fatalf("HeadBucket: %v", err)
	}
	_, err := c.CreateBucket(callCtx(t), &s3.CreateBucketInput{Bucket: &bucket})
	wantAPIError(t, "CreateBucket again", err, "BucketAlreadyOwnedByYou", 409)
	_, err = c.HeadBucket(callCtx(t), &s3.HeadBucketInput{Bucket: aws.String("sdk-no-such-bucket")})
	wantAPIError(t, "HeadBucket absent", err, "NotFound", 404)

	lb, err := c.ListBuckets(callCtx(t), &s3.ListBucketsInput{})
	if err != nil {
		t.Fatalf("ListBuckets: %v", err)
	}
	found := false
	for _, b := range lb.Buckets {
		found = found || aws.ToString(b.Name) == bucket
	}
	if !found {
		t.Fatalf("ListBuckets does not list %s", bucket)
	}

	body := []byte("hello, cairn")
	key := "dir/hello world+ünïcødé.txt"
	expires := time.Date(2031, 1, 2, 3, 4, 5, 0, time.UTC)
	put, err := c.PutObject(callCtx(t), &s3.PutObjectInput{
		Bucket: &bucket, Key: &key, Body: bytes.NewReader(body),
		ContentType:        aws.String("text/plain; charset=utf-8"),
		CacheControl:       aws.String("max-age=60"),
		ContentDisposition: aws.String(`attachment; filename="hello.txt"`),
		ContentLanguage:    aws.String("en-GB"),
		Expires:            &expires,
		Metadata:           map[string]string{"color": "blue", "Multi-Word": "a b c"},
	})
	if err != nil {
		t.Fatalf("PutObject: %v", err)
	}
	wantETag := `"` + md5hex(body) + `"`
	if aws.ToString(put.ETag) != wantETag {
		t.Fatalf("PutObject ETag %s, want %s", aws.ToString(put.ETag), wantETag)
	}

	head, err := c.HeadObject(callCtx(t), &s3.HeadObjectInput{Bucket: &bucket, Key: &key})
	if err != nil {
		t.Fatalf("HeadObject: %v", err)
	}
	get, err := c.GetObject(callCtx(t), &s3.GetObjectInput{Bucket: &bucket, Key: &key})
	if err != nil {
		t.Fatalf("GetObject: %v", err)
	}
	got, err := io.ReadAll(get.Body)
	_ = get.Body.Close()
	if err != nil || !bytes.Equal(got, body) {
		t.Fatalf("GetObject body %q (%v), want %q", got, err, body)
	}
	for _, o := range []struct {
		name                                    string
		length                                  *int64
		etag, ctype, cache, disp, lang, expires *string
		meta                                    map[string]string
	}{
		{"HeadObject", head.ContentLength, head.ETag, head.ContentType, head.CacheControl, head.ContentDisposition, head.ContentLanguage, head.ExpiresString, head.Metadata},
		{"GetObject", get.ContentLength, get.ETag, get.ContentType, get.CacheControl, get.ContentDisposition, get.ContentLanguage, get.ExpiresString, get.Metadata},
	} {
		if aws.ToInt64(o.length) != int64(len(body)) || aws.ToString(o.etag) != wantETag ||
			aws.ToString(o.ctype) != "text/plain; charset=utf-8" || aws.ToString(o.cache) != "max-age=60" ||
			aws.ToString(o.disp) != `attachment; filename="hello.txt"` || aws.ToString(o.lang) != "en-GB" ||
			aws.ToString(o.expires) != expires.Format(http.TimeFormat) {
			t.Errorf("%s headers: length %d etag %s type %q cache %q disposition %q language %q expires %q",
				o.name, aws.ToInt64(o.length), aws.ToString(o.etag), aws.ToString(o.ctype), aws.ToString(o.cache),
				aws.ToString(o.disp), aws.ToString(o.lang), aws.ToString(o.expires))
		}
		if o.meta["color"] != "blue" || o.meta["multi-word"] != "a b c" || len(o.meta) != 2 {
			t.Errorf("%s metadata %v, want color=blue multi-word=a b c", o.name, o.meta)
		}
	}

	for _, enc := range []types.EncodingType{"", types.EncodingTypeUrl} {
		lo, err := c.ListObjectsV2(callCtx(t), &s3.ListObjectsV2Input{Bucket: &bucket, Prefix: aws.String("dir/"), EncodingType: enc})
		if err != nil || len(lo.Contents) != 1 {
			t.Fatalf("ListObjectsV2 (encoding %q): %v, %d keys", enc, err, len(lo.Contents))
		}
		got := aws.ToString(lo.Contents[0].Key)
		if enc == types.EncodingTypeUrl {
			if got, err = url.QueryUnescape(got); err != nil {
				t.Fatalf("ListObjectsV2 url-encoded key %q: %v", aws.ToString(lo.Contents[0].Key), err)
			}
		}
		if got != key || aws.ToInt64(lo.Contents[0].Size) != int64(len(body)) || aws.ToString(lo.Contents[0].ETag) != wantETag {
			t.Errorf("ListObjectsV2 (encoding %q): key %q size %d etag %s", enc, got, aws.ToInt64(lo.Contents[0].Size), aws.ToString(lo.Contents[0].ETag))
		}
	}

	_, err = c.DeleteBucket(callCtx(t), &s3.DeleteBucketInput{Bucket: &bucket})
	wantAPIError(t, "DeleteBucket non-empty", err, "BucketNotEmpty", 409)

	if _, err := c.DeleteObject(callCtx(t), &s3.DeleteObjectInput{Bucket: &bucket, Key: &key}); err != nil {
		t.Fatalf("DeleteObject: %v", err)
	}
	if _, err := c.DeleteObject(callCtx(t), &s3.DeleteObjectInput{Bucket: &bucket, Key: &key}); err != nil {
		t.Fatalf("DeleteObject again (S3 answers 204): %v", err)
	}
	_, err = c.GetObject(callCtx(t), &s3.GetObjectInput{Bucket: &bucket, Key: &key})
	wantAPIError(t, "GetObject deleted", err, "NoSuchKey", 404)
	_, err = c.HeadObject(callCtx(t), &s3.HeadObjectInput{Bucket: &bucket, Key: &key})
	wantAPIError(t, "HeadObject deleted", err, "NotFound", 404)

	if _, err := c.DeleteBucket(callCtx(t), &s3.DeleteBucketInput{Bucket: &bucket}); err != nil {
		t.Fatalf("DeleteBucket: %v", err)
	}
	_, err = c.HeadBucket(callCtx(t), &s3.HeadBucketInput{Bucket: &bucket})
	wantAPIError(t, "HeadBucket deleted", err, "NotFound", 404)
	_, err = c.PutObject(callCtx(t), &s3.PutObjectInput{Bucket: &bucket, Key: aws.String("k"), Body: bytes.NewReader(body)})
	wantAPIError(t, "PutObject into deleted bucket", err, "NoSuchBucket", 404)
}

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

func sdkMultipart(t *testing.T, srv *server, c *s3.Client, bucket string) {
	key := "big/object.bin"
	sizes := []int{5 * mib, 5 * mib, 5 * mib, mib + 123}
	var data []byte
	for i, n := range sizes {
		data = append(data, randomBytes(uint64(100+i), n)...)
	}

	create, err := c.CreateMultipartUpload(callCtx(t), &s3.CreateMultipartUploadInput{Bucket: &bucket, Key: &key,
		ContentType: aws.String("application/x-test"), Metadata: map[string]string{"origin": "multipart"}})
	if err != nil {
		t.Fatalf("CreateMultipartUpload: %v", err)
	}
	id := create.UploadId
	other, err := c.CreateMultipartUpload(callCtx(t), &s3.CreateMultipartUploadInput{Bucket: &bucket, Key: aws.String("big/aborted.bin")})
	if err != nil {
		t.Fatalf("CreateMultipartUpload (to abort): %v", err)
	}

	var parts []types.CompletedPart
	off := 0
	for i, n := range sizes {
		out, err := c.UploadPart(callCtx(t), &s3.UploadPartInput{Bucket: &bucket, Key: &key, UploadId: id,
			PartNumber: aws.Int32(int32(i + 1)), Body: bytes.NewReader(data[off : off+n])})
		if err != nil {
			t.Fatalf("UploadPart %d: %v", i+1, err)
		}
		if aws.ToString(out.ETag) != `"`+md5hex(data[off:off+n])+`"` {
			t.Fatalf("UploadPart %d ETag %s", i+1, aws.ToString(out.ETag))
		}
		parts = append(parts, types.CompletedPart{ETag: out.ETag, PartNumber: aws.Int32(int32(i + 1))})
		off += n
	}
	if _, err := c.UploadPart(callCtx(t), &s3.UploadPartInput{Bucket: &bucket, Key: aws.String("big/aborted.bin"), UploadId: other.UploadId,
		PartNumber: aws.Int32(1), Body: bytes.NewReader([]byte("abandoned"))}); err != nil {
		t.Fatalf("UploadPart (to abort): %v", err)
	}

	lp, err := c.ListParts(callCtx(t), &s3.ListPartsInput{Bucket: &bucket, Key: &key, UploadId: id})
	if err != nil {
		t.Fatalf("ListParts: %v", err)
	}
	if len(lp.Parts) != len(sizes) || aws.ToBool(lp.IsTruncated) {
		t.Fatalf("ListParts: %d parts (truncated %v), want %d", len(lp.Parts), aws.ToBool(lp.IsTruncated), len(sizes))
	}
	for i, p := range lp.Parts {
		if aws.ToInt32(p.PartNumber) != int32(i+1) || aws.ToInt64(p.Size) != int64(sizes[i]) || aws.ToString(p.ETag) != aws.ToString(parts[i].ETag) {
			t.Errorf("ListParts part %d: number %d size %d etag %s", i, aws.ToInt32(p.PartNumber), aws.ToInt64(p.Size), aws.ToString(p.ETag))
		}
	}
	lp, err = c.ListParts(callCtx(t), &s3.ListPartsInput{Bucket: &bucket, Key: &key, UploadId: id, MaxParts: aws.Int32(2), PartNumberMarker: aws.String("1")})
	if err != nil {
		t.Fatalf("ListParts paged: %v", err)
	}
	if len(lp.Parts) != 2 || aws.ToInt32(lp.Parts[0].PartNumber) != 2 || !aws.ToBool(lp.IsTruncated) || aws.ToString(lp.NextPartNumberMarker) != "3" {
		t.Errorf("ListParts after 1, max 2: %d parts, truncated %v, next %s", len(lp.Parts), aws.ToBool(lp.IsTruncated), aws.ToString(lp.NextPartNumberMarker))
	}

	lu, err := c.ListMultipartUploads(callCtx(t), &s3.ListMultipartUploadsInput{Bucket: &bucket})
	if err != nil {
		t.Fatalf("ListMultipartUploads: %v", err)
	}
	ups := map[string]string{}
	for _, u := range lu.Uploads {
		ups[aws.ToString(u.Key)] = aws.ToString(u.UploadId)
	}
	if len(ups) != 2 || ups[key] != aws.ToString(id) || ups["big/aborted.bin"] != aws.ToString(other.UploadId) {
		t.Fatalf("ListMultipartUploads: %v", ups)
	}
	lu, err = c.ListMultipartUploads(callCtx(t), &s3.ListMultipartUploadsInput{Bucket: &bucket, Delimiter: aws.String("/")})
	if err != nil {
		t.Fatalf("ListMultipartUploads with delimiter: %v", err)
	}
	if len(lu.Uploads) != 0 || len(lu.CommonPrefixes) != 1 || aws.ToString(lu.CommonPrefixes[0].Prefix) != "big/" {
		t.Errorf("ListMultipartUploads with delimiter: %d uploads, prefixes %v", len(lu.Uploads), lu.CommonPrefixes)
	}

	if _, err := c.AbortMultipartUpload(callCtx(t), &s3.AbortMultipartUploadInput{Bucket: &bucket, Key: aws.String("big/aborted.bin"), UploadId: other.UploadId}); err != nil {
		t.Fatalf("AbortMultipartUpload: %v", err)
	}
	_, err = c.ListParts(callCtx(t), &s3.ListPartsInput{Bucket: &bucket, Key: aws.String("big/aborted.bin"), UploadId: other.UploadId})
	wantAPIError(t, "ListParts after abort", err, "NoSuchUpload", 404)
	_, err = c.UploadPart(callCtx(t), &s3.UploadPartInput{Bucket: &bucket, Key: aws.String("big/aborted.bin"), UploadId: other.UploadId,
		PartNumber: aws.Int32(2), Body: bytes.NewReader([]byte("late"))})
	wantAPIError(t, "UploadPart after abort", err, "NoSuchUpload", 404)

	// Errors on Complete leave the upload in place.
	for _, tc := range []struct {
		name  string
		parts []types.CompletedPart
		code  string
	}{
		{"out of order", []types.CompletedPart{parts[1], parts[0], parts[2], parts[3]}, "InvalidPartOrder"},
		{"unknown part", []types.CompletedPart{parts[0], {ETag: parts[1].ETag, PartNumber: aws.Int32(9)}}, "InvalidPart"},
		{"wrong etag", []types.CompletedPart{parts[0], {ETag: parts[0].ETag, PartNumber: aws.Int32(2)}}, "InvalidPart"},
	} {
		_, err := c.CompleteMultipartUpload(callCtx(t), &s3.CompleteMultipartUploadInput{Bucket: &bucket, Key: &key, UploadId: id,
			MultipartUpload: &types.CompletedMultipartUpload{Parts: tc.parts}})
		wantAPIError(t, "CompleteMultipartUpload "+tc.name, err, tc.code, 400)
	}

	done, err := c.CompleteMultipartUpload(callCtx(t), &s3.CompleteMultipartUploadInput{Bucket: &bucket, Key: &key, UploadId: id,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}})
	if err != nil {
		t.Fatalf("CompleteMultipartUpload: %v", err)
	}
	if etag := aws.ToString(done.ETag); !strings.HasSuffix(etag, fmt.Sprintf(`-%d"`, len(sizes))) {
		t.Errorf("multipart ETag %s, want a -%d suffix", etag, len(sizes))
	}
	if got := sdkGet(t, c, bucket, key, ""); !bytes.Equal(got, data) {
		t.Fatalf("GetObject after complete: %d bytes (sha256 %s), want %d (sha256 %s)", len(got), sha256hex(got), len(data), sha256hex(data))
	}
	head, err := c.HeadObject(callCtx(t), &s3.HeadObjectInput{Bucket: &bucket, Key: &key, PartNumber: aws.Int32(4)})
	if err != nil {
		t.Fatalf("HeadObject partNumber 4: %v", err)
	}
	if aws.ToInt64(head.ContentLength) != int64(sizes[3]) || aws.ToInt32(head.PartsCount) != 4 ||
		aws.ToString(head.ContentType) != "application/x-test" || head.Metadata["origin"] != "multipart" {
		t.Errorf("HeadObject partNumber 4: length %d parts %d type %q meta %v", aws.ToInt64(head.ContentLength),
			aws.ToInt32(head.PartsCount), aws.ToString(head.ContentType), head.Metadata)
	}
	_, err = c.ListParts(callCtx(t), &s3.ListPartsInput{Bucket: &bucket, Key: &key, UploadId: id})
	wantAPIError(t, "ListParts after complete", err, "NoSuchUpload", 404)
	lu, err = c.ListMultipartUploads(callCtx(t), &s3.ListMultipartUploadsInput{Bucket: &bucket})
	if err != nil || len(lu.Uploads) != 0 {
		t.Fatalf("ListMultipartUploads at the end: %v, %d uploads", err, len(lu.Uploads))
	}

	t.Run("UploadPartCopy", func(t *testing.T) {
		dst := "copied/ranges.bin"
		up, err := c.CreateMultipartUpload(callCtx(t), &s3.CreateMultipartUploadInput{Bucket: &bucket, Key: &dst})
		if err != nil {
			t.Fatalf("CreateMultipartUpload: %v", err)
		}
		src := bucket + "/" + key
		ranges := [][2]int{{mib, 6*mib - 1}, {7 * mib, len(data) - 1}} // 5 MiB, then the rest
		var cparts []types.CompletedPart
		var want []byte
		for i, r := range ranges {
			out, err := c.UploadPartCopy(callCtx(t), &s3.UploadPartCopyInput{Bucket: &bucket, Key: &dst, UploadId: up.UploadId,
				PartNumber: aws.Int32(int32(i + 1)), CopySource: &src, CopySourceRange: aws.String(fmt.Sprintf("bytes=%d-%d", r[0], r[1])),
				CopySourceIfMatch: done.ETag})
			if err != nil {
				t.Fatalf("UploadPartCopy %d: %v", i+1, err)
			}
			part := data[r[0] : r[1]+1]
			if aws.ToString(out.CopyPartResult.ETag) != `"`+md5hex(part)+`"` {
				t.Errorf("UploadPartCopy %d ETag %s, want the MD5 of the range", i+1, aws.ToString(out.CopyPartResult.ETag))
			}
			cparts = append(cparts, types.CompletedPart{ETag: out.CopyPartResult.ETag, PartNumber: aws.Int32(int32(i + 1))})
			want = append(want, part...)
		}
		_, err = c.UploadPartCopy(callCtx(t), &s3.UploadPartCopyInput{Bucket: &bucket, Key: &dst, UploadId: up.UploadId,
			PartNumber: aws.Int32(3), CopySource: &src, CopySourceIfMatch: aws.String(`"0123"`)})
		wantAPIError(t, "UploadPartCopy with a failing copy-source-if-match", err, "PreconditionFailed", 412)
		if _, err := c.CompleteMultipartUpload(callCtx(t), &s3.CompleteMultipartUploadInput{Bucket: &bucket, Key: &dst, UploadId: up.UploadId,
			MultipartUpload: &types.CompletedMultipartUpload{Parts: cparts}}); err != nil {
			t.Fatalf("CompleteMultipartUpload: %v", err)
		}
		if got := sdkGet(t, c, bucket, dst, ""); !bytes.Equal(got, want) {
			t.Fatalf("copied object: %d bytes, want %d (contents differ: %v)", len(got), len(want), len(got) == len(want))
		}
	})
}

func sdkCopy(t *testing.T, srv *server, c *s3.Client, bucket string) {
	body := []byte("copy me")
	src := "src/object"
	put, err := c.PutObject(callCtx(t), &s3.PutObjectInput{Bucket: &bucket, Key: &src, Body: bytes.NewReader(body),
		ContentType: aws.String("text/x-source"), Metadata: map[string]string{"k": "source"}})
	if err != nil {
		t.Fatalf("PutObject: %v", err)
	}
	copySource := bucket + "/" + src
	past, future := time.Now().Add(-time.Hour), time.Now().Add(time.Hour)
	for _, tc := range []struct {
		name      string
		in        s3.CopyObjectInput
		wantCode  string
		wantType  string
		wantMeta  map[string]string
		wantError int
	}{
		{name: "copy metadata", in: s3.CopyObjectInput{}, wantType: "text/x-source", wantMeta: map[string]string{"k": "source"}},
		{name: "COPY directive ignores new metadata", in: s3.CopyObjectInput{MetadataDirective: types.MetadataDirectiveCopy,
			Metadata: map[string]string{"k": "ignored"}}, wantType: "text/x-source", wantMeta: map[string]string{"k": "source"}},
		{name: "replace metadata", in: s3.CopyObjectInput{MetadataDirective: types.MetadataDirectiveReplace, ContentType: aws.String("text/x-new"),
			Metadata: map[string]string{"k": "new", "extra": "1"}}, wantType: "text/x-new", wantMeta: map[string]string{"k": "new", "extra": "1"}},
		{name: "if-match holds", in: s3.CopyObjectInput{CopySourceIfMatch: put.ETag}, wantType: "text/x-source", wantMeta: map[string]string{"k": "source"}},
		{name: "if-unmodified-since holds", in: s3.CopyObjectInput{CopySourceIfUnmodifiedSince: &future}, wantType: "text/x-source", wantMeta: map[string]string{"k": "source"}},
		{name: "if-modified-since holds", in: s3.CopyObjectInput{CopySourceIfModifiedSince: &past}, wantType: "text/x-source", wantMeta: map[string]string{"k": "source"}},
		{name: "if-none-match other", in: s3.CopyObjectInput{CopySourceIfNoneMatch: aws.String(`"abc"`)}, wantType: "text/x-source", wantMeta: map[string]string{"k": "source"}},
		{name: "if-match fails", in: s3.CopyObjectInput{CopySourceIfMatch: aws.String(`"abc"`)}, wantCode: "PreconditionFailed", wantError: 412},
		{name: "if-none-match fails", in: s3.CopyObjectInput{CopySourceIfNoneMatch: put.ETag}, wantCode: "PreconditionFailed", wantError: 412},
		{name: "if-modified-since fails", in: s3.CopyObjectInput{CopySourceIfModifiedSince: &future}, wantCode: "PreconditionFailed", wantError: 412},
		{name: "if-unmodified-since fails", in: s3.CopyObjectInput{CopySourceIfUnmodifiedSince: &past}, wantCode: "PreconditionFailed", wantError: 412},
		{name: "missing source", in: s3.CopyObjectInput{CopySource: aws.String(bucket + "/no/such/key")}, wantCode: "NoSuchKey", wantError: 404},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.in
			in.Bucket, in.Key = &bucket, aws.String("dst/"+strings.ReplaceAll(tc.name, " ", "-"))
			if in.CopySource == nil {
				in.CopySource = &copySource
			}
			out, err := c.CopyObject(callCtx(t), &in)
			if tc.wantCode != "" {
				wantAPIError(t, "CopyObject", err, tc.wantCode, tc.wantError)
				_, err := c.HeadObject(callCtx(t), &s3.HeadObjectInput{Bucket: &bucket, Key: in.Key})
				wantAPIError(t, "HeadObject of a failed copy", err, "NotFound", 404)
				return
			}
			if err != nil {
				t.Fatalf("CopyObject: %v", err)
			}
			if aws.ToString(out.CopyObjectResult.ETag) != aws.ToString(put.ETag) {
				t.Errorf("copy ETag %s, want %s", aws.ToString(out.CopyObjectResult.ETag), aws.ToString(put.ETag))
			}
			get, err := c.GetObject(callCtx(t), &s3.GetObjectInput{Bucket: &bucket, Key: in.Key})
			if err != nil {
				t.Fatalf("GetObject copy: %v", err)
			}
			got, _ := io.ReadAll(get.Body)
			_ = get.Body.Close()
			if !bytes.Equal(got, body) || aws.ToString(get.ContentType) != tc.wantType || fmt.Sprint(get.Metadata) != fmt.Sprint(tc.wantMeta) {
				t.Errorf("copy: body %q type %q meta %v, want %q %q %v", got, aws.ToString(get.ContentType), get.Metadata, body, tc.wantType, tc.wantMeta)
			}
		})
	}

	t.Run("odd source key", func(t *testing.T) {
		odd := "src/a b+c&d=ü?.txt"
		sdkPut(t, c, bucket, odd, body)
		_, err := c.CopyObject(callCtx(t), &s3.CopyObjectInput{Bucket: &bucket, Key: aws.String("dst/odd"),
			CopySource: aws.String(url.PathEscape(bucket) + "/" + strings.ReplaceAll(url.PathEscape(odd), "%2F", "/"))})
		if err != nil {
			t.Fatalf("CopyObject from %q: %v", odd, err)
		}
		if got := sdkGet(t, c, bucket, "dst/odd", ""); !bytes.Equal(got, body) {
			t.Fatalf("copy of %q holds %q", odd, got)
		}
	})

	t.Run("onto itself", func(t *testing.T) {
		_, err := c.CopyObject(callCtx(t), &s3.CopyObjectInput{Bucket: &bucket, Key: &src, CopySource: &copySource})
		wantAPIError(t, "CopyObject onto itself", err, "InvalidRequest", 400)
		_, err = c.CopyObject(callCtx(t), &s3.CopyObjectInput{Bucket: &bucket, Key: &src, CopySource: &copySource,
			MetadataDirective: types.MetadataDirectiveReplace, Metadata: map[string]string{"k": "self"}})
		if err != nil {
			t.Fatalf("CopyObject onto itself with REPLACE: %v", err)
		}
		head, err := c.HeadObject(callCtx(t), &s3.HeadObjectInput{Bucket: &bucket, Key: &src})
		if err != nil || head.Metadata["k"] != "self" {
			t.Fatalf("HeadObject after self-copy: %v, meta %v", err, head.Metadata)
		}
	})
}

func sdkConditionalPut(t *testing.T, srv *server, c *s3.Client, bucket string) {
	t.Run("If-None-Match race", func(t *testing.T) {
		const rounds, writers = 5, 2
		for r := range rounds {
			key := fmt.Sprintf("race/%d", r)
			start := make(chan struct{})
			errs := make([]error, writers)
			var wg sync.WaitGroup
			for w := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					_, errs[w] = c.PutObject(callCtx(t), &s3.PutObjectInput{Bucket: &bucket, Key: &key,
						Body: bytes.NewReader([]byte(fmt.Sprintf("writer %d", w))), IfNoneMatch: aws.String("*")})
				}()
			}
			close(start)
			wg.Wait()
			winner := -1
			for w, err := range errs {
				switch {
				case err == nil && winner == -1:
					winner = w
				case err == nil:
					t.Fatalf("round %d: writers %d and %d both succeeded", r, winner, w)
				default:
					wantAPIError(t, fmt.Sprintf("round %d writer %d", r, w), err, "PreconditionFailed", 412)
				}
			}
			if winner == -1 {
				t.Fatalf("round %d: no writer succeeded", r)
			}
			if got := string(sdkGet(t, c, bucket, key, "")); got != fmt.Sprintf("writer %d", winner) {
				t.Fatalf("round %d: object holds %q, winner was %d", r, got, winner)
			}
		}
	})

	t.Run("If-Match", func(t *testing.T) {
		key := "cas"
		v1 := sdkPut(t, c, bucket, key, []byte("v1"))
		v2, err := c.PutObject(callCtx(t), &s3.PutObjectInput{Bucket: &bucket, Key: &key, Body: bytes.NewReader([]byte("v2")), IfMatch: v1.ETag})
		if err != nil {
			t.Fatalf("PutObject If-Match current: %v", err)
		}
		_, err = c.PutObject(callCtx(t), &s3.PutObjectInput{Bucket: &bucket, Key: &key, Body: bytes.NewReader([]byte("v3")), IfMatch: v1.ETag})
		wantAPIError(t, "PutObject If-Match stale", err, "PreconditionFailed", 412)
		_, err = c.PutObject(callCtx(t), &s3.PutObjectInput{Bucket: &bucket, Key: aws.String("absent"), Body: bytes.NewReader([]byte("x")), IfMatch: v1.ETag})
		wantAPIError(t, "PutObject If-Match on an absent key", err, "NoSuchKey", 404)
		_, err = c.PutObject(callCtx(t), &s3.PutObjectInput{Bucket: &bucket, Key: &key, Body: bytes.NewReader([]byte("v3")), IfNoneMatch: aws.String("*")})
		wantAPIError(t, "PutObject If-None-Match on an existing key", err, "PreconditionFailed", 412)
		if got := string(sdkGet(t, c, bucket, key, "")); got != "v2" {
			t.Fatalf("object holds %q, want v2 (%s)", got, aws.ToString(v2.ETag))
		}
	})
}

func sdkRangeGet(t *testing.T, srv *server, c *s3.Client, bucket string) {
	key := "ranged"
	body := randomBytes(7, 1000)
	put := sdkPut(t, c, bucket, key, body)
	for _, tc := range []struct {
		rng        string
		start, end int
	}{
		{"bytes=0-0", 0, 0},
		{"bytes=10-19", 10, 19},
		{"bytes=990-", 990, 999},
		{"bytes=-25", 975, 999},
		{"bytes=900-5000", 900, 999},
	} {
		t.Run(tc.rng, func(t *testing.T) {
			out, err := c.GetObject(callCtx(t), &s3.GetObjectInput{Bucket: &bucket, Key: &key, Range: aws.String(tc.rng)})
			if err != nil {
				t.Fatalf("GetObject: %v", err)
			}
			got, err := io.ReadAll(out.Body)
			_ = out.Body.Close()
			if err != nil {
				t.Fatalf("read: %v", err)
			}
			wantCR := fmt.Sprintf("bytes %d-%d/%d", tc.start, tc.end, len(body))
			if !bytes.Equal(got, body[tc.start:tc.end+1]) || aws.ToString(out.ContentRange) != wantCR ||
				aws.ToInt64(out.ContentLength) != int64(tc.end-tc.start+1) {
				t.Fatalf("got %d bytes, Content-Range %q, Content-Length %d; want %d bytes, %q", len(got),
					aws.ToString(out.ContentRange), aws.ToInt64(out.ContentLength), tc.end-tc.start+1, wantCR)
			}
		})
	}

	// The SDK hides the status of a success: check 206 and 416 raw.
	t.Run("raw statuses", func(t *testing.T) {
		for _, tc := range []struct {
			rng, contentRange, code string
			status                  int
		}{
			{"bytes=10-19", "bytes 10-19/1000", "", 206},
			{"bytes=1000-", "bytes */1000", "InvalidRange", 416},
			{"bytes=5000-6000", "bytes */1000", "InvalidRange", 416},
		} {
			req := newRaw(t, http.MethodGet, objectURL(srv, bucket, key), nil)
			req.Header.Set("Range", tc.rng)
			signRaw(t, req, nil, s3User, s3Secret, time.Now())
			res := doRaw(t, req)
			if res.status != tc.status || res.header.Get("Content-Range") != tc.contentRange || res.code != tc.code {
				t.Errorf("Range %s: %d %q code %q, want %d %q %q", tc.rng, res.status, res.header.Get("Content-Range"), res.code, tc.status, tc.contentRange, tc.code)
			}
		}
	})

	t.Run("unsatisfiable", func(t *testing.T) {
		_, err := c.GetObject(callCtx(t), &s3.GetObjectInput{Bucket: &bucket, Key: &key, Range: aws.String("bytes=1000-")})
		wantAPIError(t, "GetObject past the end", err, "InvalidRange", 416)
	})

	t.Run("conditions", func(t *testing.T) {
		_, err := c.GetObject(callCtx(t), &s3.GetObjectInput{Bucket: &bucket, Key: &key, IfNoneMatch: put.ETag})
		if httpStatus(err) != http.StatusNotModified {
			t.Fatalf("GetObject If-None-Match current: %v, want 304", err)
		}
		_, err = c.HeadObject(callCtx(t), &s3.HeadObjectInput{Bucket: &bucket, Key: &key, IfNoneMatch: put.ETag})
		if httpStatus(err) != http.StatusNotModified {
			t.Fatalf("HeadObject If-None-Match current: %v, want 304", err)
		}
		if out, err := c.GetObject(callCtx(t), &s3.GetObjectInput{Bucket: &bucket, Key: &key, IfNoneMatch: aws.String(`"other"`)}); err != nil {
			t.Fatalf("GetObject If-None-Match other: %v", err)
		} else {
			_ = out.Body.Close()
		}
		_, err = c.GetObject(callCtx(t), &s3.GetObjectInput{Bucket: &bucket, Key: &key, IfMatch: aws.String(`"other"`)})
		wantAPIError(t, "GetObject If-Match other", err, "PreconditionFailed", 412)
		future := time.Now().Add(time.Hour)
		_, err = c.GetObject(callCtx(t), &s3.GetObjectInput{Bucket: &bucket, Key: &key, IfModifiedSince: &future})
		if httpStatus(err) != http.StatusNotModified {
			t.Fatalf("GetObject If-Modified-Since future: %v, want 304", err)
		}

		req := newRaw(t, http.MethodGet, objectURL(srv, bucket, key), nil)
		req.Header.Set("If-None-Match", aws.ToString(put.ETag))
		signRaw(t, req, nil, s3User, s3Secret, time.Now())
		res := doRaw(t, req)
		if res.status != http.StatusNotModified || res.header.Get("ETag") != aws.ToString(put.ETag) || len(res.body) != 0 {
			t.Fatalf("raw If-None-Match: %d ETag %q body %d bytes, want 304 with the ETag and no body", res.status, res.header.Get("ETag"), len(res.body))
		}
	})
}

func sdkPresigned(t *testing.T, srv *server, c *s3.Client, bucket string) {
	pc := s3.NewPresignClient(c)
	key := "presigned/a key+plus"
	body := []byte("uploaded through a presigned URL")

	put, err := pc.PresignPutObject(callCtx(t), &s3.PutObjectInput{Bucket: &bucket, Key: &key}, s3.WithPresignExpires(10*time.Minute))
	if err != nil {
		t.Fatalf("PresignPutObject: %v", err)
	}
	req := newRaw(t, put.Method, put.URL, body)
	for k, vs := range put.SignedHeader {
		if !strings.EqualFold(k, "Host") {
			req.Header[k] = vs
		}
	}
	if res := doRaw(t, req); res.status != http.StatusOK {
		t.Fatalf("presigned PUT: %d %s\n%s", res.status, res.code, res.body)
	}

	get, err := pc.PresignGetObject(callCtx(t), &s3.GetObjectInput{Bucket: &bucket, Key: &key,
		ResponseContentType: aws.String("text/x-override")}, s3.WithPresignExpires(10*time.Minute))
	if err != nil {
		t.Fatalf("PresignGetObject: %v", err)
	}
	res := doRaw(t, newRaw(t, get.Method, get.URL, nil))
	if res.status != http.StatusOK || !bytes.Equal(res.body, body) || res.header.Get("Content-Type") != "text/x-override" {
		t.Fatalf("presigned GET: %d %q type %q\n", res.status, res.body, res.header.Get("Content-Type"))
	}

	tampered := strings.Replace(get.URL, "x-override", "x-other", 1)
	if res := doRaw(t, newRaw(t, http.MethodGet, tampered, nil)); res.status != 403 || res.code != "SignatureDoesNotMatch" {
		t.Errorf("tampered presigned GET: %d %q, want 403 SignatureDoesNotMatch", res.status, res.code)
	}

	// The SDK's signer, as if presigned two hours ago for one minute.
	expired := presignRaw(t, newRaw(t, http.MethodGet, objectURL(srv, bucket, key), nil), s3User, s3Secret,
		time.Now().Add(-2*time.Hour), time.Minute)
	if res := doRaw(t, newRaw(t, http.MethodGet, expired, nil)); res.status != 403 || res.code != "AccessDenied" {
		t.Errorf("expired presigned GET: %d %q, want 403 AccessDenied\n%s", res.status, res.code, res.body)
	}
	// And one that expires right away, through the presign client.
	short, err := pc.PresignGetObject(callCtx(t), &s3.GetObjectInput{Bucket: &bucket, Key: &key}, s3.WithPresignExpires(time.Second))
	if err != nil {
		t.Fatalf("PresignGetObject: %v", err)
	}
	time.Sleep(2100 * time.Millisecond)
	if res := doRaw(t, newRaw(t, http.MethodGet, short.URL, nil)); res.status != 403 || res.code != "AccessDenied" {
		t.Errorf("presigned GET after expiry: %d %q, want 403 AccessDenied\n%s", res.status, res.code, res.body)
	}
}

func sdkVersioning(t *testing.T, srv *server, c *s3.Client, bucket string) {
	if _, err := c.PutBucketVersioning(callCtx(t), &s3.PutBucketVersioningInput{Bucket: &bucket,
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}}); err != nil {
		t.Fatalf("PutBucketVersioning: %v", err)
	}
	gv, err := c.GetBucketVersioning(callCtx(t), &s3.GetBucketVersioningInput{Bucket: &bucket})
	if err != nil || gv.Status != types.BucketVersioningStatusEnabled {
		t.Fatalf("GetBucketVersioning: %v, %q", err, gv.Status)
	}

	key := "doc.txt"
	var ids []string
	for i := range 3 {
		out := sdkPut(t, c, bucket, key, []byte(fmt.Sprintf("version %d", i)))
		if aws.ToString(out.VersionId) == "" || aws.ToString(out.VersionId) == "null" {
			t.Fatalf("PutObject %d: version id %q", i, aws.ToString(out.VersionId))
		}
		ids = append(ids, aws.ToString(out.VersionId))
	}
	for i, id := range ids {
		if got := string(sdkGet(t, c, bucket, key, id)); got != fmt.Sprintf("version %d", i) {
			t.Errorf("GetObject version %d: %q", i, got)
		}
	}
	if got := string(sdkGet(t, c, bucket, key, "")); got != "version 2" {
		t.Errorf("GetObject latest: %q", got)
	}

	del, err := c.DeleteObject(callCtx(t), &s3.DeleteObjectInput{Bucket: &bucket, Key: &key})
	if err != nil || !aws.ToBool(del.DeleteMarker) || aws.ToString(del.VersionId) == "" {
		t.Fatalf("DeleteObject: %v, marker %v version %q", err, aws.ToBool(del.DeleteMarker), aws.ToString(del.VersionId))
	}
	marker := aws.ToString(del.VersionId)
	_, err = c.GetObject(callCtx(t), &s3.GetObjectInput{Bucket: &bucket, Key: &key})
	wantAPIError(t, "GetObject behind a delete marker", err, "NoSuchKey", 404)
	_, err = c.GetObject(callCtx(t), &s3.GetObjectInput{Bucket: &bucket, Key: &key, VersionId: &marker})
	wantAPIError(t, "GetObject of the delete marker", err, "MethodNotAllowed", 405)
	if got := string(sdkGet(t, c, bucket, key, ids[1])); got != "version 1" {
		t.Errorf("GetObject old version behind a marker: %q", got)
	}

	lv, err := c.ListObjectVersions(callCtx(t), &s3.ListObjectVersionsInput{Bucket: &bucket})
	if err != nil {
		t.Fatalf("ListObjectVersions: %v", err)
	}
	if len(lv.DeleteMarkers) != 1 || aws.ToString(lv.DeleteMarkers[0].VersionId) != marker || !aws.ToBool(lv.DeleteMarkers[0].IsLatest) {
		t.Errorf("ListObjectVersions delete markers: %+v", lv.DeleteMarkers)
	}
	var listed []string
	for _, v := range lv.Versions {
		listed = append(listed, aws.ToString(v.VersionId))
		if aws.ToBool(v.IsLatest) {
			t.Errorf("version %s is latest behind a delete marker", aws.ToString(v.VersionId))
		}
	}
	if want := []string{ids[2], ids[1], ids[0]}; fmt.Sprint(listed) != fmt.Sprint(want) {
		t.Errorf("ListObjectVersions versions %v, want newest first %v", listed, want)
	}
	lv, err = c.ListObjectVersions(callCtx(t), &s3.ListObjectVersionsInput{Bucket: &bucket, MaxKeys: aws.Int32(2)})
	if err != nil || !aws.ToBool(lv.IsTruncated) || len(lv.Versions)+len(lv.DeleteMarkers) != 2 {
		t.Fatalf("ListObjectVersions max 2: %v, truncated %v, %d entries", err, aws.ToBool(lv.IsTruncated), len(lv.Versions)+len(lv.DeleteMarkers))
	}
	lv, err = c.ListObjectVersions(callCtx(t), &s3.ListObjectVersionsInput{Bucket: &bucket, KeyMarker: lv.NextKeyMarker, VersionIdMarker: lv.NextVersionIdMarker})
	if err != nil || aws.ToBool(lv.IsTruncated) || len(lv.Versions) != 2 || aws.ToString(lv.Versions[1].VersionId) != ids[0] {
		t.Fatalf("ListObjectVersions second page: %v, %d versions", err, len(lv.Versions))
	}

	// Removing the delete marker brings the object back.
	if _, err := c.DeleteObject(callCtx(t), &s3.DeleteObjectInput{Bucket: &bucket, Key: &key, VersionId: &marker}); err != nil {
		t.Fatalf("DeleteObject marker: %v", err)
	}
	if got := string(sdkGet(t, c, bucket, key, "")); got != "version 2" {
		t.Errorf("GetObject after removing the marker: %q", got)
	}
	// Deleting a version by id removes it for good.
	dv, err := c.DeleteObject(callCtx(t), &s3.DeleteObjectInput{Bucket: &bucket, Key: &key, VersionId: &ids[2]})
	if err != nil || aws.ToString(dv.VersionId) != ids[2] || aws.ToBool(dv.DeleteMarker) {
		t.Fatalf("DeleteObject version: %v, version %q marker %v", err, aws.ToString(dv.VersionId), aws.ToBool(dv.DeleteMarker))
	}
	if got := string(sdkGet(t, c, bucket, key, "")); got != "version 1" {
		t.Errorf("GetObject after deleting the newest version: %q", got)
	}
	_, err = c.GetObject(callCtx(t), &s3.GetObjectInput{Bucket: &bucket, Key: &key, VersionId: &ids[2]})
	wantAPIError(t, "GetObject deleted version", err, "NoSuchVersion", 404)

	// DeleteObjects in a versioned bucket: a marker for a key, a version
	// removed for a key and version id.
	other := sdkPut(t, c, bucket, "other", []byte("o"))
	dm, err := c.DeleteObjects(callCtx(t), &s3.DeleteObjectsInput{Bucket: &bucket, Delete: &types.Delete{Objects: []types.ObjectIdentifier{
		{Key: aws.String("other")}, {Key: aws.String("other"), VersionId: other.VersionId}}}})
	if err != nil || len(dm.Errors) != 0 || len(dm.Deleted) != 2 {
		t.Fatalf("DeleteObjects versioned: %v, %+v", err, dm)
	}
	for _, d := range dm.Deleted {
		switch aws.ToString(d.VersionId) {
		case "":
			if !aws.ToBool(d.DeleteMarker) || aws.ToString(d.DeleteMarkerVersionId) == "" {
				t.Errorf("DeleteObjects key only: marker %v marker version %q", aws.ToBool(d.DeleteMarker), aws.ToString(d.DeleteMarkerVersionId))
			}
		case aws.ToString(other.VersionId):
			if aws.ToBool(d.DeleteMarker) {
				t.Errorf("DeleteObjects of a version reports a delete marker")
			}
		default:
			t.Errorf("DeleteObjects reported version %q", aws.ToString(d.VersionId))
		}
	}
	lv, err = c.ListObjectVersions(callCtx(t), &s3.ListObjectVersionsInput{Bucket: &bucket, Prefix: aws.String("other")})
	if err != nil || len(lv.Versions) != 0 || len(lv.DeleteMarkers) != 1 {
		t.Fatalf("ListObjectVersions other: %v, %d versions %d markers", err, len(lv.Versions), len(lv.DeleteMarkers))
	}
	lv, err = c.ListObjectVersions(callCtx(t), &s3.ListObjectVersionsInput{Bucket: &bucket, Prefix: &key})
	if err != nil || len(lv.Versions) != 2 || len(lv.DeleteMarkers) != 0 || !aws.ToBool(lv.Versions[0].IsLatest) {
		t.Fatalf("ListObjectVersions at the end: %v, %d versions, %d markers", err, len(lv.Versions), len(lv.DeleteMarkers))
	}
}

func sdkDeleteObjects(t *testing.T, srv *server, c *s3.Client, bucket string) {
	for _, quiet := range []bool{false, true} {
		t.Run(fmt.Sprintf("quiet=%v", quiet), func(t *testing.T) {
			prefix := fmt.Sprintf("q%v/", quiet)
			var ids []types.ObjectIdentifier
			for i := range 5 {
				k := fmt.Sprintf("%sk%d", prefix, i)
				sdkPut(t, c, bucket, k, []byte(k))
				ids = append(ids, types.ObjectIdentifier{Key: aws.String(k)})
			}
			ids = append(ids, types.ObjectIdentifier{Key: aws.String(prefix + "never-existed")})
			out, err := c.DeleteObjects(callCtx(t), &s3.DeleteObjectsInput{Bucket: &bucket,
				Delete: &types.Delete{Objects: ids, Quiet: aws.Bool(quiet)}})
			if err != nil {
				t.Fatalf("DeleteObjects: %v", err)
			}
			if len(out.Errors) != 0 {
				t.Fatalf("DeleteObjects errors: %+v", out.Errors)
			}
			var deleted []string
			for _, d := range out.Deleted {
				deleted = append(deleted, aws.ToString(d.Key))
			}
			sort.Strings(deleted)
			if quiet && len(deleted) != 0 {
				t.Errorf("quiet DeleteObjects reported %v", deleted)
			}
			if !quiet && len(deleted) != len(ids) {
				t.Errorf("verbose DeleteObjects reported %v, want all %d keys", deleted, len(ids))
			}
			lo, err := c.ListObjectsV2(callCtx(t), &s3.ListObjectsV2Input{Bucket: &bucket, Prefix: &prefix})
			if err != nil || len(lo.Contents) != 0 {
				t.Fatalf("ListObjectsV2 after DeleteObjects: %v, %d keys", err, len(lo.Contents))
			}
		})
	}
}

func sdkErrors(t *testing.T, srv *server, c *s3.Client, bucket string) {
	sdkPut(t, c, bucket, "exists", []byte("x"))
	for _, tc := range []struct {
		name   string
		call   func() error
		code   string
		status int
	}{
		{"wrong secret", func() error {
			_, err := sdkClient(srv, s3User, "not-the-secret").ListObjectsV2(callCtx(t), &s3.ListObjectsV2Input{Bucket: &bucket})
			return err
		}, "SignatureDoesNotMatch", 403},
		{"wrong secret on put", func() error {
			_, err := sdkClient(srv, s3User, "not-the-secret").PutObject(callCtx(t), &s3.PutObjectInput{Bucket: &bucket, Key: aws.String("nope"), Body: strings.NewReader("x")})
			return err
		}, "SignatureDoesNotMatch", 403},
		{"unknown access key", func() error {
			_, err := sdkClient(srv, "AKIDUNKNOWN", s3Secret).GetObject(callCtx(t), &s3.GetObjectInput{Bucket: &bucket, Key: aws.String("exists")})
			return err
		}, "InvalidAccessKeyId", 403},
		{"anonymous", func() error {
			_, err := anonSDKClient(srv).GetObject(callCtx(t), &s3.GetObjectInput{Bucket: &bucket, Key: aws.String("exists")})
			return err
		}, "AccessDenied", 403},
		{"overlong key", func() error {
			_, err := c.PutObject(callCtx(t), &s3.PutObjectInput{Bucket: &bucket, Key: aws.String(strings.Repeat("k", 1025)), Body: strings.NewReader("x")})
			return err
		}, "KeyTooLongError", 400},
		{"no such bucket", func() error {
			_, err := c.GetObject(callCtx(t), &s3.GetObjectInput{Bucket: aws.String("sdk-absent-bucket"), Key: aws.String("k")})
			return err
		}, "NoSuchBucket", 404},
		{"no such key", func() error {
			_, err := c.GetObject(callCtx(t), &s3.GetObjectInput{Bucket: &bucket, Key: aws.String("absent")})
			return err
		}, "NoSuchKey", 404},
		{"object acl", func() error {
			_, err := c.GetObjectAcl(callCtx(t), &s3.GetObjectAclInput{Bucket: &bucket, Key: aws.String("exists")})
			return err
		}, "NotImplemented", 501},
		{"bucket acl", func() error {
			_, err := c.GetBucketAcl(callCtx(t), &s3.GetBucketAclInput{Bucket: &bucket})
			return err
		}, "NotImplemented", 501},
		{"invalid bucket name", func() error {
			_, err := c.CreateBucket(callCtx(t), &s3.CreateBucketInput{Bucket: aws.String("Not_A_Bucket")})
			return err
		}, "InvalidBucketName", 400},
	} {
		t.Run(tc.name, func(t *testing.T) { wantAPIError(t, tc.name, tc.call(), tc.code, tc.status) })
	}

	// Raw requests, where the SDK would refuse or hide the answer.
	oneK := strings.Repeat("k", 1024)
	for _, tc := range []struct {
		name, method, path string
		body               []byte
		sign               bool
		status             int
		code               string
	}{
		{"anonymous GET", http.MethodGet, "/" + bucket + "/exists", nil, false, 403, "AccessDenied"},
		{"anonymous list buckets", http.MethodGet, "/", nil, false, 403, "AccessDenied"},
		{"acl subresource", http.MethodGet, "/" + bucket + "/exists?acl", nil, true, 501, "NotImplemented"},
		{"malformed DeleteObjects", http.MethodPost, "/" + bucket + "?delete", []byte("<Delete><Object><Key>a</Key></Object"), true, 400, "MalformedXML"},
		{"DeleteObjects not XML", http.MethodPost, "/" + bucket + "?delete", []byte("this is not xml"), true, 400, "MalformedXML"},
		{"key of 1024 bytes", http.MethodPut, "/" + bucket + "/" + oneK, []byte("x"), true, 200, ""},
		{"key of 1025 bytes", http.MethodPut, "/" + bucket + "/" + oneK + "k", []byte("x"), true, 400, "KeyTooLongError"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := newRaw(t, tc.method, srv.url(tc.path), tc.body)
			if tc.sign {
				signRaw(t, req, tc.body, s3User, s3Secret, time.Now())
			}
			res := doRaw(t, req)
			if res.status != tc.status || res.code != tc.code {
				t.Fatalf("%s %s: %d %q, want %d %q\n%s", tc.method, tc.path, res.status, res.code, tc.status, tc.code, res.body)
			}
		})
	}
}

func sdkChecksums(t *testing.T, srv *server, c *s3.Client, bucket string) {
	body := randomBytes(42, 100_000)
	crc := crc32.Checksum(body, crc32.MakeTable(crc32.Castagnoli))
	crcB := binary.BigEndian.AppendUint32(nil, crc)
	shaB := sha256.Sum256(body)
	for _, tc := range []struct {
		name string
		algo types.ChecksumAlgorithm
		want string
		pick func(put *s3.PutObjectOutput, get *s3.GetObjectOutput, head *s3.HeadObjectOutput) (string, string, string)
	}{
		{"CRC32C", types.ChecksumAlgorithmCrc32c, base64.StdEncoding.EncodeToString(crcB),
			func(p *s3.PutObjectOutput, g *s3.GetObjectOutput, h *s3.HeadObjectOutput) (string, string, string) {
				return aws.ToString(p.ChecksumCRC32C), aws.ToString(g.ChecksumCRC32C), aws.ToString(h.ChecksumCRC32C)
			}},
		{"SHA256", types.ChecksumAlgorithmSha256, base64.StdEncoding.EncodeToString(shaB[:]),
			func(p *s3.PutObjectOutput, g *s3.GetObjectOutput, h *s3.HeadObjectOutput) (string, string, string) {
				return aws.ToString(p.ChecksumSHA256), aws.ToString(g.ChecksumSHA256), aws.ToString(h.ChecksumSHA256)
			}},
		// Over plain HTTP the SDK signs the payload hash and sends no
		// flexible checksum by default: none is stored or returned.
		{"default (none over http)", "", "",
			func(p *s3.PutObjectOutput, g *s3.GetObjectOutput, h *s3.HeadObjectOutput) (string, string, string) {
				return aws.ToString(p.ChecksumCRC32), aws.ToString(g.ChecksumCRC32), aws.ToString(h.ChecksumCRC32)
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := "sum/" + tc.name
			put, err := c.PutObject(callCtx(t), &s3.PutObjectInput{Bucket: &bucket, Key: &key, Body: bytes.NewReader(body), ChecksumAlgorithm: tc.algo})
			if err != nil {
				t.Fatalf("PutObject: %v", err)
			}
			get, err := c.GetObject(callCtx(t), &s3.GetObjectInput{Bucket: &bucket, Key: &key, ChecksumMode: types.ChecksumModeEnabled})
			if err != nil {
				t.Fatalf("GetObject: %v", err)
			}
			got, err := io.ReadAll(get.Body) // the SDK validates the checksum while reading
			_ = get.Body.Close()
			if err != nil || !bytes.Equal(got, body) {
				t.Fatalf("GetObject body: %v (%d bytes)", err, len(got))
			}
			head, err := c.HeadObject(callCtx(t), &s3.HeadObjectInput{Bucket: &bucket, Key: &key, ChecksumMode: types.ChecksumModeEnabled})
			if err != nil {
				t.Fatalf("HeadObject: %v", err)
			}
			p, g, h := tc.pick(put, get, head)
			if p != tc.want || g != tc.want || h != tc.want {
				t.Fatalf("checksums: put %q get %q head %q, want %q", p, g, h, tc.want)
			}
			// A ranged GET asking for checksums must still read: the
			// SDK validates any checksum header against the bytes it
			// got, so a full-object checksum must not come with a range.
			rg, err := c.GetObject(callCtx(t), &s3.GetObjectInput{Bucket: &bucket, Key: &key, Range: aws.String("bytes=100-199"),
				ChecksumMode: types.ChecksumModeEnabled})
			if err != nil {
				t.Fatalf("ranged GetObject: %v", err)
			}
			part, err := io.ReadAll(rg.Body)
			_ = rg.Body.Close()
			if err != nil || !bytes.Equal(part, body[100:200]) {
				t.Fatalf("ranged GetObject: %v (%d bytes)", err, len(part))
			}
		})
	}
	t.Run("bad checksum", func(t *testing.T) {
		_, err := c.PutObject(callCtx(t), &s3.PutObjectInput{Bucket: &bucket, Key: aws.String("sum/bad"), Body: bytes.NewReader(body),
			ChecksumCRC32C: aws.String("AAAAAA==")})
		wantAPIError(t, "PutObject with a wrong CRC32C", err, "BadDigest", 400)
		_, err = c.HeadObject(callCtx(t), &s3.HeadObjectInput{Bucket: &bucket, Key: aws.String("sum/bad")})
		wantAPIError(t, "HeadObject after a bad checksum", err, "NotFound", 404)
	})
}

func sdkEdgeCases(t *testing.T, srv *server, c *s3.Client, bucket string) {
	t.Run("empty object", func(t *testing.T) {
		put := sdkPut(t, c, bucket, "empty", nil)
		if aws.ToString(put.ETag) != `"d41d8cd98f00b204e9800998ecf8427e"` {
			t.Errorf("empty object ETag %s", aws.ToString(put.ETag))
		}
		if got := sdkGet(t, c, bucket, "empty", ""); len(got) != 0 {
			t.Errorf("empty object read back %d bytes", len(got))
		}
		_, err := c.GetObject(callCtx(t), &s3.GetObjectInput{Bucket: &bucket, Key: aws.String("empty"), Range: aws.String("bytes=0-")})
		wantAPIError(t, "GetObject range of an empty object", err, "InvalidRange", 416)
	})
	t.Run("keys that look like paths", func(t *testing.T) {
		for _, key := range []string{"a//b", "a/./b", "a/../b", "./x", "../y", "trailing/", " lead space", "percent%2Fslash"} {
			sdkPut(t, c, bucket, key, []byte(key))
			if got := string(sdkGet(t, c, bucket, key, "")); got != key {
				t.Errorf("key %q read back %q", key, got)
			}
		}
		lo, err := c.ListObjectsV2(callCtx(t), &s3.ListObjectsV2Input{Bucket: &bucket, Prefix: aws.String("a/")})
		if err != nil {
			t.Fatalf("ListObjectsV2: %v", err)
		}
		var keys []string
		for _, o := range lo.Contents {
			keys = append(keys, aws.ToString(o.Key))
		}
		if want := []string{"a/../b", "a/./b", "a//b"}; fmt.Sprint(keys) != fmt.Sprint(want) {
			t.Errorf("listed %q, want %q", keys, want)
		}
	})
	t.Run("Content-MD5 mismatch", func(t *testing.T) {
		_, err := c.PutObject(callCtx(t), &s3.PutObjectInput{Bucket: &bucket, Key: aws.String("md5"), Body: strings.NewReader("data"),
			ContentMD5: aws.String(base64.StdEncoding.EncodeToString(make([]byte, 16)))})
		wantAPIError(t, "PutObject with a wrong Content-MD5", err, "BadDigest", 400)
	})
	t.Run("HEAD of a missing key", func(t *testing.T) {
		req := newRaw(t, http.MethodHead, objectURL(srv, bucket, "missing"), nil)
		signRaw(t, req, nil, s3User, s3Secret, time.Now())
		res := doRaw(t, req)
		if res.status != 404 || len(res.body) != 0 {
			t.Errorf("HEAD missing: %d, %d body bytes", res.status, len(res.body))
		}
	})
	t.Run("ListMultipartUploads paging", func(t *testing.T) {
		want := map[string]bool{}
		for i := range 5 {
			k := fmt.Sprintf("up/%d", i)
			out, err := c.CreateMultipartUpload(callCtx(t), &s3.CreateMultipartUploadInput{Bucket: &bucket, Key: &k})
			if err != nil {
				t.Fatalf("CreateMultipartUpload: %v", err)
			}
			want[k+" "+aws.ToString(out.UploadId)] = true
		}
		got := map[string]bool{}
		in := &s3.ListMultipartUploadsInput{Bucket: &bucket, MaxUploads: aws.Int32(2)}
		for page := 0; ; page++ {
			out, err := c.ListMultipartUploads(callCtx(t), in)
			if err != nil {
				t.Fatalf("ListMultipartUploads: %v", err)
			}
			if len(out.Uploads) > 2 || page > 5 {
				t.Fatalf("page %d: %d uploads", page, len(out.Uploads))
			}
			for _, u := range out.Uploads {
				got[aws.ToString(u.Key)+" "+aws.ToString(u.UploadId)] = true
			}
			if !aws.ToBool(out.IsTruncated) {
				break
			}
			in.KeyMarker, in.UploadIdMarker = out.NextKeyMarker, out.NextUploadIdMarker
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("uploads %v, want %v", got, want)
		}
	})
}
