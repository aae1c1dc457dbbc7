package integration

// Replays of what Hadoop's S3A committers (magic, directory staging,
// partitioned staging) and the classic FileOutputCommitter (v1, v2) send to
// S3, call for call, as read from Hadoop 3.4 (hadoop-aws: S3AFileSystem,
// MkdirOperation, RenameOperation, CommitOperations, AbstractS3ACommitter,
// MagicS3GuardCommitter, StagingCommitter, DirectoryStagingCommitter,
// PartitionedStagingCommitter; mapreduce FileOutputCommitter) with the 3.4
// defaults: directory markers kept, magic layout
// D/__magic_job-U/job-U/00/tasks/<attempt>/__base, unique staging file
// names, fs.s3a.committer.abort.pending.uploads=true, checksums only where
// S3 requires them. See /work/shared/specs/s3a-committers.md.
//
// Every identifier here starts with s3a so that it cannot collide with the
// other integration helpers. Nothing here calls t.Fatal: the replays run in
// task goroutines and return errors.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
)

const (
	// s3aCallTimeout bounds every single S3 call of a replay.
	s3aCallTimeout = 20 * time.Second
	// s3aPartSize is fs.s3a.multipart.size at its minimum (5 MiB), so
	// that a file of a little more than 5 MiB is a two-part upload.
	s3aPartSize = 5 << 20
	// s3aBulkDeletePage is fs.s3a.bulk.delete.page.size.
	s3aBulkDeletePage = 250
	// s3aListPage is fs.s3a.paging.maximum.
	s3aListPage = 5000
	// s3aMagicLengthMeta is the user metadata S3A puts on the 0-byte
	// marker a magic file leaves under __base (x-amz-meta-…).
	s3aMagicLengthMeta = "x-hadoop-s3a-magic-data-length"
	// s3aSuccessName is SuccessData.NAME.
	s3aSuccessName = "org.apache.hadoop.fs.s3a.commit.files.SuccessData/1"
)

// errS3APathExists is Hadoop's PathExistsException.
var errS3APathExists = errors.New("PathExistsException")

// errS3AInjected is a failure the scenario injects into a task.
var errS3AInjected = errors.New("injected task failure")

// ---------------------------------------------------------------------------
// Recording every request.

type s3aPhaseKey struct{}

type s3aScopeKey struct{}

// s3aWithScope prefixes the phases of the requests made with ctx (one
// scope per test case).
func s3aWithScope(ctx context.Context, scope string) context.Context {
	return context.WithValue(ctx, s3aScopeKey{}, scope)
}

// s3aWithPhase labels the requests made with ctx (for the recorder) with
// "<scope>: <phase>".
func s3aWithPhase(ctx context.Context, phase string) context.Context {
	if s, ok := ctx.Value(s3aScopeKey{}).(string); ok {
		phase = s + ": " + phase
	}
	return context.WithValue(ctx, s3aPhaseKey{}, phase)
}

func s3aPhaseOf(ctx context.Context) string {
	p, _ := ctx.Value(s3aPhaseKey{}).(string)
	return p
}

// s3aCall is one request as the recorder saw it.
type s3aCall struct {
	Phase  string
	Op     string // the S3 API name
	Key    string // object key; the prefix for listings
	Status int    // 0 when the request got no answer
}

// s3aRecorder is an http.RoundTripper logging every S3 request.
type s3aRecorder struct {
	base  http.RoundTripper
	mu    sync.Mutex
	calls []s3aCall
}

func newS3ARecorder() *s3aRecorder {
	return &s3aRecorder{base: &http.Transport{MaxIdleConnsPerHost: 32, IdleConnTimeout: 30 * time.Second}}
}

func (r *s3aRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	op, key := s3aClassify(req)
	resp, err := r.base.RoundTrip(req)
	c := s3aCall{Phase: s3aPhaseOf(req.Context()), Op: op, Key: key}
	if err == nil {
		c.Status = resp.StatusCode
	}
	r.mu.Lock()
	r.calls = append(r.calls, c)
	r.mu.Unlock()
	return resp, err
}

// phase returns the calls made in one phase, in order.
func (r *s3aRecorder) phase(p string) []s3aCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []s3aCall
	for _, c := range r.calls {
		if c.Phase == p {
			out = append(out, c)
		}
	}
	return out
}

// s3aClassify names the S3 operation of a path-style request.
func s3aClassify(req *http.Request) (op, key string) {
	q := req.URL.Query()
	has := func(k string) bool { _, ok := q[k]; return ok }
	p := strings.TrimPrefix(req.URL.Path, "/")
	_, key, _ = strings.Cut(p, "/")
	if key == "" {
		switch req.Method {
		case http.MethodGet:
			switch {
			case has("uploads"):
				return "ListMultipartUploads", q.Get("prefix")
			case has("lifecycle"):
				return "GetBucketLifecycleConfiguration", ""
			case q.Get("list-type") == "2":
				return "ListObjectsV2", q.Get("prefix")
			}
			return "ListObjects", q.Get("prefix")
		case http.MethodPut:
			if has("lifecycle") {
				return "PutBucketLifecycleConfiguration", ""
			}
			return "CreateBucket", ""
		case http.MethodPost:
			if has("delete") {
				return "DeleteObjects", ""
			}
		case http.MethodHead:
			return "HeadBucket", ""
		}
		return req.Method + " bucket", ""
	}
	switch req.Method {
	case http.MethodPut:
		switch {
		case has("uploadId"):
			return "UploadPart", key
		case req.Header.Get("x-amz-copy-source") != "":
			return "CopyObject", key
		}
		return "PutObject", key
	case http.MethodGet:
		return "GetObject", key
	case http.MethodHead:
		return "HeadObject", key
	case http.MethodDelete:
		if has("uploadId") {
			return "AbortMultipartUpload", key
		}
		return "DeleteObject", key
	case http.MethodPost:
		if has("uploads") {
			return "CreateMultipartUpload", key
		}
		return "CompleteMultipartUpload", key
	}
	return req.Method, key
}

// s3aRender renders calls as "Op key" lines with the given substitutions
// applied to keys (longest first), for golden comparisons.
func s3aRender(calls []s3aCall, subst map[string]string) []string {
	olds := make([]string, 0, len(subst))
	for k := range subst {
		olds = append(olds, k)
	}
	sort.Slice(olds, func(i, j int) bool { return len(olds[i]) > len(olds[j]) })
	var pairs []string
	for _, o := range olds {
		pairs = append(pairs, o, subst[o])
	}
	rep := strings.NewReplacer(pairs...)
	out := make([]string, 0, len(calls))
	for _, c := range calls {
		s := c.Op
		if c.Key != "" || strings.HasPrefix(c.Op, "List") {
			s += " " + rep.Replace(c.Key)
		}
		out = append(out, fmt.Sprintf("%s %d", s, c.Status))
	}
	return out
}

// ---------------------------------------------------------------------------
// The S3 client.

