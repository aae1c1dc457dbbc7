package integration

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// ---------------------------------------------------------------------------
// S3AFileSystem primitives (Hadoop 3.4, directory markers kept).

// s3aFS is the part of S3AFileSystem the committers use. Paths are bucket
// keys without a trailing slash; "" is the bucket root.
type s3aFS struct {
	c      *s3.Client
	bucket string
}

type s3aKind int

const (
	s3aMissing s3aKind = iota
	s3aFile
	s3aDir
)

// s3aStat is a FileStatus.
type s3aStat struct {
	kind s3aKind
	etag string
	size int64
}

func s3aParent(key string) string {
	if i := strings.LastIndexByte(key, '/'); i >= 0 {
		return key[:i]
	}
	return ""
}

func s3aBase(key string) string { return key[strings.LastIndexByte(key, '/')+1:] }

// s3aIsMagic says whether key is under a magic directory (no probes,
// no marker fix-ups).
func s3aIsMagic(key string) bool {
	for _, e := range strings.Split(key, "/") {
		if strings.HasPrefix(e, "__magic") {
			return true
		}
	}
	return false
}

func (fs *s3aFS) head(ctx context.Context, key string) (*s3.HeadObjectOutput, error) {
	ctx, cancel := context.WithTimeout(ctx, s3aCallTimeout)
	defer cancel()
	out, err := fs.c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &fs.bucket, Key: &key})
	if s3aStatusOf(err) == http.StatusNotFound {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("HEAD %s: %w", key, err)
	}
	return out, nil
}

// dirProbe is the LIST k/ delimiter / max-keys 2 directory probe.
func (fs *s3aFS) dirProbe(ctx context.Context, key string) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, s3aCallTimeout)
	defer cancel()
	prefix := key + "/"
	out, err := fs.c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: &fs.bucket, Prefix: &prefix,
		Delimiter: aws.String("/"), MaxKeys: aws.Int32(2)})
	if err != nil {
		return false, fmt.Errorf("LIST %s: %w", prefix, err)
	}
	return len(out.Contents) > 0 || len(out.CommonPrefixes) > 0, nil
}

// getFileStatus: HEAD k, then the directory probe.
func (fs *s3aFS) getFileStatus(ctx context.Context, key string) (s3aStat, error) {
	if key == "" {
		return s3aStat{kind: s3aDir}, nil
	}
	h, err := fs.head(ctx, key)
	if err != nil {
		return s3aStat{}, err
	}
	if h != nil {
		return s3aStat{kind: s3aFile, etag: aws.ToString(h.ETag), size: aws.ToInt64(h.ContentLength)}, nil
	}
	dir, err := fs.dirProbe(ctx, key)
	if err != nil || !dir {
		return s3aStat{}, err
	}
	return s3aStat{kind: s3aDir}, nil
}

func (fs *s3aFS) exists(ctx context.Context, key string) (bool, error) {
	st, err := fs.getFileStatus(ctx, key)
	return st.kind != s3aMissing, err
}

func (fs *s3aFS) putBytes(ctx context.Context, key string, data []byte, meta map[string]string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, s3aCallTimeout)
	defer cancel()
	out, err := fs.c.PutObject(ctx, &s3.PutObjectInput{Bucket: &fs.bucket, Key: &key, Body: bytes.NewReader(data),
		ContentLength: aws.Int64(int64(len(data))), Metadata: meta})
	if err != nil {
		return "", fmt.Errorf("PUT %s: %w", key, err)
	}
	return aws.ToString(out.ETag), nil
}

// mkdirs is MkdirOperation: probe the path (directory first, then file)
// and its ancestors until a directory is found, then PUT one marker for
// the leaf. Under a magic path: one probe and the marker.
func (fs *s3aFS) mkdirs(ctx context.Context, key string) error {
	if s3aIsMagic(key) {
		dir, err := fs.dirProbe(ctx, key)
		if err != nil || dir {
			return err
		}
		_, err = fs.putBytes(ctx, key+"/", nil, nil)
		return err
	}
	for p := key; p != ""; p = s3aParent(p) {
		dir, err := fs.dirProbe(ctx, p)
		if err != nil {
			return err
		}
		if dir {
			if p == key {
				return nil
			}
			break
		}
		h, err := fs.head(ctx, p)
		if err != nil {
			return err
		}
		if h != nil {
			return fmt.Errorf("mkdirs %s: %s is a file (FileAlreadyExistsException)", key, p)
		}
	}
	_, err := fs.putBytes(ctx, key+"/", nil, nil)
	return err
}

