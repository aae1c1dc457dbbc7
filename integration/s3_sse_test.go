package integration

import (
	"bytes"
	"crypto/md5"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// Encryption at rest (issue 17): SSE-C, SSE-S3 and SSE-KMS through
// aws-sdk-go-v2 and boto3, against AWS's documented statuses and codes.

const (
	sseMasterA = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
	sseMasterB = "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff000102030405060708090a0b0c0d0e0f"
	sseRing    = "# test ring\nalpha 1111111111111111111111111111111111111111111111111111111111111111\nbeta 2222222222222222222222222222222222222222222222222222222222222222\n"
)

// startSSEServer serves data with master key (hex), the test key ring
// and the extra flags.
func startSSEServer(t *testing.T, data, master string, extra ...string) *server {
	t.Helper()
	t.Setenv("CAIRN_ROOT_USER", s3User)
	t.Setenv("CAIRN_ROOT_PASSWORD", s3Secret)
	dir := t.TempDir()
	mk, ring := filepath.Join(dir, "master.key"), filepath.Join(dir, "ring")
	if err := os.WriteFile(mk, []byte(master+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ring, []byte(sseRing), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, data, append([]string{"--sse-master-key-file", mk, "--sse-kms-keyring", ring}, extra...)...)
	s.waitReady(readyTimeout)
	return s
}

// ssecKey is an SSE-C key and its headers' values.
type ssecKey struct{ algo, key, md5 *string }

func newSSECKey(seed byte) ssecKey {
	k := bytes.Repeat([]byte{seed}, 32)
	sum := md5.Sum(k)
	return ssecKey{aws.String("AES256"), aws.String(base64.StdEncoding.EncodeToString(k)), aws.String(base64.StdEncoding.EncodeToString(sum[:]))}
}

func sseRead(t *testing.T, c *s3.Client, in *s3.GetObjectInput) []byte {
	t.Helper()
	out, err := c.GetObject(callCtx(t), in)
	if err != nil {
		t.Fatalf("get %s: %v", aws.ToString(in.Key), err)
	}
	defer out.Body.Close()
	b, err := io.ReadAll(out.Body)
	if err != nil {
		t.Fatalf("read %s: %v", aws.ToString(in.Key), err)
	}
	return b
}

func TestS3SSE(t *testing.T) {
	srv := startSSEServer(t, t.TempDir(), sseMasterA)
	c := sdkClient(srv, s3User, s3Secret)
	ctx := callCtx(t)
	b := aws.String("sse")
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b}); err != nil {
		t.Fatal(err)
	}
	data := randomBytes(17, 300<<10+5) // several packages, an odd tail
	k1, k2 := newSSECKey(1), newSSECKey(2)

	t.Run("sse-c", func(t *testing.T) {
		put, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("c"), Body: bytes.NewReader(data),
			SSECustomerAlgorithm: k1.algo, SSECustomerKey: k1.key, SSECustomerKeyMD5: k1.md5})
		if err != nil {
			t.Fatal(err)
		}
		if aws.ToString(put.SSECustomerAlgorithm) != "AES256" || aws.ToString(put.SSECustomerKeyMD5) != *k1.md5 {
			t.Fatalf("PUT headers %q %q", aws.ToString(put.SSECustomerAlgorithm), aws.ToString(put.SSECustomerKeyMD5))
		}
		got := sseRead(t, c, &s3.GetObjectInput{Bucket: b, Key: aws.String("c"), SSECustomerAlgorithm: k1.algo, SSECustomerKey: k1.key, SSECustomerKeyMD5: k1.md5})
		if !bytes.Equal(got, data) {
			t.Fatal("SSE-C GET: wrong body")
		}
		got = sseRead(t, c, &s3.GetObjectInput{Bucket: b, Key: aws.String("c"), Range: aws.String("bytes=65530-140000"),
			SSECustomerAlgorithm: k1.algo, SSECustomerKey: k1.key, SSECustomerKeyMD5: k1.md5})
		if !bytes.Equal(got, data[65530:140001]) {
			t.Fatal("SSE-C Range GET: wrong body")
		}
		h, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: aws.String("c"), SSECustomerAlgorithm: k1.algo, SSECustomerKey: k1.key, SSECustomerKeyMD5: k1.md5})
		if err != nil || aws.ToInt64(h.ContentLength) != int64(len(data)) || aws.ToString(h.SSECustomerKeyMD5) != *k1.md5 {
			t.Fatalf("SSE-C HEAD: %+v %v", h, err)
		}
		_, err = c.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: aws.String("c")})
		wantAPIError(t, "GET without the key", err, "InvalidRequest", 400)
		_, err = c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: aws.String("c")})
		if httpStatus(err) != 400 {
			t.Fatalf("HEAD without the key: %v, want 400", err)
		}
		_, err = c.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: aws.String("c"), SSECustomerAlgorithm: k2.algo, SSECustomerKey: k2.key, SSECustomerKeyMD5: k2.md5})
		wantAPIError(t, "GET with another key", err, "AccessDenied", 403)
		_, err = c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("bad"), Body: bytes.NewReader(data[:10]),
			SSECustomerAlgorithm: k1.algo, SSECustomerKey: k1.key, SSECustomerKeyMD5: k2.md5})
		wantAPIError(t, "PUT with a wrong key MD5", err, "InvalidArgument", 400)
		_, err = c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("bad"), Body: bytes.NewReader(data[:10]),
			SSECustomerAlgorithm: aws.String("AES128"), SSECustomerKey: k1.key, SSECustomerKeyMD5: k1.md5})
		wantAPIError(t, "PUT with another algorithm", err, "InvalidEncryptionAlgorithmError", 400)
		_, err = c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("bad"), Body: bytes.NewReader(data[:10]),
			SSECustomerAlgorithm: k1.algo, SSECustomerKey: aws.String("c2hvcnQ="), SSECustomerKeyMD5: k1.md5})
		wantAPIError(t, "PUT with a short key", err, "InvalidArgument", 400)
		p, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("plain"), Body: bytes.NewReader(data[:10])})
		if err != nil || p.ServerSideEncryption != "" {
			t.Fatalf("plain PUT: %v %q", err, p.ServerSideEncryption)
		}
		_, err = c.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: aws.String("plain"), SSECustomerAlgorithm: k1.algo, SSECustomerKey: k1.key, SSECustomerKeyMD5: k1.md5})
		wantAPIError(t, "GET of a plain object with a key", err, "InvalidRequest", 400)
	})

	t.Run("sse-s3", func(t *testing.T) {
		put, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("s3"), Body: bytes.NewReader(data), ServerSideEncryption: types.ServerSideEncryptionAes256})
		if err != nil || put.ServerSideEncryption != types.ServerSideEncryptionAes256 {
			t.Fatalf("PUT: %v %q", err, put.ServerSideEncryption)
		}
		if strings.Trim(aws.ToString(put.ETag), `"`) != md5hex(data) {
			t.Fatalf("SSE-S3 ETag %s, want the plaintext MD5 %s", aws.ToString(put.ETag), md5hex(data))
		}
		out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: aws.String("s3"), Range: aws.String("bytes=-1000")})
		if err != nil || out.ServerSideEncryption != types.ServerSideEncryptionAes256 || aws.ToString(out.ContentRange) != fmt.Sprintf("bytes %d-%d/%d", len(data)-1000, len(data)-1, len(data)) {
			t.Fatalf("Range GET: %v %+v", err, out)
		}
		got, _ := io.ReadAll(out.Body)
		out.Body.Close()
		if !bytes.Equal(got, data[len(data)-1000:]) {
			t.Fatal("SSE-S3 suffix Range GET: wrong body")
		}
		_, err = c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("bad"), Body: bytes.NewReader(data), ServerSideEncryption: "AES512"})
		wantAPIError(t, "PUT with an unknown algorithm", err, "InvalidArgument", 400)
	})

	t.Run("sse-kms", func(t *testing.T) {
		put, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("kms"), Body: bytes.NewReader(data),
			ServerSideEncryption: types.ServerSideEncryptionAwsKms, SSEKMSKeyId: aws.String("beta"), BucketKeyEnabled: aws.Bool(true)})
		if err != nil || put.ServerSideEncryption != types.ServerSideEncryptionAwsKms || aws.ToString(put.SSEKMSKeyId) != "beta" || !aws.ToBool(put.BucketKeyEnabled) {
			t.Fatalf("PUT: %v %+v", err, put)
		}
		out, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: aws.String("kms")})
		if err != nil || out.ServerSideEncryption != types.ServerSideEncryptionAwsKms || aws.ToString(out.SSEKMSKeyId) != "beta" {
			t.Fatalf("HEAD: %v %+v", err, out)
		}
		if got := sseRead(t, c, &s3.GetObjectInput{Bucket: b, Key: aws.String("kms")}); !bytes.Equal(got, data) {
			t.Fatal("SSE-KMS GET: wrong body")
		}
		_, err = c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("bad"), Body: bytes.NewReader(data[:3]),
			ServerSideEncryption: types.ServerSideEncryptionAwsKms, SSEKMSKeyId: aws.String("gamma")})
		wantAPIError(t, "PUT naming an unknown key", err, "KMS.NotFoundException", 400)
	})

	t.Run("multipart", func(t *testing.T) {
		parts := [][]byte{randomBytes(31, 5*mib+1), randomBytes(32, 3*mib+77)}
		cr, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: b, Key: aws.String("mp"),
			SSECustomerAlgorithm: k1.algo, SSECustomerKey: k1.key, SSECustomerKeyMD5: k1.md5})
		if err != nil || aws.ToString(cr.SSECustomerKeyMD5) != *k1.md5 {
			t.Fatalf("create: %v %+v", err, cr)
		}
		_, err = c.UploadPart(ctx, &s3.UploadPartInput{Bucket: b, Key: aws.String("mp"), UploadId: cr.UploadId, PartNumber: aws.Int32(1), Body: bytes.NewReader(parts[0])})
		wantAPIError(t, "UploadPart without the key", err, "InvalidRequest", 400)
		_, err = c.UploadPart(ctx, &s3.UploadPartInput{Bucket: b, Key: aws.String("mp"), UploadId: cr.UploadId, PartNumber: aws.Int32(1), Body: bytes.NewReader(parts[0]),
			SSECustomerAlgorithm: k2.algo, SSECustomerKey: k2.key, SSECustomerKeyMD5: k2.md5})
		wantAPIError(t, "UploadPart with another key", err, "InvalidArgument", 400)
		var done []types.CompletedPart
		for i, p := range parts {
			up, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: b, Key: aws.String("mp"), UploadId: cr.UploadId, PartNumber: aws.Int32(int32(i + 1)), Body: bytes.NewReader(p),
				SSECustomerAlgorithm: k1.algo, SSECustomerKey: k1.key, SSECustomerKeyMD5: k1.md5})
			if err != nil || aws.ToString(up.SSECustomerKeyMD5) != *k1.md5 {
				t.Fatalf("part %d: %v", i+1, err)
			}
			if sum := md5.Sum(p); strings.Trim(aws.ToString(up.ETag), `"`) == hex.EncodeToString(sum[:]) {
				t.Errorf("part %d: the ETag of an SSE-C part is its plaintext's MD5", i+1)
			}
			if i == 0 {
				// A part sent again with the same bytes (a client's
				// retry) keeps the ETag the client already holds: the
				// completion below names the first answer's.
				again, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: b, Key: aws.String("mp"), UploadId: cr.UploadId, PartNumber: aws.Int32(1), Body: bytes.NewReader(p),
					SSECustomerAlgorithm: k1.algo, SSECustomerKey: k1.key, SSECustomerKeyMD5: k1.md5})
				if err != nil || aws.ToString(again.ETag) != aws.ToString(up.ETag) {
					t.Fatalf("part 1 sent again: ETag %v, first %v (%v)", aws.ToString(again.ETag), aws.ToString(up.ETag), err)
				}
			}
			done = append(done, types.CompletedPart{PartNumber: aws.Int32(int32(i + 1)), ETag: up.ETag})
		}
		lp, err := c.ListParts(ctx, &s3.ListPartsInput{Bucket: b, Key: aws.String("mp"), UploadId: cr.UploadId})
		if err != nil || len(lp.Parts) != 2 || aws.ToInt64(lp.Parts[0].Size) != int64(len(parts[0])) || aws.ToInt64(lp.Parts[1].Size) != int64(len(parts[1])) {
			t.Fatalf("ListParts: %v %+v", err, lp)
		}
		if _, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: b, Key: aws.String("mp"), UploadId: cr.UploadId,
			MultipartUpload: &types.CompletedMultipartUpload{Parts: done}}); err != nil {
			t.Fatal(err)
		}
		whole := append(append([]byte(nil), parts[0]...), parts[1]...)
		got := sseRead(t, c, &s3.GetObjectInput{Bucket: b, Key: aws.String("mp"), SSECustomerAlgorithm: k1.algo, SSECustomerKey: k1.key, SSECustomerKeyMD5: k1.md5})
		if !bytes.Equal(got, whole) {
			t.Fatal("multipart GET: wrong body")
		}
		got = sseRead(t, c, &s3.GetObjectInput{Bucket: b, Key: aws.String("mp"), PartNumber: aws.Int32(2), SSECustomerAlgorithm: k1.algo, SSECustomerKey: k1.key, SSECustomerKeyMD5: k1.md5})
		if !bytes.Equal(got, parts[1]) {
			t.Fatal("partNumber=2 GET: wrong body")
		}
		lo := len(parts[0]) - 100
		got = sseRead(t, c, &s3.GetObjectInput{Bucket: b, Key: aws.String("mp"), Range: aws.String(fmt.Sprintf("bytes=%d-%d", lo, lo+299)),
			SSECustomerAlgorithm: k1.algo, SSECustomerKey: k1.key, SSECustomerKeyMD5: k1.md5})
		if !bytes.Equal(got, whole[lo:lo+300]) {
			t.Fatal("Range GET across the parts: wrong body")
		}
		// GetObjectAttributes of an SSE-C object needs its key, as GET and HEAD.
		_, err = c.GetObjectAttributes(ctx, &s3.GetObjectAttributesInput{Bucket: b, Key: aws.String("mp"),
			ObjectAttributes: []types.ObjectAttributes{types.ObjectAttributesObjectSize}})
		wantAPIError(t, "GetObjectAttributes without the key", err, "InvalidRequest", 400)
		_, err = c.GetObjectAttributes(ctx, &s3.GetObjectAttributesInput{Bucket: b, Key: aws.String("mp"),
			ObjectAttributes:     []types.ObjectAttributes{types.ObjectAttributesObjectSize},
			SSECustomerAlgorithm: k2.algo, SSECustomerKey: k2.key, SSECustomerKeyMD5: k2.md5})
		wantAPIError(t, "GetObjectAttributes with another key", err, "AccessDenied", 403)
		attrs, err := c.GetObjectAttributes(ctx, &s3.GetObjectAttributesInput{Bucket: b, Key: aws.String("mp"),
			ObjectAttributes:     []types.ObjectAttributes{types.ObjectAttributesObjectSize},
			SSECustomerAlgorithm: k1.algo, SSECustomerKey: k1.key, SSECustomerKeyMD5: k1.md5})
		if err != nil || aws.ToInt64(attrs.ObjectSize) != int64(len(whole)) {
			t.Fatalf("GetObjectAttributes: %v %+v", err, attrs)
		}

		// UploadPartCopy: from the SSE-C object into an SSE-S3 upload.
		cr2, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: b, Key: aws.String("mp2"), ServerSideEncryption: types.ServerSideEncryptionAes256})
		if err != nil || cr2.ServerSideEncryption != types.ServerSideEncryptionAes256 {
			t.Fatalf("create SSE-S3: %v", err)
		}
		cp, err := c.UploadPartCopy(ctx, &s3.UploadPartCopyInput{Bucket: b, Key: aws.String("mp2"), UploadId: cr2.UploadId, PartNumber: aws.Int32(1),
			CopySource: aws.String("sse/mp"), CopySourceRange: aws.String(fmt.Sprintf("bytes=100-%d", 100+5*mib)), // across the parts
			CopySourceSSECustomerAlgorithm: k1.algo, CopySourceSSECustomerKey: k1.key, CopySourceSSECustomerKeyMD5: k1.md5})
		if err != nil {
			t.Fatal(err)
		}
		cp2, err := c.UploadPartCopy(ctx, &s3.UploadPartCopyInput{Bucket: b, Key: aws.String("mp2"), UploadId: cr2.UploadId, PartNumber: aws.Int32(2), CopySource: aws.String("sse/plain")})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: b, Key: aws.String("mp2"), UploadId: cr2.UploadId,
			MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{{PartNumber: aws.Int32(1), ETag: cp.CopyPartResult.ETag}, {PartNumber: aws.Int32(2), ETag: cp2.CopyPartResult.ETag}}}}); err != nil {
			t.Fatal(err)
		}
		if got := sseRead(t, c, &s3.GetObjectInput{Bucket: b, Key: aws.String("mp2")}); !bytes.Equal(got, append(append([]byte(nil), whole[100:100+5*mib+1]...), data[:10]...)) {
			t.Fatal("UploadPartCopy result: wrong body")
		}
	})

	t.Run("copy", func(t *testing.T) {
		src := func(k ssecKey) (a, key, m *string) { return k.algo, k.key, k.md5 }
		tests := []struct {
			name, from string
			srcKey     *ssecKey
			in         s3.CopyObjectInput
			read       *ssecKey
			wantSSE    types.ServerSideEncryption
		}{
			{"plain to SSE-C", "plain", nil, s3.CopyObjectInput{SSECustomerAlgorithm: k2.algo, SSECustomerKey: k2.key, SSECustomerKeyMD5: k2.md5}, &k2, ""},
			{"SSE-C to SSE-S3", "c", &k1, s3.CopyObjectInput{ServerSideEncryption: types.ServerSideEncryptionAes256}, nil, types.ServerSideEncryptionAes256},
			{"SSE-C to SSE-C, another key", "c", &k1, s3.CopyObjectInput{SSECustomerAlgorithm: k2.algo, SSECustomerKey: k2.key, SSECustomerKeyMD5: k2.md5}, &k2, ""},
			{"SSE-KMS to plain", "kms", nil, s3.CopyObjectInput{}, nil, ""},
			{"SSE-S3 to SSE-KMS", "s3", nil, s3.CopyObjectInput{ServerSideEncryption: types.ServerSideEncryptionAwsKms, SSEKMSKeyId: aws.String("alpha")}, nil, types.ServerSideEncryptionAwsKms},
		}
		want := map[string][]byte{"plain": data[:10], "c": data, "kms": data, "s3": data}
		for i, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				in := tc.in
				in.Bucket, in.Key, in.CopySource = b, aws.String(fmt.Sprintf("copy%d", i)), aws.String("sse/"+tc.from)
				if tc.srcKey != nil {
					in.CopySourceSSECustomerAlgorithm, in.CopySourceSSECustomerKey, in.CopySourceSSECustomerKeyMD5 = src(*tc.srcKey)
				}
				out, err := c.CopyObject(ctx, &in)
				if err != nil {
					t.Fatal(err)
				}
				if out.ServerSideEncryption != tc.wantSSE {
					t.Fatalf("copy SSE %q, want %q", out.ServerSideEncryption, tc.wantSSE)
				}
				g := &s3.GetObjectInput{Bucket: b, Key: in.Key}
				if tc.read != nil {
					g.SSECustomerAlgorithm, g.SSECustomerKey, g.SSECustomerKeyMD5 = src(*tc.read)
				}
				if got := sseRead(t, c, g); !bytes.Equal(got, want[tc.from]) {
					t.Fatal("copy: wrong body")
				}
			})
		}
		_, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: b, Key: aws.String("copyx"), CopySource: aws.String("sse/c")})
		wantAPIError(t, "copy of an SSE-C source without its key", err, "InvalidRequest", 400)
		_, err = c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: b, Key: aws.String("copyx"), CopySource: aws.String("sse/c"),
			CopySourceSSECustomerAlgorithm: k2.algo, CopySourceSSECustomerKey: k2.key, CopySourceSSECustomerKeyMD5: k2.md5})
		wantAPIError(t, "copy of an SSE-C source with another key", err, "AccessDenied", 403)
		// Rotating an object's key in place: a copy onto itself that changes its encryption.
		if _, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: b, Key: aws.String("copy2"), CopySource: aws.String("sse/copy2"),
			CopySourceSSECustomerAlgorithm: k2.algo, CopySourceSSECustomerKey: k2.key, CopySourceSSECustomerKeyMD5: k2.md5,
			SSECustomerAlgorithm: k1.algo, SSECustomerKey: k1.key, SSECustomerKeyMD5: k1.md5}); err != nil {
			t.Fatalf("self-copy to a new key: %v", err)
		}
		if got := sseRead(t, c, &s3.GetObjectInput{Bucket: b, Key: aws.String("copy2"), SSECustomerAlgorithm: k1.algo, SSECustomerKey: k1.key, SSECustomerKeyMD5: k1.md5}); !bytes.Equal(got, data) {
			t.Fatal("self-copy: wrong body")
		}
	})

	t.Run("list sizes", func(t *testing.T) {
		l, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: b})
		if err != nil {
			t.Fatal(err)
		}
		sizes := map[string]int64{"c": int64(len(data)), "s3": int64(len(data)), "kms": int64(len(data)), "plain": 10, "mp": 8*mib + 78}
		for _, o := range l.Contents {
			if want, ok := sizes[aws.ToString(o.Key)]; ok && aws.ToInt64(o.Size) != want {
				t.Errorf("ListObjectsV2 size of %s: %d, want %d", aws.ToString(o.Key), aws.ToInt64(o.Size), want)
			}
		}
		v, err := c.ListObjectVersions(ctx, &s3.ListObjectVersionsInput{Bucket: b, Prefix: aws.String("kms")})
		if err != nil || len(v.Versions) != 1 || aws.ToInt64(v.Versions[0].Size) != int64(len(data)) {
			t.Fatalf("ListObjectVersions: %v %+v", err, v)
		}
	})

	t.Run("bucket default", func(t *testing.T) {
		db := aws.String("sse-default")
		if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: db}); err != nil {
			t.Fatal(err)
		}
		_, err := c.GetBucketEncryption(ctx, &s3.GetBucketEncryptionInput{Bucket: db})
		wantAPIError(t, "GetBucketEncryption before any", err, "ServerSideEncryptionConfigurationNotFoundError", 404)
		_, err = c.PutBucketEncryption(ctx, &s3.PutBucketEncryptionInput{Bucket: db, ServerSideEncryptionConfiguration: &types.ServerSideEncryptionConfiguration{
			Rules: []types.ServerSideEncryptionRule{{ApplyServerSideEncryptionByDefault: &types.ServerSideEncryptionByDefault{SSEAlgorithm: types.ServerSideEncryptionAwsKms, KMSMasterKeyID: aws.String("gamma")}}}}})
		wantAPIError(t, "PutBucketEncryption naming an unknown key", err, "KMS.NotFoundException", 400)
		if _, err := c.PutBucketEncryption(ctx, &s3.PutBucketEncryptionInput{Bucket: db, ServerSideEncryptionConfiguration: &types.ServerSideEncryptionConfiguration{
			Rules: []types.ServerSideEncryptionRule{{ApplyServerSideEncryptionByDefault: &types.ServerSideEncryptionByDefault{SSEAlgorithm: types.ServerSideEncryptionAwsKms, KMSMasterKeyID: aws.String("alpha")}, BucketKeyEnabled: aws.Bool(true)}}}}); err != nil {
			t.Fatal(err)
		}
		g, err := c.GetBucketEncryption(ctx, &s3.GetBucketEncryptionInput{Bucket: db})
		if err != nil || len(g.ServerSideEncryptionConfiguration.Rules) != 1 || aws.ToString(g.ServerSideEncryptionConfiguration.Rules[0].ApplyServerSideEncryptionByDefault.KMSMasterKeyID) != "alpha" {
			t.Fatalf("GetBucketEncryption: %v %+v", err, g)
		}
		put, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: db, Key: aws.String("o"), Body: bytes.NewReader(data)})
		if err != nil || put.ServerSideEncryption != types.ServerSideEncryptionAwsKms || aws.ToString(put.SSEKMSKeyId) != "alpha" {
			t.Fatalf("PUT under the default: %v %+v", err, put)
		}
		cp, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: db, Key: aws.String("copied"), CopySource: aws.String("sse/plain")})
		if err != nil || cp.ServerSideEncryption != types.ServerSideEncryptionAwsKms {
			t.Fatalf("copy under the default: %v %+v", err, cp)
		}
		mp, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: db, Key: aws.String("mp")})
		if err != nil || mp.ServerSideEncryption != types.ServerSideEncryptionAwsKms {
			t.Fatalf("create under the default: %v %+v", err, mp)
		}
		put, err = c.PutObject(ctx, &s3.PutObjectInput{Bucket: db, Key: aws.String("own"), Body: bytes.NewReader(data[:5]), ServerSideEncryption: types.ServerSideEncryptionAes256})
		if err != nil || put.ServerSideEncryption != types.ServerSideEncryptionAes256 {
			t.Fatalf("explicit SSE-S3 beats the default: %v %+v", err, put)
		}
		if got := sseRead(t, c, &s3.GetObjectInput{Bucket: db, Key: aws.String("o")}); !bytes.Equal(got, data) {
			t.Fatal("GET under the default: wrong body")
		}
		if _, err := c.DeleteBucketEncryption(ctx, &s3.DeleteBucketEncryptionInput{Bucket: db}); err != nil {
			t.Fatal(err)
		}
		_, err = c.GetBucketEncryption(ctx, &s3.GetBucketEncryptionInput{Bucket: db})
		wantAPIError(t, "GetBucketEncryption after delete", err, "ServerSideEncryptionConfigurationNotFoundError", 404)
		put, err = c.PutObject(ctx, &s3.PutObjectInput{Bucket: db, Key: aws.String("after"), Body: bytes.NewReader(data[:5])})
		if err != nil || put.ServerSideEncryption != "" {
			t.Fatalf("PUT after delete: %v %+v", err, put)
		}
	})
}

