package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

const (
	s3aRootUser   = "s3a-committer-root"
	s3aRootSecret = "s3a-committer-root-secret"
	// s3aDest is the output directory (D) of every job.
	s3aDest = "out"
	// s3aJT is the job tracker id of the attempt ids.
	s3aJT = "20261127120000"
)

// s3aEnv is a running server and a recording client.
type s3aEnv struct {
	srv *server
	rec *s3aRecorder
	c   *s3.Client
}

func startS3AEnv(t *testing.T) *s3aEnv {
	t.Helper()
	t.Setenv("CAIRN_ROOT_USER", s3aRootUser)
	t.Setenv("CAIRN_ROOT_PASSWORD", s3aRootSecret)
	srv := startServer(t, t.TempDir())
	srv.waitReady(20 * time.Second)
	rec := newS3ARecorder()
	return &s3aEnv{srv: srv, rec: rec, c: newS3AClient(srv.url(""), s3aRootUser, s3aRootSecret, rec)}
}

// s3aCtx is the test's context: the whole test is bounded.
func s3aCtx(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func (e *s3aEnv) bucket(t *testing.T, ctx context.Context, name string) *s3aFS {
	t.Helper()
	cctx, cancel := context.WithTimeout(ctx, s3aCallTimeout)
	defer cancel()
	if _, err := e.c.CreateBucket(cctx, &s3.CreateBucketInput{Bucket: aws.String(name)}); err != nil {
		t.Fatalf("CreateBucket %s: %v", name, err)
	}
	return &s3aFS{c: e.c, bucket: name}
}

// s3aTaskFiles are the 5 files of a task: Spark names, two date
// partitions. Task 0's first file is empty (a single 0-byte part), task
// 3's third file is a two-part upload.
func s3aTaskFiles(uuid string) func(int) []s3aFileSpec {
	return func(task int) []s3aFileSpec {
		names := []string{
			"date=2026-11-27/part-%05d-%s-c000.csv",
			"date=2026-11-27/part-%05d-%s-c001.csv",
			"date=2026-11-28/part-%05d-%s-c000.csv",
			"date=2026-11-28/part-%05d-%s-c001.csv",
			"date=2026-11-28/part-%05d-%s-c002.csv",
		}
		var out []s3aFileSpec
		for j, n := range names {
			size := 1000 + 997*(5*task+j)
			switch {
			case task == 0 && j == 0:
				size = 0
			case task == 3 && j == 2:
				size = s3aPartSize + 1234
			}
			out = append(out, s3aFileSpec{rel: fmt.Sprintf(n, task, uuid), size: size})
		}
		return out
	}
}

// s3aSeed is the output of an earlier job: three files in partitions
// 2026-11-26 and 2026-11-27 and a 0-byte _SUCCESS.
func s3aSeed() map[string][]byte {
	return map[string][]byte{
		s3aDest + "/date=2026-11-26/part-00000-0ld0b-c000.csv": []byte("old,26\n"),
		s3aDest + "/date=2026-11-27/part-00000-0ld0b-c000.csv": []byte("old,27,a\n"),
		s3aDest + "/date=2026-11-27/part-00001-0ld0b-c000.csv": []byte("old,27,b\n"),
		s3aDest + "/_SUCCESS": {},
	}
}

func s3aNewCommitter(kind string, mode s3aConflict, j *s3aJob) s3aCommitter {
	switch kind {
	case "magic":
		return newS3AMagic(j)
	case "directory":
		return newS3AStaging(j, false, mode)
	case "partitioned":
		return newS3AStaging(j, true, mode)
	case "foc-v1":
		return newS3AFOC(j, 1)
	case "foc-v2":
		return newS3AFOC(j, 2)
	}
	panic(kind)
}

// s3aState is the expected content of the output: key → bytes.
type s3aState map[string][]byte

func (s s3aState) clone() s3aState {
	out := s3aState{}
	for k, v := range s {
		out[k] = v
	}
	return out
}

// visible lists the files under D (recursive), leaving out the directory
// marker D/ and, with hideWork, the committers' work areas.
func s3aVisible(ctx context.Context, fs *s3aFS, hideWork bool) ([]types.Object, error) {
	objs, err := fs.listAll(ctx, s3aDest)
	if err != nil {
		return nil, err
	}
	var out []types.Object
	for _, o := range objs {
		k := aws.ToString(o.Key)
		if k == s3aDest+"/" {
			continue
		}
		if hideWork && (strings.Contains(k, "/__magic_job-") || strings.Contains(k, "/_temporary/")) {
			continue
		}
		out = append(out, o)
	}
	return out, nil
}

// s3aCheckOutput checks that exactly want (plus _SUCCESS when success is
// not nil) is visible under D, with the right bytes, and the listing's
// ETags match HEAD; success checks the _SUCCESS body.
func s3aCheckOutput(t *testing.T, ctx context.Context, fs *s3aFS, want s3aState, success func([]byte) error) {
	t.Helper()
	objs, err := s3aVisible(ctx, fs, false)
	if err != nil {
		t.Fatal(err)
	}
	// Directory markers S3A leaves (3.4 keeps them: mkdirs in
	// FileOutputCommitter v2's merge) are allowed for directories that
	// hold expected files; any other marker is garbage.
	dirs := map[string]bool{}
	for k := range want {
		for d := path.Dir(k); d != "." && d != s3aDest; d = path.Dir(d) {
			dirs[d+"/"] = true
		}
	}
	var got []string
	listed := map[string]types.Object{}
	for _, o := range objs {
		k := aws.ToString(o.Key)
		if strings.HasSuffix(k, "/") && dirs[k] && aws.ToInt64(o.Size) == 0 {
			continue
		}
		got = append(got, k)
		listed[k] = o
	}
	wantKeys := s3aSortedKeys(want)
	if success != nil {
		wantKeys = append(wantKeys, s3aDest+"/_SUCCESS")
		sort.Strings(wantKeys)
	}
	if d := s3aDiff(got, wantKeys); d != "" {
		t.Fatalf("LIST %s/: %s\ngot:  %q\nwant: %q", s3aDest, d, got, wantKeys)
	}
	for _, k := range got {
		o := listed[k]
		body, err := fs.open(ctx, k, aws.ToString(o.ETag)) // GET If-Match the listed ETag
		if err != nil {
			t.Fatalf("read %s: %v", k, err)
		}
		h, err := fs.head(ctx, k)
		if err != nil || h == nil {
			t.Fatalf("HEAD %s: %v (found %v)", k, err, h != nil)
		}
		if aws.ToString(h.ETag) != aws.ToString(o.ETag) || aws.ToInt64(h.ContentLength) != aws.ToInt64(o.Size) {
			t.Errorf("%s: HEAD ETag %s size %d, LIST ETag %s size %d", k, aws.ToString(h.ETag), aws.ToInt64(h.ContentLength),
				aws.ToString(o.ETag), aws.ToInt64(o.Size))
		}
		if k == s3aDest+"/_SUCCESS" && success != nil {
			if err := success(body); err != nil {
				t.Errorf("_SUCCESS: %v\n%s", err, body)
			}
			continue
		}
		if w := want[k]; !bytes.Equal(body, w) {
			t.Errorf("%s: %d bytes sha %s, want %d bytes sha %s", k, len(body), s3aSHA(body), len(w), s3aSHA(w))
		}
	}
}

// s3aCheckNoUploads fails if any multipart upload is left in the bucket.
func s3aCheckNoUploads(t *testing.T, ctx context.Context, fs *s3aFS, when string) {
	t.Helper()
	ups, err := fs.listUploads(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range ups {
		t.Errorf("%s: upload left behind: %s %s initiated %v", when, aws.ToString(u.Key), aws.ToString(u.UploadId), aws.ToTime(u.Initiated))
	}
}

// s3aSuccessCheck checks a _SUCCESS body: 0 bytes for FileOutputCommitter,
// else SuccessData naming exactly the committed files.
func s3aSuccessCheck(committer, uuid string, files map[string][]byte) func([]byte) error {
	return func(body []byte) error {
		if committer == "" {
			if len(body) != 0 {
				return fmt.Errorf("FileOutputCommitter _SUCCESS has %d bytes, want 0", len(body))
			}
			return nil
		}
		var sd s3aSuccessData
		if err := json.Unmarshal(body, &sd); err != nil {
			return err
		}
		if sd.Name != s3aSuccessName || sd.Committer != committer || sd.JobID != uuid {
			return fmt.Errorf("name %q committer %q jobId %q, want %q %q %q", sd.Name, sd.Committer, sd.JobID, s3aSuccessName, committer, uuid)
		}
		var want []string
		for k := range files {
			want = append(want, "/"+k)
		}
		sort.Strings(want)
		got := append([]string(nil), sd.Filenames...)
		sort.Strings(got)
		if d := s3aDiff(got, want); d != "" {
			return fmt.Errorf("filenames: %s", d)
		}
		return nil
	}
}

func s3aDiff(got, want []string) string {
	g, w := map[string]bool{}, map[string]bool{}
	for _, k := range got {
		g[k] = true
	}
	for _, k := range want {
		w[k] = true
	}
	var extra, missing []string
	for _, k := range got {
		if !w[k] {
			extra = append(extra, k)
		}
	}
	for _, k := range want {
		if !g[k] {
			missing = append(missing, k)
		}
	}
	if len(extra) == 0 && len(missing) == 0 && len(got) == len(want) {
		return ""
	}
	return fmt.Sprintf("%d keys, want %d; unexpected %q; missing %q", len(got), len(want), extra, missing)
}
