package integration

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// TestS3ObjectsAsAWS: object behaviours where Cairn follows AWS's
// documentation (the ceph s3-tests cases named in docs/s3-compatibility.md):
// conditional PutObject, reads of a delete marker, DeleteBucket of a bucket
// holding only incomplete uploads, partNumber reads and Content-Encoding.
func TestS3ObjectsAsAWS(t *testing.T) {
	srv := startS3Server(t)
	c := sdkClient(srv, s3User, s3Secret)
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, c *s3.Client, bucket string)
	}{
		{"ConditionalPut", awsConditionalPut},
		{"DeleteMarkerReads", awsDeleteMarkerReads},
		{"DeleteBucketWithUploads", awsDeleteBucketWithUploads},
		{"PartNumberReads", awsPartNumberReads},
		{"ContentEncoding", awsContentEncoding},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bucket := "aws-" + strings.ToLower(tc.name)
			if _, err := c.CreateBucket(callCtx(t), &s3.CreateBucketInput{Bucket: &bucket}); err != nil {
				t.Fatalf("CreateBucket %s: %v", bucket, err)
			}
			tc.run(t, c, bucket)
		})
	}
}

// errHeader is a response header of a failed SDK call.
func errHeader(err error, name string) string {
	var re *awshttp.ResponseError
	if errors.As(err, &re) && re.Response != nil {
		return re.Response.Header.Get(name)
	}
	return ""
}

// awsConditionalPut: If-Match and If-None-Match (* or an ETag) on PutObject,
// in an unversioned and a versioned bucket, each step after the last.
func awsConditionalPut(t *testing.T, c *s3.Client, bucket string) {
	versioned := bucket + "-v"
	if _, err := c.CreateBucket(callCtx(t), &s3.CreateBucketInput{Bucket: &versioned}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutBucketVersioning(callCtx(t), &s3.PutBucketVersioningInput{Bucket: &versioned,
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}}); err != nil {
		t.Fatal(err)
	}
	for _, b := range []string{bucket, versioned} {
		t.Run(b, func(t *testing.T) {
			key := "obj"
			etag := "" // the current version's, once written
			steps := []struct {
				name        string
				ifMatch     func() string
				ifNoneMatch func() string
				del         bool // delete the key instead of putting it
				code        string
				status      int
			}{
				{name: "create only", ifNoneMatch: lit("*")},
				{name: "create only again", ifNoneMatch: lit("*"), code: "PreconditionFailed", status: 412},
				{name: "none-match the current etag", ifNoneMatch: func() string { return etag }, code: "PreconditionFailed", status: 412},
				{name: "none-match another etag", ifNoneMatch: lit(`"0123456789abcdef0123456789abcdef"`)},
				{name: "match the current etag", ifMatch: func() string { return etag }},
				{name: "match another etag", ifMatch: lit(`"0123456789abcdef0123456789abcdef"`), code: "PreconditionFailed", status: 412},
				{name: "delete", del: true},
				{name: "match * of a deleted key", ifMatch: lit("*"), code: "NoSuchKey", status: 404},
				{name: "match an etag of a deleted key", ifMatch: func() string { return etag }, code: "NoSuchKey", status: 404},
				{name: "none-match an etag of a deleted key", ifNoneMatch: func() string { return etag }},
				{name: "match *", ifMatch: lit("*")},
			}
			for _, st := range steps {
				if st.del {
					if _, err := c.DeleteObject(callCtx(t), &s3.DeleteObjectInput{Bucket: &b, Key: &key}); err != nil {
						t.Fatalf("%s: %v", st.name, err)
					}
					continue
				}
				in := &s3.PutObjectInput{Bucket: &b, Key: &key, Body: bytes.NewReader([]byte(st.name))}
				if st.ifMatch != nil {
					in.IfMatch = aws.String(st.ifMatch())
				}
				if st.ifNoneMatch != nil {
					in.IfNoneMatch = aws.String(st.ifNoneMatch())
				}
				out, err := c.PutObject(callCtx(t), in)
				if st.code != "" {
					wantAPIError(t, st.name, err, st.code, st.status)
					continue
				}
				if err != nil {
					t.Fatalf("%s: %v", st.name, err)
				}
				etag = aws.ToString(out.ETag)
				if got := string(sdkGet(t, c, b, key, "")); got != st.name {
					t.Fatalf("%s: object holds %q", st.name, got)
				}
			}
		})
	}
}

