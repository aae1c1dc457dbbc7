package integration

// More of TestS3Minio's subtests: presigned URLs, versioning, batch
// deletes, error answers and checksums.

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	miniocreds "github.com/minio/minio-go/v7/pkg/credentials"
)

func minioPresigned(t *testing.T, srv *server, c *minio.Client, bucket string) {
	key := "pre/signed key"
	body := []byte("presigned by minio-go")
	// Presigned first, checked last: it expires in one second.
	short, err := c.PresignedGetObject(callCtx(t), bucket, key, time.Second, nil)
	if err != nil {
		t.Fatalf("PresignedGetObject: %v", err)
	}
	madeAt := time.Now()

	put, err := c.PresignedPutObject(callCtx(t), bucket, key, 10*time.Minute)
	if err != nil {
		t.Fatalf("PresignedPutObject: %v", err)
	}
	if res := doRaw(t, newRaw(t, http.MethodPut, put.String(), body)); res.status != http.StatusOK {
		t.Fatalf("presigned PUT: %d %s\n%s", res.status, res.code, res.body)
	}
	get, err := c.PresignedGetObject(callCtx(t), bucket, key, 10*time.Minute, url.Values{"response-content-disposition": {"attachment"}})
	if err != nil {
		t.Fatalf("PresignedGetObject: %v", err)
	}
	res := doRaw(t, newRaw(t, http.MethodGet, get.String(), nil))
	if res.status != http.StatusOK || !bytes.Equal(res.body, body) || res.header.Get("Content-Disposition") != "attachment" {
		t.Fatalf("presigned GET: %d %q disposition %q", res.status, res.body, res.header.Get("Content-Disposition"))
	}
	head, err := c.PresignedHeadObject(callCtx(t), bucket, key, 10*time.Minute, nil)
	if err != nil {
		t.Fatalf("PresignedHeadObject: %v", err)
	}
	res = doRaw(t, newRaw(t, http.MethodHead, head.String(), nil))
	if res.status != http.StatusOK || res.header.Get("Content-Length") != fmt.Sprint(len(body)) {
		t.Fatalf("presigned HEAD: %d length %q", res.status, res.header.Get("Content-Length"))
	}
	// A presigned GET does not allow a PUT.
	if res := doRaw(t, newRaw(t, http.MethodPut, get.String(), body)); res.status != 403 || res.code != "SignatureDoesNotMatch" {
		t.Errorf("PUT on a presigned GET URL: %d %q, want 403 SignatureDoesNotMatch", res.status, res.code)
	}

	time.Sleep(time.Until(madeAt.Add(2100 * time.Millisecond)))
	if res := doRaw(t, newRaw(t, http.MethodGet, short.String(), nil)); res.status != 403 || res.code != "AccessDenied" {
		t.Errorf("expired presigned GET: %d %q, want 403 AccessDenied\n%s", res.status, res.code, res.body)
	}
}

