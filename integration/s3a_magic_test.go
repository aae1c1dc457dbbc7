package integration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
)

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
