package integration

import (
	"bytes"
	"crypto/sha1" //nolint:gosec // SHA-1 is one of the S3 checksum algorithms under test.
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"hash"
	"hash/crc32"
	"hash/crc64"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// TestS3MultipartChecksums: the checksum algorithms on multipart uploads,
// composite and full-object, as AWS documents them ("Checking object
// integrity"): the parts' checksums are kept and listed, the object's is
// computed from them at complete, returned by HeadObject and
// GetObjectAttributes, and the wrong ones are refused.
func TestS3MultipartChecksums(t *testing.T) {
	srv := startS3Server(t)
	c := sdkClient(srv, s3User, s3Secret)
	bucket := "mpsum"
	if _, err := c.CreateBucket(callCtx(t), &s3.CreateBucketInput{Bucket: &bucket}); err != nil {
		t.Fatal(err)
	}
	parts := [][]byte{randomBytes(7, 5<<20), randomBytes(8, 123_457)}
	whole := bytes.Join(parts, nil)

	for _, tc := range []struct {
		algo types.ChecksumAlgorithm
		typ  types.ChecksumType
		// sent is the type CreateMultipartUpload is given ("" for the default).
		sent types.ChecksumType
	}{
		{types.ChecksumAlgorithmCrc32, types.ChecksumTypeComposite, ""},
		{types.ChecksumAlgorithmCrc32, types.ChecksumTypeFullObject, types.ChecksumTypeFullObject},
		{types.ChecksumAlgorithmCrc32c, types.ChecksumTypeFullObject, types.ChecksumTypeFullObject},
		{types.ChecksumAlgorithmSha1, types.ChecksumTypeComposite, types.ChecksumTypeComposite},
		{types.ChecksumAlgorithmSha256, types.ChecksumTypeComposite, ""},
		{types.ChecksumAlgorithmCrc64nvme, types.ChecksumTypeFullObject, ""},
	} {
		t.Run(fmt.Sprintf("%s-%s", tc.algo, tc.typ), func(t *testing.T) {
			key := "obj-" + strings.ToLower(string(tc.algo)) + "-" + strings.ToLower(string(tc.typ))
			cr, err := c.CreateMultipartUpload(callCtx(t), &s3.CreateMultipartUploadInput{Bucket: &bucket, Key: &key,
				ChecksumAlgorithm: tc.algo, ChecksumType: tc.sent})
			if err != nil {
				t.Fatalf("CreateMultipartUpload: %v", err)
			}
			if cr.ChecksumAlgorithm != tc.algo || cr.ChecksumType != tc.typ {
				t.Fatalf("create answered %q %q, want %q %q", cr.ChecksumAlgorithm, cr.ChecksumType, tc.algo, tc.typ)
			}
			var done []types.CompletedPart
			var partSums [][]byte
			for i, p := range parts {
				n := int32(i + 1)
				up, err := c.UploadPart(callCtx(t), &s3.UploadPartInput{Bucket: &bucket, Key: &key, UploadId: cr.UploadId,
					PartNumber: &n, Body: bytes.NewReader(p), ChecksumAlgorithm: tc.algo})
				if err != nil {
					t.Fatalf("UploadPart %d: %v", n, err)
				}
				want := sumOf(t, tc.algo, p)
				if got := pickChecksum(tc.algo, up.ChecksumCRC32, up.ChecksumCRC32C, up.ChecksumCRC64NVME, up.ChecksumSHA1, up.ChecksumSHA256); got != b64(want) {
					t.Fatalf("part %d checksum %q, want %q", n, got, b64(want))
				}
				partSums = append(partSums, want)
				done = append(done, types.CompletedPart{PartNumber: &n, ETag: up.ETag,
					ChecksumCRC32: up.ChecksumCRC32, ChecksumCRC32C: up.ChecksumCRC32C, ChecksumCRC64NVME: up.ChecksumCRC64NVME,
					ChecksumSHA1: up.ChecksumSHA1, ChecksumSHA256: up.ChecksumSHA256})
			}
			lp, err := c.ListParts(callCtx(t), &s3.ListPartsInput{Bucket: &bucket, Key: &key, UploadId: cr.UploadId})
			if err != nil {
				t.Fatalf("ListParts: %v", err)
			}
			if lp.ChecksumAlgorithm != tc.algo || lp.ChecksumType != tc.typ || len(lp.Parts) != 2 {
				t.Fatalf("ListParts: %q %q %d parts", lp.ChecksumAlgorithm, lp.ChecksumType, len(lp.Parts))
			}
			for i, p := range lp.Parts {
				if got := pickChecksum(tc.algo, p.ChecksumCRC32, p.ChecksumCRC32C, p.ChecksumCRC64NVME, p.ChecksumSHA1, p.ChecksumSHA256); got != b64(partSums[i]) {
					t.Fatalf("ListParts part %d checksum %q", i+1, got)
				}
			}

			want := b64(sumOf(t, tc.algo, whole))
			if tc.typ == types.ChecksumTypeComposite {
				want = b64(sumOf(t, tc.algo, bytes.Join(partSums, nil))) + "-2"
			}
			comp, err := c.CompleteMultipartUpload(callCtx(t), &s3.CompleteMultipartUploadInput{Bucket: &bucket, Key: &key,
				UploadId: cr.UploadId, MultipartUpload: &types.CompletedMultipartUpload{Parts: done}})
			if err != nil {
				t.Fatalf("CompleteMultipartUpload: %v", err)
			}
			if got := pickChecksum(tc.algo, comp.ChecksumCRC32, comp.ChecksumCRC32C, comp.ChecksumCRC64NVME, comp.ChecksumSHA1, comp.ChecksumSHA256); got != want || comp.ChecksumType != tc.typ {
				t.Fatalf("complete checksum %q %q, want %q %q", got, comp.ChecksumType, want, tc.typ)
			}
			head, err := c.HeadObject(callCtx(t), &s3.HeadObjectInput{Bucket: &bucket, Key: &key, ChecksumMode: types.ChecksumModeEnabled})
			if err != nil {
				t.Fatalf("HeadObject: %v", err)
			}
			if got := pickChecksum(tc.algo, head.ChecksumCRC32, head.ChecksumCRC32C, head.ChecksumCRC64NVME, head.ChecksumSHA1, head.ChecksumSHA256); got != want || head.ChecksumType != tc.typ {
				t.Fatalf("HeadObject checksum %q %q, want %q %q", got, head.ChecksumType, want, tc.typ)
			}
			one := int32(1)
			attrs, err := c.GetObjectAttributes(callCtx(t), &s3.GetObjectAttributesInput{Bucket: &bucket, Key: &key, MaxParts: &one,
				ObjectAttributes: []types.ObjectAttributes{types.ObjectAttributesChecksum, types.ObjectAttributesObjectParts}})
			if err != nil {
				t.Fatalf("GetObjectAttributes: %v", err)
			}
			ck, op := attrs.Checksum, attrs.ObjectParts
			if ck == nil || pickChecksum(tc.algo, ck.ChecksumCRC32, ck.ChecksumCRC32C, ck.ChecksumCRC64NVME, ck.ChecksumSHA1, ck.ChecksumSHA256) != want || ck.ChecksumType != tc.typ {
				t.Fatalf("GetObjectAttributes checksum %+v", ck)
			}
			if op == nil || aws.ToInt32(op.TotalPartsCount) != 2 || !aws.ToBool(op.IsTruncated) || len(op.Parts) != 1 ||
				aws.ToInt64(op.Parts[0].Size) != int64(len(parts[0])) || aws.ToString(op.NextPartNumberMarker) != "1" {
				t.Fatalf("GetObjectAttributes parts %+v", op)
			}
			p := op.Parts[0]
			if got := pickChecksum(tc.algo, p.ChecksumCRC32, p.ChecksumCRC32C, p.ChecksumCRC64NVME, p.ChecksumSHA1, p.ChecksumSHA256); got != b64(partSums[0]) {
				t.Fatalf("GetObjectAttributes part 1 checksum %q", got)
			}
		})
	}

	// The client's checksum of the whole object on CompleteMultipartUpload:
	// a composite one is "<base64>-<parts>", no payload checksum of the
	// XML body (ceph s3-tests test_multipart_use_cksum_helper_sha256/sha1,
	// test_multipart_checksum_sha256).
	t.Run("object checksum on complete", func(t *testing.T) {
		for _, tc := range []struct {
			name, sent string
			code       string // "" when the complete succeeds
		}{
			{"not base64", "bad", "BadDigest"},
			{"wrong composite", b64(sumOf(t, types.ChecksumAlgorithmSha256, []byte("other"))) + "-2", "BadDigest"},
			{"right composite", "", ""},
		} {
			t.Run(tc.name, func(t *testing.T) {
				key := "complete-" + strings.ReplaceAll(tc.name, " ", "-")
				cr, err := c.CreateMultipartUpload(callCtx(t), &s3.CreateMultipartUploadInput{Bucket: &bucket, Key: &key,
					ChecksumAlgorithm: types.ChecksumAlgorithmSha256, ChecksumType: types.ChecksumTypeComposite})
				if err != nil {
					t.Fatal(err)
				}
				var done []types.CompletedPart
				var sums [][]byte
				for i, p := range parts {
					n := int32(i + 1)
					up, err := c.UploadPart(callCtx(t), &s3.UploadPartInput{Bucket: &bucket, Key: &key, UploadId: cr.UploadId,
						PartNumber: &n, Body: bytes.NewReader(p), ChecksumAlgorithm: types.ChecksumAlgorithmSha256})
					if err != nil {
						t.Fatalf("UploadPart %d: %v", n, err)
					}
					sums = append(sums, sumOf(t, types.ChecksumAlgorithmSha256, p))
					done = append(done, types.CompletedPart{PartNumber: &n, ETag: up.ETag, ChecksumSHA256: up.ChecksumSHA256})
				}
				want := b64(sumOf(t, types.ChecksumAlgorithmSha256, bytes.Join(sums, nil))) + "-2"
				sent := tc.sent
				if sent == "" {
					sent = want
				}
				comp, err := c.CompleteMultipartUpload(callCtx(t), &s3.CompleteMultipartUploadInput{Bucket: &bucket, Key: &key,
					UploadId: cr.UploadId, ChecksumSHA256: &sent, MultipartUpload: &types.CompletedMultipartUpload{Parts: done}})
				if tc.code != "" {
					wantAPIError(t, "complete with "+tc.name, err, tc.code, 400)
					return
				}
				if err != nil || aws.ToString(comp.ChecksumSHA256) != want || comp.ChecksumType != types.ChecksumTypeComposite {
					t.Fatalf("complete: %v, %q %q, want %q COMPOSITE", err, aws.ToString(comp.ChecksumSHA256), comp.ChecksumType, want)
				}
			})
		}
	})

	t.Run("malformed part checksum", func(t *testing.T) {
		key := "badpart"
		cr, err := c.CreateMultipartUpload(callCtx(t), &s3.CreateMultipartUploadInput{Bucket: &bucket, Key: &key,
			ChecksumAlgorithm: types.ChecksumAlgorithmSha256})
		if err != nil {
			t.Fatal(err)
		}
		n := int32(1)
		_, err = c.UploadPart(callCtx(t), &s3.UploadPartInput{Bucket: &bucket, Key: &key, UploadId: cr.UploadId,
			PartNumber: &n, Body: bytes.NewReader(parts[1]), ChecksumSHA256: aws.String("bad")})
		wantAPIError(t, "UploadPart with a checksum that is not base64 of 32 bytes", err, "BadDigest", 400)
	})

	// GetObjectAttributes lists the parts of an object uploaded without
	// a checksum too (number and size), paged (ceph s3-tests
	// test_get_paginated_multipart_object_attributes).
	t.Run("parts without checksums", func(t *testing.T) {
		key := "nosums"
		three := [][]byte{parts[0], randomBytes(9, 5<<20), parts[1]}
		cr, err := c.CreateMultipartUpload(callCtx(t), &s3.CreateMultipartUploadInput{Bucket: &bucket, Key: &key})
		if err != nil {
			t.Fatal(err)
		}
		var done []types.CompletedPart
		for i, p := range three {
			n := int32(i + 1)
			up, err := c.UploadPart(callCtx(t), &s3.UploadPartInput{Bucket: &bucket, Key: &key, UploadId: cr.UploadId, PartNumber: &n, Body: bytes.NewReader(p)})
			if err != nil {
				t.Fatalf("UploadPart %d: %v", n, err)
			}
			done = append(done, types.CompletedPart{PartNumber: &n, ETag: up.ETag})
		}
		if _, err := c.CompleteMultipartUpload(callCtx(t), &s3.CompleteMultipartUploadInput{Bucket: &bucket, Key: &key,
			UploadId: cr.UploadId, MultipartUpload: &types.CompletedMultipartUpload{Parts: done}}); err != nil {
			t.Fatal(err)
		}
		for _, pg := range []struct {
			marker, max int32
			want        []int32 // part numbers listed
			truncated   bool
			next        string
		}{
			{0, 1000, []int32{1, 2, 3}, false, "3"},
			{1, 1, []int32{2}, true, "2"},
			{2, 10, []int32{3}, false, "3"},
			{3, 10, nil, false, ""},
		} {
			marker := fmt.Sprint(pg.marker)
			attrs, err := c.GetObjectAttributes(callCtx(t), &s3.GetObjectAttributesInput{Bucket: &bucket, Key: &key,
				MaxParts: &pg.max, PartNumberMarker: &marker, ObjectAttributes: []types.ObjectAttributes{types.ObjectAttributesObjectParts}})
			if err != nil {
				t.Fatalf("GetObjectAttributes after %d: %v", pg.marker, err)
			}
			op := attrs.ObjectParts
			if op == nil || aws.ToInt32(op.TotalPartsCount) != 3 || aws.ToBool(op.IsTruncated) != pg.truncated || len(op.Parts) != len(pg.want) {
				t.Fatalf("after %d: %+v", pg.marker, op)
			}
			if pg.next != "" && aws.ToString(op.NextPartNumberMarker) != pg.next {
				t.Fatalf("after %d: next marker %q, want %s", pg.marker, aws.ToString(op.NextPartNumberMarker), pg.next)
			}
			for i, p := range op.Parts {
				n := pg.want[i]
				if aws.ToInt32(p.PartNumber) != n || aws.ToInt64(p.Size) != int64(len(three[n-1])) ||
					p.ChecksumCRC32 != nil || p.ChecksumSHA256 != nil || p.ChecksumCRC64NVME != nil {
					t.Fatalf("after %d: part %+v, want number %d size %d without checksum", pg.marker, p, n, len(three[n-1]))
				}
			}
		}
	})

	t.Run("refusals", func(t *testing.T) {
		key := "refused"
		_, err := c.CreateMultipartUpload(callCtx(t), &s3.CreateMultipartUploadInput{Bucket: &bucket, Key: &key,
			ChecksumAlgorithm: types.ChecksumAlgorithmSha256, ChecksumType: types.ChecksumTypeFullObject})
		wantAPIError(t, "SHA256 FULL_OBJECT", err, "InvalidRequest", 400)

		cr, err := c.CreateMultipartUpload(callCtx(t), &s3.CreateMultipartUploadInput{Bucket: &bucket, Key: &key,
			ChecksumAlgorithm: types.ChecksumAlgorithmCrc32c, ChecksumType: types.ChecksumTypeFullObject})
		if err != nil {
			t.Fatal(err)
		}
		n := int32(1)
		_, err = c.UploadPart(callCtx(t), &s3.UploadPartInput{Bucket: &bucket, Key: &key, UploadId: cr.UploadId,
			PartNumber: &n, Body: bytes.NewReader(parts[1]), ChecksumAlgorithm: types.ChecksumAlgorithmSha256})
		wantAPIError(t, "part of another algorithm", err, "InvalidRequest", 400)

		up, err := c.UploadPart(callCtx(t), &s3.UploadPartInput{Bucket: &bucket, Key: &key, UploadId: cr.UploadId,
			PartNumber: &n, Body: bytes.NewReader(parts[1]), ChecksumAlgorithm: types.ChecksumAlgorithmCrc32c})
		if err != nil {
			t.Fatal(err)
		}
		wrong := b64(sumOf(t, types.ChecksumAlgorithmCrc32c, []byte("something else")))
		_, err = c.CompleteMultipartUpload(callCtx(t), &s3.CompleteMultipartUploadInput{Bucket: &bucket, Key: &key, UploadId: cr.UploadId,
			MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{{PartNumber: &n, ETag: up.ETag, ChecksumCRC32C: &wrong}}}})
		wantAPIError(t, "complete with a wrong part checksum", err, "InvalidPart", 400)

		_, err = c.CompleteMultipartUpload(callCtx(t), &s3.CompleteMultipartUploadInput{Bucket: &bucket, Key: &key, UploadId: cr.UploadId,
			ChecksumCRC32C: &wrong, ChecksumType: types.ChecksumTypeFullObject,
			MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{{PartNumber: &n, ETag: up.ETag, ChecksumCRC32C: up.ChecksumCRC32C}}}})
		wantAPIError(t, "complete with a wrong object checksum", err, "BadDigest", 400)

		_, err = c.CompleteMultipartUpload(callCtx(t), &s3.CompleteMultipartUploadInput{Bucket: &bucket, Key: &key, UploadId: cr.UploadId,
			ChecksumType:    types.ChecksumTypeComposite,
			MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{{PartNumber: &n, ETag: up.ETag, ChecksumCRC32C: up.ChecksumCRC32C}}}})
		wantAPIError(t, "complete naming another checksum type", err, "BadDigest", 400)

		// The refused completes changed nothing: the right one succeeds.
		right := b64(sumOf(t, types.ChecksumAlgorithmCrc32c, parts[1]))
		comp, err := c.CompleteMultipartUpload(callCtx(t), &s3.CompleteMultipartUploadInput{Bucket: &bucket, Key: &key, UploadId: cr.UploadId,
			ChecksumCRC32C: &right, ChecksumType: types.ChecksumTypeFullObject,
			MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{{PartNumber: &n, ETag: up.ETag, ChecksumCRC32C: up.ChecksumCRC32C}}}})
		if err != nil || aws.ToString(comp.ChecksumCRC32C) != right {
			t.Fatalf("complete: %v %q, want %q", err, aws.ToString(comp.ChecksumCRC32C), right)
		}
	})
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// sumOf computes algo's checksum of b, big-endian as S3 sends it.
func sumOf(t *testing.T, algo types.ChecksumAlgorithm, b []byte) []byte {
	t.Helper()
	var h hash.Hash
	switch algo {
	case types.ChecksumAlgorithmCrc32:
		h = crc32.NewIEEE()
	case types.ChecksumAlgorithmCrc32c:
		h = crc32.New(crc32.MakeTable(crc32.Castagnoli))
	case types.ChecksumAlgorithmCrc64nvme:
		h = crc64.New(crc64.MakeTable(0x9a6c9329ac4bc9b5))
	case types.ChecksumAlgorithmSha1:
		h = sha1.New() //nolint:gosec // See import.
	case types.ChecksumAlgorithmSha256:
		h = sha256.New()
	default:
		t.Fatalf("no hash for %s", algo)
	}
	h.Write(b)
	return h.Sum(nil)
}

// pickChecksum returns the one of an output's checksum fields for algo.
func pickChecksum(algo types.ChecksumAlgorithm, crc32v, crc32c, crc64, sha1v, sha256v *string) string {
	switch algo {
	case types.ChecksumAlgorithmCrc32:
		return aws.ToString(crc32v)
	case types.ChecksumAlgorithmCrc32c:
		return aws.ToString(crc32c)
	case types.ChecksumAlgorithmCrc64nvme:
		return aws.ToString(crc64)
	case types.ChecksumAlgorithmSha1:
		return aws.ToString(sha1v)
	}
	return aws.ToString(sha256v)
}