func lit(s string) func() string { return func() string { return s } }

// awsDeleteMarkerReads: GET and HEAD of a key whose current version is a
// delete marker answer 404 with x-amz-delete-marker: true and the marker's
// version id; naming the marker's version answers 405 with Last-Modified.
// A key merely deleted from an unversioned bucket has no such header.
func awsDeleteMarkerReads(t *testing.T, c *s3.Client, bucket string) {
	sdkPut(t, c, bucket, "plain", []byte("x"))
	if _, err := c.DeleteObject(callCtx(t), &s3.DeleteObjectInput{Bucket: &bucket, Key: aws.String("plain")}); err != nil {
		t.Fatal(err)
	}
	_, err := c.HeadObject(callCtx(t), &s3.HeadObjectInput{Bucket: &bucket, Key: aws.String("plain")})
	wantAPIError(t, "HeadObject of a deleted key, unversioned", err, "NotFound", 404)
	if h := errHeader(err, "x-amz-delete-marker"); h != "" {
		t.Fatalf("unversioned delete: x-amz-delete-marker %q, want none", h)
	}
	for _, state := range []types.BucketVersioningStatus{types.BucketVersioningStatusEnabled, types.BucketVersioningStatusSuspended} {
		t.Run(string(state), func(t *testing.T) {
			if _, err := c.PutBucketVersioning(callCtx(t), &s3.PutBucketVersioningInput{Bucket: &bucket,
				VersioningConfiguration: &types.VersioningConfiguration{Status: state}}); err != nil {
				t.Fatal(err)
			}
			key := "marked-" + string(state)
			sdkPut(t, c, bucket, key, []byte("x"))
			del, err := c.DeleteObject(callCtx(t), &s3.DeleteObjectInput{Bucket: &bucket, Key: &key})
			if err != nil || !aws.ToBool(del.DeleteMarker) {
				t.Fatalf("DeleteObject: %+v %v, want a delete marker", del, err)
			}
			marker := aws.ToString(del.VersionId)
			if marker == "" {
				marker = "null"
			}
			_, herr := c.HeadObject(callCtx(t), &s3.HeadObjectInput{Bucket: &bucket, Key: &key})
			_, gerr := c.GetObject(callCtx(t), &s3.GetObjectInput{Bucket: &bucket, Key: &key})
			wantAPIError(t, "HeadObject of a current delete marker", herr, "NotFound", 404)
			wantAPIError(t, "GetObject of a current delete marker", gerr, "NoSuchKey", 404)
			for what, err := range map[string]error{"HEAD": herr, "GET": gerr} {
				if errHeader(err, "x-amz-delete-marker") != "true" || errHeader(err, "x-amz-version-id") != marker {
					t.Fatalf("%s: x-amz-delete-marker %q x-amz-version-id %q, want true %s", what,
						errHeader(err, "x-amz-delete-marker"), errHeader(err, "x-amz-version-id"), marker)
				}
			}
			_, err = c.HeadObject(callCtx(t), &s3.HeadObjectInput{Bucket: &bucket, Key: &key, VersionId: &marker})
			if httpStatus(err) != http.StatusMethodNotAllowed || errHeader(err, "x-amz-delete-marker") != "true" ||
				errHeader(err, "x-amz-version-id") != marker || errHeader(err, "Last-Modified") == "" {
				t.Fatalf("HeadObject of the marker's version: %v, headers marker %q version %q last-modified %q", err,
					errHeader(err, "x-amz-delete-marker"), errHeader(err, "x-amz-version-id"), errHeader(err, "Last-Modified"))
			}
		})
	}
}

