package objstore

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"slices"
	"strconv"
	"testing"
	"testing/iotest"
)

func md5hex(b []byte) string {
	s := md5.Sum(b)
	return hex.EncodeToString(s[:])
}

// multipartETag computes the S3 multipart ETag independently of the store:
// the MD5 of the concatenated binary part MD5s, then "-N".
func multipartETag(parts ...[]byte) string {
	var cat []byte
	for _, p := range parts {
		s := md5.Sum(p)
		cat = append(cat, s[:]...)
	}
	return md5hex(cat) + "-" + strconv.Itoa(len(parts))
}

func mustCreateUpload(t testing.TB, s *Store, bucket, key string, opt PutOptions) string {
	t.Helper()
	id, err := s.CreateMultipartUpload(context.Background(), bucket, key, opt)
	if err != nil {
		t.Fatalf("create upload %s: %v", key, err)
	}
	if id == "" {
		t.Fatal("empty upload id")
	}
	return id
}

func mustPutPart(t testing.TB, s *Store, bucket, key, id string, n int, data []byte) PartInfo {
	t.Helper()
	p, err := s.PutPart(context.Background(), bucket, key, id, n, bytes.NewReader(data), int64(len(data)), PartOptions{})
	if err != nil {
		t.Fatalf("put part %d: %v", n, err)
	}
	if p.Number != n || p.Size != int64(len(data)) || p.ETag != md5hex(data) {
		t.Fatalf("part %d: %+v, want size %d ETag %s", n, p, len(data), md5hex(data))
	}
	return p
}