// create is FileSystem.create + write + close: the LIST probe (plus HEAD
// when overwrite is false), then one PUT, or a multipart upload when the
// data is larger than a block.
func (fs *s3aFS) create(ctx context.Context, key string, data []byte, overwrite bool) error {
	dir, err := fs.dirProbe(ctx, key)
	if err != nil {
		return err
	}
	if dir {
		return fmt.Errorf("create %s: is a directory (FileAlreadyExistsException)", key)
	}
	if !overwrite {
		h, err := fs.head(ctx, key)
		if err != nil {
			return err
		}
		if h != nil {
			return fmt.Errorf("create %s: %w", key, errS3APathExists)
		}
	}
	if len(data) <= s3aPartSize {
		_, err := fs.putBytes(ctx, key, data, nil)
		return err
	}
	u, err := fs.initiate(ctx, key)
	if err != nil {
		return err
	}
	tail, err := u.fullParts(ctx, data)
	if err == nil {
		err = u.part(ctx, tail)
	}
	if err == nil {
		_, err = fs.complete(ctx, key, u.id, u.etags)
	}
	return err
}

// open reads a whole object as S3AInputStream does: GET with If-Match on
// the ETag from the HEAD or the listing.
func (fs *s3aFS) open(ctx context.Context, key, etag string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, s3aCallTimeout)
	defer cancel()
	in := &s3.GetObjectInput{Bucket: &fs.bucket, Key: &key}
	if etag != "" {
		in.IfMatch = aws.String(etag)
	}
	out, err := fs.c.GetObject(ctx, in)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", key, err)
	}
	defer func() { _ = out.Body.Close() }()
	return io.ReadAll(out.Body)
}

// listAll is listFiles(p, recursive=true): LIST prefix=k/ without a
// delimiter, paged.
func (fs *s3aFS) listAll(ctx context.Context, dir string) ([]types.Object, error) {
	return fs.list(ctx, dir, "")
}

// listStatus is LIST prefix=k/ delimiter=/ (the directory's own marker
// left out): entries are files and "dir/" common prefixes.
func (fs *s3aFS) listStatus(ctx context.Context, dir string) (files []types.Object, subdirs []string, err error) {
	prefix := dir + "/"
	var token *string
	for {
		cctx, cancel := context.WithTimeout(ctx, s3aCallTimeout)
		out, err := fs.c.ListObjectsV2(cctx, &s3.ListObjectsV2Input{Bucket: &fs.bucket, Prefix: &prefix,
			Delimiter: aws.String("/"), MaxKeys: aws.Int32(s3aListPage), ContinuationToken: token})
		cancel()
		if err != nil {
			return nil, nil, fmt.Errorf("LIST %s: %w", prefix, err)
		}
		for _, o := range out.Contents {
			if aws.ToString(o.Key) != prefix {
				files = append(files, o)
			}
		}
		for _, cp := range out.CommonPrefixes {
			subdirs = append(subdirs, strings.TrimSuffix(aws.ToString(cp.Prefix), "/"))
		}
		if !aws.ToBool(out.IsTruncated) {
			return files, subdirs, nil
		}
		token = out.NextContinuationToken
	}
}

func (fs *s3aFS) list(ctx context.Context, dir, delim string) ([]types.Object, error) {
	prefix := dir + "/"
	if dir == "" {
		prefix = ""
	}
	var objs []types.Object
	var token *string
	for {
		cctx, cancel := context.WithTimeout(ctx, s3aCallTimeout)
		in := &s3.ListObjectsV2Input{Bucket: &fs.bucket, Prefix: &prefix, MaxKeys: aws.Int32(s3aListPage), ContinuationToken: token}
		if delim != "" {
			in.Delimiter = &delim
		}
		out, err := fs.c.ListObjectsV2(cctx, in)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("LIST %s: %w", prefix, err)
		}
		objs = append(objs, out.Contents...)
		if !aws.ToBool(out.IsTruncated) {
			return objs, nil
		}
		token = out.NextContinuationToken
	}
}

// deleteKeys is the bulk delete of one page: DeleteObjects (Quiet), or a
// plain DELETE for a single key.
func (fs *s3aFS) deleteKeys(ctx context.Context, keys []string) error {
	ctx, cancel := context.WithTimeout(ctx, s3aCallTimeout)
	defer cancel()
	if len(keys) == 1 {
		if _, err := fs.c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &fs.bucket, Key: &keys[0]}); err != nil {
			return fmt.Errorf("DELETE %s: %w", keys[0], err)
		}
		return nil
	}
	ids := make([]types.ObjectIdentifier, len(keys))
	for i := range keys {
		ids[i] = types.ObjectIdentifier{Key: aws.String(keys[i])}
	}
	out, err := fs.c.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: &fs.bucket,
		Delete: &types.Delete{Objects: ids, Quiet: aws.Bool(true)}})
	if err != nil {
		return fmt.Errorf("DeleteObjects (%d keys): %w", len(keys), err)
	}
	if len(out.Errors) > 0 {
		e := out.Errors[0]
		return fmt.Errorf("DeleteObjects: %d errors, first %s: %s %s", len(out.Errors), aws.ToString(e.Key), aws.ToString(e.Code), aws.ToString(e.Message))
	}
	return nil
}

