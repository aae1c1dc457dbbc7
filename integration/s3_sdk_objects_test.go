package integration

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

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

// sdkLargeRangeGet reads an object of several 1 MiB blocks whole and in
// ranges across block boundaries: the server sends its blocks from the
// read cache (with sendfile), which /metrics counts.
func sdkLargeRangeGet(t *testing.T, srv *server, c *s3.Client, bucket string) {
	key := "large-ranged"
	body := randomBytes(8, 3<<20+12345)
	sdkPut(t, c, bucket, key, body)
	for _, tc := range []struct{ start, end int }{
		{0, len(body) - 1},
		{1<<20 - 10, 1<<20 + 9},  // across the first block boundary
		{5, 3<<20 + 100},         // most of it, unaligned both ends
		{3 << 20, len(body) - 1}, // the short last block
		{2<<20 + 1, 2<<20 + 1},   // one byte
		{0, len(body) - 1},       // whole again, now all hits
	} {
		out, err := c.GetObject(callCtx(t), &s3.GetObjectInput{Bucket: &bucket, Key: &key,
			Range: aws.String(fmt.Sprintf("bytes=%d-%d", tc.start, tc.end))})
		if err != nil {
			t.Fatalf("GetObject %d-%d: %v", tc.start, tc.end, err)
		}
		got, err := io.ReadAll(out.Body)
		_ = out.Body.Close()
		if err != nil || !bytes.Equal(got, body[tc.start:tc.end+1]) {
			t.Fatalf("GetObject %d-%d: %d bytes (%v), want %d equal bytes", tc.start, tc.end, len(got), err, tc.end-tc.start+1)
		}
	}
	if clusterNodes(t) > 0 {
		return // the hits are spread over the nodes, each with its own cache and metrics
	}
	res, err := http.Get("http://" + srv.addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	m, _ := io.ReadAll(res.Body)
	var hits float64
	for _, line := range strings.Split(string(m), "\n") {
		if v, ok := strings.CutPrefix(line, "cairn_read_cache_hits_total "); ok {
			hits, _ = strconv.ParseFloat(v, 64)
		}
	}
	if hits < 4 {
		t.Fatalf("cairn_read_cache_hits_total = %v after reading a 4-block object, want at least 4", hits)
	}
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