// newS3AClient is an aws-sdk-go-v2 client configured like S3A's defaults
// (path style, checksums only where required, no retries so that server
// errors are not hidden) whose requests go through rec.
func newS3AClient(endpoint, accessKey, secretKey string, rec *s3aRecorder) *s3.Client {
	return s3.New(s3.Options{
		Region:                     "us-east-1",
		BaseEndpoint:               aws.String(endpoint),
		UsePathStyle:               true,
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
		Retryer:                    aws.NopRetryer{},
		Credentials: aws.NewCredentialsCache(aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: accessKey, SecretAccessKey: secretKey, Source: "s3a-replay"}, nil
		})),
		HTTPClient: &http.Client{Transport: rec, Timeout: s3aCallTimeout},
	})
}

// s3aStatusOf returns the HTTP status of an SDK error (0 if none).
func s3aStatusOf(err error) int {
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		return re.HTTPStatusCode()
	}
	return 0
}

// s3aCodeOf returns the S3 error code of an SDK error ("" if none).
func s3aCodeOf(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

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

// upload is a multipart upload as S3ABlockOutputStream drives it.
type s3aUpload struct {
	fs    *s3aFS
	key   string
	id    string
	etags []string
}

func (fs *s3aFS) initiate(ctx context.Context, key string) (*s3aUpload, error) {
	ctx, cancel := context.WithTimeout(ctx, s3aCallTimeout)
	defer cancel()
	out, err := fs.c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: &fs.bucket, Key: &key})
	if err != nil {
		return nil, fmt.Errorf("CreateMultipartUpload %s: %w", key, err)
	}
	return &s3aUpload{fs: fs, key: key, id: aws.ToString(out.UploadId)}, nil
}

func (u *s3aUpload) part(ctx context.Context, data []byte) error {
	ctx, cancel := context.WithTimeout(ctx, s3aCallTimeout)
	defer cancel()
	n := int32(len(u.etags) + 1)
	out, err := u.fs.c.UploadPart(ctx, &s3.UploadPartInput{Bucket: &u.fs.bucket, Key: &u.key, UploadId: &u.id,
		PartNumber: &n, Body: bytes.NewReader(data), ContentLength: aws.Int64(int64(len(data)))})
	if err != nil {
		return fmt.Errorf("UploadPart %s #%d: %w", u.key, n, err)
	}
	u.etags = append(u.etags, aws.ToString(out.ETag))
	return nil
}

// fullParts uploads every full block of data and returns the tail.
func (u *s3aUpload) fullParts(ctx context.Context, data []byte) ([]byte, error) {
	for len(data) > s3aPartSize {
		if err := u.part(ctx, data[:s3aPartSize]); err != nil {
			return nil, err
		}
		data = data[s3aPartSize:]
	}
	return data, nil
}

func (fs *s3aFS) complete(ctx context.Context, key, id string, etags []string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, s3aCallTimeout)
	defer cancel()
	parts := make([]types.CompletedPart, len(etags))
	for i, e := range etags {
		parts[i] = types.CompletedPart{ETag: aws.String(e), PartNumber: aws.Int32(int32(i + 1))}
	}
	out, err := fs.c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: &fs.bucket, Key: &key,
		UploadId: &id, MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}})
	if err != nil {
		return "", fmt.Errorf("CompleteMultipartUpload %s %s: %w", key, id, err)
	}
	return aws.ToString(out.ETag), nil
}

// abortUpload returns the raw error so that callers can tell 404
// NoSuchUpload apart.
func (fs *s3aFS) abortUpload(ctx context.Context, key, id string) error {
	ctx, cancel := context.WithTimeout(ctx, s3aCallTimeout)
	defer cancel()
	_, err := fs.c.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: &fs.bucket, Key: &key, UploadId: &id})
	return err
}

// listUploads is CommitOperations.listPendingUploadsUnderPath: prefix k/
// (the root: no prefix), first page only.
func (fs *s3aFS) listUploads(ctx context.Context, dir string) ([]types.MultipartUpload, error) {
	ctx, cancel := context.WithTimeout(ctx, s3aCallTimeout)
	defer cancel()
	in := &s3.ListMultipartUploadsInput{Bucket: &fs.bucket}
	if dir != "" {
		in.Prefix = aws.String(dir + "/")
	}
	out, err := fs.c.ListMultipartUploads(ctx, in)
	if err != nil {
		return nil, fmt.Errorf("ListMultipartUploads %s/: %w", dir, err)
	}
	return out.Uploads, nil
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

// ---------------------------------------------------------------------------
// Persistent formats (Jackson JSON of hadoop-aws commit/files).

// s3aIOStats is an IOStatisticsSnapshot.
type s3aIOStats struct {
	Counters       map[string]int64 `json:"counters"`
	Gauges         map[string]int64 `json:"gauges"`
	Minimums       map[string]int64 `json:"minimums"`
	Maximums       map[string]int64 `json:"maximums"`
	MeanStatistics map[string]struct {
		Samples int64 `json:"samples"`
		Sum     int64 `json:"sum"`
	} `json:"meanstatistics"`
}

func newS3AIOStats(counters map[string]int64) s3aIOStats {
	return s3aIOStats{Counters: counters, Gauges: map[string]int64{}, Minimums: map[string]int64{}, Maximums: map[string]int64{}}
}

// s3aPendingCommit is SinglePendingCommit (a .pending file, version 2).
type s3aPendingCommit struct {
	Version        int               `json:"version"`
	Filename       string            `json:"filename,omitempty"`
	URI            string            `json:"uri"`
	UploadID       string            `json:"uploadId"`
	Bucket         string            `json:"bucket"`
	DestinationKey string            `json:"destinationKey"`
	Created        int64             `json:"created"`
	Saved          int64             `json:"saved"`
	Date           string            `json:"date"`
	JobID          string            `json:"jobId"`
	TaskID         string            `json:"taskId"`
	Text           string            `json:"text"`
	Etags          []string          `json:"etags"`
	ExtraData      map[string]string `json:"extraData"`
	IOStatistics   s3aIOStats        `json:"iostatistics"`
	Length         int64             `json:"length"`
}

func (c *s3aPendingCommit) validate() error {
	if c.Version != 2 || c.Bucket == "" || c.DestinationKey == "" || c.UploadID == "" || c.Etags == nil || c.Length < 0 {
		return fmt.Errorf("invalid pending commit %+v (ValidationFailure)", *c)
	}
	return nil
}

// s3aPendingSet is PendingSet (a .pendingset file, version 3).
type s3aPendingSet struct {
	Version      int                `json:"version"`
	JobID        string             `json:"jobId"`
	Commits      []s3aPendingCommit `json:"commits"`
	ExtraData    map[string]string  `json:"extraData"`
	IOStatistics s3aIOStats         `json:"iostatistics"`
}

// s3aSuccessData is SuccessData, the JSON _SUCCESS of the S3A committers.
type s3aSuccessData struct {
	Name         string            `json:"name"`
	Timestamp    int64             `json:"timestamp"`
	Date         string            `json:"date"`
	Hostname     string            `json:"hostname"`
	Committer    string            `json:"committer"`
	Description  string            `json:"description"`
	JobID        string            `json:"jobId"`
	JobIDSource  string            `json:"jobIdSource"`
	Metrics      map[string]int64  `json:"metrics"`
	Diagnostics  map[string]string `json:"diagnostics"`
	Filenames    []string          `json:"filenames"`
	IOStatistics s3aIOStats        `json:"iostatistics"`
}

func s3aJSON(v any) []byte {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		panic(err)
	}
	return b
}

