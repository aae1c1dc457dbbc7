package integration

import (
	"context"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
)

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
