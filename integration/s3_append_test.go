package integration

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// driveBytesWritten reads cairn_drive_bytes_written_total from /metrics.
func driveBytesWritten(t *testing.T, srv *server) int64 {
	t.Helper()
	resp, err := http.Get(srv.url("/metrics"))
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "cairn_drive_bytes_written_total "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("cairn_drive_bytes_written_total %q: %v", v, err)
			}
			return int64(f)
		}
	}
	t.Fatalf("/metrics has no cairn_drive_bytes_written_total (%v)", sc.Err())
	return 0
}

func crc32Of(b []byte) string {
	var out [4]byte
	binary.BigEndian.PutUint32(out[:], crc32.ChecksumIEEE(b))
	return base64.StdEncoding.EncodeToString(out[:])
}

// TestS3Append appends to one object a hundred times with aws-sdk-go-v2
// (PutObject with WriteOffsetBytes), checking the content and the
// object's CRC32 as the SDK reads them, that each append wrote about its
// own bytes to the drives (cairn_drive_bytes_written_total) and not the
// object, that a wrong offset is refused with InvalidWriteOffset and
// changes nothing, and that a block-aligned UploadPartCopy writes no
// byte; fsck is clean afterwards.
func TestS3Append(t *testing.T) {
	data := t.TempDir()
	t.Setenv("CAIRN_ROOT_USER", s3User)
	t.Setenv("CAIRN_ROOT_PASSWORD", s3Secret)
	srv := startServer(t, data)
	srv.waitReady(readyTimeout)
	c := sdkClient(srv, s3User, s3Secret)
	bucket, key := "appends", "logs/app.log"
	if _, err := c.CreateBucket(callCtx(t), &s3.CreateBucketInput{Bucket: &bucket}); err != nil {
		t.Fatalf("CreateBucket: %v", err)
	}

	const appends = 100
	var model []byte
	var wrote, rewrite int64 // bytes the appends wrote; what rewriting the object each time would have
	var etag string
	for i := range appends {
		chunk := randomBytes(uint64(1000+i), 10_000+(i*997)%30_000)
		before := driveBytesWritten(t, srv)
		out, err := c.PutObject(callCtx(t), &s3.PutObjectInput{Bucket: &bucket, Key: &key,
			WriteOffsetBytes: aws.Int64(int64(len(model))), Body: bytes.NewReader(chunk),
			// Over plain HTTP the SDK sends no checksum unless asked.
			ChecksumAlgorithm: types.ChecksumAlgorithmCrc32})
		if err != nil {
			t.Fatalf("append %d (%d bytes at %d): %v", i, len(chunk), len(model), err)
		}
		delta := driveBytesWritten(t, srv) - before
		model = append(model, chunk...)
		if got := aws.ToInt64(out.Size); got != int64(len(model)) {
			t.Fatalf("append %d: x-amz-object-size %d, want %d", i, got, len(model))
		}
		if aws.ToString(out.ETag) == etag {
			t.Fatalf("append %d kept the ETag %s", i, etag)
		}
		etag = aws.ToString(out.ETag)
		// At most (k+m)/k = 2 times the bytes, with headers and checksums.
		if limit := int64(2*len(chunk) + 64<<10); delta > limit || delta < int64(len(chunk)) {
			t.Fatalf("append %d of %d bytes to a %d-byte object wrote %d bytes to the drives, want %d to %d",
				i, len(chunk), len(model)-len(chunk), delta, len(chunk), limit)
		}
		wrote += delta
		rewrite += int64(len(model))
	}
	t.Logf("%d appends, %d bytes in all: %d bytes written to the drives; rewriting the object each time would have written %d bytes before parity",
		appends, len(model), wrote, rewrite)
	if wrote*10 > rewrite {
		t.Fatalf("the appends wrote %d bytes, not far below the %d a rewrite each time takes", wrote, rewrite)
	}

	get, err := c.GetObject(callCtx(t), &s3.GetObjectInput{Bucket: &bucket, Key: &key, ChecksumMode: types.ChecksumModeEnabled})
	if err != nil {
		t.Fatalf("GetObject: %v", err)
	}
	body, err := io.ReadAll(get.Body) // the SDK checks the CRC32 as it reads
	_ = get.Body.Close()
	if err != nil {
		t.Fatalf("read the appended object: %v", err)
	}
	if !bytes.Equal(body, model) {
		t.Fatalf("appended object: %d bytes differ from the %d appended", len(body), len(model))
	}
	if got := aws.ToString(get.ChecksumCRC32); got != crc32Of(model) {
		t.Fatalf("appended object's CRC32 %q, want %q (of the whole)", got, crc32Of(model))
	}
	if aws.ToInt32(get.PartsCount) != 0 && aws.ToInt32(get.PartsCount) != appends {
		t.Fatalf("parts count %d, want %d", aws.ToInt32(get.PartsCount), appends)
	}

	for _, off := range []int64{int64(len(model)) - 1, int64(len(model)) + 1, 0} {
		_, err := c.PutObject(callCtx(t), &s3.PutObjectInput{Bucket: &bucket, Key: &key,
			WriteOffsetBytes: aws.Int64(off), Body: strings.NewReader("stray")})
		wantAPIError(t, fmt.Sprintf("append at %d of a %d-byte object", off, len(model)), err, "InvalidWriteOffset", 400)
	}
	h, err := c.HeadObject(callCtx(t), &s3.HeadObjectInput{Bucket: &bucket, Key: &key})
	if err != nil || aws.ToInt64(h.ContentLength) != int64(len(model)) || aws.ToString(h.ETag) != etag {
		t.Fatalf("after refused appends: %v, size %d ETag %s; want %d %s", err, aws.ToInt64(h.ContentLength), aws.ToString(h.ETag), len(model), etag)
	}

	// UploadPartCopy of block-aligned ranges (1 MiB blocks) of a source:
	// the parts reference the source's blocks, so nothing is written.
	src := randomBytes(77, 8*mib)
	sdkPut(t, c, bucket, "source.bin", src)
	dst := "copied.bin"
	up, err := c.CreateMultipartUpload(callCtx(t), &s3.CreateMultipartUploadInput{Bucket: &bucket, Key: &dst})
	if err != nil {
		t.Fatalf("CreateMultipartUpload: %v", err)
	}
	ranges := [][2]int{{mib, 7 * mib}, {0, mib}}
	before := driveBytesWritten(t, srv)
	var parts []types.CompletedPart
	var want []byte
	for i, r := range ranges {
		out, err := c.UploadPartCopy(callCtx(t), &s3.UploadPartCopyInput{Bucket: &bucket, Key: &dst, UploadId: up.UploadId,
			PartNumber: aws.Int32(int32(i + 1)), CopySource: aws.String(bucket + "/source.bin"),
			CopySourceRange: aws.String(fmt.Sprintf("bytes=%d-%d", r[0], r[1]-1))})
		if err != nil {
			t.Fatalf("UploadPartCopy %d: %v", i+1, err)
		}
		parts = append(parts, types.CompletedPart{ETag: out.CopyPartResult.ETag, PartNumber: aws.Int32(int32(i + 1))})
		want = append(want, src[r[0]:r[1]]...)
	}
	if _, err := c.CompleteMultipartUpload(callCtx(t), &s3.CompleteMultipartUploadInput{Bucket: &bucket, Key: &dst, UploadId: up.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}}); err != nil {
		t.Fatalf("CompleteMultipartUpload: %v", err)
	}
	delta := driveBytesWritten(t, srv) - before
	t.Logf("UploadPartCopy of %d bytes and complete: %d bytes written to the drives", len(want), delta)
	if delta >= 64<<10 {
		t.Fatalf("UploadPartCopy of %d block-aligned bytes wrote %d bytes to the drives: copied, not referenced", len(want), delta)
	}
	if got := sdkGet(t, c, bucket, dst, ""); !bytes.Equal(got, want) {
		t.Fatalf("the copied object differs from the ranges of its source")
	}
	if _, err := c.DeleteObject(callCtx(t), &s3.DeleteObjectInput{Bucket: &bucket, Key: aws.String("source.bin")}); err != nil {
		t.Fatalf("DeleteObject source: %v", err)
	}
	if got := sdkGet(t, c, bucket, dst, ""); !bytes.Equal(got, want) {
		t.Fatalf("the copied object differs once its source is deleted")
	}

	if code := srv.stop(stopTimeout); code != 0 {
		t.Fatalf("cairn serve exited %d after SIGTERM", code)
	}
	if r := runCairn(t, runTimeout, "admin", "fsck", "--data", data); r.code != 0 {
		t.Fatalf("fsck after the appends exited %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
}
