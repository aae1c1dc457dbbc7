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
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"
	"time"
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
