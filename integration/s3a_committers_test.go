package integration

// End-to-end runs of Hadoop's output committers against cairn serve, using
// the call-for-call replays of s3a_replay_test.go: the magic committer,
// the directory and partitioned staging committers (conflict modes fail,
// append, replace) and FileOutputCommitter v1/v2 over s3a.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
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

// s3aCase is one row of the committer table.
type s3aCase struct {
	name      string
	committer string
	mode      s3aConflict
	seed      bool  // the output already holds an earlier job's files
	wantErr   error // the job fails with this (and is not committed)
}

func TestS3ACommitters(t *testing.T) {
	ctx := s3aCtx(t, 60*time.Second)
	env := startS3AEnv(t)
	cases := []s3aCase{
		{name: "magic/new", committer: "magic"},
		{name: "magic/existing", committer: "magic", seed: true},
		{name: "directory/fail/new", committer: "directory", mode: s3aFail},
		{name: "directory/fail/existing", committer: "directory", mode: s3aFail, seed: true, wantErr: errS3APathExists},
		{name: "directory/append", committer: "directory", mode: s3aAppend, seed: true},
		{name: "directory/replace", committer: "directory", mode: s3aReplace, seed: true},
		{name: "partitioned/fail/new", committer: "partitioned", mode: s3aFail},
		{name: "partitioned/fail/existing", committer: "partitioned", mode: s3aFail, seed: true, wantErr: errS3APathExists},
		{name: "partitioned/append", committer: "partitioned", mode: s3aAppend, seed: true},
		{name: "partitioned/replace", committer: "partitioned", mode: s3aReplace, seed: true},
		{name: "foc-v1", committer: "foc-v1", seed: true},
		{name: "foc-v2", committer: "foc-v2", seed: true},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			runS3ACase(t, ctx, env, fmt.Sprintf("s3a-committer-%02d", i), tc)
		})
	}
}