// ---------------------------------------------------------------------------
// Jobs, tasks, attempts.

// s3aConflict is fs.s3a.committer.staging.conflict-mode.
type s3aConflict string

const (
	s3aFail    s3aConflict = "fail"
	s3aAppend  s3aConflict = "append"
	s3aReplace s3aConflict = "replace"
)

// s3aJob is what every committer of one job shares.
type s3aJob struct {
	fs     *s3aFS
	dest   string // D, the output key prefix without a trailing slash
	uuid   string // U, spark.sql.sources.writeJobUUID
	jt     string // job tracker id, Spark's yyyyMMddHHmmss
	jobNum int
	// abortPendingUploads is fs.s3a.committer.abort.pending.uploads.
	abortPendingUploads bool
	// local is the executor's fs.s3a.buffer.dir (staging) and the staging
	// "cluster FS" (fs.s3a.committer.staging.tmp.path).
	local string
}

func (j *s3aJob) jobID() string { return fmt.Sprintf("job_%s_%04d", j.jt, j.jobNum) }

// s3aAttempt is one task attempt.
type s3aAttempt struct {
	task, attempt int
	id            string // attempt_<jt>_<job>_m_<task6>_<n>
	taskID        string // task_<jt>_<job>_m_<task6>
	// failCommitAfter, when > 0, makes commitTask fail after that many
	// files (uploads for staging, renames for FileOutputCommitter; for the
	// magic committer: loading the .pending files succeeds and saving the
	// .pendingset fails).
	failCommitAfter int
}

func (j *s3aJob) newAttempt(task, attempt int) *s3aAttempt {
	return &s3aAttempt{task: task, attempt: attempt,
		id:     fmt.Sprintf("attempt_%s_%04d_m_%06d_%d", j.jt, j.jobNum, task, attempt),
		taskID: fmt.Sprintf("task_%s_%04d_m_%06d", j.jt, j.jobNum, task)}
}

// s3aCommitter is the OutputCommitter protocol plus the task's writes.
type s3aCommitter interface {
	// name is the committer field of _SUCCESS ("" for a 0-byte _SUCCESS).
	name() string
	job() *s3aJob
	// finalKey is where a file the task writes at rel (relative to the
	// output) ends up.
	finalKey(rel string) string
	// deletesSuccessAtSetup: the S3A committers delete _SUCCESS in setupJob.
	deletesSuccessAtSetup() bool
	setupJob(ctx context.Context) error
	setupTask(ctx context.Context, a *s3aAttempt) error
	// write creates rel in the task's work path, writes data and closes.
	write(ctx context.Context, a *s3aAttempt, rel string, data []byte) error
	// crashWhileWriting creates rel and writes data without closing, as
	// a task that dies in the middle of a file does.
	crashWhileWriting(ctx context.Context, a *s3aAttempt, rel string, data []byte) error
	needsTaskCommit(ctx context.Context, a *s3aAttempt) (bool, error)
	commitTask(ctx context.Context, a *s3aAttempt) error
	abortTask(ctx context.Context, a *s3aAttempt) error
	commitJob(ctx context.Context) error
	abortJob(ctx context.Context) error
}

// s3aCommitterCore has what the three S3A committers share
// (AbstractS3ACommitter, CommitOperations).
type s3aCommitterCore struct {
	j *s3aJob
	// committed records the uploads job commit completed.
	mu        sync.Mutex
	committed []s3aPendingCommit
}

func (c *s3aCommitterCore) job() *s3aJob                { return c.j }
func (c *s3aCommitterCore) deletesSuccessAtSetup() bool { return true }

// commonSetupJob is AbstractS3ACommitter.setupJob: delete _SUCCESS, mkdirs
// D, warnOnActiveUploads (ListMultipartUploads D/).
func (c *s3aCommitterCore) commonSetupJob(ctx context.Context) error {
	fs := c.j.fs
	if _, err := fs.delete(ctx, c.j.dest+"/_SUCCESS", false); err != nil {
		return err
	}
	if err := fs.mkdirs(ctx, c.j.dest); err != nil {
		return err
	}
	_, err := fs.listUploads(ctx, c.j.dest)
	return err
}

// newPending builds the SinglePendingCommit of an upload.
func (c *s3aCommitterCore) newPending(u *s3aUpload, taskID, text string, length int64) s3aPendingCommit {
	now := time.Now()
	return s3aPendingCommit{Version: 2, URI: "s3a://" + c.j.fs.bucket + "/" + u.key, UploadID: u.id, Bucket: c.j.fs.bucket,
		DestinationKey: u.key, Created: now.UnixMilli(), Saved: now.UnixMilli(), Date: now.String(), JobID: c.j.uuid,
		TaskID: taskID, Text: text, Etags: u.etags, ExtraData: map[string]string{},
		IOStatistics: newS3AIOStats(map[string]int64{}), Length: length}
}

// abortSingle is CommitContext.abortSingleCommit: a 404 (NoSuchUpload:
// already aborted or completed) is returned as is for the caller to judge.
func (c *s3aCommitterCore) abortSingle(ctx context.Context, p s3aPendingCommit) error {
	return c.j.fs.abortUpload(ctx, p.DestinationKey, p.UploadID)
}

// ignoreNoSuchUpload accepts the 404 S3 gives for an upload that is
// already gone, and nothing else.
func s3aIgnoreNoSuchUpload(err error) error {
	if err == nil || (s3aStatusOf(err) == http.StatusNotFound && s3aCodeOf(err) == "NoSuchUpload") {
		return nil
	}
	return err
}

