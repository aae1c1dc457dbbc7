package integration

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// TestFSEncryptedObjects checks that the mount never serves the ciphertext
// of an object S3 stored encrypted: reading it, or writing it in part, is
// EACCES with a log line saying how to read it, and leaves it intact;
// replacing it whole (O_TRUNC) writes a plain object; unencrypted objects
// read as ever.
func TestFSEncryptedObjects(t *testing.T) {
	dir := t.TempDir()
	mk := filepath.Join(dir, "master.key")
	if err := os.WriteFile(mk, []byte(sseMasterA+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	mnt := t.TempDir()
	srv := startMountAt(t, t.TempDir(), mnt, "--sse-master-key-file", mk)
	c := fsClient(srv)
	const bucket = "sealed"
	bdir := fsBucket(t, c, mnt, bucket)
	plain, secret := []byte("plain bytes\n"), []byte("secret bytes, never on the mount\n")
	put := func(key string, in *s3.PutObjectInput) {
		t.Helper()
		in.Bucket, in.Key, in.Body = aws.String(bucket), aws.String(key), bytes.NewReader(secret)
		if _, err := c.PutObject(callCtx(t), in); err != nil {
			t.Fatalf("PUT %s: %v", key, err)
		}
	}
	fsPut(t, c, bucket, "plain.txt", plain, nil)
	put("s3.txt", &s3.PutObjectInput{ServerSideEncryption: types.ServerSideEncryptionAes256})
	k := newSSECKey(7)
	put("c.txt", &s3.PutObjectInput{SSECustomerAlgorithm: k.algo, SSECustomerKey: k.key, SSECustomerKeyMD5: k.md5})
	fsReadEventually(t, "the plain object", filepath.Join(bdir, "plain.txt"), plain)

	for _, name := range []string{"s3.txt", "c.txt"} {
		p := filepath.Join(bdir, name)
		t.Run(name, func(t *testing.T) {
			fsEventually(t, name+" listed", func() error { _, err := os.Lstat(p); return err })
			if got, err := os.ReadFile(p); !errors.Is(err, syscall.EACCES) {
				t.Fatalf("read of an encrypted object: %d bytes, %v; want EACCES", len(got), err)
			}
			// The kernel sends O_TRUNC as a truncation after the open, so
			// opening for writing succeeds; the first write that needs
			// the old bytes is refused.
			f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatalf("open for append: %v", err)
			}
			if _, err := f.Write([]byte("appended")); !errors.Is(err, syscall.EACCES) {
				t.Errorf("append to an encrypted object: %v; want EACCES", err)
			}
			_ = f.Close()
			if got := sseRead(t, c, getInput(bucket, name, name == "c.txt", k)); !bytes.Equal(got, secret) {
				t.Fatalf("S3 GET after the refusals read %q", got)
			}
		})
	}
	if log := srv.stderr.String(); !strings.Contains(log, "the mount does not decrypt") {
		t.Fatalf("no log line says why the reads were refused:\n%s", tail(log, 20))
	}

	t.Run("replaced whole", func(t *testing.T) {
		p := filepath.Join(bdir, "s3.txt")
		fresh := []byte("written on the mount\n")
		if err := os.WriteFile(p, fresh, 0o644); err != nil { // O_TRUNC: nothing of the old bytes is read
			t.Fatalf("overwrite of an encrypted object: %v", err)
		}
		if got, err := os.ReadFile(p); err != nil || !bytes.Equal(got, fresh) {
			t.Fatalf("read back %q, %v", got, err)
		}
		h := fsHead(t, c, bucket, "s3.txt")
		if h.ServerSideEncryption != "" || aws.ToInt64(h.ContentLength) != int64(len(fresh)) {
			t.Fatalf("HEAD after the overwrite: encryption %q, %d bytes", h.ServerSideEncryption, aws.ToInt64(h.ContentLength))
		}
	})
}

// getInput is GetObject of bucket/key, with SSE-C key k when sseC.
func getInput(bucket, key string, sseC bool, k ssecKey) *s3.GetObjectInput {
	in := &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)}
	if sseC {
		in.SSECustomerAlgorithm, in.SSECustomerKey, in.SSECustomerKeyMD5 = k.algo, k.key, k.md5
	}
	return in
}