// awsDeleteBucketWithUploads: a bucket holding only incomplete multipart
// uploads is deleted with them; an object beside an upload refuses it.
func awsDeleteBucketWithUploads(t *testing.T, c *s3.Client, bucket string) {
	upload := func(b, key string, parts int) string {
		t.Helper()
		mp, err := c.CreateMultipartUpload(callCtx(t), &s3.CreateMultipartUploadInput{Bucket: &b, Key: &key})
		if err != nil {
			t.Fatalf("CreateMultipartUpload: %v", err)
		}
		for n := int32(1); n <= int32(parts); n++ {
			if _, err := c.UploadPart(callCtx(t), &s3.UploadPartInput{Bucket: &b, Key: &key, UploadId: mp.UploadId,
				PartNumber: aws.Int32(n), Body: bytes.NewReader(randomBytes(uint64(n), 1000))}); err != nil {
				t.Fatalf("UploadPart: %v", err)
			}
		}
		return aws.ToString(mp.UploadId)
	}
	// An object beside an upload: BucketNotEmpty, the upload kept.
	full := bucket + "-full"
	if _, err := c.CreateBucket(callCtx(t), &s3.CreateBucketInput{Bucket: &full}); err != nil {
		t.Fatal(err)
	}
	upload(full, "u", 1)
	sdkPut(t, c, full, "obj", []byte("x"))
	_, err := c.DeleteBucket(callCtx(t), &s3.DeleteBucketInput{Bucket: &full})
	wantAPIError(t, "DeleteBucket with an object and an upload", err, "BucketNotEmpty", 409)
	if l, err := c.ListMultipartUploads(callCtx(t), &s3.ListMultipartUploadsInput{Bucket: &full}); err != nil || len(l.Uploads) != 1 {
		t.Fatalf("uploads after a refused DeleteBucket: %v %v", l, err)
	}
	// Only uploads: deleted, the uploads with it.
	upload(bucket, "a", 0)
	upload(bucket, "b", 2)
	id := upload(bucket, "b", 1)
	if _, err := c.DeleteBucket(callCtx(t), &s3.DeleteBucketInput{Bucket: &bucket}); err != nil {
		t.Fatalf("DeleteBucket of a bucket holding only uploads: %v", err)
	}
	_, err = c.HeadBucket(callCtx(t), &s3.HeadBucketInput{Bucket: &bucket})
	wantAPIError(t, "HeadBucket after DeleteBucket", err, "NotFound", 404)
	if _, err := c.CreateBucket(callCtx(t), &s3.CreateBucketInput{Bucket: &bucket}); err != nil {
		t.Fatal(err)
	}
	if l, err := c.ListMultipartUploads(callCtx(t), &s3.ListMultipartUploadsInput{Bucket: &bucket}); err != nil || len(l.Uploads) != 0 {
		t.Fatalf("uploads of the re-created bucket: %v %v", l, err)
	}
	_, err = c.ListParts(callCtx(t), &s3.ListPartsInput{Bucket: &bucket, Key: aws.String("b"), UploadId: &id})
	wantAPIError(t, "ListParts of a deleted bucket's upload", err, "NoSuchUpload", 404)
}

