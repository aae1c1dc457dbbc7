package integration

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
)

// TestS3Minio drives one real cairn server with minio-go v7 (which signs
// its uploads as aws-chunked streaming payloads over plain HTTP). Each
// subtest uses its own bucket.
func TestS3Minio(t *testing.T) {
	srv := startS3Server(t)
	c := minioClient(t, srv, s3User, s3Secret)
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, srv *server, c *minio.Client, bucket string)
	}{
		{"BucketObjectLifecycle", minioLifecycle},
		{"Listing", minioListing},
		{"Multipart", minioMultipart},
		{"Copy", minioCopy},
		{"ConditionalPut", minioConditionalPut},
		{"RangeAndConditionalGet", minioRangeGet},
		{"Presigned", minioPresigned},
		{"Versioning", minioVersioning},
		{"RemoveObjects", minioRemoveObjects},
		{"Errors", minioErrors},
		{"Checksums", minioChecksums},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bucket := "minio-" + strings.ToLower(tc.name)
			if err := c.MakeBucket(callCtx(t), bucket, minio.MakeBucketOptions{Region: s3Region}); err != nil {
				t.Fatalf("MakeBucket %s: %v", bucket, err)
			}
			tc.run(t, srv, c, bucket)
		})
	}
}

func minioPut(t *testing.T, c *minio.Client, bucket, key string, body []byte, opt minio.PutObjectOptions) minio.UploadInfo {
	t.Helper()
	info, err := c.PutObject(callCtx(t), bucket, key, bytes.NewReader(body), int64(len(body)), opt)
	if err != nil {
		t.Fatalf("PutObject %s: %v", key, err)
	}
	return info
}

// minioRead reads an object through GetObject with opt.
func minioRead(ctx context.Context, c *minio.Client, bucket, key string, opt minio.GetObjectOptions) ([]byte, error) {
	o, err := c.GetObject(ctx, bucket, key, opt)
	if err != nil {
		return nil, err
	}
	defer func() { _ = o.Close() }()
	return io.ReadAll(o)
}

