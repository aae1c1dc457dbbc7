package integration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

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