// commitPendingSets is commitPendingUploads: per pendingset check the job
// id and complete every commit; on failure abort the rest and revert
// (DELETE) what was completed.
func (c *s3aCommitterCore) commitPendingSets(ctx context.Context, sets []s3aPendingSet) error {
	fs := c.j.fs
	seen := map[string]bool{}
	for _, ps := range sets {
		if ps.JobID != "" && ps.JobID != c.j.uuid {
			return fmt.Errorf("Mismatch in Job ID (%s) and commit job ID (%s)", ps.JobID, c.j.uuid)
		}
		for _, p := range ps.Commits {
			if seen[p.DestinationKey] {
				return fmt.Errorf("two commits to %s", p.DestinationKey)
			}
			seen[p.DestinationKey] = true
		}
	}
	var done []s3aPendingCommit
	for si, ps := range sets {
		for ci, p := range ps.Commits {
			if err := p.validate(); err != nil {
				return err
			}
			if _, err := fs.complete(ctx, p.DestinationKey, p.UploadID, p.Etags); err != nil {
				// abort the rest, revert the completed ones.
				for _, q := range ps.Commits[ci:] {
					_ = c.abortSingle(ctx, q)
				}
				for _, rest := range sets[si+1:] {
					for _, q := range rest.Commits {
						_ = c.abortSingle(ctx, q)
					}
				}
				for _, q := range done {
					_, _ = fs.delete(ctx, q.DestinationKey, false)
				}
				return err
			}
			done = append(done, p)
		}
	}
	c.mu.Lock()
	c.committed = append(c.committed, done...)
	c.mu.Unlock()
	return nil
}

// writeSuccess is maybeCreateSuccessMarker: create(D/_SUCCESS, overwrite)
// with the SuccessData JSON naming the committed objects.
func (c *s3aCommitterCore) writeSuccess(ctx context.Context, committer string) error {
	var names []string
	var total int64
	for _, p := range c.committed {
		if len(names) < 100 {
			names = append(names, "/"+p.DestinationKey)
		}
		total += p.Length
	}
	now := time.Now()
	sd := s3aSuccessData{Name: s3aSuccessName, Timestamp: now.UnixMilli(), Date: now.String(), Hostname: "localhost",
		Committer: committer, Description: "Job committer " + c.j.jobID(), JobID: c.j.uuid,
		JobIDSource: "spark.sql.sources.writeJobUUID", Metrics: map[string]int64{},
		Diagnostics: map[string]string{"fs.s3a.committer.threads": "8", "fs.s3a.connection.maximum": "500", "fs.s3a.threads.max": "96"},
		Filenames:   names,
		IOStatistics: newS3AIOStats(map[string]int64{"committer_bytes_committed": total,
			"committer_commits_completed": int64(len(c.committed))})}
	return c.j.fs.create(ctx, c.j.dest+"/_SUCCESS", s3aJSON(sd), true)
}

// abortUploadsUnder is abortPendingUploadsInCleanup: list the uploads
// under D/ (first page) and abort every one.
func (c *s3aCommitterCore) abortUploadsUnder(ctx context.Context) error {
	if !c.j.abortPendingUploads {
		return nil
	}
	ups, err := c.j.fs.listUploads(ctx, c.j.dest)
	if err != nil {
		return nil // best effort, as in Hadoop
	}
	for _, u := range ups {
		if err := s3aIgnoreNoSuchUpload(c.j.fs.abortUpload(ctx, aws.ToString(u.Key), aws.ToString(u.UploadId))); err != nil {
			return fmt.Errorf("abort upload %s %s: %w", aws.ToString(u.Key), aws.ToString(u.UploadId), err)
		}
	}
	return nil
}

// ---------------------------------------------------------------------------
// The magic committer.

type s3aMagic struct{ s3aCommitterCore }

func newS3AMagic(j *s3aJob) *s3aMagic { return &s3aMagic{s3aCommitterCore{j: j}} }

func (m *s3aMagic) name() string { return "magic" }

// magicRoot is D/__magic_job-U; jobPath J is …/job-U/00.
func (m *s3aMagic) magicRoot() string { return m.j.dest + "/__magic_job-" + m.j.uuid }
func (m *s3aMagic) jobPath() string   { return m.magicRoot() + "/job-" + m.j.uuid + "/00" }
func (m *s3aMagic) taskPath(a *s3aAttempt) string {
	return m.jobPath() + "/tasks/" + a.id
}
func (m *s3aMagic) basePath(a *s3aAttempt) string { return m.taskPath(a) + "/__base" }

// finalKey: the parents of the magic element plus the children after
// __base.
func (m *s3aMagic) finalKey(rel string) string { return m.j.dest + "/" + rel }

func (m *s3aMagic) setupJob(ctx context.Context) error {
	if err := m.commonSetupJob(ctx); err != nil {
		return err
	}
	return m.j.fs.mkdirs(ctx, m.magicRoot())
}

func (m *s3aMagic) setupTask(ctx context.Context, a *s3aAttempt) error {
	if _, err := m.j.fs.delete(ctx, m.basePath(a), true); err != nil {
		return err
	}
	return m.j.fs.mkdirs(ctx, m.basePath(a))
}

// open is create() on T/__base/rel: the magic stream initiates the upload
// to the final key at once.
func (m *s3aMagic) open(ctx context.Context, rel string) (*s3aUpload, error) {
	return m.j.fs.initiate(ctx, m.finalKey(rel))
}

func (m *s3aMagic) write(ctx context.Context, a *s3aAttempt, rel string, data []byte) error {
	u, err := m.open(ctx, rel)
	if err != nil {
		return err
	}
	tail, err := u.fullParts(ctx, data)
	if err != nil {
		return err
	}
	// close: the last part always goes up, even empty; no Complete.
	if err := u.part(ctx, tail); err != nil {
		return err
	}
	marker := m.basePath(a) + "/" + rel
	if _, err := m.j.fs.putBytes(ctx, marker, nil, map[string]string{s3aMagicLengthMeta: fmt.Sprint(len(data))}); err != nil {
		return err
	}
	p := m.newPending(u, a.taskID, "", int64(len(data)))
	_, err = m.j.fs.putBytes(ctx, marker+".pending", s3aJSON(p), nil)
	return err
}

func (m *s3aMagic) crashWhileWriting(ctx context.Context, _ *s3aAttempt, rel string, data []byte) error {
	u, err := m.open(ctx, rel)
	if err != nil {
		return err
	}
	_, err = u.fullParts(ctx, data)
	return err
}

// needsTaskCommit is always true in 3.4 (no IO).
func (m *s3aMagic) needsTaskCommit(context.Context, *s3aAttempt) (bool, error) { return true, nil }

// loadPending lists T/__base/ recursively and GETs every .pending.
func (m *s3aMagic) loadPending(ctx context.Context, a *s3aAttempt) ([]s3aPendingCommit, []string, error) {
	fs := m.j.fs
	objs, err := fs.listAll(ctx, m.basePath(a))
	if err != nil {
		return nil, nil, err
	}
	var commits []s3aPendingCommit
	var files []string
	for _, o := range objs {
		k := aws.ToString(o.Key)
		if !strings.HasSuffix(k, ".pending") {
			continue
		}
		b, err := fs.open(ctx, k, aws.ToString(o.ETag))
		if err != nil {
			return commits, files, err
		}
		var p s3aPendingCommit
		if err := json.Unmarshal(b, &p); err != nil {
			return commits, files, fmt.Errorf("%s: %w", k, err)
		}
		if err := p.validate(); err != nil {
			return commits, files, err
		}
		commits = append(commits, p)
		files = append(files, k)
	}
	return commits, files, nil
}