func minioLifecycle(t *testing.T, srv *server, c *minio.Client, bucket string) {
	ok, err := c.BucketExists(callCtx(t), bucket)
	if err != nil || !ok {
		t.Fatalf("BucketExists: %v %v", ok, err)
	}
	if ok, err := c.BucketExists(callCtx(t), "minio-no-such-bucket"); err != nil || ok {
		t.Fatalf("BucketExists absent: %v %v", ok, err)
	}
	// us-east-1 answers a re-create of one's own bucket 200.
	if err := c.MakeBucket(callCtx(t), bucket, minio.MakeBucketOptions{Region: s3Region}); err != nil {
		t.Fatalf("MakeBucket again: %v", err)
	}
	bs, err := c.ListBuckets(callCtx(t))
	if err != nil {
		t.Fatalf("ListBuckets: %v", err)
	}
	found := false
	for _, b := range bs {
		found = found || b.Name == bucket
	}
	if !found {
		t.Fatalf("ListBuckets does not list %s", bucket)
	}

	key := "a dir/ünï cødé+&=?.bin"
	body := randomBytes(3, 70_000)
	info := minioPut(t, c, bucket, key, body, minio.PutObjectOptions{
		ContentType: "application/x-thing", CacheControl: "no-cache", ContentDisposition: "inline",
		ContentLanguage: "fr", UserMetadata: map[string]string{"Color": "red", "x-amz-meta-shape": "round"},
	})
	if info.ETag != md5hex(body) || info.Size != int64(len(body)) {
		t.Fatalf("PutObject: etag %s size %d, want %s %d", info.ETag, info.Size, md5hex(body), len(body))
	}
	st, err := c.StatObject(callCtx(t), bucket, key, minio.StatObjectOptions{})
	if err != nil {
		t.Fatalf("StatObject: %v", err)
	}
	if st.Size != int64(len(body)) || st.ETag != md5hex(body) || st.ContentType != "application/x-thing" ||
		st.Metadata.Get("Cache-Control") != "no-cache" || st.Metadata.Get("Content-Disposition") != "inline" ||
		st.Metadata.Get("Content-Language") != "fr" {
		t.Errorf("StatObject: size %d etag %s type %q headers %v", st.Size, st.ETag, st.ContentType, st.Metadata)
	}
	meta := map[string]string{}
	for k, v := range st.UserMetadata {
		meta[strings.ToLower(k)] = v
	}
	if meta["color"] != "red" || meta["shape"] != "round" || len(meta) != 2 {
		t.Errorf("StatObject user metadata %v", st.UserMetadata)
	}
	got, err := minioRead(callCtx(t), c, bucket, key, minio.GetObjectOptions{})
	if err != nil || !bytes.Equal(got, body) {
		t.Fatalf("GetObject: %v (%d bytes)", err, len(got))
	}

	err = c.RemoveBucket(callCtx(t), bucket)
	wantMinioError(t, "RemoveBucket non-empty", err, "BucketNotEmpty", 409)
	if err := c.RemoveObject(callCtx(t), bucket, key, minio.RemoveObjectOptions{}); err != nil {
		t.Fatalf("RemoveObject: %v", err)
	}
	_, err = c.StatObject(callCtx(t), bucket, key, minio.StatObjectOptions{})
	wantMinioError(t, "StatObject removed", err, "NoSuchKey", 404)
	_, err = minioRead(callCtx(t), c, bucket, key, minio.GetObjectOptions{})
	wantMinioError(t, "GetObject removed", err, "NoSuchKey", 404)
	if err := c.RemoveBucket(callCtx(t), bucket); err != nil {
		t.Fatalf("RemoveBucket: %v", err)
	}
	if ok, err := c.BucketExists(callCtx(t), bucket); err != nil || ok {
		t.Fatalf("BucketExists after RemoveBucket: %v %v", ok, err)
	}
}

func minioListing(t *testing.T, srv *server, c *minio.Client, bucket string) {
	keys := listingKeys()
	if err := parallelDo(len(keys), 16, func(i int) error {
		_, err := c.PutObject(callCtx(t), bucket, keys[i], strings.NewReader(keys[i]), int64(len(keys[i])), minio.PutObjectOptions{})
		return err
	}); err != nil {
		t.Fatalf("PutObject: %v", err)
	}
	rootKeys, rootDirs := listingRoot()
	rootAll := append(append([]string{}, rootKeys...), rootDirs...)
	sort.Strings(rootAll)
	for _, tc := range []struct {
		name string
		opt  minio.ListObjectsOptions
		want []string
	}{
		{"v2 recursive", minio.ListObjectsOptions{Recursive: true, MaxKeys: 1000}, keys},
		{"v2 delimiter", minio.ListObjectsOptions{MaxKeys: 1000}, rootAll},
		{"v2 delimiter small pages", minio.ListObjectsOptions{MaxKeys: 99}, rootAll},
		{"v1 recursive", minio.ListObjectsOptions{Recursive: true, MaxKeys: 1000, UseV1: true}, keys},
		{"v1 delimiter", minio.ListObjectsOptions{MaxKeys: 1000, UseV1: true}, rootAll},
		{"v2 start-after", minio.ListObjectsOptions{Recursive: true, StartAfter: "obj1999"}, nil},
		{"v2 dir", minio.ListObjectsOptions{Prefix: "obj1967/"}, keys[keyIndex(t, "obj1967/f00") : keyIndex(t, "obj1967/f09")+1]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := callCtx(t)
			var got []string
			for o := range c.ListObjects(ctx, bucket, tc.opt) {
				if o.Err != nil {
					t.Fatalf("ListObjects: %v", o.Err)
				}
				got = append(got, o.Key)
			}
			if tc.name == "v2 start-after" {
				// obj1999 is the last flat key; only keys of later directories remain.
				for _, k := range got {
					if k <= "obj1999" {
						t.Fatalf("start-after obj1999 listed %s", k)
					}
				}
				return
			}
			// minio-go hands out each page's keys, then its prefixes.
			sort.Strings(got)
			if d := diffStrings(got, tc.want); d != "" {
				t.Errorf("ListObjects: %s", d)
			}
		})
	}
}

