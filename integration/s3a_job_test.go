package integration

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
)

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