func (m *s3aMagic) commitTask(ctx context.Context, a *s3aAttempt) error {
	fs := m.j.fs
	commits, _, err := m.loadPending(ctx, a)
	if err == nil && a.failCommitAfter > 0 {
		err = fmt.Errorf("save %s.pendingset: %w", a.taskID, errS3AInjected)
	}
	if err == nil {
		ps := s3aPendingSet{Version: 3, JobID: m.j.uuid, Commits: commits,
			ExtraData: map[string]string{"task.attempt.id": a.id}, IOStatistics: newS3AIOStats(map[string]int64{})}
		_, err = fs.putBytes(ctx, m.jobPath()+"/"+a.taskID+".pendingset", s3aJSON(ps), nil)
	}
	if err != nil {
		// abort what was loaded; the task fails.
		for _, p := range commits {
			if e := s3aIgnoreNoSuchUpload(m.abortSingle(ctx, p)); e != nil {
				return errors.Join(err, e)
			}
		}
		return err
	}
	_, err = fs.delete(ctx, m.taskPath(a), true)
	return err
}

func (m *s3aMagic) abortTask(ctx context.Context, a *s3aAttempt) error {
	fs := m.j.fs
	objs, err := fs.listAll(ctx, m.basePath(a))
	if err != nil {
		return err
	}
	for _, o := range objs {
		k := aws.ToString(o.Key)
		if !strings.HasSuffix(k, ".pending") {
			continue
		}
		b, err := fs.open(ctx, k, aws.ToString(o.ETag))
		if err != nil {
			return err
		}
		var p s3aPendingCommit
		if err := json.Unmarshal(b, &p); err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
		if err := s3aIgnoreNoSuchUpload(m.abortSingle(ctx, p)); err != nil {
			return err
		}
		if err := fs.deleteKeys(ctx, []string{k}); err != nil {
			return err
		}
	}
	_, err = fs.delete(ctx, m.taskPath(a), true)
	return err
}

// cleanup is the end of job commit and all of job abort.
func (m *s3aMagic) cleanup(ctx context.Context) error {
	if err := m.abortUploadsUnder(ctx); err != nil {
		return err
	}
	if _, err := m.j.fs.delete(ctx, m.magicRoot(), true); err != nil {
		return err
	}
	_, err := m.j.fs.delete(ctx, m.j.dest+"/__temp-data", true)
	return err
}

func (m *s3aMagic) commitJob(ctx context.Context) error {
	fs := m.j.fs
	objs, err := fs.list(ctx, m.jobPath(), "/")
	if err != nil {
		return err
	}
	var sets []s3aPendingSet
	for _, o := range objs {
		k := aws.ToString(o.Key)
		if !strings.HasSuffix(k, ".pendingset") {
			continue
		}
		b, err := fs.open(ctx, k, aws.ToString(o.ETag))
		if err != nil {
			return err
		}
		var ps s3aPendingSet
		if err := json.Unmarshal(b, &ps); err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
		sets = append(sets, ps)
	}
	if err := m.commitPendingSets(ctx, sets); err != nil {
		_ = m.cleanup(ctx)
		return err
	}
	if err := m.writeSuccess(ctx, m.name()); err != nil {
		return err
	}
	return m.cleanup(ctx)
}

func (m *s3aMagic) abortJob(ctx context.Context) error { return m.cleanup(ctx) }

// ---------------------------------------------------------------------------
// The staging committers.

type s3aStaging struct {
	s3aCommitterCore
	partitioned bool
	mode        s3aConflict
}

func newS3AStaging(j *s3aJob, partitioned bool, mode s3aConflict) *s3aStaging {
	return &s3aStaging{s3aCommitterCore: s3aCommitterCore{j: j}, partitioned: partitioned, mode: mode}
}

func (s *s3aStaging) name() string {
	if s.partitioned {
		return "partitioned"
	}
	return "directory"
}

// s3aAddUUID is Paths.addUUID: insert -U before the first '.' of the
// file name unless the name already holds U.
func s3aAddUUID(rel, uuid string) string {
	dir, name := path.Split(rel)
	if strings.Contains(name, uuid) {
		return rel
	}
	if i := strings.IndexByte(name, '.'); i >= 0 {
		return dir + name[:i] + "-" + uuid + name[i:]
	}
	return dir + name + "-" + uuid
}

func (s *s3aStaging) finalKey(rel string) string { return s.j.dest + "/" + s3aAddUUID(rel, s.j.uuid) }

// workDir is the local task attempt dir under fs.s3a.buffer.dir.
func (s *s3aStaging) workDir(a *s3aAttempt) string {
	return filepath.Join(s.j.local, "buffer", s.j.uuid, "_temporary", "0", "_temporary", a.id)
}

// clusterJobAttempt is C/_temporary/0, the wrapped FileOutputCommitter's
// job attempt dir on the cluster FS.
func (s *s3aStaging) clusterRoot() string {
	return filepath.Join(s.j.local, "cluster", "user", s.j.uuid)
}
func (s *s3aStaging) clusterJobAttempt() string {
	return filepath.Join(s.clusterRoot(), "staging-uploads", "_temporary", "0")
}

func (s *s3aStaging) setupJob(ctx context.Context) error {
	if !s.partitioned {
		// DirectoryStagingCommitter.setupJob: conflict check on D.
		st, err := s.j.fs.getFileStatus(ctx, s.j.dest)
		if err != nil {
			return err
		}
		if st.kind == s3aFile {
			return fmt.Errorf("%s is a file", s.j.dest)
		}
		if st.kind == s3aDir && s.mode == s3aFail {
			return fmt.Errorf("%s: %w", s.j.dest, errS3APathExists)
		}
	}
	if err := s.commonSetupJob(ctx); err != nil {
		return err
	}
	return os.MkdirAll(s.clusterJobAttempt(), 0o755)
}

func (s *s3aStaging) setupTask(_ context.Context, a *s3aAttempt) error {
	if err := os.RemoveAll(s.workDir(a)); err != nil {
		return err
	}
	return os.MkdirAll(s.workDir(a), 0o755)
}

func (s *s3aStaging) write(_ context.Context, a *s3aAttempt, rel string, data []byte) error {
	p := filepath.Join(s.workDir(a), filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	// LocalFileSystem writes a hidden checksum sidecar next to the file.
	crc := filepath.Join(filepath.Dir(p), "."+filepath.Base(p)+".crc")
	if err := os.WriteFile(crc, []byte("crc"), 0o644); err != nil {
		return err
	}
	return os.WriteFile(p, data, 0o644)
}

func (s *s3aStaging) crashWhileWriting(ctx context.Context, a *s3aAttempt, rel string, data []byte) error {
	return s.write(ctx, a, rel, data[:len(data)/2])
}

// localFiles lists the attempt dir, skipping hidden (_ or .) names.
func (s *s3aStaging) localFiles(a *s3aAttempt) ([]string, error) {
	var rels []string
	root := s.workDir(a)
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || strings.HasPrefix(d.Name(), "_") || strings.HasPrefix(d.Name(), ".") {
			return nil
		}
		r, err := filepath.Rel(root, p)
		rels = append(rels, filepath.ToSlash(r))
		return err
	})
	if os.IsNotExist(err) {
		return nil, nil
	}
	sort.Strings(rels)
	return rels, err
}