func minioMultipart(t *testing.T, srv *server, c *minio.Client, bucket string) {
	core := minio.Core{Client: c}
	key := "mp/object"
	sizes := []int{5 * mib, 5 * mib, 5 * mib, 777}
	var data []byte
	for i, n := range sizes {
		data = append(data, randomBytes(uint64(200+i), n)...)
	}
	id, err := core.NewMultipartUpload(callCtx(t), bucket, key, minio.PutObjectOptions{UserMetadata: map[string]string{"via": "core"}})
	if err != nil {
		t.Fatalf("NewMultipartUpload: %v", err)
	}
	abortID, err := core.NewMultipartUpload(callCtx(t), bucket, "mp/abort-me", minio.PutObjectOptions{})
	if err != nil {
		t.Fatalf("NewMultipartUpload: %v", err)
	}
	var parts []minio.CompletePart
	off := 0
	for i, n := range sizes {
		p, err := core.PutObjectPart(callCtx(t), bucket, key, id, i+1, bytes.NewReader(data[off:off+n]), int64(n), minio.PutObjectPartOptions{})
		if err != nil {
			t.Fatalf("PutObjectPart %d: %v", i+1, err)
		}
		parts = append(parts, minio.CompletePart{PartNumber: i + 1, ETag: p.ETag})
		off += n
	}
	lp, err := core.ListObjectParts(callCtx(t), bucket, key, id, 0, 1000)
	if err != nil || len(lp.ObjectParts) != len(sizes) {
		t.Fatalf("ListObjectParts: %v, %d parts", err, len(lp.ObjectParts))
	}
	for i, p := range lp.ObjectParts {
		if p.PartNumber != i+1 || p.Size != int64(sizes[i]) {
			t.Errorf("part %d: number %d size %d", i, p.PartNumber, p.Size)
		}
	}
	lu, err := core.ListMultipartUploads(callCtx(t), bucket, "mp/", "", "", "", 1000)
	if err != nil || len(lu.Uploads) != 2 {
		t.Fatalf("ListMultipartUploads: %v, %d uploads", err, len(lu.Uploads))
	}
	if err := core.AbortMultipartUpload(callCtx(t), bucket, "mp/abort-me", abortID); err != nil {
		t.Fatalf("AbortMultipartUpload: %v", err)
	}
	_, err = core.ListObjectParts(callCtx(t), bucket, "mp/abort-me", abortID, 0, 1000)
	wantMinioError(t, "ListObjectParts after abort", err, "NoSuchUpload", 404)

	_, err = core.CompleteMultipartUpload(callCtx(t), bucket, key, id, []minio.CompletePart{parts[2], parts[0], parts[1], parts[3]}, minio.PutObjectOptions{})
	wantMinioError(t, "CompleteMultipartUpload out of order", err, "InvalidPartOrder", 400)
	up, err := core.CompleteMultipartUpload(callCtx(t), bucket, key, id, parts, minio.PutObjectOptions{})
	if err != nil {
		t.Fatalf("CompleteMultipartUpload: %v", err)
	}
	if !strings.HasSuffix(up.ETag, "-4") {
		t.Errorf("multipart ETag %s", up.ETag)
	}
	got, err := minioRead(callCtx(t), c, bucket, key, minio.GetObjectOptions{})
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("GetObject: %v, %d bytes (want %d)", err, len(got), len(data))
	}

	// The high-level PutObject splits a large body into parts itself.
	big := randomBytes(300, 11*mib+5)
	info, err := c.PutObject(callCtx(t), bucket, "mp/auto", bytes.NewReader(big), int64(len(big)), minio.PutObjectOptions{PartSize: 5 * mib})
	if err != nil || !strings.HasSuffix(info.ETag, "-3") {
		t.Fatalf("PutObject multipart: %v, etag %s", err, info.ETag)
	}
	got, err = minioRead(callCtx(t), c, bucket, "mp/auto", minio.GetObjectOptions{})
	if err != nil || !bytes.Equal(got, big) {
		t.Fatalf("GetObject auto multipart: %v, %d bytes", err, len(got))
	}
	// Unknown size: minio-go streams parts of PartSize.
	info, err = c.PutObject(callCtx(t), bucket, "mp/stream", io.MultiReader(bytes.NewReader(big)), -1, minio.PutObjectOptions{PartSize: 5 * mib})
	if err != nil || info.Size != int64(len(big)) {
		t.Fatalf("PutObject of unknown size: %v, size %d", err, info.Size)
	}
	got, err = minioRead(callCtx(t), c, bucket, "mp/stream", minio.GetObjectOptions{})
	if err != nil || !bytes.Equal(got, big) {
		t.Fatalf("GetObject streamed: %v, %d bytes", err, len(got))
	}

	// ComposeObject copies ranges of sources with UploadPartCopy.
	dst := minio.CopyDestOptions{Bucket: bucket, Object: "mp/composed"}
	srcs := []minio.CopySrcOptions{
		{Bucket: bucket, Object: key, MatchRange: true, Start: 0, End: 5*mib - 1},
		{Bucket: bucket, Object: "mp/auto", MatchRange: true, Start: mib, End: 7*mib - 1},
		{Bucket: bucket, Object: key, MatchRange: true, Start: 15 * mib, End: int64(len(data)) - 1},
	}
	if _, err := c.ComposeObject(callCtx(t), dst, srcs...); err != nil {
		t.Fatalf("ComposeObject: %v", err)
	}
	want := append(append(append([]byte{}, data[:5*mib]...), big[mib:7*mib]...), data[15*mib:]...)
	got, err = minioRead(callCtx(t), c, bucket, "mp/composed", minio.GetObjectOptions{})
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("GetObject composed: %v, %d bytes (want %d)", err, len(got), len(want))
	}
}