func minioVersioning(t *testing.T, srv *server, c *minio.Client, bucket string) {
	if err := c.EnableVersioning(callCtx(t), bucket); err != nil {
		t.Fatalf("EnableVersioning: %v", err)
	}
	cfg, err := c.GetBucketVersioning(callCtx(t), bucket)
	if err != nil || !cfg.Enabled() {
		t.Fatalf("GetBucketVersioning: %v %+v", err, cfg)
	}
	var ids []string
	for i := range 3 {
		info := minioPut(t, c, bucket, "v", []byte(fmt.Sprintf("v%d", i)), minio.PutObjectOptions{})
		if info.VersionID == "" {
			t.Fatalf("PutObject %d: no version id", i)
		}
		ids = append(ids, info.VersionID)
	}
	for i, id := range ids {
		got, err := minioRead(callCtx(t), c, bucket, "v", minio.GetObjectOptions{VersionID: id})
		if err != nil || string(got) != fmt.Sprintf("v%d", i) {
			t.Errorf("GetObject version %d: %v %q", i, err, got)
		}
	}
	if err := c.RemoveObject(callCtx(t), bucket, "v", minio.RemoveObjectOptions{}); err != nil {
		t.Fatalf("RemoveObject: %v", err)
	}
	_, err = c.StatObject(callCtx(t), bucket, "v", minio.StatObjectOptions{})
	wantMinioError(t, "StatObject behind a delete marker", err, "NoSuchKey", 404)

	type entry struct {
		id     string
		latest bool
		marker bool
	}
	list := func() []entry {
		var out []entry
		ctx := callCtx(t)
		for o := range c.ListObjects(ctx, bucket, minio.ListObjectsOptions{WithVersions: true, Recursive: true}) {
			if o.Err != nil {
				t.Fatalf("ListObjects versions: %v", o.Err)
			}
			out = append(out, entry{o.VersionID, o.IsLatest, o.IsDeleteMarker})
		}
		return out
	}
	got := list()
	if len(got) != 4 || !got[0].marker || !got[0].latest || got[1].id != ids[2] || got[3].id != ids[0] || got[1].latest {
		t.Fatalf("versions after delete: %+v", got)
	}
	if err := c.RemoveObject(callCtx(t), bucket, "v", minio.RemoveObjectOptions{VersionID: got[0].id}); err != nil {
		t.Fatalf("RemoveObject marker: %v", err)
	}
	if err := c.RemoveObject(callCtx(t), bucket, "v", minio.RemoveObjectOptions{VersionID: ids[0]}); err != nil {
		t.Fatalf("RemoveObject version: %v", err)
	}
	got = list()
	if len(got) != 2 || got[0].id != ids[2] || !got[0].latest || got[1].id != ids[1] {
		t.Fatalf("versions at the end: %+v", got)
	}
	_, err = minioRead(callCtx(t), c, bucket, "v", minio.GetObjectOptions{VersionID: ids[0]})
	wantMinioError(t, "GetObject removed version", err, "NoSuchVersion", 404)
}

func minioRemoveObjects(t *testing.T, srv *server, c *minio.Client, bucket string) {
	var keys []string
	for i := range 20 {
		k := fmt.Sprintf("rm/%02d", i)
		minioPut(t, c, bucket, k, []byte(k), minio.PutObjectOptions{})
		keys = append(keys, k)
	}
	ch := make(chan minio.ObjectInfo, len(keys)+1)
	for _, k := range keys {
		ch <- minio.ObjectInfo{Key: k}
	}
	ch <- minio.ObjectInfo{Key: "rm/never-existed"}
	close(ch)
	var removed []string
	for r := range c.RemoveObjectsWithResult(callCtx(t), bucket, ch, minio.RemoveObjectsOptions{}) {
		if r.Err != nil {
			t.Fatalf("RemoveObjects %s: %v", r.ObjectName, r.Err)
		}
		removed = append(removed, r.ObjectName)
	}
	if len(removed) != len(keys)+1 {
		t.Fatalf("RemoveObjects reported %d keys, want %d", len(removed), len(keys)+1)
	}
	for o := range c.ListObjects(callCtx(t), bucket, minio.ListObjectsOptions{Recursive: true}) {
		t.Fatalf("ListObjects after RemoveObjects: %s %v", o.Key, o.Err)
	}
}