func (s *s3aStaging) needsTaskCommit(_ context.Context, a *s3aAttempt) (bool, error) {
	rels, err := s.localFiles(a)
	return len(rels) > 0, err
}

func (s *s3aStaging) commitTask(ctx context.Context, a *s3aAttempt) error {
	fs := s.j.fs
	rels, err := s.localFiles(a)
	if err != nil {
		return err
	}
	if s.partitioned && s.mode == s3aFail {
		parts := map[string]bool{}
		for _, r := range rels {
			parts[path.Dir(r)] = true
		}
		for _, p := range s3aSortedKeys(parts) {
			// getFinalPath(partition + "/file").getParent()
			ok, err := fs.exists(ctx, s3aParent(s.finalKey(p+"/file")))
			if err != nil {
				return err
			}
			if ok {
				return fmt.Errorf("%s/%s: %w", s.j.dest, p, errS3APathExists)
			}
		}
	}
	var commits []s3aPendingCommit
	fail := func(err error) error {
		for _, p := range commits {
			if e := s3aIgnoreNoSuchUpload(s.abortSingle(ctx, p)); e != nil {
				return errors.Join(err, e)
			}
		}
		return err
	}
	for i, r := range rels {
		if a.failCommitAfter > 0 && i == a.failCommitAfter {
			return fail(fmt.Errorf("upload %s: %w", r, errS3AInjected))
		}
		data, err := os.ReadFile(filepath.Join(s.workDir(a), filepath.FromSlash(r)))
		if err != nil {
			return fail(err)
		}
		u, err := fs.initiate(ctx, s.finalKey(r))
		if err != nil {
			return fail(err)
		}
		tail, err := u.fullParts(ctx, data)
		if err == nil {
			err = u.part(ctx, tail) // at least one part, even for an empty file
		}
		text := ""
		if s.partitioned {
			text = "partition: " + path.Dir(r)
		}
		commits = append(commits, s.newPending(u, a.taskID, text, int64(len(data))))
		if err != nil {
			return fail(err)
		}
	}
	ps := s3aPendingSet{Version: 3, JobID: s.j.uuid, Commits: commits,
		ExtraData: map[string]string{"task.attempt.id": a.id}, IOStatistics: newS3AIOStats(map[string]int64{})}
	// The wrapped FileOutputCommitter v1: the pendingset is the task
	// attempt "file", renamed to the committed task path.
	attemptFile := filepath.Join(s.clusterJobAttempt(), "_temporary", a.id)
	if err := os.MkdirAll(filepath.Dir(attemptFile), 0o755); err != nil {
		return fail(err)
	}
	if err := os.WriteFile(attemptFile, s3aJSON(ps), 0o644); err != nil {
		return fail(err)
	}
	committedTask := filepath.Join(s.clusterJobAttempt(), a.taskID)
	if err := os.RemoveAll(committedTask); err != nil {
		return fail(err)
	}
	if err := os.Rename(attemptFile, committedTask); err != nil {
		return fail(err)
	}
	return os.RemoveAll(s.workDir(a))
}

func (s *s3aStaging) abortTask(_ context.Context, a *s3aAttempt) error {
	if err := os.RemoveAll(s.workDir(a)); err != nil {
		return err
	}
	return os.RemoveAll(filepath.Join(s.clusterJobAttempt(), "_temporary", a.id))
}

func (s *s3aStaging) loadPendingSets() ([]s3aPendingSet, error) {
	ents, err := os.ReadDir(s.clusterJobAttempt())
	if err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	var sets []s3aPendingSet
	for _, e := range ents {
		if e.IsDir() || strings.HasPrefix(e.Name(), "_") || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(s.clusterJobAttempt(), e.Name()))
		if err != nil {
			return nil, err
		}
		var ps s3aPendingSet
		if err := json.Unmarshal(b, &ps); err != nil {
			return nil, fmt.Errorf("%s: %w", e.Name(), err)
		}
		sets = append(sets, ps)
	}
	return sets, nil
}

// cleanup: wrapped cleanupJob and the staging dirs (local), delete
// D/_temporary (probe only), abort uploads under D/.
func (s *s3aStaging) cleanup(ctx context.Context) error {
	if err := os.RemoveAll(s.clusterRoot()); err != nil {
		return err
	}
	if _, err := s.j.fs.delete(ctx, s.j.dest+"/_temporary", true); err != nil {
		return err
	}
	if err := os.RemoveAll(filepath.Join(s.j.local, "buffer", s.j.uuid)); err != nil {
		return err
	}
	return s.abortUploadsUnder(ctx)
}

func (s *s3aStaging) commitJob(ctx context.Context) error {
	fs := s.j.fs
	sets, err := s.loadPendingSets() // the pre-commit check loads all
	if err != nil {
		return err
	}
	switch {
	case s.mode == s3aReplace && !s.partitioned:
		if _, err := fs.delete(ctx, s.j.dest, true); err != nil {
			return err
		}
	case s.mode == s3aReplace && s.partitioned:
		parts := map[string]bool{}
		for _, ps := range sets {
			for _, p := range ps.Commits {
				parts[s3aParent(p.DestinationKey)] = true
			}
		}
		for _, p := range s3aSortedKeys(parts) {
			if _, err := fs.delete(ctx, p, true); err != nil {
				return err
			}
		}
	}
	if err := s.commitPendingSets(ctx, sets); err != nil {
		_ = s.cleanup(ctx)
		return err
	}
	if err := s.writeSuccess(ctx, s.name()); err != nil {
		return err
	}
	return s.cleanup(ctx)
}

// abortJob aborts every upload in the pendingsets; an upload that is
// already gone (404) means its object may exist: delete it.
func (s *s3aStaging) abortJob(ctx context.Context) error {
	sets, err := s.loadPendingSets()
	if err != nil {
		return err
	}
	for _, ps := range sets {
		for _, p := range ps.Commits {
			err := s.abortSingle(ctx, p)
			if s3aStatusOf(err) == http.StatusNotFound {
				_, err = s.j.fs.delete(ctx, p.DestinationKey, false)
			}
			if err != nil {
				return err
			}
		}
	}
	return s.cleanup(ctx)
}

// ---------------------------------------------------------------------------
// FileOutputCommitter over s3a (renames are copy + delete).

type s3aFOC struct {
	j       *s3aJob
	version int
}

func newS3AFOC(j *s3aJob, version int) *s3aFOC { return &s3aFOC{j: j, version: version} }