func minioCopy(t *testing.T, srv *server, c *minio.Client, bucket string) {
	src := "src/a b+c"
	body := []byte("copy source")
	info := minioPut(t, c, bucket, src, body, minio.PutObjectOptions{ContentType: "text/x-src", UserMetadata: map[string]string{"k": "src"}})
	past, future := time.Now().Add(-time.Hour), time.Now().Add(time.Hour)
	for _, tc := range []struct {
		name     string
		dst      minio.CopyDestOptions
		src      minio.CopySrcOptions
		code     string
		status   int
		wantMeta string
	}{
		{name: "copy", wantMeta: "src"},
		{name: "replace", dst: minio.CopyDestOptions{ReplaceMetadata: true, UserMetadata: map[string]string{"k": "new"}}, wantMeta: "new"},
		{name: "match etag", src: minio.CopySrcOptions{MatchETag: info.ETag}, wantMeta: "src"},
		{name: "match etag fails", src: minio.CopySrcOptions{MatchETag: "0000"}, code: "PreconditionFailed", status: 412},
		{name: "no match etag fails", src: minio.CopySrcOptions{NoMatchETag: info.ETag}, code: "PreconditionFailed", status: 412},
		{name: "modified since fails", src: minio.CopySrcOptions{MatchModifiedSince: future}, code: "PreconditionFailed", status: 412},
		{name: "unmodified since fails", src: minio.CopySrcOptions{MatchUnmodifiedSince: past}, code: "PreconditionFailed", status: 412},
		{name: "unmodified since holds", src: minio.CopySrcOptions{MatchUnmodifiedSince: future}, wantMeta: "src"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, d := tc.src, tc.dst
			s.Bucket, s.Object = bucket, src
			d.Bucket, d.Object = bucket, "dst/"+tc.name
			_, err := c.CopyObject(callCtx(t), d, s)
			if tc.code != "" {
				wantMinioError(t, "CopyObject", err, tc.code, tc.status)
				return
			}
			if err != nil {
				t.Fatalf("CopyObject: %v", err)
			}
			st, err := c.StatObject(callCtx(t), bucket, d.Object, minio.StatObjectOptions{})
			if err != nil || st.ETag != info.ETag || st.Metadata.Get("X-Amz-Meta-K") != tc.wantMeta {
				t.Fatalf("StatObject copy: %v, etag %s meta %v", err, st.ETag, st.Metadata)
			}
		})
	}
}