func minioErrors(t *testing.T, srv *server, c *minio.Client, bucket string) {
	minioPut(t, c, bucket, "exists", []byte("x"), minio.PutObjectOptions{})
	anon, err := minio.New(srv.addr, &minio.Options{Creds: miniocreds.NewStaticV4("", "", ""), BucketLookup: minio.BucketLookupPath, Region: s3Region, MaxRetries: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		call   func() error
		code   string
		status int
	}{
		{"wrong secret", func() error {
			_, err := minioRead(callCtx(t), minioClient(t, srv, s3User, "wrong"), bucket, "exists", minio.GetObjectOptions{})
			return err
		}, "SignatureDoesNotMatch", 403},
		{"wrong secret on streaming put", func() error {
			_, err := minioClient(t, srv, s3User, "wrong").PutObject(callCtx(t), bucket, "nope", strings.NewReader("data"), 4, minio.PutObjectOptions{})
			return err
		}, "SignatureDoesNotMatch", 403},
		{"unknown access key", func() error {
			_, err := minioRead(callCtx(t), minioClient(t, srv, "AKIDUNKNOWN", s3Secret), bucket, "exists", minio.GetObjectOptions{})
			return err
		}, "InvalidAccessKeyId", 403},
		{"anonymous", func() error {
			_, err := minioRead(callCtx(t), anon, bucket, "exists", minio.GetObjectOptions{})
			return err
		}, "AccessDenied", 403},
		// (minio-go refuses keys over 1024 bytes itself: see TestS3SDK/Errors.)
		{"no such bucket", func() error {
			_, err := minioRead(callCtx(t), c, "minio-absent", "k", minio.GetObjectOptions{})
			return err
		}, "NoSuchBucket", 404},
		{"bucket notification", func() error {
			_, err := c.GetBucketNotification(callCtx(t), bucket)
			return err
		}, "NotImplemented", 501},
	} {
		t.Run(tc.name, func(t *testing.T) { wantMinioError(t, tc.name, tc.call(), tc.code, tc.status) })
	}
}

func minioChecksums(t *testing.T, srv *server, c *minio.Client, bucket string) {
	// Trailing checksums need a client that announces trailer support.
	tc, err := minio.New(srv.addr, &minio.Options{Creds: miniocreds.NewStaticV4(s3User, s3Secret, ""), BucketLookup: minio.BucketLookupPath,
		Region: s3Region, MaxRetries: 1, TrailingHeaders: true})
	if err != nil {
		t.Fatal(err)
	}
	body := randomBytes(77, 200_000)
	want := base64.StdEncoding.EncodeToString(binary.BigEndian.AppendUint32(nil, crc32.Checksum(body, crc32.MakeTable(crc32.Castagnoli))))
	t.Run("trailer", func(t *testing.T) {
		key := "sum/trailer"
		info, err := tc.PutObject(callCtx(t), bucket, key, bytes.NewReader(body), int64(len(body)),
			minio.PutObjectOptions{Checksum: minio.ChecksumCRC32C, DisableMultipart: true})
		if err != nil {
			t.Fatalf("PutObject: %v", err)
		}
		if info.ChecksumCRC32C != want {
			t.Errorf("PutObject checksum %q, want %q", info.ChecksumCRC32C, want)
		}
		st, err := c.StatObject(callCtx(t), bucket, key, minio.StatObjectOptions{Checksum: true})
		if err != nil || st.ChecksumCRC32C != want {
			t.Fatalf("StatObject checksum: %v %q, want %q", err, st.ChecksumCRC32C, want)
		}
		got, err := minioRead(callCtx(t), c, bucket, key, minio.GetObjectOptions{Checksum: true})
		if err != nil || !bytes.Equal(got, body) {
			t.Fatalf("GetObject with checksum: %v, %d bytes", err, len(got))
		}
		opt := minio.GetObjectOptions{Checksum: true}
		_ = opt.SetRange(10, 99)
		got, err = minioRead(callCtx(t), c, bucket, key, opt)
		if err != nil || !bytes.Equal(got, body[10:100]) {
			t.Fatalf("ranged GetObject with checksum: %v, %d bytes", err, len(got))
		}
	})
	t.Run("trailer multipart", func(t *testing.T) {
		big := randomBytes(78, 11*mib)
		if _, err := tc.PutObject(callCtx(t), bucket, "sum/multipart", bytes.NewReader(big), int64(len(big)),
			minio.PutObjectOptions{Checksum: minio.ChecksumCRC32C, PartSize: 5 * mib}); err != nil {
			t.Fatalf("PutObject: %v", err)
		}
		got, err := minioRead(callCtx(t), c, bucket, "sum/multipart", minio.GetObjectOptions{Checksum: true})
		if err != nil || !bytes.Equal(got, big) {
			t.Fatalf("GetObject with checksum: %v, %d bytes", err, len(got))
		}
	})
}