func (f *s3aFOC) name() string                     { return "" }
func (f *s3aFOC) job() *s3aJob                     { return f.j }
func (f *s3aFOC) deletesSuccessAtSetup() bool      { return false }
func (f *s3aFOC) finalKey(rel string) string       { return f.j.dest + "/" + rel }
func (f *s3aFOC) pending() string                  { return f.j.dest + "/_temporary" }
func (f *s3aFOC) jobAttempt() string               { return f.pending() + "/0" }
func (f *s3aFOC) taskAttempt(a *s3aAttempt) string { return f.jobAttempt() + "/_temporary/" + a.id }
func (f *s3aFOC) committedTask(a *s3aAttempt) string {
	return f.jobAttempt() + "/" + a.taskID
}

func (f *s3aFOC) setupJob(ctx context.Context) error { return f.j.fs.mkdirs(ctx, f.jobAttempt()) }

func (f *s3aFOC) setupTask(context.Context, *s3aAttempt) error { return nil }

// write: TextOutputFormat creates with overwrite=false.
func (f *s3aFOC) write(ctx context.Context, a *s3aAttempt, rel string, data []byte) error {
	return f.j.fs.create(ctx, f.taskAttempt(a)+"/"+rel, data, false)
}

// crashWhileWriting: the probes and, for data over a block, the upload of
// the full blocks; nothing is visible.
func (f *s3aFOC) crashWhileWriting(ctx context.Context, a *s3aAttempt, rel string, data []byte) error {
	key := f.taskAttempt(a) + "/" + rel
	if _, err := f.j.fs.dirProbe(ctx, key); err != nil {
		return err
	}
	if _, err := f.j.fs.head(ctx, key); err != nil {
		return err
	}
	if len(data) <= s3aPartSize {
		return nil
	}
	u, err := f.j.fs.initiate(ctx, key)
	if err != nil {
		return err
	}
	_, err = u.fullParts(ctx, data)
	return err
}

func (f *s3aFOC) needsTaskCommit(ctx context.Context, a *s3aAttempt) (bool, error) {
	return f.j.fs.exists(ctx, f.taskAttempt(a))
}

// mergePaths is FileOutputCommitter.mergePaths; renamed counts renamed
// files (for failure injection).
func (f *s3aFOC) mergePaths(ctx context.Context, from string, fromKind s3aKind, to string, renamed *int, limit int) error {
	fs := f.j.fs
	rename := func(src, dst string) error {
		if limit > 0 && *renamed >= limit {
			return fmt.Errorf("rename %s: %w", src, errS3AInjected)
		}
		*renamed++
		return fs.rename(ctx, src, dst)
	}
	toSt, err := fs.getFileStatus(ctx, to) // exists(to)
	if err != nil {
		return err
	}
	if fromKind == s3aFile {
		if toSt.kind != s3aMissing {
			if _, err := fs.delete(ctx, to, true); err != nil {
				return err
			}
		}
		return rename(from, to)
	}
	if toSt.kind == s3aDir {
		if _, err := fs.getFileStatus(ctx, to); err != nil { // getFileStatus(to)
			return err
		}
		files, dirs, err := fs.listStatus(ctx, from)
		if err != nil {
			return err
		}
		for _, o := range files {
			k := aws.ToString(o.Key)
			if err := f.mergePaths(ctx, k, s3aFile, to+"/"+s3aBase(k), renamed, limit); err != nil {
				return err
			}
		}
		for _, d := range dirs {
			if err := f.mergePaths(ctx, d, s3aDir, to+"/"+s3aBase(d), renamed, limit); err != nil {
				return err
			}
		}
		return nil
	}
	if toSt.kind == s3aFile {
		if _, err := fs.delete(ctx, to, true); err != nil {
			return err
		}
	}
	// renameOrMerge
	if f.version == 1 {
		if limit > 0 {
			// only for failure injection (not a Hadoop call)
			n, err := fs.listAll(ctx, from)
			if err != nil {
				return err
			}
			if *renamed+len(n) > limit {
				return fmt.Errorf("rename %s: %w", from, errS3AInjected)
			}
			*renamed += len(n)
		}
		return fs.rename(ctx, from, to)
	}
	if err := fs.mkdirs(ctx, to); err != nil {
		return err
	}
	files, dirs, err := fs.listStatus(ctx, from)
	if err != nil {
		return err
	}
	for _, o := range files {
		k := aws.ToString(o.Key)
		if err := f.mergePaths(ctx, k, s3aFile, to+"/"+s3aBase(k), renamed, limit); err != nil {
			return err
		}
	}
	for _, d := range dirs {
		if err := f.mergePaths(ctx, d, s3aDir, to+"/"+s3aBase(d), renamed, limit); err != nil {
			return err
		}
	}
	return nil
}

func (f *s3aFOC) commitTask(ctx context.Context, a *s3aAttempt) error {
	fs := f.j.fs
	st, err := fs.getFileStatus(ctx, f.taskAttempt(a))
	if err != nil || st.kind == s3aMissing {
		return err
	}
	renamed := 0
	if f.version == 1 {
		ok, err := fs.exists(ctx, f.committedTask(a))
		if err != nil {
			return err
		}
		if ok {
			if _, err := fs.delete(ctx, f.committedTask(a), true); err != nil {
				return err
			}
		}
		if a.failCommitAfter > 0 {
			// The rename of the attempt dir dies after some objects:
			// copy+delete the first files one by one, then fail.
			objs, err := fs.listAll(ctx, f.taskAttempt(a))
			if err != nil {
				return err
			}
			for _, o := range objs[:min(a.failCommitAfter, len(objs))] {
				k := aws.ToString(o.Key)
				if err := fs.copyObject(ctx, k, f.committedTask(a)+strings.TrimPrefix(k, f.taskAttempt(a)), aws.ToString(o.ETag)); err != nil {
					return err
				}
				if err := fs.deleteKeys(ctx, []string{k}); err != nil {
					return err
				}
			}
			return fmt.Errorf("rename %s: %w", f.taskAttempt(a), errS3AInjected)
		}
		return fs.rename(ctx, f.taskAttempt(a), f.committedTask(a))
	}
	return f.mergePaths(ctx, f.taskAttempt(a), s3aDir, f.j.dest, &renamed, a.failCommitAfter)
}

func (f *s3aFOC) abortTask(ctx context.Context, a *s3aAttempt) error {
	_, err := f.j.fs.delete(ctx, f.taskAttempt(a), true)
	return err
}

func (f *s3aFOC) commitJob(ctx context.Context) error {
	fs := f.j.fs
	if f.version == 1 {
		_, dirs, err := fs.listStatus(ctx, f.jobAttempt())
		if err != nil {
			return err
		}
		for _, d := range dirs {
			if s3aBase(d) == "_temporary" {
				continue
			}
			renamed := 0
			if err := f.mergePaths(ctx, d, s3aDir, f.j.dest, &renamed, 0); err != nil {
				return err
			}
		}
	}
	if _, err := fs.delete(ctx, f.pending(), true); err != nil {
		return err
	}
	return fs.create(ctx, f.j.dest+"/_SUCCESS", nil, true)
}