// fixParent is maybeCreateFakeParentDirectory: after a delete or a
// rename away, PUT parent/ if the parent now looks empty.
func (fs *s3aFS) fixParent(ctx context.Context, key string) error {
	p := s3aParent(key)
	if p == "" || s3aIsMagic(p) {
		return nil
	}
	dir, err := fs.dirProbe(ctx, p)
	if err != nil || dir {
		return err
	}
	_, err = fs.putBytes(ctx, p+"/", nil, nil)
	return err
}

// delete is FileSystem.delete(p, recursive).
func (fs *s3aFS) delete(ctx context.Context, key string, recursive bool) (bool, error) {
	st, err := fs.getFileStatus(ctx, key)
	if err != nil || st.kind == s3aMissing {
		return false, err
	}
	if st.kind == s3aFile {
		if err := fs.deleteKeys(ctx, []string{key}); err != nil {
			return false, err
		}
		return true, fs.fixParent(ctx, key)
	}
	objs, err := fs.listAll(ctx, key)
	if err != nil {
		return false, err
	}
	if !recursive && len(objs) > 1 {
		return false, fmt.Errorf("delete %s: directory not empty (PathIsNotEmptyDirectoryException)", key)
	}
	for len(objs) > 0 {
		n := min(len(objs), s3aBulkDeletePage)
		keys := make([]string, n)
		for i := range n {
			keys[i] = aws.ToString(objs[i].Key)
		}
		if err := fs.deleteKeys(ctx, keys); err != nil {
			return false, err
		}
		objs = objs[n:]
	}
	return true, fs.fixParent(ctx, key)
}

func (fs *s3aFS) copyObject(ctx context.Context, src, dst, etag string) error {
	ctx, cancel := context.WithTimeout(ctx, s3aCallTimeout)
	defer cancel()
	segs := strings.Split(src, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	in := &s3.CopyObjectInput{Bucket: &fs.bucket, Key: &dst, CopySource: aws.String(fs.bucket + "/" + strings.Join(segs, "/"))}
	if etag != "" {
		in.CopySourceIfMatch = aws.String(etag)
	}
	if _, err := fs.c.CopyObject(ctx, in); err != nil {
		return fmt.Errorf("CopyObject %s -> %s: %w", src, dst, err)
	}
	return nil
}

// rename is S3AFileSystem.rename: probes, then copy + delete, object by
// object; a directory is listed and copied in pages, each page of
// sources deleted after it is copied.
func (fs *s3aFS) rename(ctx context.Context, src, dst string) error {
	sst, err := fs.getFileStatus(ctx, src)
	if err != nil {
		return err
	}
	if sst.kind == s3aMissing {
		return fmt.Errorf("rename %s: source missing (FileNotFoundException)", src)
	}
	dstt, err := fs.getFileStatus(ctx, dst)
	if err != nil {
		return err
	}
	switch {
	case dstt.kind == s3aFile:
		return fmt.Errorf("rename %s -> %s: destination is a file (FileAlreadyExistsException)", src, dst)
	case dstt.kind == s3aDir && sst.kind == s3aFile:
		dst = dst + "/" + s3aBase(src)
		if st, err := fs.getFileStatus(ctx, dst); err != nil || st.kind != s3aMissing {
			return fmt.Errorf("rename %s -> %s: destination exists (%v)", src, dst, err)
		}
	case dstt.kind == s3aDir:
		return fmt.Errorf("rename %s -> %s: destination is a non-empty directory", src, dst)
	}
	if p := s3aParent(dst); p != "" {
		h, err := fs.head(ctx, p)
		if err != nil {
			return err
		}
		if h != nil {
			return fmt.Errorf("rename %s -> %s: parent is a file", src, dst)
		}
	}
	if sst.kind == s3aFile {
		if err := fs.copyObject(ctx, src, dst, sst.etag); err != nil {
			return err
		}
		if err := fs.deleteKeys(ctx, []string{src}); err != nil {
			return err
		}
		return fs.fixParent(ctx, src)
	}
	objs, err := fs.listAll(ctx, src)
	if err != nil {
		return err
	}
	for len(objs) > 0 {
		n := min(len(objs), s3aBulkDeletePage)
		var keys []string
		for _, o := range objs[:n] {
			k := aws.ToString(o.Key)
			if err := fs.copyObject(ctx, k, dst+strings.TrimPrefix(k, src), aws.ToString(o.ETag)); err != nil {
				return err
			}
			keys = append(keys, k)
		}
		if err := fs.deleteKeys(ctx, keys); err != nil {
			return err
		}
		objs = objs[n:]
	}
	return fs.fixParent(ctx, src)
}