func TestMultipartComplete(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, opt := newTestStore(t, 4, 2)
	mustBucket(t, s, "mpu")
	id := mustCreateUpload(t, s, "mpu", "dir/obj", PutOptions{ContentType: "text/plain", Meta: map[string]string{"x-amz-meta-a": "1"}})

	data := [][]byte{randBytes(100<<10, 1), randBytes(70<<10, 2), randBytes(5, 3)}
	// Out of order, part 2 twice (the second replaces the first), and an
	// extra part 4 that the complete leaves out.
	mustPutPart(t, s, "mpu", "dir/obj", id, 3, data[2])
	mustPutPart(t, s, "mpu", "dir/obj", id, 2, randBytes(1000, 99))
	mustPutPart(t, s, "mpu", "dir/obj", id, 1, data[0])
	mustPutPart(t, s, "mpu", "dir/obj", id, 2, data[1])
	mustPutPart(t, s, "mpu", "dir/obj", id, 4, randBytes(3000, 4))
	mustClean(t, s) // frees the replaced part 2
	if got := shardFileCount(t, opt); got != 4*4 {
		t.Fatalf("4 live parts on 4 drives: %d shard files", got)
	}

	parts, truncated, err := s.ListParts(ctx, "mpu", "dir/obj", id, 0, 0)
	if err != nil || truncated {
		t.Fatalf("list parts: %v truncated %v", err, truncated)
	}
	wantParts := []PartInfo{
		{Number: 1, ETag: md5hex(data[0]), Size: int64(len(data[0]))},
		{Number: 2, ETag: md5hex(data[1]), Size: int64(len(data[1]))},
		{Number: 3, ETag: md5hex(data[2]), Size: int64(len(data[2]))},
		{Number: 4, ETag: md5hex(randBytes(3000, 4)), Size: 3000},
	}
	if len(parts) != len(wantParts) {
		t.Fatalf("list parts: %+v", parts)
	}
	for i, p := range parts {
		if p.Number != wantParts[i].Number || p.ETag != wantParts[i].ETag || p.Size != wantParts[i].Size {
			t.Errorf("part %d: %+v, want %+v", i, p, wantParts[i])
		}
	}
	// Paging the part list with a marker.
	page, truncated, err := s.ListParts(ctx, "mpu", "dir/obj", id, 1, 2)
	if err != nil || !truncated || len(page) != 2 || page[0].Number != 2 || page[1].Number != 3 {
		t.Fatalf("list parts after 1, max 2: %+v truncated %v err %v", page, truncated, err)
	}

	// Invisible before complete.
	if _, err := s.Head(ctx, "mpu", "dir/obj", GetOptions{}); !errors.Is(err, ErrNoSuchKey) {
		t.Fatalf("head before complete: %v, want ErrNoSuchKey", err)
	}
	if p, err := s.List(ctx, "mpu", ListOptions{}); err != nil || len(p.Objects) != 0 {
		t.Fatalf("list before complete: %+v %v", p.Objects, err)
	}

	info, err := s.CompleteMultipartUpload(ctx, "mpu", "dir/obj", id, []CompletePart{
		{Number: 1, ETag: parts[0].ETag}, {Number: 2, ETag: `"` + parts[1].ETag + `"`}, {Number: 3, ETag: parts[2].ETag},
	}, PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	whole := slices.Concat(data...)
	wantETag := multipartETag(data...)
	if info.ETag != wantETag || info.Size != int64(len(whole)) || info.PartsCount != 3 {
		t.Fatalf("complete: %+v, want ETag %s size %d 3 parts", info, wantETag, len(whole))
	}
	if got := readAll(t, s, "mpu", "dir/obj", GetOptions{}); !bytes.Equal(got, whole) {
		t.Fatal("completed object differs from the concatenated parts")
	}
	h := mustHead(t, s, "mpu", "dir/obj", GetOptions{})
	if h.ETag != wantETag || h.ContentType != "text/plain" || h.Meta["x-amz-meta-a"] != "1" || h.PartsCount != 3 {
		t.Fatalf("head: %+v", h)
	}
	r, err := s.Open(ctx, "mpu", "dir/obj", GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := iotest.TestReader(r, whole); err != nil {
		t.Error(err)
	}
	r.Close()

	// The upload is gone.
	if _, _, err := s.ListParts(ctx, "mpu", "dir/obj", id, 0, 0); !errors.Is(err, ErrNoSuchUpload) {
		t.Errorf("list parts after complete: %v, want ErrNoSuchUpload", err)
	}
	if _, err := s.CompleteMultipartUpload(ctx, "mpu", "dir/obj", id, []CompletePart{{Number: 1, ETag: parts[0].ETag}}, PutOptions{}); !errors.Is(err, ErrNoSuchUpload) {
		t.Errorf("complete twice: %v, want ErrNoSuchUpload", err)
	}
	if err := s.AbortMultipartUpload(ctx, "mpu", "dir/obj", id); !errors.Is(err, ErrNoSuchUpload) {
		t.Errorf("abort after complete: %v, want ErrNoSuchUpload", err)
	}
	if ups, _, err := s.ListMultipartUploads(ctx, "mpu", ListUploadsOptions{}); err != nil || len(ups) != 0 {
		t.Errorf("uploads after complete: %+v %v", ups, err)
	}
	// Part 4 was not listed: its shards go.
	mustClean(t, s)
	if got := shardFileCount(t, opt); got != 3*4 {
		t.Fatalf("after complete and Clean: %d shard files, want %d", got, 3*4)
	}
}

func TestMultipartCompleteErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := newTestStore(t, 4, 2)
	mustBucket(t, s, "mpe")
	d1, d2, d3 := randBytes(10, 1), randBytes(10, 2), randBytes(5, 3)
	e1, e2, e3 := md5hex(d1), md5hex(d2), md5hex(d3)
	for _, tc := range []struct {
		name   string
		parts  []CompletePart
		want   error
		partNo int // the PartError's number; 0 when the error is no PartError
	}{
		{"wrong etag", []CompletePart{{Number: 1, ETag: e1}, {Number: 2, ETag: e1}, {Number: 3, ETag: e3}}, ErrInvalidPart, 2},
		{"part not uploaded", []CompletePart{{Number: 1, ETag: e1}, {Number: 5, ETag: e3}}, ErrInvalidPart, 5},
		{"out of order", []CompletePart{{Number: 2, ETag: e2}, {Number: 1, ETag: e1}}, ErrInvalidPartOrder, 1},
		{"duplicate", []CompletePart{{Number: 1, ETag: e1}, {Number: 1, ETag: e1}, {Number: 3, ETag: e3}}, ErrInvalidPartOrder, 1},
		{"part 0", []CompletePart{{Number: 0, ETag: e1}, {Number: 1, ETag: e1}}, ErrInvalidPartNumber, 0},
		{"part 10001", []CompletePart{{Number: 1, ETag: e1}, {Number: 10001, ETag: e1}}, ErrInvalidPartNumber, 10001},
		{"no parts", nil, ErrInvalidPart, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := "k/" + tc.name
			id := mustCreateUpload(t, s, "mpe", key, PutOptions{})
			mustPutPart(t, s, "mpe", key, id, 1, d1)
			mustPutPart(t, s, "mpe", key, id, 2, d2)
			mustPutPart(t, s, "mpe", key, id, 3, d3)
			_, err := s.CompleteMultipartUpload(ctx, "mpe", key, id, tc.parts, PutOptions{})
			if !errors.Is(err, tc.want) {
				t.Fatalf("complete: %v, want %v", err, tc.want)
			}
			var pe *PartError
			switch {
			case tc.partNo > 0 && (!errors.As(err, &pe) || pe.Number != tc.partNo):
				t.Errorf("complete: %v, want a *PartError for part %d", err, tc.partNo)
			case tc.partNo == 0 && !errors.As(err, &pe):
				t.Errorf("complete: %v, want a *PartError", err)
			}
			// A refused complete changes nothing.
			if _, err := s.Head(ctx, "mpe", key, GetOptions{}); !errors.Is(err, ErrNoSuchKey) {
				t.Errorf("head after a failed complete: %v", err)
			}
			if ps, _, err := s.ListParts(ctx, "mpe", key, id, 0, 0); err != nil || len(ps) != 3 {
				t.Errorf("parts after a failed complete: %+v %v", ps, err)
			}
			info, err := s.CompleteMultipartUpload(ctx, "mpe", key, id, []CompletePart{{Number: 1, ETag: e1}, {Number: 2, ETag: e2}, {Number: 3, ETag: e3}}, PutOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if info.ETag != multipartETag(d1, d2, d3) {
				t.Errorf("ETag %s, want %s", info.ETag, multipartETag(d1, d2, d3))
			}
		})
	}

	// Requests naming a wrong upload.
	id := mustCreateUpload(t, s, "mpe", "real", PutOptions{})
	mustPutPart(t, s, "mpe", "real", id, 1, d1)
	for _, tc := range []struct {
		name, bucket, key, id string
		want                  error
	}{
		{"unknown id", "mpe", "real", "00000000000000000000000000000000", ErrNoSuchUpload},
		{"other key", "mpe", "other", id, ErrNoSuchUpload},
		{"missing bucket", "nope", "real", id, ErrNoSuchBucket},
		{"invalid key", "mpe", "", id, ErrInvalidKey},
	} {
		if _, err := s.CompleteMultipartUpload(ctx, tc.bucket, tc.key, tc.id, []CompletePart{{Number: 1, ETag: e1}}, PutOptions{}); !errors.Is(err, tc.want) {
			t.Errorf("complete, %s: %v, want %v", tc.name, err, tc.want)
		}
		if _, err := s.PutPart(ctx, tc.bucket, tc.key, tc.id, 1, bytes.NewReader(d1), 10, PartOptions{}); !errors.Is(err, tc.want) {
			t.Errorf("put part, %s: %v, want %v", tc.name, err, tc.want)
		}
		if _, _, err := s.ListParts(ctx, tc.bucket, tc.key, tc.id, 0, 0); tc.key != "" && !errors.Is(err, tc.want) {
			t.Errorf("list parts, %s: %v, want %v", tc.name, err, tc.want)
		}
	}
	if err := s.AbortMultipartUpload(ctx, "mpe", "real", id); err != nil {
		t.Fatal(err)
	}
}

func TestPutPartErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, opt := newTestStore(t, 4, 2)
	mustBucket(t, s, "ppe")
	id := mustCreateUpload(t, s, "ppe", "k", PutOptions{})
	body := []byte("hello")
	sum := md5.Sum(body)
	for _, tc := range []struct {
		name string
		n    int
		md5  []byte
		size int64
		want error
	}{
		{"part 0", 0, nil, 5, ErrInvalidPartNumber},
		{"part -1", -1, nil, 5, ErrInvalidPartNumber},
		{"part 10001", 10001, nil, 5, ErrInvalidPartNumber},
		{"bad digest", 1, make([]byte, 16), 5, ErrBadDigest},
		{"short body", 1, nil, 6, ErrIncompleteBody},
		{"part 10000", 10000, sum[:], 5, nil},
		{"part 1", 1, sum[:], 5, nil},
	} {
		_, err := s.PutPart(ctx, "ppe", "k", id, tc.n, bytes.NewReader(body), tc.size, PartOptions{ContentMD5: tc.md5})
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	if _, err := s.CopyPart(ctx, "ppe", "k", id, 0, "ppe", "k", "", 0, -1); !errors.Is(err, ErrInvalidPartNumber) {
		t.Errorf("copy part 0: %v, want ErrInvalidPartNumber", err)
	}
	if _, err := s.CopyPart(ctx, "ppe", "k", id, 10001, "ppe", "k", "", 0, -1); !errors.Is(err, ErrInvalidPartNumber) {
		t.Errorf("copy part 10001: %v, want ErrInvalidPartNumber", err)
	}
	if got := shardFileCount(t, opt); got != 2*4 {
		t.Errorf("refused parts left shard files: %d, want %d", got, 2*4)
	}
	info, err := s.CompleteMultipartUpload(ctx, "ppe", "k", id, []CompletePart{{Number: 1, ETag: md5hex(body)}, {Number: 10000, ETag: md5hex(body)}}, PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if info.ETag != multipartETag(body, body) {
		t.Errorf("ETag %s, want %s", info.ETag, multipartETag(body, body))
	}
}

func TestMultipartEntityTooSmall(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := newTestStore(t, 4, 2, func(o *Options) { o.MinPartSize = 5 << 20 })
	mustBucket(t, s, "small")
	id := mustCreateUpload(t, s, "small", "k", PutOptions{})
	small1, last := randBytes(1<<10, 1), randBytes(1<<10, 2)
	p1 := mustPutPart(t, s, "small", "k", id, 1, small1)
	p2 := mustPutPart(t, s, "small", "k", id, 2, last)
	_, err := s.CompleteMultipartUpload(ctx, "small", "k", id, []CompletePart{{Number: 1, ETag: p1.ETag}, {Number: 2, ETag: p2.ETag}}, PutOptions{})
	var pe *PartError
	if !errors.Is(err, ErrEntityTooSmall) || !errors.As(err, &pe) || pe.Number != 1 {
		t.Fatalf("complete with a small first part: %v, want *PartError{1} wrapping ErrEntityTooSmall", err)
	}
	// The last part may be small; a first part of exactly the minimum is
	// enough.
	big := randBytes(5<<20, 3)
	p1 = mustPutPart(t, s, "small", "k", id, 1, big)
	info, err := s.CompleteMultipartUpload(ctx, "small", "k", id, []CompletePart{{Number: 1, ETag: p1.ETag}, {Number: 2, ETag: p2.ETag}}, PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if info.ETag != multipartETag(big, last) {
		t.Fatalf("ETag %s, want %s", info.ETag, multipartETag(big, last))
	}
	if got := readAll(t, s, "small", "k", GetOptions{}); !bytes.Equal(got, slices.Concat(big, last)) {
		t.Fatal("content differs")
	}
	// A single small part is the last part.
	id2 := mustCreateUpload(t, s, "small", "one", PutOptions{})
	p := mustPutPart(t, s, "small", "one", id2, 7, small1)
	if _, err := s.CompleteMultipartUpload(ctx, "small", "one", id2, []CompletePart{{Number: 7, ETag: p.ETag}}, PutOptions{}); err != nil {
		t.Fatalf("single small part: %v", err)
	}
}

func TestMultipartAbort(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, opt := newTestStore(t, 4, 2)
	mustBucket(t, s, "abort")
	mustPut(t, s, "abort", "k", []byte("existing"))
	base := shardFileCount(t, opt)
	id := mustCreateUpload(t, s, "abort", "k", PutOptions{})
	mustPutPart(t, s, "abort", "k", id, 1, randBytes(100<<10, 1))
	p2 := mustPutPart(t, s, "abort", "k", id, 2, randBytes(10, 2))
	if got := shardFileCount(t, opt); got != base+2*4 {
		t.Fatalf("two parts: %d shard files, want %d", got, base+8)
	}
	if err := s.AbortMultipartUpload(ctx, "abort", "k", "not-an-upload"); !errors.Is(err, ErrNoSuchUpload) {
		t.Fatalf("abort unknown: %v", err)
	}
	if err := s.AbortMultipartUpload(ctx, "abort", "k", id); err != nil {
		t.Fatal(err)
	}
	for name, err := range map[string]error{
		"abort again": s.AbortMultipartUpload(ctx, "abort", "k", id),
		"put part": func() error {
			_, err := s.PutPart(ctx, "abort", "k", id, 3, bytes.NewReader([]byte("x")), 1, PartOptions{})
			return err
		}(),
		"list parts": func() error { _, _, err := s.ListParts(ctx, "abort", "k", id, 0, 0); return err }(),
		"complete": func() error {
			_, err := s.CompleteMultipartUpload(ctx, "abort", "k", id, []CompletePart{{Number: 2, ETag: p2.ETag}}, PutOptions{})
			return err
		}(),
	} {
		if !errors.Is(err, ErrNoSuchUpload) {
			t.Errorf("%s after abort: %v, want ErrNoSuchUpload", name, err)
		}
	}
	if got := readAll(t, s, "abort", "k", GetOptions{}); string(got) != "existing" {
		t.Fatalf("abort touched the current object: %q", got)
	}
	mustClean(t, s)
	if got := shardFileCount(t, opt); got != base {
		t.Fatalf("after abort and Clean: %d shard files, want %d", got, base)
	}
	if err := s.DeleteBucket(ctx, "abort"); !errors.Is(err, ErrBucketNotEmpty) {
		t.Fatalf("delete bucket: %v", err)
	}
}