func minioConditionalPut(t *testing.T, srv *server, c *minio.Client, bucket string) {
	const writers = 3
	for r := range 3 {
		key := fmt.Sprintf("race/%d", r)
		start := make(chan struct{})
		errs := make([]error, writers)
		var wg sync.WaitGroup
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				opt := minio.PutObjectOptions{}
				opt.SetMatchETagExcept("*")
				<-start
				body := fmt.Sprintf("writer %d", w)
				_, errs[w] = c.PutObject(callCtx(t), bucket, key, strings.NewReader(body), int64(len(body)), opt)
			}()
		}
		close(start)
		wg.Wait()
		wins := 0
		for w, err := range errs {
			if err == nil {
				wins++
				continue
			}
			wantMinioError(t, fmt.Sprintf("round %d writer %d", r, w), err, "PreconditionFailed", 412)
		}
		if wins != 1 {
			t.Fatalf("round %d: %d writers won, want exactly 1", r, wins)
		}
	}

	v1 := minioPut(t, c, bucket, "cas", []byte("v1"), minio.PutObjectOptions{})
	opt := minio.PutObjectOptions{}
	opt.SetMatchETag(v1.ETag)
	minioPut(t, c, bucket, "cas", []byte("v2"), opt)
	_, err := c.PutObject(callCtx(t), bucket, "cas", strings.NewReader("v3"), 2, opt)
	wantMinioError(t, "PutObject If-Match stale", err, "PreconditionFailed", 412)
}

func minioRangeGet(t *testing.T, srv *server, c *minio.Client, bucket string) {
	body := randomBytes(9, 4096)
	info := minioPut(t, c, bucket, "r", body, minio.PutObjectOptions{})
	for _, tc := range []struct{ start, end int64 }{{0, 0}, {100, 199}, {4000, 4095}, {4000, 0}} {
		opt := minio.GetObjectOptions{}
		if err := opt.SetRange(tc.start, tc.end); err != nil {
			t.Fatal(err)
		}
		got, err := minioRead(callCtx(t), c, bucket, "r", opt)
		end := tc.end
		if end == 0 && tc.start > 0 {
			end = int64(len(body)) - 1
		}
		if err != nil || !bytes.Equal(got, body[tc.start:end+1]) {
			t.Errorf("range %d-%d: %v, %d bytes", tc.start, tc.end, err, len(got))
		}
	}
	opt := minio.GetObjectOptions{}
	_ = opt.SetRange(5000, 6000)
	_, err := minioRead(callCtx(t), c, bucket, "r", opt)
	wantMinioError(t, "GetObject past the end", err, "InvalidRange", 416)

	opt = minio.GetObjectOptions{}
	_ = opt.SetMatchETagExcept(info.ETag)
	_, err = c.StatObject(callCtx(t), bucket, "r", opt)
	if er := minio.ToErrorResponse(err); er.StatusCode != http.StatusNotModified {
		t.Errorf("StatObject If-None-Match current: %v, want 304", err)
	}
	opt = minio.GetObjectOptions{}
	_ = opt.SetMatchETag("0000")
	_, err = c.StatObject(callCtx(t), bucket, "r", opt)
	if er := minio.ToErrorResponse(err); er.StatusCode != http.StatusPreconditionFailed {
		t.Errorf("StatObject If-Match other: %v, want 412", err)
	}
}
