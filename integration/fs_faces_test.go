package integration

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/pkg/xattr"
	"golang.org/x/sys/unix"
)

// fsHead is HeadObject of bucket/key.
func fsHead(t *testing.T, c *s3.Client, bucket, key string) *s3.HeadObjectOutput {
	t.Helper()
	h, err := c.HeadObject(callCtx(t), &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		t.Fatalf("HeadObject %s/%s: %v", bucket, key, err)
	}
	return h
}

// fsReadEventually polls until the file at p holds want.
func fsReadEventually(t *testing.T, what, p string, want []byte) time.Duration {
	t.Helper()
	start := time.Now()
	fsEventually(t, what, func() error {
		got, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if !bytes.Equal(got, want) {
			return fmt.Errorf("read %d bytes (md5 %s), want %d (md5 %s)", len(got), md5hex(got), len(want), md5hex(want))
		}
		return nil
	})
	return time.Since(start)
}

// TestFSXattr maps user.* extended attributes to S3 user metadata both
// ways, exposes the ETag as the read-only user.cairn.etag, and keeps
// directory attributes in the directory's marker.
func TestFSXattr(t *testing.T) {
	srv, mnt := startMount(t)
	c := fsClient(srv)
	const bucket = "xattrs"
	dir := fsBucket(t, c, mnt, bucket)
	f := filepath.Join(dir, "x.txt")
	content := []byte("extended attributes\n")
	if err := os.WriteFile(f, content, 0o644); err != nil {
		t.Fatal(err)
	}

	t.Run("set on the mount, seen over S3", func(t *testing.T) {
		if err := xattr.Set(f, "user.color", []byte("blue")); err != nil {
			t.Fatalf("setxattr user.color: %v", err)
		}
		h := fsHead(t, c, bucket, "x.txt")
		if h.Metadata["color"] != "blue" {
			t.Errorf("HeadObject metadata %v, want color=blue", h.Metadata)
		}
		if got := fsGet(t, c, bucket, "x.txt"); !bytes.Equal(got, content) {
			t.Errorf("setxattr changed the content: %q", got)
		}
		v, err := xattr.Get(f, "user.color")
		if err != nil || string(v) != "blue" {
			t.Errorf("getxattr user.color: %q %v", v, err)
		}
	})

	// close(2) returns after FLUSH; the kernel sends RELEASE afterwards,
	// asynchronously. A setxattr right after close must still be on S3
	// when it returns.
	t.Run("setxattr right after close, repeated", func(t *testing.T) {
		const n = 100
		var late, lost []string
		for i := range n {
			key := fmt.Sprintf("race/%03d", i)
			p := filepath.Join(dir, key)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(key), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := xattr.Set(p, "user.n", []byte(key)); err != nil {
				t.Fatalf("setxattr %s: %v", key, err)
			}
			if fsHead(t, c, bucket, key).Metadata["n"] == key {
				continue
			}
			start := time.Now()
			for time.Since(start) < fsVisible && fsHead(t, c, bucket, key).Metadata["n"] != key {
				time.Sleep(10 * time.Millisecond)
			}
			if fsHead(t, c, bucket, key).Metadata["n"] == key {
				late = append(late, fmt.Sprintf("%s (after %v)", key, time.Since(start).Round(time.Millisecond)))
			} else {
				lost = append(lost, key)
			}
		}
		if len(late)+len(lost) > 0 {
			t.Errorf("of %d files written, closed, then given user.n with setxattr, HeadObject right after setxattr returned lacked the metadata for %d: %d showed it later %q, %d never %q",
				n, len(late)+len(lost), len(late), head(late), len(lost), head(lost))
		}
	})

	t.Run("user.cairn.etag", func(t *testing.T) {
		h := fsHead(t, c, bucket, "x.txt")
		v, err := xattr.Get(f, "user.cairn.etag")
		if err != nil {
			t.Fatalf("getxattr user.cairn.etag: %v", err)
		}
		s3etag := aws.ToString(h.ETag)
		if string(v) != s3etag && `"`+string(v)+`"` != s3etag {
			t.Errorf("user.cairn.etag %q, S3 ETag %q", v, s3etag)
		}
		if strings.Trim(s3etag, `"`) != md5hex(content) {
			t.Errorf("S3 ETag %s, want md5 %s", s3etag, md5hex(content))
		}
		err = xattr.Set(f, "user.cairn.etag", []byte("forged"))
		wantErrno(t, "setxattr user.cairn.etag", err, unix.EPERM)
		err = xattr.Remove(f, "user.cairn.etag")
		wantErrno(t, "removexattr user.cairn.etag", err, unix.EPERM)
		names, err := xattr.List(f)
		if err != nil {
			t.Fatalf("listxattr: %v", err)
		}
		// The facts are read by name, not listed: tools copying what
		// listxattr shows (cp -a, rsync -X) would set them on the copy.
		if !slices.Contains(names, "user.color") {
			t.Errorf("listxattr %q lacks user.color", names)
		}
		if slices.Contains(names, "user.cairn.etag") {
			t.Errorf("listxattr %q shows user.cairn.etag", names)
		}
		if err := xattr.Set(f, "user.cairn.etag", v); err != nil {
			t.Errorf("setxattr user.cairn.etag to the value it holds: %v", err)
		}
	})

	t.Run("remove on the mount", func(t *testing.T) {
		if err := xattr.Remove(f, "user.color"); err != nil {
			t.Fatalf("removexattr: %v", err)
		}
		if h := fsHead(t, c, bucket, "x.txt"); h.Metadata["color"] != "" {
			t.Errorf("HeadObject after removexattr: %v", h.Metadata)
		}
		_, err := xattr.Get(f, "user.color")
		wantErrno(t, "getxattr after removexattr", err, unix.ENODATA)
	})

	// Namespaces the mount does not keep answer ENOTSUP, as on a Linux
	// filesystem without them, on every kind of node; ls -l then stops
	// asking for labels and ACLs and still lists.
	t.Run("other namespaces are not kept", func(t *testing.T) {
		sub := filepath.Join(dir, "nsdir")
		link := filepath.Join(dir, "nslink")
		if err := os.Mkdir(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("x.txt", link); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{f, sub, link, dir, mnt, filepath.Join(mnt, ".cairn")} {
			for _, attr := range []string{"security.selinux", "system.posix_acl_access", "trusted.x"} {
				_, err := xattr.LGet(p, attr)
				wantErrno(t, "getxattr "+attr+" on "+p, err, unix.ENOTSUP)
				if attr != "system.posix_acl_access" { // the kernel parses an ACL first
					err = xattr.LSet(p, attr, []byte("x"))
					wantErrno(t, "setxattr "+attr+" on "+p, err, unix.ENOTSUP)
				}
			}
		}
		_, err := xattr.Get(mnt, "user.color")
		wantErrno(t, "getxattr user.color on the mount root", err, unix.ENODATA)
		err = xattr.Set(mnt, "user.color", []byte("x"))
		wantErrno(t, "setxattr user.color on the mount root", err, unix.ENOTSUP)
		out, err := exec.Command("ls", "-l", dir).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "x.txt") || strings.Contains(string(out), "+ ") {
			t.Errorf("ls -l: %v\n%s", err, out)
		}
	})

	t.Run("set over S3, seen on the mount", func(t *testing.T) {
		fsPut(t, c, bucket, "meta.txt", []byte("m"), map[string]string{"team": "storage", "tier": "gold"})
		p := filepath.Join(dir, "meta.txt")
		fsEventually(t, "user.team on the mount", func() error {
			v, err := xattr.Get(p, "user.team")
			if err != nil {
				return err
			}
			if string(v) != "storage" {
				return fmt.Errorf("user.team = %q", v)
			}
			return nil
		})
		if v, err := xattr.Get(p, "user.tier"); err != nil || string(v) != "gold" {
			t.Errorf("user.tier: %q %v", v, err)
		}
		// A metadata change over S3 (copy onto itself with REPLACE) shows too.
		_, err := c.CopyObject(callCtx(t), &s3.CopyObjectInput{
			Bucket: aws.String(bucket), Key: aws.String("meta.txt"), CopySource: aws.String(bucket + "/meta.txt"),
			MetadataDirective: "REPLACE", Metadata: map[string]string{"team": "compute"},
		})
		if err != nil {
			t.Fatalf("CopyObject REPLACE: %v", err)
		}
		fsEventually(t, "changed user.team on the mount", func() error {
			v, err := xattr.Get(p, "user.team")
			if err != nil || string(v) != "compute" {
				return fmt.Errorf("user.team = %q, %v", v, err)
			}
			return nil
		})
	})

	t.Run("directory", func(t *testing.T) {
		d := filepath.Join(dir, "sub")
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := xattr.Set(d, "user.owner", []byte("team-a")); err != nil {
			t.Fatalf("setxattr on a directory: %v", err)
		}
		if h := fsHead(t, c, bucket, "sub/"); h.Metadata["owner"] != "team-a" {
			t.Errorf("HeadObject sub/: metadata %v, want owner=team-a", h.Metadata)
		}
		if v, err := xattr.Get(d, "user.owner"); err != nil || string(v) != "team-a" {
			t.Errorf("getxattr on the directory: %q %v", v, err)
		}
	})
}

