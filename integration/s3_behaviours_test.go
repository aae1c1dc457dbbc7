package integration

import (
	"bytes"
	"io"
	"mime"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// TestS3Behaviours covers what AWS documents for existing calls beyond
// their main path: a PUT body sent with Transfer-Encoding: chunked and no
// Content-Length, and user metadata that is not US-ASCII, kept decoded and
// returned as RFC 2047 encoded words.
func TestS3Behaviours(t *testing.T) {
	srv := startS3Server(t)
	c := sdkClient(srv, s3User, s3Secret)
	bucket := "behaviours"
	if _, err := c.CreateBucket(callCtx(t), &s3.CreateBucketInput{Bucket: &bucket}); err != nil {
		t.Fatal(err)
	}

	t.Run("chunked transfer encoding", func(t *testing.T) {
		body := randomBytes(3, 300_000)
		for _, tc := range []struct {
			name   string
			target string
			want   int
			code   string
		}{
			{"put object", "chunked", http.StatusOK, ""},
			{"upload part of no upload", "chunked?partNumber=1&uploadId=none", http.StatusNotFound, "NoSuchUpload"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				req := newRaw(t, http.MethodPut, objectURL(srv, bucket, "")+tc.target, nil)
				u := presignRaw(t, req, s3User, s3Secret, time.Now(), time.Minute)
				// An io.Reader of no known length makes net/http send the body chunked.
				put, err := http.NewRequest(http.MethodPut, u, io.MultiReader(bytes.NewReader(body[:1000]), bytes.NewReader(body[1000:])))
				if err != nil {
					t.Fatal(err)
				}
				res := doRaw(t, put)
				if res.status != tc.want || res.code != tc.code {
					t.Fatalf("chunked PUT: %d %s (%s), want %d %s", res.status, res.code, res.body, tc.want, tc.code)
				}
			})
		}
		if got := sdkGet(t, c, bucket, "chunked", ""); !bytes.Equal(got, body) {
			t.Fatalf("chunked PUT kept %d bytes, want %d", len(got), len(body))
		}
	})

	t.Run("complete again and without parts", func(t *testing.T) {
		key := "mp-again"
		cr, err := c.CreateMultipartUpload(callCtx(t), &s3.CreateMultipartUploadInput{Bucket: &bucket, Key: &key})
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.CompleteMultipartUpload(callCtx(t), &s3.CompleteMultipartUploadInput{Bucket: &bucket, Key: &key, UploadId: cr.UploadId})
		wantAPIError(t, "complete without parts", err, "MalformedXML", 400)
		n := int32(1)
		up, err := c.UploadPart(callCtx(t), &s3.UploadPartInput{Bucket: &bucket, Key: &key, UploadId: cr.UploadId, PartNumber: &n, Body: bytes.NewReader([]byte("x"))})
		if err != nil {
			t.Fatal(err)
		}
		in := &s3.CompleteMultipartUploadInput{Bucket: &bucket, Key: &key, UploadId: cr.UploadId,
			MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{{PartNumber: &n, ETag: up.ETag}}}}
		first, err := c.CompleteMultipartUpload(callCtx(t), in)
		if err != nil {
			t.Fatal(err)
		}
		again, err := c.CompleteMultipartUpload(callCtx(t), in) // a retry is answered again, as S3 does
		if err != nil || aws.ToString(again.ETag) != aws.ToString(first.ETag) {
			t.Fatalf("second complete: %v, ETag %q want %q", err, aws.ToString(again.ETag), aws.ToString(first.ETag))
		}
	})

	t.Run("delete a version twice", func(t *testing.T) {
		vb := "behaviours-versioned"
		if _, err := c.CreateBucket(callCtx(t), &s3.CreateBucketInput{Bucket: &vb}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.PutBucketVersioning(callCtx(t), &s3.PutBucketVersioningInput{Bucket: &vb,
			VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}}); err != nil {
			t.Fatal(err)
		}
		put := sdkPut(t, c, vb, "k", []byte("x"))
		for i := range 2 { // the second delete finds nothing and succeeds, as in S3
			out, err := c.DeleteObject(callCtx(t), &s3.DeleteObjectInput{Bucket: &vb, Key: aws.String("k"), VersionId: put.VersionId})
			if err != nil || aws.ToString(out.VersionId) != aws.ToString(put.VersionId) {
				t.Fatalf("delete %d: %v, version %q", i+1, err, aws.ToString(out.VersionId))
			}
		}
		_, err := c.GetObject(callCtx(t), &s3.GetObjectInput{Bucket: &vb, Key: aws.String("k"), VersionId: put.VersionId})
		wantAPIError(t, "GET of the deleted version", err, "NoSuchVersion", 404)
	})

	t.Run("presign expiry out of range", func(t *testing.T) {
		sdkPut(t, c, bucket, "presigned", []byte("x"))
		for _, tc := range []struct {
			name    string
			expires time.Duration
			status  int
			code    string
		}{
			{"zero", 0, http.StatusForbidden, "AuthorizationQueryParametersError"},
			{"over a week", 7*24*time.Hour + time.Second, http.StatusForbidden, "AuthorizationQueryParametersError"},
			{"a week", 7 * 24 * time.Hour, http.StatusOK, ""},
		} {
			t.Run(tc.name, func(t *testing.T) {
				req := newRaw(t, http.MethodGet, objectURL(srv, bucket, "presigned"), nil)
				u := presignRaw(t, req, s3User, s3Secret, time.Now(), tc.expires)
				res := doRaw(t, newRaw(t, http.MethodGet, u, nil))
				if res.status != tc.status || res.code != tc.code {
					t.Fatalf("GET: %d %s, want %d %s (%s)", res.status, res.code, tc.status, tc.code, res.body)
				}
			})
		}
	})

	t.Run("listing encoding", func(t *testing.T) {
		for _, k := range []string{"quux ab/x", "foo+1/x", "plain"} {
			sdkPut(t, c, bucket, "enc/"+k, []byte("x"))
		}
		for _, tc := range []struct {
			name, query string
			want        []string // substrings of the answer
		}{
			{"v1 url", "?encoding-type=url&delimiter=/&prefix=enc/", []string{"<Prefix>enc/</Prefix>", "<Prefix>enc/quux%20ab/</Prefix>", "<Prefix>enc/foo%2B1/</Prefix>"}},
			{"v1 prefix as given", "?encoding-type=url&prefix=enc/quux%20", []string{"<Prefix>enc/quux </Prefix>", "<Key>enc/quux%20ab/x</Key>"}},
			{"v2 url", "?list-type=2&encoding-type=url&prefix=enc/quux%20", []string{"<Prefix>enc/quux%20</Prefix>", "<Key>enc/quux%20ab/x</Key>"}},
			{"v2 empty token", "?list-type=2&continuation-token=&prefix=enc/p", []string{"<ContinuationToken></ContinuationToken>", "<Key>enc/plain</Key>"}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				req := newRaw(t, http.MethodGet, srv.url("/"+bucket+tc.query), nil)
				signRaw(t, req, nil, s3User, s3Secret, time.Now())
				res := doRaw(t, req)
				if res.status != http.StatusOK {
					t.Fatalf("%d %s", res.status, res.body)
				}
				for _, w := range tc.want {
					if !strings.Contains(string(res.body), w) {
						t.Fatalf("answer lacks %s:\n%s", w, res.body)
					}
				}
			})
		}
	})

	t.Run("non-ASCII metadata", func(t *testing.T) {
		for _, tc := range []struct {
			name, sent, kept, returned string
		}{
			{"raw UTF-8", "b\u00e4r", "b\u00e4r", "=?UTF-8?Q?b=C3=A4r?="},
			{"two words", "caf\u00e9 cr\u00e8me", "caf\u00e9 cr\u00e8me", "=?UTF-8?Q?caf=C3=A9_cr=C3=A8me?="},
			{"sent encoded", "=?UTF-8?B?w6Rw?=", "\u00e4p", "=?UTF-8?Q?=C3=A4p?="},
			{"ASCII", "plain", "plain", "plain"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				key := "meta-" + tc.name
				req := newRaw(t, http.MethodPut, objectURL(srv, bucket, key), []byte("x"))
				req.Header.Set("x-amz-meta-v", tc.sent)
				signRaw(t, req, []byte("x"), s3User, s3Secret, time.Now())
				if res := doRaw(t, req); res.status != http.StatusOK {
					t.Fatalf("PUT: %d %s", res.status, res.body)
				}
				head := newRaw(t, http.MethodHead, objectURL(srv, bucket, key), nil)
				signRaw(t, head, nil, s3User, s3Secret, time.Now())
				res := doRaw(t, head)
				if got := res.header.Get("x-amz-meta-v"); res.status != http.StatusOK || got != tc.returned {
					t.Fatalf("HEAD: %d, x-amz-meta-v %q, want %q", res.status, got, tc.returned)
				}
				// The SDK hands the header value over as sent; decoding
				// the encoded word gives back what was kept.
				out, err := c.HeadObject(callCtx(t), &s3.HeadObjectInput{Bucket: &bucket, Key: &key})
				if err != nil {
					t.Fatal(err)
				}
				if got := out.Metadata["v"]; decodeWord(t, got) != tc.kept {
					t.Fatalf("SDK metadata %q decodes to %q, want %q", got, decodeWord(t, got), tc.kept)
				}
			})
		}
	})
}

func decodeWord(t *testing.T, s string) string {
	t.Helper()
	var dec mime.WordDecoder
	out, err := dec.DecodeHeader(s)
	if err != nil {
		t.Fatalf("decode %q: %v", s, err)
	}
	return out
}