func runS3ACase(t *testing.T, ctx context.Context, env *s3aEnv, bucket string, tc s3aCase) {
	fs := env.bucket(t, ctx, bucket)
	ctx = s3aWithScope(ctx, bucket)
	state := s3aState{}
	if tc.seed {
		for k, v := range s3aSeed() {
			if _, err := fs.putBytes(s3aWithPhase(ctx, "seed"), k, v, nil); err != nil {
				t.Fatal(err)
			}
			state[k] = v
		}
	}
	hasSuccess := func(s s3aState) func([]byte) error {
		if _, ok := s[s3aDest+"/_SUCCESS"]; ok {
			return func(b []byte) error {
				if len(b) != 0 {
					return errors.New("not the seed's _SUCCESS")
				}
				return nil
			}
		}
		return nil
	}
	withoutSuccess := func(s s3aState) s3aState {
		s = s.clone()
		delete(s, s3aDest+"/_SUCCESS")
		return s
	}

	// The job: 4 tasks x 5 files; task 1's first attempt fails in task
	// commit, task 2's first attempt dies while writing, task 3 has a
	// speculative attempt that loses; all are aborted and retried.
	uuid := fmt.Sprintf("0a1b2c3d-%04d-4000-8000-%012d", len(bucket), time.Now().UnixNano()%1e12)
	j := &s3aJob{fs: fs, dest: s3aDest, uuid: uuid, jt: s3aJT, jobNum: 1, abortPendingUploads: true, local: t.TempDir()}
	c := s3aNewCommitter(tc.committer, tc.mode, j)
	before := state.clone()
	if c.deletesSuccessAtSetup() {
		before = withoutSuccess(before)
	}
	plan := s3aPlan{tasks: 4, files: s3aTaskFiles(uuid), crashTask: 2, commitFailTask: 1, speculativeTask: 3, maxAttempts: 2,
		beforeJobCommit: func(ctx context.Context) error {
			return s3aCheckBeforeJobCommit(ctx, fs, tc.committer, before)
		}}
	res, err := runS3AJob(ctx, c, plan)
	switch {
	case tc.wantErr != nil:
		if !errors.Is(err, tc.wantErr) {
			t.Fatalf("job: %v, want %v", err, tc.wantErr)
		}
		t.Logf("job failed as expected: %v", err)
		if tc.committer == "directory" {
			before = state // setupJob failed before deleting _SUCCESS
		}
		s3aCheckOutput(t, ctx, fs, withoutSuccess(before), hasSuccess(before))
		s3aCheckNoUploads(t, ctx, fs, "after the failed job")
		state = before
	case err != nil:
		t.Fatalf("job: %v", err)
	default:
		after := state.clone()
		delete(after, s3aDest+"/_SUCCESS")
		switch {
		case tc.mode == s3aReplace && tc.committer == "directory":
			after = s3aState{}
		case tc.mode == s3aReplace && tc.committer == "partitioned":
			for k := range res.files {
				for old := range after {
					if path.Dir(old) == path.Dir(k) {
						delete(after, old)
					}
				}
			}
		}
		for k, v := range res.files {
			after[k] = v
		}
		if len(res.files) != 20 {
			t.Errorf("%d files committed, want 20", len(res.files))
		}
		s3aCheckOutput(t, ctx, fs, after, s3aSuccessCheck(c.name(), uuid, res.files))
		s3aCheckNoUploads(t, ctx, fs, "after job commit")
		s3aCheckCalls(t, env.rec, bucket+": ", c, plan)
		state = after
		state[s3aDest+"/_SUCCESS"] = nil
	}
	if t.Failed() {
		return
	}

	// A second job that is aborted: tasks 0 and 1 commit (or fail the
	// conflict check), task 2 dies while writing, job abort.
	uuid2 := strings.Replace(uuid, "0a1b2c3d", "0a1b2c3e", 1)
	j2 := &s3aJob{fs: fs, dest: s3aDest, uuid: uuid2, jt: s3aJT, jobNum: 2, abortPendingUploads: true, local: t.TempDir()}
	c2 := s3aNewCommitter(tc.committer, tc.mode, j2)
	res2, err := runS3AJob(ctx, c2, s3aPlan{tasks: 4, files: s3aTaskFiles(uuid2), crashTask: -1, commitFailTask: -1, speculativeTask: -1,
		maxAttempts: 1, abort: true, abortAfter: 2})
	if err != nil && !errors.Is(err, errS3APathExists) {
		t.Fatalf("aborted job: %v", err)
	}
	if tc.committer == "foc-v2" {
		// v2 task commit merges into the output: the committed tasks of
		// the aborted job stay visible (FileOutputCommitter v2 is not
		// atomic at job level).
		if len(res2.files) != 10 {
			t.Errorf("aborted v2 job: %d files from committed tasks, want 10", len(res2.files))
		}
		for k, v := range res2.files {
			state[k] = v
		}
	}
	if c2.deletesSuccessAtSetup() && (tc.committer != "directory" || tc.mode != s3aFail) {
		delete(state, s3aDest+"/_SUCCESS")
	}
	if _, ok := state[s3aDest+"/_SUCCESS"]; ok {
		files := withoutSuccess(state)
		s3aCheckOutput(t, ctx, fs, files, func(b []byte) error { return nil })
	} else {
		s3aCheckOutput(t, ctx, fs, state, nil)
	}
	s3aCheckNoUploads(t, ctx, fs, "after job abort")
}

// s3aCheckBeforeJobCommit: every task is done, nothing new is visible
// (except with FileOutputCommitter v2) and the pending uploads are those
// of the committed attempts plus, for the magic committer, the one the
// crashed attempt left (it never wrote its .pending).
func s3aCheckBeforeJobCommit(ctx context.Context, fs *s3aFS, committer string, before s3aState) error {
	objs, err := s3aVisible(ctx, fs, true)
	if err != nil {
		return err
	}
	if committer != "foc-v2" {
		var got []string
		for _, o := range objs {
			got = append(got, aws.ToString(o.Key))
		}
		if d := s3aDiff(got, s3aSortedKeys(before)); d != "" {
			return fmt.Errorf("before job commit, LIST %s/ shows uncommitted output: %s", s3aDest, d)
		}
		// No phantom directory for the new partition.
		if st, err := fs.getFileStatus(ctx, s3aDest+"/date=2026-11-28"); err != nil || st.kind != s3aMissing {
			return fmt.Errorf("before job commit, %s/date=2026-11-28 is visible (kind %d, %v)", s3aDest, st.kind, err)
		}
	}
	ups, err := fs.listUploads(ctx, "")
	if err != nil {
		return err
	}
	want := map[string]int{"magic": 21, "directory": 20, "partitioned": 20}[committer]
	if len(ups) != want {
		var keys []string
		for _, u := range ups {
			keys = append(keys, aws.ToString(u.Key))
		}
		return fmt.Errorf("before job commit: %d pending uploads, want %d: %q", len(ups), want, keys)
	}
	return nil
}