// TestFSAcrossFaces checks what one face sees of the other's changes:
// S3 writes show on the mount within the attribute timeout; what the mount
// writes is on S3 as soon as close(2) returns (size, ETag, metadata);
// an open reader keeps reading the version it opened while S3 overwrites
// or deletes the key, and a fresh open sees the change.
func TestFSAcrossFaces(t *testing.T) {
	srv, mnt := startMount(t)
	c := fsClient(srv)
	const bucket = "faces"
	dir := fsBucket(t, c, mnt, bucket)

	t.Run("S3 put then read on the mount", func(t *testing.T) {
		p := filepath.Join(dir, "in/fresh.bin")
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Fatalf("stat before the put: %v", err)
		}
		v1 := randomBytes(1, 200_000)
		fsPut(t, c, bucket, "in/fresh.bin", v1, nil)
		d1 := fsReadEventually(t, "new S3 object on the mount", p, v1)
		// Overwrite a file the kernel has just read and cached, with
		// another size.
		v2 := randomBytes(2, 150_001)
		fsPut(t, c, bucket, "in/fresh.bin", v2, nil)
		d2 := fsReadEventually(t, "S3 overwrite on the mount", p, v2)
		fsPut(t, c, bucket, "in/fresh.bin", nil, nil)
		d3 := fsReadEventually(t, "S3 overwrite with 0 bytes on the mount", p, nil)
		if _, err := c.DeleteObject(callCtx(t), &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String("in/fresh.bin")}); err != nil {
			t.Fatal(err)
		}
		fsEventually(t, "S3 delete on the mount", func() error {
			if _, err := os.Stat(p); !os.IsNotExist(err) {
				return fmt.Errorf("stat: %v", err)
			}
			return nil
		})
		t.Logf("seen on the mount after %v (new), %v (overwrite), %v (emptied)", d1.Round(time.Millisecond), d2.Round(time.Millisecond), d3.Round(time.Millisecond))
	})

	t.Run("mount write visible over S3 at close", func(t *testing.T) {
		p := filepath.Join(dir, "out/written.bin")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		data := randomBytes(3, 1_500_000)
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		for off := 0; off < len(data); off += 64 << 10 {
			if _, err := f.Write(data[off:min(off+64<<10, len(data))]); err != nil {
				t.Fatalf("write: %v", err)
			}
		}
		if err := xattr.FSet(f, "user.origin", []byte("mount")); err != nil {
			t.Fatalf("fsetxattr while writing: %v", err)
		}
		if err := f.Close(); err != nil {
			t.Fatalf("close: %v", err)
		}
		h := fsHead(t, c, bucket, "out/written.bin")
		if aws.ToInt64(h.ContentLength) != int64(len(data)) {
			t.Errorf("HeadObject right after close: size %d, want %d", aws.ToInt64(h.ContentLength), len(data))
		}
		if got := aws.ToString(h.ETag); got != `"`+md5hex(data)+`"` {
			t.Errorf("HeadObject right after close: ETag %s, want md5 %s", got, md5hex(data))
		}
		if h.Metadata["origin"] != "mount" {
			t.Errorf("HeadObject right after close: metadata %v, want origin=mount", h.Metadata)
		}
		if got := fsGet(t, c, bucket, "out/written.bin"); !bytes.Equal(got, data) {
			t.Errorf("GetObject right after close: %d bytes, md5 %s, want md5 %s", len(got), md5hex(got), md5hex(data))
		}
		// Metadata set on a closed file, and an append, are on S3 at once.
		if err := xattr.Set(p, "user.stage", []byte("two")); err != nil {
			t.Fatal(err)
		}
		if h := fsHead(t, c, bucket, "out/written.bin"); h.Metadata["stage"] != "two" || h.Metadata["origin"] != "mount" {
			t.Errorf("HeadObject right after setxattr: metadata %v", h.Metadata)
		}
		fa, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fa.Write([]byte("appended")); err != nil {
			t.Fatal(err)
		}
		if err := fa.Close(); err != nil {
			t.Fatal(err)
		}
		want := append(slices.Clone(data), "appended"...)
		before := aws.ToString(h.ETag)
		h = fsHead(t, c, bucket, "out/written.bin")
		// Only the appended bytes were written (the rest is shared with
		// the version before), so the ETag is not the MD5 of the whole
		// but opaque, in the multipart form, as S3 gives for objects
		// whose ETag is not their MD5.
		if etag := aws.ToString(h.ETag); etag == before || !strings.HasSuffix(etag, `-1"`) || h.Metadata["stage"] != "two" || aws.ToInt64(h.ContentLength) != int64(len(want)) {
			t.Errorf("HeadObject right after the append: ETag %s (before %s) metadata %v size %d, want a new opaque ETag, the metadata kept and %d bytes", etag, before, h.Metadata, aws.ToInt64(h.ContentLength), len(want))
		}
		if got := fsGet(t, c, bucket, "out/written.bin"); !bytes.Equal(got, want) {
			t.Errorf("GetObject right after the append: %d bytes, md5 %s, want md5 %s", len(got), md5hex(got), md5hex(want))
		}
	})

	// An open reader reads the version it opened to the end, whatever S3
	// does to the key meanwhile; a fresh open sees the change. Two orders:
	// "then fresh open" reads the rest first (waiting with stat(2), which
	// fills no page cache, until the mount shows the change), as the
	// issue describes; "fresh open first" has another process read the new
	// version before the old reader goes on, as happens when a job reads
	// a file that a writer replaces.
	changes := []struct {
		name   string
		change func(t *testing.T, key string) []byte // the new content, nil when deleted
	}{
		{"S3 overwrite of the same size", func(t *testing.T, key string) []byte {
			b := randomBytes(11, 3*mib)
			fsPut(t, c, bucket, key, b, nil)
			return b
		}},
		{"S3 overwrite with a shorter object", func(t *testing.T, key string) []byte {
			b := randomBytes(12, mib/2)
			fsPut(t, c, bucket, key, b, nil)
			return b
		}},
		{"S3 delete", func(t *testing.T, key string) []byte {
			if _, err := c.DeleteObject(callCtx(t), &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)}); err != nil {
				t.Fatal(err)
			}
			return nil
		}},
	}
	for _, order := range []string{"then fresh open", "fresh open first"} {
		for i, tc := range changes {
			t.Run("open reader across "+tc.name+", "+order, func(t *testing.T) {
				key := fmt.Sprintf("pinned/%s-%d", strings.ReplaceAll(order, " ", "-"), i)
				p := filepath.Join(dir, key)
				old := randomBytes(10, 3*mib)
				fsPut(t, c, bucket, key, old, nil)
				fsReadEventually(t, "the old version on the mount", p, old)
				oldStat, err := os.Stat(p)
				if err != nil {
					t.Fatal(err)
				}
				f, err := os.Open(p)
				if err != nil {
					t.Fatal(err)
				}
				defer func() { _ = f.Close() }()
				first := make([]byte, mib)
				if _, err := io.ReadFull(f, first); err != nil {
					t.Fatalf("read the first MiB: %v", err)
				}
				now := tc.change(t, key)
				fresh := func() {
					t.Helper()
					if now != nil {
						fsReadEventually(t, "a fresh open after the change", p, now)
					}
				}
				// Wait until stat on the mount shows the change, so that the
				// kernel has been told and the old reader is not merely
				// reading what it cached.
				fsEventually(t, "the change on the mount (stat)", func() error {
					fi, err := os.Stat(p)
					switch {
					case now == nil && os.IsNotExist(err):
						return nil
					case err != nil:
						return err
					case now != nil && (fi.Size() != oldStat.Size() || !fi.ModTime().Equal(oldStat.ModTime())):
						return nil
					}
					return fmt.Errorf("stat shows the old version (%d bytes, %v)", fi.Size(), fi.ModTime())
				})
				if order == "fresh open first" {
					fresh()
				}
				rest, err := io.ReadAll(f)
				if err != nil {
					t.Errorf("read the rest from the old descriptor: %v", err)
				}
				got := append(first, rest...)
				if !bytes.Equal(got, old) {
					t.Errorf("the open reader read %d bytes (md5 %s, first MiB as read before the change), want the old %d bytes (md5 %s); the new content has md5 %s (%d bytes)",
						len(got), md5hex(got), len(old), md5hex(old), md5hex(now), len(now))
				}
				// pread behind what was read works as well.
				b := make([]byte, 4096)
				if n, err := f.ReadAt(b, 2*mib+123); err != nil || !bytes.Equal(b, old[2*mib+123:2*mib+123+4096]) {
					t.Errorf("pread of 4096 bytes at 2 MiB+123 from the old descriptor: %d bytes, %v, equal to the old bytes %v",
						n, err, bytes.Equal(b[:n], old[2*mib+123:2*mib+123+n]))
				}
				if order == "then fresh open" {
					fresh()
				}
			})
		}
	}

	t.Run("write on the mount while S3 reads", func(t *testing.T) {
		// A file being written is not visible over S3 before its close.
		p := filepath.Join(dir, "out/in-progress.txt")
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write([]byte("not yet")); err != nil {
			t.Fatal(err)
		}
		_, herr := c.HeadObject(callCtx(t), &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String("out/in-progress.txt")})
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		var nf interface{ ErrorCode() string }
		if herr == nil || !errors.As(herr, &nf) {
			t.Logf("HeadObject of a file being written (before its first close): %v", herr)
		}
		if got := string(fsGet(t, c, bucket, "out/in-progress.txt")); got != "not yet" {
			t.Errorf("GetObject after close: %q", got)
		}
	})
}
