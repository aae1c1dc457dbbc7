package integration

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

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