// s3aCheckCalls compares the recorded requests of task 0's commit (and,
// for the S3A committers, of job commit) with what Hadoop sends.
func s3aCheckCalls(t *testing.T, rec *s3aRecorder, scope string, c s3aCommitter, plan s3aPlan) {
	t.Helper()
	j := c.job()
	a := j.newAttempt(0, 0)
	subst := map[string]string{j.uuid: "U", a.id: "A", a.taskID: "TK", s3aDest: "D"}
	var rels []string
	for _, f := range plan.files(0) {
		rels = append(rels, f.rel)
	}
	sort.Strings(rels)
	relU := func(r string) string { return strings.ReplaceAll(r, j.uuid, "U") }
	var want []string
	got := s3aRender(rec.phase(scope+"commitTask "+a.id), subst)
	tail := 0 // trailing requests that depend on the other tasks' timing
	switch m := c.(type) {
	case *s3aMagic:
		subst[m.taskPath(a)] = "T"
		subst[m.jobPath()] = "J"
		got = s3aRender(rec.phase(scope+"commitTask "+a.id), subst)
		want = append(want, "ListObjectsV2 T/__base/ 200")
		for _, r := range rels {
			want = append(want, "GetObject T/__base/"+relU(r)+".pending 200")
		}
		want = append(want, "PutObject J/TK.pendingset 200", "HeadObject T 404", "ListObjectsV2 T/ 200", "ListObjectsV2 T/ 200", "DeleteObjects 200")
		var w []string
		for _, r := range plan.files(0) {
			w = append(w, "CreateMultipartUpload D/"+relU(r.rel)+" 200", "UploadPart D/"+relU(r.rel)+" 200",
				"PutObject T/__base/"+relU(r.rel)+" 200", "PutObject T/__base/"+relU(r.rel)+".pending 200")
		}
		s3aCompare(t, "magic write "+a.id, s3aRender(rec.phase(scope+"write "+a.id), subst), w, 0)
	case *s3aStaging:
		if m.partitioned && m.mode == s3aFail {
			want = append(want, "HeadObject D/date=2026-11-27 404", "ListObjectsV2 D/date=2026-11-27/ 200",
				"HeadObject D/date=2026-11-28 404", "ListObjectsV2 D/date=2026-11-28/ 200")
		}
		for _, r := range rels {
			want = append(want, "CreateMultipartUpload D/"+relU(r)+" 200", "UploadPart D/"+relU(r)+" 200")
		}
	case *s3aFOC:
		if m.version == 2 {
			t.Logf("FileOutputCommitter v2 commitTask %s (%d requests):\n%s", a.id, len(got), strings.Join(got, "\n"))
			return
		}
		subst[m.taskAttempt(a)] = "TA"
		subst[m.committedTask(a)] = "CT"
		got = s3aRender(rec.phase(scope+"commitTask "+a.id), subst)
		want = append(want, "HeadObject TA 404", "ListObjectsV2 TA/ 200", // getFileStatus(attempt)
			"HeadObject CT 404", "ListObjectsV2 CT/ 200", // exists(committed task)
			"HeadObject TA 404", "ListObjectsV2 TA/ 200", // rename: source
			"HeadObject CT 404", "ListObjectsV2 CT/ 200", // rename: destination
			"HeadObject D/_temporary/0 404", // rename: destination's parent
			"ListObjectsV2 TA/ 200")         // rename: list the source
		for _, r := range rels {
			want = append(want, "CopyObject CT/"+relU(r)+" 200")
		}
		want = append(want, "DeleteObjects 200", "ListObjectsV2 D/_temporary/0/_temporary/ 200")
		tail = 1 // PUT D/_temporary/0/_temporary/ if no other attempt is left
	}
	s3aCompare(t, "commitTask "+a.id, got, want, tail)

	// Job commit, from the first Complete on (the staging committers'
	// conflict handling comes before).
	m, isMagic := c.(*s3aMagic)
	s, isStaging := c.(*s3aStaging)
	if !isMagic && !isStaging {
		return
	}
	if isMagic {
		subst[m.jobPath()] = "J"
		subst[m.magicRoot()] = "M"
	}
	jc := s3aRender(rec.phase(scope+"commitJob"), subst)
	first := len(jc)
	for i, l := range jc {
		if strings.HasPrefix(l, "CompleteMultipartUpload ") {
			first = i
			break
		}
	}
	want = nil
	if isMagic {
		want = append(want, "ListObjectsV2 J/ 200")
		for task := range plan.tasks {
			tk := "TK"
			if task > 0 {
				tk = j.newAttempt(task, 0).taskID
			}
			want = append(want, "GetObject J/"+tk+".pendingset 200")
		}
		if d := s3aDiffOrdered(jc[:first], want); d != "" {
			t.Errorf("magic commitJob: %s\ngot:\n%s", d, strings.Join(jc, "\n"))
		}
	} else if s.mode == s3aReplace {
		t.Logf("%s/%s commitJob conflict resolution:\n%s", s.name(), s.mode, strings.Join(jc[:first], "\n"))
	}
	want = nil
	for task := range plan.tasks {
		var rs []string
		for _, f := range plan.files(task) {
			rs = append(rs, f.rel)
		}
		sort.Strings(rs)
		for _, r := range rs {
			want = append(want, "CompleteMultipartUpload D/"+relU(r)+" 200")
		}
	}
	want = append(want, "ListObjectsV2 D/_SUCCESS/ 200", "PutObject D/_SUCCESS 200")
	if isMagic {
		crashed := plan.files(plan.crashTask)[2].rel
		want = append(want, "ListMultipartUploads D/ 200", "AbortMultipartUpload D/"+relU(crashed)+" 204",
			"HeadObject M 404", "ListObjectsV2 M/ 200", "ListObjectsV2 M/ 200", "DeleteObjects 200", "ListObjectsV2 D/ 200",
			"HeadObject D/__temp-data 404", "ListObjectsV2 D/__temp-data/ 200")
	} else {
		want = append(want, "HeadObject D/_temporary 404", "ListObjectsV2 D/_temporary/ 200", "ListMultipartUploads D/ 200")
	}
	s3aCompare(t, "commitJob (from the first Complete)", jc[first:], want, 0)
}