// TestS3SSEMasterKeyChange restarts the server with another master key:
// its SSE-S3 objects fail with a clear 500 and a log line, never garbage,
// while plain and SSE-C objects still read.
func TestS3SSEMasterKeyChange(t *testing.T) {
	data := t.TempDir()
	srv := startSSEServer(t, data, sseMasterA)
	c := sdkClient(srv, s3User, s3Secret)
	ctx := callCtx(t)
	b := aws.String("rekey")
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b}); err != nil {
		t.Fatal(err)
	}
	body := randomBytes(5, 70000)
	k := newSSECKey(9)
	for key, in := range map[string]s3.PutObjectInput{
		"s3":    {ServerSideEncryption: types.ServerSideEncryptionAes256},
		"plain": {},
		"c":     {SSECustomerAlgorithm: k.algo, SSECustomerKey: k.key, SSECustomerKeyMD5: k.md5},
	} {
		in.Bucket, in.Key, in.Body = b, aws.String(key), bytes.NewReader(body)
		if _, err := c.PutObject(ctx, &in); err != nil {
			t.Fatal(err)
		}
	}
	if code := srv.stop(30 * time.Second); code != 0 {
		t.Fatalf("stop: exit %d", code)
	}
	srv = startSSEServer(t, data, sseMasterB)
	c = sdkClient(srv, s3User, s3Secret)
	_, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: aws.String("s3")})
	wantAPIError(t, "GET of an SSE-S3 object under another master key", err, "InternalError", 500)
	if !strings.Contains(err.Error(), "master key") {
		t.Fatalf("the error does not say the master key is wrong: %v", err)
	}
	if log := srv.stderr.String(); !strings.Contains(log, "cannot open an encrypted object's key") || !strings.Contains(log, "master key id") {
		t.Fatalf("no log line names the master key:\n%s", log)
	}
	if got := sseRead(t, c, &s3.GetObjectInput{Bucket: b, Key: aws.String("plain")}); !bytes.Equal(got, body) {
		t.Fatal("plain object after the restart: wrong body")
	}
	if got := sseRead(t, c, &s3.GetObjectInput{Bucket: b, Key: aws.String("c"), SSECustomerAlgorithm: k.algo, SSECustomerKey: k.key, SSECustomerKeyMD5: k.md5}); !bytes.Equal(got, body) {
		t.Fatal("SSE-C object after the restart: wrong body")
	}
}
