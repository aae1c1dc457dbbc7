package integration

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"hash/crc32"
	"io"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

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
		// A value that is not base64 of the algorithm's length can match
		// no body either (ceph s3-tests test_object_checksum_sha256).
		for _, v := range []struct{ algo, value string }{{"SHA256", "bad"}, {"CRC64NVME", "bad"}} {
			in := &s3.PutObjectInput{Bucket: &bucket, Key: aws.String("sum/bad"), Body: bytes.NewReader(body)}
			if v.algo == "SHA256" {
				in.ChecksumSHA256 = &v.value
			} else {
				in.ChecksumCRC64NVME = &v.value
			}
			_, err = c.PutObject(callCtx(t), in)
			wantAPIError(t, "PutObject with a malformed "+v.algo, err, "BadDigest", 400)
		}
		_, err = c.HeadObject(callCtx(t), &s3.HeadObjectInput{Bucket: &bucket, Key: aws.String("sum/bad")})
		wantAPIError(t, "HeadObject after a bad checksum", err, "NotFound", 404)
	})
}
