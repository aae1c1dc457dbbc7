package integration

// End-to-end runs of Hadoop's output committers against cairn serve, using
// the call-for-call replays of the s3a_*_test.go helpers: the magic committer,
// the directory and partitioned staging committers (conflict modes fail,
// append, replace) and FileOutputCommitter v1/v2 over s3a.

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
)

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