func (f *s3aFOC) abortJob(ctx context.Context) error {
	_, err := f.j.fs.delete(ctx, f.pending(), true)
	return err
}

// ---------------------------------------------------------------------------
// The driver.

// s3aFileSpec is one output file of a task.
type s3aFileSpec struct {
	rel  string
	size int
}

// s3aPlan is what a job does.
type s3aPlan struct {
	tasks int
	files func(task int) []s3aFileSpec
	// crashTask's first attempt dies while writing its third file and is
	// aborted; the retry succeeds (-1: none).
	crashTask int
	// commitFailTask's first attempt fails in commitTask after two files
	// and is aborted; the retry succeeds (-1: none).
	commitFailTask int
	// speculativeTask gets a second, speculative attempt that writes the
	// same files with other bytes and is denied the commit (-1: none).
	speculativeTask int
	// maxAttempts per task (spark.task.maxFailures).
	maxAttempts int
	// beforeJobCommit runs after every task has finished.
	beforeJobCommit func(ctx context.Context) error
	// abort: abortJob instead of commitJob; tasks 0..abortAfter-1 commit,
	// task abortAfter dies while writing (its executor is lost: no
	// abortTask), the rest never run.
	abort      bool
	abortAfter int
}

// s3aContent is the reproducible content of one file written by one
// attempt.
func s3aContent(uuid, rel string, attempt, size int) []byte {
	h := sha256.Sum256([]byte(fmt.Sprintf("%s|%s|%d", uuid, rel, attempt)))
	r := rand.New(rand.NewPCG(uint64(h[0])|uint64(h[1])<<8|uint64(h[2])<<16|uint64(h[3])<<24, uint64(h[4])))
	b := make([]byte, size)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// s3aJobResult is what a job left: the files of the committed attempts
// (final key → bytes).
type s3aJobResult struct {
	files map[string][]byte
}

// runS3AJob drives one job through committer c as Spark's
// FileFormatWriter and the commit coordinator would. Each phase's requests
// are labelled "<phase>" / "<phase> <attempt id>" for the recorder.
func runS3AJob(ctx context.Context, c s3aCommitter, plan s3aPlan) (s3aJobResult, error) {
	j := c.job()
	res := s3aJobResult{files: map[string][]byte{}}
	if err := c.setupJob(s3aWithPhase(ctx, "setupJob")); err != nil {
		return res, fmt.Errorf("setupJob: %w", err)
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make([]error, plan.tasks)
	tasks := plan.tasks
	if plan.abort {
		tasks = plan.abortAfter + 1
	}
	for task := range tasks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if plan.abort && task == plan.abortAfter {
				a := j.newAttempt(task, 0)
				actx := s3aWithPhase(ctx, "crash "+a.id)
				if err := c.setupTask(actx, a); err != nil {
					errs[task] = err
					return
				}
				fs := plan.files(task)
				errs[task] = c.crashWhileWriting(actx, a, fs[0].rel, s3aContent(j.uuid, fs[0].rel, 0, fs[0].size))
				return
			}
			files, err := runS3ATask(ctx, c, plan, task)
			if err != nil {
				errs[task] = err
				return
			}
			mu.Lock()
			for k, v := range files {
				res.files[k] = v
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	jerr := errors.Join(errs...)
	if jerr == nil && plan.beforeJobCommit != nil {
		jerr = plan.beforeJobCommit(ctx)
	}
	if jerr != nil || plan.abort {
		if err := c.abortJob(s3aWithPhase(ctx, "abortJob")); err != nil {
			return res, errors.Join(jerr, fmt.Errorf("abortJob: %w", err))
		}
		// res.files keeps what the committed tasks wrote: with
		// FileOutputCommitter v2 it is already in the output.
		return res, jerr
	}
	if err := c.commitJob(s3aWithPhase(ctx, "commitJob")); err != nil {
		return res, fmt.Errorf("commitJob: %w", err)
	}
	return res, nil
}

// runS3ATask runs the attempts of one task until one commits.
func runS3ATask(ctx context.Context, c s3aCommitter, plan s3aPlan, task int) (map[string][]byte, error) {
	j := c.job()
	specs := plan.files(task)
	var lastErr error
	next := 0
	for try := 0; try < plan.maxAttempts; try++ {
		a := j.newAttempt(task, next)
		next++
		crash := task == plan.crashTask && try == 0
		if task == plan.commitFailTask && try == 0 {
			a.failCommitAfter = 2
		}
		written := map[string][]byte{}
		err := func() error {
			actx := s3aWithPhase(ctx, "setupTask "+a.id)
			if err := c.setupTask(actx, a); err != nil {
				return err
			}
			wctx := s3aWithPhase(ctx, "write "+a.id)
			for i, f := range specs {
				data := s3aContent(j.uuid, f.rel, a.attempt, f.size)
				if crash && i == 2 {
					if err := c.crashWhileWriting(wctx, a, f.rel, data); err != nil {
						return err
					}
					return fmt.Errorf("task died writing %s: %w", f.rel, errS3AInjected)
				}
				if err := c.write(wctx, a, f.rel, data); err != nil {
					return err
				}
				written[c.finalKey(f.rel)] = data
			}
			if task == plan.speculativeTask && try == 0 {
				// A speculative copy runs alongside, writes the same
				// files, and loses the race to the commit coordinator.
				s := j.newAttempt(task, next)
				next++
				sctx := s3aWithPhase(ctx, "setupTask "+s.id)
				if err := c.setupTask(sctx, s); err != nil {
					return err
				}
				for _, f := range specs {
					if err := c.write(s3aWithPhase(ctx, "write "+s.id), s, f.rel, s3aContent(j.uuid, f.rel, s.attempt, f.size)); err != nil {
						return err
					}
				}
				if err := c.abortTask(s3aWithPhase(ctx, "abortTask "+s.id), s); err != nil {
					return fmt.Errorf("abortTask %s: %w", s.id, err)
				}
			}
			need, err := c.needsTaskCommit(s3aWithPhase(ctx, "needsTaskCommit "+a.id), a)
			if err != nil || !need {
				return err
			}
			return c.commitTask(s3aWithPhase(ctx, "commitTask "+a.id), a)
		}()
		if err == nil {
			return written, nil
		}
		lastErr = fmt.Errorf("%s: %w", a.id, err)
		if !errors.Is(err, errS3AInjected) && !errors.Is(err, errS3APathExists) {
			return nil, lastErr // a server problem: no point retrying
		}
		if aerr := c.abortTask(s3aWithPhase(ctx, "abortTask "+a.id), a); aerr != nil {
			return nil, errors.Join(lastErr, fmt.Errorf("abortTask %s: %w", a.id, aerr))
		}
	}
	return nil, lastErr
}

func s3aSortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func s3aSHA(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:8])
}