func s3aDiffOrdered(got, want []string) string {
	for i := range max(len(got), len(want)) {
		switch {
		case i >= len(got):
			return fmt.Sprintf("missing request %d: %s", i, want[i])
		case i >= len(want):
			return fmt.Sprintf("extra request %d: %s", i, got[i])
		case got[i] != want[i]:
			return fmt.Sprintf("request %d is %q, want %q", i, got[i], want[i])
		}
	}
	return ""
}

// s3aCompare checks got == want, allowing up to tail extra requests at
// the end.
func s3aCompare(t *testing.T, what string, got, want []string, tail int) {
	t.Helper()
	g := got
	if len(g) > len(want) && len(g)-len(want) <= tail {
		g = g[:len(want)]
	}
	if d := s3aDiffOrdered(g, want); d != "" {
		t.Errorf("%s: %s\ngot:\n%s\nwant:\n%s", what, d, strings.Join(got, "\n"), strings.Join(want, "\n"))
		return
	}
	t.Logf("%s (%d requests):\n%s", what, len(got), strings.Join(got, "\n"))
}

// TestS3ACommitterAbandonedUploads: with fs.s3a.committer.abort.pending.uploads
// false, an upload abandoned by a crashed task outlives the job; the
// bucket's AbortIncompleteMultipartUpload rule is what removes it (its
// expiry is unit-tested in objstore: here, the rule is stored and the
// upload listed until then).
func TestS3ACommitterAbandonedUploads(t *testing.T) {
	ctx := s3aCtx(t, 60*time.Second)
	env := startS3AEnv(t)
	fs := env.bucket(t, ctx, "s3a-abandoned")

	cctx, cancel := context.WithTimeout(ctx, s3aCallTimeout)
	defer cancel()
	rule := types.LifecycleRule{ID: aws.String("abort-incomplete-uploads"), Status: types.ExpirationStatusEnabled,
		Filter:                         &types.LifecycleRuleFilter{Prefix: aws.String("")},
		AbortIncompleteMultipartUpload: &types.AbortIncompleteMultipartUpload{DaysAfterInitiation: aws.Int32(1)}}
	if _, err := env.c.PutBucketLifecycleConfiguration(cctx, &s3.PutBucketLifecycleConfigurationInput{Bucket: aws.String(fs.bucket),
		LifecycleConfiguration: &types.BucketLifecycleConfiguration{Rules: []types.LifecycleRule{rule}}}); err != nil {
		t.Fatalf("PutBucketLifecycleConfiguration: %v", err)
	}
	lc, err := env.c.GetBucketLifecycleConfiguration(cctx, &s3.GetBucketLifecycleConfigurationInput{Bucket: aws.String(fs.bucket)})
	if err != nil {
		t.Fatalf("GetBucketLifecycleConfiguration: %v", err)
	}
	if len(lc.Rules) != 1 || lc.Rules[0].AbortIncompleteMultipartUpload == nil ||
		aws.ToInt32(lc.Rules[0].AbortIncompleteMultipartUpload.DaysAfterInitiation) != 1 ||
		lc.Rules[0].Status != types.ExpirationStatusEnabled || aws.ToString(lc.Rules[0].ID) != "abort-incomplete-uploads" {
		t.Fatalf("lifecycle read back: %+v", lc.Rules)
	}

	start := time.Now().Add(-time.Minute)
	abandoned := map[string]bool{} // key of each upload expected to be left
	for _, kind := range []string{"magic", "foc-v1"} {
		uuid := fmt.Sprintf("5eed0000-0000-4000-8000-%012d", len(abandoned))
		dest := s3aDest
		j := &s3aJob{fs: fs, dest: dest, uuid: uuid, jt: s3aJT, jobNum: 7 + len(abandoned), abortPendingUploads: false, local: t.TempDir()}
		c := s3aNewCommitter(kind, s3aAppend, j)
		files := func(task int) []s3aFileSpec {
			return []s3aFileSpec{{rel: fmt.Sprintf("date=2026-11-29/part-%05d-%s-c000.csv", task, uuid), size: s3aPartSize + 10 + task}}
		}
		// The crashed attempt writes a whole block before dying: its
		// upload has a part and no Complete, and nobody aborts it (the
		// executor is gone; cleanup of uploads is off).
		a := j.newAttempt(1, 0)
		if err := c.setupJob(s3aWithPhase(ctx, "setupJob")); err != nil {
			t.Fatal(err)
		}
		if err := c.setupTask(ctx, a); err != nil {
			t.Fatal(err)
		}
		f := files(1)[0]
		if err := c.crashWhileWriting(ctx, a, f.rel, s3aContent(uuid, f.rel, 9, f.size)); err != nil {
			t.Fatal(err)
		}
		if kind == "magic" {
			abandoned[c.finalKey(f.rel)] = true
		} else {
			abandoned[s3aDest+"/_temporary/0/_temporary/"+a.id+"/"+f.rel] = true
		}
		// The job goes on with retried attempts and commits.
		var committed = map[string][]byte{}
		for task := range 2 {
			b := j.newAttempt(task, 1)
			if err := c.setupTask(ctx, b); err != nil {
				t.Fatal(err)
			}
			f := files(task)[0]
			data := s3aContent(uuid, f.rel, 1, f.size)
			if err := c.write(ctx, b, f.rel, data); err != nil {
				t.Fatal(err)
			}
			if err := c.commitTask(ctx, b); err != nil {
				t.Fatal(err)
			}
			committed[c.finalKey(f.rel)] = data
		}
		if err := c.commitJob(s3aWithPhase(ctx, "commitJob")); err != nil {
			t.Fatalf("%s commitJob: %v", kind, err)
		}
		for k, v := range committed {
			got, err := fs.open(ctx, k, "")
			if err != nil || !bytes.Equal(got, v) {
				t.Fatalf("%s: %s: %d bytes (%v), want the committed %d bytes", kind, k, len(got), err, len(v))
			}
		}
	}
	ups, err := fs.listUploads(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, u := range ups {
		keys = append(keys, aws.ToString(u.Key))
		if in := aws.ToTime(u.Initiated); in.Before(start) || in.After(time.Now().Add(time.Minute)) {
			t.Errorf("upload %s: Initiated %v, want about now", aws.ToString(u.Key), in)
		}
	}
	if d := s3aDiff(keys, s3aSortedKeys(abandoned)); d != "" {
		t.Fatalf("abandoned uploads: %s", d)
	}
	// The abandoned uploads are not objects.
	for k := range abandoned {
		if strings.Contains(k, "_temporary") {
			if h, err := fs.head(ctx, k); err != nil || h != nil {
				t.Errorf("HEAD %s: found %v (%v), want 404", k, h != nil, err)
			}
		}
	}
	// What `hadoop s3guard uploads -abort` (or the lifecycle rule, a day
	// later) does.
	for _, u := range ups {
		if err := fs.abortUpload(ctx, aws.ToString(u.Key), aws.ToString(u.UploadId)); err != nil {
			t.Fatalf("abort %s: %v", aws.ToString(u.Key), err)
		}
	}
	s3aCheckNoUploads(t, ctx, fs, "after aborting the abandoned uploads")
}

// TestS3ACommitterUploadSemantics checks the multipart behaviour the
// committers rely on beyond the happy path: concurrent uploads to one key
// (speculative attempts), a single empty part, aborting a completed or
// aborted upload (404 NoSuchUpload: staging job abort then deletes the
// object), and a retried Complete (S3A retries it as idempotent).
func TestS3ACommitterUploadSemantics(t *testing.T) {
	ctx := s3aCtx(t, 60*time.Second)
	env := startS3AEnv(t)
	fs := env.bucket(t, ctx, "s3a-uploads")
	key := s3aDest + "/date=2026-11-27/part-00000-x-c000.csv"

	// Two attempts upload the same key.
	u1, err := fs.initiate(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	u2, err := fs.initiate(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if u1.id == u2.id {
		t.Fatalf("two uploads to %s share the id %s", key, u1.id)
	}
	if err := u1.part(ctx, []byte("attempt 0\n")); err != nil {
		t.Fatal(err)
	}
	if err := u2.part(ctx, nil); err != nil { // a single 0-byte part
		t.Fatal(err)
	}
	etag2, err := fs.complete(ctx, key, u2.id, u2.etags)
	if err != nil {
		t.Fatalf("complete a single empty part: %v", err)
	}
	if got, err := fs.open(ctx, key, etag2); err != nil || len(got) != 0 {
		t.Fatalf("GET %s after the empty upload: %q %v", key, got, err)
	}
	// The loser is still there, and abortable.
	ups, err := fs.listUploads(ctx, s3aDest)
	if err != nil || len(ups) != 1 || aws.ToString(ups[0].UploadId) != u1.id {
		t.Fatalf("uploads after one of two completed: %v %v", ups, err)
	}
	if err := fs.abortUpload(ctx, key, u1.id); err != nil {
		t.Fatalf("abort the losing attempt: %v", err)
	}
	for _, tc := range []struct{ what, id string }{{"aborted", u1.id}, {"completed", u2.id}, {"unknown", "no-such-upload-id"}} {
		err := fs.abortUpload(ctx, key, tc.id)
		if s3aStatusOf(err) != http.StatusNotFound || s3aCodeOf(err) != "NoSuchUpload" {
			t.Errorf("abort an %s upload: %v, want 404 NoSuchUpload", tc.what, err)
		}
	}
	if err := u1.part(ctx, []byte("late")); s3aStatusOf(err) != http.StatusNotFound || s3aCodeOf(err) != "NoSuchUpload" {
		t.Errorf("UploadPart on an aborted upload: %v, want 404 NoSuchUpload", err)
	}

	// Change detection: the GET of an open and the copy of a rename carry
	// the ETag S3A saw; a changed object must answer 412.
	if _, err := fs.open(ctx, key, `"0123456789abcdef0123456789abcdef"`); s3aStatusOf(err) != http.StatusPreconditionFailed {
		t.Errorf("GET If-Match a stale ETag: %v, want 412", err)
	}
	if err := fs.copyObject(ctx, key, key+".copy", `"0123456789abcdef0123456789abcdef"`); s3aStatusOf(err) != http.StatusPreconditionFailed {
		t.Errorf("CopyObject x-amz-copy-source-if-match a stale ETag: %v, want 412", err)
	}
	if err := fs.copyObject(ctx, key, key+".copy", etag2); err != nil {
		t.Errorf("CopyObject x-amz-copy-source-if-match the current ETag: %v", err)
	}

	t.Run("CompleteRetry", func(t *testing.T) {
		u, err := fs.initiate(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if err := u.part(ctx, []byte("retried\n")); err != nil {
			t.Fatal(err)
		}
		e1, err := fs.complete(ctx, key, u.id, u.etags)
		if err != nil {
			t.Fatal(err)
		}
		e2, err := fs.complete(ctx, key, u.id, u.etags)
		if err != nil || e2 != e1 {
			t.Fatalf("a retried CompleteMultipartUpload (POST /%s/%s?uploadId=%s, same parts) of a just-completed upload answers %v / ETag %q; S3 answers 200 with the same ETag %q (S3A retries Complete as idempotent)",
				fs.bucket, key, u.id, err, e2, e1)
		}
	})
}