// awsPartNumberReads: ?partNumber reads a part with the whole object's
// ETag (AWS), and a number beyond the parts answers 416 InvalidPartNumber.
func awsPartNumberReads(t *testing.T, c *s3.Client, bucket string) {
	single := sdkPut(t, c, bucket, "single", []byte("body"))
	g, err := c.GetObject(callCtx(t), &s3.GetObjectInput{Bucket: &bucket, Key: aws.String("single"), PartNumber: aws.Int32(1)})
	if err != nil {
		t.Fatalf("GetObject partNumber 1 of a single-part object: %v", err)
	}
	got, _ := io.ReadAll(g.Body)
	_ = g.Body.Close()
	if string(got) != "body" || aws.ToString(g.ETag) != aws.ToString(single.ETag) {
		t.Fatalf("partNumber 1: %q ETag %s, want body %s", got, aws.ToString(g.ETag), aws.ToString(single.ETag))
	}
	key := "multi"
	sizes := []int{5 * mib, 1000}
	mp, err := c.CreateMultipartUpload(callCtx(t), &s3.CreateMultipartUploadInput{Bucket: &bucket, Key: &key})
	if err != nil {
		t.Fatal(err)
	}
	var done []types.CompletedPart
	var whole []byte
	for i, n := range sizes {
		body := randomBytes(uint64(i), n)
		whole = append(whole, body...)
		p, err := c.UploadPart(callCtx(t), &s3.UploadPartInput{Bucket: &bucket, Key: &key, UploadId: mp.UploadId,
			PartNumber: aws.Int32(int32(i + 1)), Body: bytes.NewReader(body)})
		if err != nil {
			t.Fatal(err)
		}
		done = append(done, types.CompletedPart{ETag: p.ETag, PartNumber: aws.Int32(int32(i + 1))})
	}
	cm, err := c.CompleteMultipartUpload(callCtx(t), &s3.CompleteMultipartUploadInput{Bucket: &bucket, Key: &key,
		UploadId: mp.UploadId, MultipartUpload: &types.CompletedMultipartUpload{Parts: done}})
	if err != nil {
		t.Fatal(err)
	}
	off := 0
	for i, n := range sizes {
		h, err := c.HeadObject(callCtx(t), &s3.HeadObjectInput{Bucket: &bucket, Key: &key, PartNumber: aws.Int32(int32(i + 1))})
		if err != nil || aws.ToString(h.ETag) != aws.ToString(cm.ETag) || aws.ToInt32(h.PartsCount) != 2 || aws.ToInt64(h.ContentLength) != int64(n) {
			t.Fatalf("HeadObject partNumber %d: %+v %v, want ETag %s, 2 parts, %d bytes", i+1, h, err, aws.ToString(cm.ETag), n)
		}
		g, err := c.GetObject(callCtx(t), &s3.GetObjectInput{Bucket: &bucket, Key: &key, PartNumber: aws.Int32(int32(i + 1))})
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(g.Body)
		_ = g.Body.Close()
		if !bytes.Equal(got, whole[off:off+n]) || aws.ToString(g.ETag) != aws.ToString(cm.ETag) {
			t.Fatalf("GetObject partNumber %d: %d bytes ETag %s, want part's bytes and %s", i+1, len(got), aws.ToString(g.ETag), aws.ToString(cm.ETag))
		}
		off += n
	}
	for _, tc := range []struct {
		key string
		n   int32
	}{{"single", 2}, {"multi", 3}} {
		_, err := c.GetObject(callCtx(t), &s3.GetObjectInput{Bucket: &bucket, Key: &tc.key, PartNumber: &tc.n})
		wantAPIError(t, fmt.Sprintf("GetObject %s partNumber %d", tc.key, tc.n), err, "InvalidPartNumber", 416)
		_, err = c.HeadObject(callCtx(t), &s3.HeadObjectInput{Bucket: &bucket, Key: &tc.key, PartNumber: &tc.n})
		if httpStatus(err) != http.StatusRequestedRangeNotSatisfiable {
			t.Fatalf("HeadObject %s partNumber %d: %v, want 416", tc.key, tc.n, err)
		}
	}
}

// awsContentEncoding: Content-Encoding is returned as sent, without
// aws-chunked (which only says how the request's body was sent).
func awsContentEncoding(t *testing.T, c *s3.Client, bucket string) {
	for _, tc := range []struct{ sent, want string }{
		{"gzip", "gzip"},
		{"deflate, gzip", "deflate, gzip"},
		{"gzip, aws-chunked", "gzip"},
		{"aws-chunked, gzip", "gzip"},
		{"aws-chunked", ""},
	} {
		key := "enc"
		if _, err := c.PutObject(callCtx(t), &s3.PutObjectInput{Bucket: &bucket, Key: &key, Body: bytes.NewReader([]byte("x")),
			ContentEncoding: aws.String(tc.sent)}); err != nil {
			t.Fatalf("PutObject Content-Encoding %q: %v", tc.sent, err)
		}
		h, err := c.HeadObject(callCtx(t), &s3.HeadObjectInput{Bucket: &bucket, Key: &key})
		if err != nil || aws.ToString(h.ContentEncoding) != tc.want {
			t.Fatalf("Content-Encoding sent %q: head %q %v, want %q", tc.sent, aws.ToString(h.ContentEncoding), err, tc.want)
		}
	}
}
