package integration

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"golang.org/x/sys/unix"
)

// posixFOC replays Hadoop's FileOutputCommitter (specs/s3a-committers.md
// section 1.4) with plain file operations on the mount: the layout
// O/_temporary/0/_temporary/<attempt> for task attempts and
// O/_temporary/0/<task> for committed tasks (v1), each rename one
// rename(2).
type posixFOC struct {
	out     string // O, on the mount
	version int
}

type focAttempt struct{ id, task string }

func (f *posixFOC) jobAttempt() string { return filepath.Join(f.out, "_temporary", "0") }
func (f *posixFOC) taskAttempt(a focAttempt) string {
	return filepath.Join(f.jobAttempt(), "_temporary", a.id)
}
func (f *posixFOC) committedTask(a focAttempt) string { return filepath.Join(f.jobAttempt(), a.task) }

func (f *posixFOC) setupJob() error { return os.MkdirAll(f.jobAttempt(), 0o755) }

// write is the task's output stream: the file appears under the attempt
// directory, parents made as needed.
func (f *posixFOC) write(a focAttempt, rel string, data []byte) error {
	p := filepath.Join(f.taskAttempt(a), rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, data, 0o644)
}

func (f *posixFOC) needsTaskCommit(a focAttempt) bool {
	_, err := os.Stat(f.taskAttempt(a))
	return err == nil
}

func (f *posixFOC) abortTask(a focAttempt) error { return os.RemoveAll(f.taskAttempt(a)) }

func (f *posixFOC) commitTask(a focAttempt) error {
	if f.version == 1 {
		if err := os.RemoveAll(f.committedTask(a)); err != nil {
			return err
		}
		return unix.Rename(f.taskAttempt(a), f.committedTask(a))
	}
	if err := f.mergePaths(f.taskAttempt(a), f.out); err != nil {
		return err
	}
	return os.RemoveAll(f.taskAttempt(a))
}

// mergePaths is FileOutputCommitter.mergePaths: a file replaces the
// target; a directory is renamed whole when the target is absent, else
// merged entry by entry.
func (f *posixFOC) mergePaths(from, to string) error {
	fi, err := os.Lstat(from)
	if err != nil {
		return err
	}
	ti, terr := os.Lstat(to)
	if terr != nil && !errors.Is(terr, fs.ErrNotExist) {
		return terr
	}
	if !fi.IsDir() {
		if terr == nil {
			if err := os.RemoveAll(to); err != nil {
				return err
			}
		}
		return unix.Rename(from, to)
	}
	if terr == nil && !ti.IsDir() {
		if err := os.Remove(to); err != nil {
			return err
		}
		terr = fs.ErrNotExist
	}
	if terr != nil {
		if f.version == 1 {
			return unix.Rename(from, to)
		}
		if err := os.MkdirAll(to, 0o755); err != nil {
			return err
		}
	}
	entries, err := os.ReadDir(from)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := f.mergePaths(filepath.Join(from, e.Name()), filepath.Join(to, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

func (f *posixFOC) commitJob() error {
	if f.version == 1 {
		entries, err := os.ReadDir(f.jobAttempt())
		if err != nil {
			return err
		}
		for _, e := range entries {
			if e.Name() == "_temporary" {
				continue
			}
			if err := f.mergePaths(filepath.Join(f.jobAttempt(), e.Name()), f.out); err != nil {
				return err
			}
		}
	}
	if err := os.RemoveAll(filepath.Join(f.out, "_temporary")); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(f.out, "_SUCCESS"), nil, 0o644)
}

// TestFSFileOutputCommitter runs FileOutputCommitter v1 and v2 jobs on the
// mount: two tasks of three files each (two of them in partition
// directories), the first attempt of task 1 fails after writing and is
// aborted, its retry commits. The output then holds exactly the committed
// files and _SUCCESS, on the mount and over S3, and nothing of the failed
// attempt or of _temporary.
func TestFSFileOutputCommitter(t *testing.T) {
	srv, mnt := startMount(t)
	c := fsClient(srv)
	const bucket = "warehouse"
	dir := fsBucket(t, c, mnt, bucket)
	for _, version := range []int{1, 2} {
		t.Run(fmt.Sprintf("v%d", version), func(t *testing.T) {
			outRel := fmt.Sprintf("out-v%d", version)
			foc := &posixFOC{out: filepath.Join(dir, outRel), version: version}
			const job = "202611300000_0001"
			attempt := func(task, n int) focAttempt {
				return focAttempt{
					id:   fmt.Sprintf("attempt_%s_m_%06d_%d", job, task, n),
					task: fmt.Sprintf("task_%s_m_%06d", job, task),
				}
			}
			files := func(task int) []string {
				return []string{
					fmt.Sprintf("year=2024/part-%05d-c000.csv", task),
					fmt.Sprintf("year=2025/part-%05d-c000.csv", task),
					fmt.Sprintf("part-%05d-c000.csv", task),
				}
			}
			content := func(a focAttempt, rel string) []byte {
				return []byte(fmt.Sprintf("%s wrote %s\n%s", a.id, rel, strings.Repeat("x", len(rel)*37)))
			}
			if err := foc.setupJob(); err != nil {
				t.Fatalf("setupJob: %v", err)
			}
			want := map[string][]byte{"_SUCCESS": {}}
			// Task 0 commits at its first attempt.
			a0 := attempt(0, 0)
			for _, rel := range files(0) {
				if err := foc.write(a0, rel, content(a0, rel)); err != nil {
					t.Fatalf("task 0 write %s: %v", rel, err)
				}
				want[rel] = content(a0, rel)
			}
			if !foc.needsTaskCommit(a0) {
				t.Fatal("needsTaskCommit: attempt directory missing")
			}
			if err := foc.commitTask(a0); err != nil {
				t.Fatalf("commitTask %s: %v", a0.id, err)
			}
			// Task 1 fails after two files; its attempt is aborted.
			a1 := attempt(1, 0)
			for _, rel := range files(1)[:2] {
				if err := foc.write(a1, rel, []byte("garbage of the failed attempt")); err != nil {
					t.Fatalf("task 1 write %s: %v", rel, err)
				}
			}
			if err := foc.abortTask(a1); err != nil {
				t.Fatalf("abortTask %s: %v", a1.id, err)
			}
			if foc.needsTaskCommit(a1) {
				t.Error("the aborted attempt's directory is still there")
			}
			// The retry commits.
			a1r := attempt(1, 1)
			for _, rel := range files(1) {
				if err := foc.write(a1r, rel, content(a1r, rel)); err != nil {
					t.Fatalf("task 1 retry write %s: %v", rel, err)
				}
				want[rel] = content(a1r, rel)
			}
			if err := foc.commitTask(a1r); err != nil {
				t.Fatalf("commitTask %s: %v", a1r.id, err)
			}
			if version == 1 {
				// Nothing is in the output before job commit.
				for rel := range want {
					if _, err := os.Stat(filepath.Join(foc.out, rel)); err == nil {
						t.Errorf("v1: %s visible before job commit", rel)
					}
				}
				if _, err := c.HeadObject(callCtx(t), &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(outRel + "/" + files(0)[2])}); err == nil {
					t.Errorf("v1: S3 shows %s before job commit", files(0)[2])
				}
				committed, _ := os.ReadDir(foc.jobAttempt())
				var names []string
				for _, e := range committed {
					names = append(names, e.Name())
				}
				if !slices.Equal(names, []string{"_temporary", a0.task, a1r.task}) {
					t.Errorf("v1: job attempt dir holds %q, want _temporary and the two committed tasks", names)
				}
			}
			if err := foc.commitJob(); err != nil {
				t.Fatalf("commitJob: %v", err)
			}

			// On the mount: exactly the committed files.
			got := map[string][]byte{}
			var extraDirs []string
			err := filepath.WalkDir(foc.out, func(p string, d fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				rel, _ := filepath.Rel(foc.out, p)
				switch {
				case p == foc.out:
				case d.IsDir():
					if rel != "year=2024" && rel != "year=2025" {
						extraDirs = append(extraDirs, rel)
					}
				default:
					b, err := os.ReadFile(p)
					if err != nil {
						return err
					}
					got[rel] = b
				}
				return nil
			})
			if err != nil {
				t.Fatalf("walk the output: %v", err)
			}
			if len(extraDirs) > 0 {
				t.Errorf("output directories beyond the partitions: %q", extraDirs)
			}
			fsSameContents(t, "output on the mount", got, want)

			// Over S3: the same files; markers only for the directories.
			keys := fsListKeys(t, c, bucket, outRel+"/")
			s3got := map[string][]byte{}
			for k := range keys {
				rel := strings.TrimPrefix(k, outRel+"/")
				switch {
				case strings.HasSuffix(k, "/"):
					if d := strings.TrimSuffix(rel, "/"); d != "" && d != "year=2024" && d != "year=2025" {
						t.Errorf("S3 lists a marker %s", k)
					}
				default:
					s3got[rel] = fsGet(t, c, bucket, k)
				}
			}
			fsSameContents(t, "output over S3", s3got, want)
		})
	}
}

// fsSameContents compares relative path -> content maps.
func fsSameContents(t *testing.T, what string, got, want map[string][]byte) {
	t.Helper()
	for _, k := range fsSortedKeys(want) {
		if g, ok := got[k]; !ok {
			t.Errorf("%s: %s missing", what, k)
		} else if !bytes.Equal(g, want[k]) {
			t.Errorf("%s: %s holds %q, want %q", what, k, g, want[k])
		}
	}
	for _, k := range fsSortedKeys(got) {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: unexpected %s (%q)", what, k, got[k])
		}
	}
}

// stagingPending is what a staging committer keeps for one upload
// (the fields of SinglePendingCommit that matter here).
type stagingPending struct {
	Version        int      `json:"version"`
	Bucket         string   `json:"bucket"`
	DestinationKey string   `json:"destinationKey"`
	UploadID       string   `json:"uploadId"`
	TaskID         string   `json:"taskId"`
	Etags          []string `json:"etags"`
	Length         int64    `json:"length"`
}

// TestFSStagingPendingDir keeps a staging committer's pending-upload
// directory on the mount: tasks start multipart uploads over S3 and write
// their pending JSON files into it; job commit lists and reads them back
// from the mount, completes the uploads and deletes the directory.
func TestFSStagingPendingDir(t *testing.T) {
	srv, mnt := startMount(t)
	c := fsClient(srv)
	const bucket = "staging"
	dir := fsBucket(t, c, mnt, bucket)
	pendingDir := filepath.Join(dir, "_staging", "job-0001", "pending")
	if err := os.MkdirAll(pendingDir, 0o700); err != nil {
		t.Fatal(err)
	}
	want := map[string][]byte{}
	written := map[string]stagingPending{}
	for task := range 3 {
		for f := range 2 {
			key := fmt.Sprintf("table/dt=2026-11-30/part-%05d-%d.parquet", task, f)
			body := randomBytes(uint64(100+task*10+f), 1000+task*777+f)
			up, err := c.CreateMultipartUpload(callCtx(t), &s3.CreateMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String(key)})
			if err != nil {
				t.Fatalf("CreateMultipartUpload: %v", err)
			}
			part, err := c.UploadPart(callCtx(t), &s3.UploadPartInput{Bucket: aws.String(bucket), Key: aws.String(key), UploadId: up.UploadId, PartNumber: aws.Int32(1), Body: bytes.NewReader(body)})
			if err != nil {
				t.Fatalf("UploadPart: %v", err)
			}
			p := stagingPending{Version: 2, Bucket: bucket, DestinationKey: key, UploadID: aws.ToString(up.UploadId),
				TaskID: fmt.Sprintf("task_%06d", task), Etags: []string{aws.ToString(part.ETag)}, Length: int64(len(body))}
			js, err := json.MarshalIndent(p, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			name := fmt.Sprintf("task_%06d-%d.pending", task, f)
			if err := os.WriteFile(filepath.Join(pendingDir, name), js, 0o600); err != nil {
				t.Fatalf("write pending file on the mount: %v", err)
			}
			written[name] = p
			want[key] = body
		}
	}
	// Before job commit, nothing is visible at the destinations.
	if keys := fsListKeys(t, c, bucket, "table/"); len(keys) != 0 {
		t.Fatalf("destinations visible before job commit: %v", fsSortedKeys(keys))
	}
	// Job commit: list and read the pending files back from the mount.
	entries, err := os.ReadDir(pendingDir)
	if err != nil {
		t.Fatalf("list the pending directory: %v", err)
	}
	if len(entries) != len(written) {
		t.Fatalf("pending directory lists %d files, want %d", len(entries), len(written))
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(pendingDir, e.Name()))
		if err != nil {
			t.Fatalf("read %s: %v", e.Name(), err)
		}
		var p stagingPending
		if err := json.Unmarshal(b, &p); err != nil {
			t.Fatalf("parse %s: %v\n%s", e.Name(), err, b)
		}
		if w, ok := written[e.Name()]; !ok || !slices.Equal(p.Etags, w.Etags) || p.UploadID != w.UploadID || p.DestinationKey != w.DestinationKey {
			t.Fatalf("%s read back as %+v, written as %+v", e.Name(), p, w)
		}
		parts := []types.CompletedPart{{PartNumber: aws.Int32(1), ETag: aws.String(p.Etags[0])}}
		if _, err := c.CompleteMultipartUpload(callCtx(t), &s3.CompleteMultipartUploadInput{Bucket: aws.String(p.Bucket), Key: aws.String(p.DestinationKey), UploadId: aws.String(p.UploadID),
			MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}}); err != nil {
			t.Fatalf("CompleteMultipartUpload %s: %v", p.DestinationKey, err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "table", "_SUCCESS"), nil, 0o644); err != nil {
		t.Fatalf("write _SUCCESS: %v", err)
	}
	if err := os.RemoveAll(filepath.Join(dir, "_staging", "job-0001")); err != nil {
		t.Fatalf("remove the pending directory: %v", err)
	}
	if _, err := os.Stat(pendingDir); !os.IsNotExist(err) {
		t.Errorf("pending directory after removal: %v", err)
	}
	if keys := fsListKeys(t, c, bucket, "_staging/job-0001/"); len(keys) != 0 {
		t.Errorf("S3 still lists %v", fsSortedKeys(keys))
	}
	want["table/_SUCCESS"] = []byte{}
	got := map[string][]byte{}
	for k := range fsListKeys(t, c, bucket, "table/") {
		if !strings.HasSuffix(k, "/") {
			got[k] = fsGet(t, c, bucket, k)
		}
	}
	fsSameContents(t, "committed output over S3", got, want)
	for k, body := range want {
		fsReadEventually(t, "committed "+k+" on the mount", filepath.Join(dir, k), body)
	}
	uploads, err := c.ListMultipartUploads(callCtx(t), &s3.ListMultipartUploadsInput{Bucket: aws.String(bucket)})
	if err != nil || len(uploads.Uploads) != 0 {
		t.Errorf("uploads left after job commit: %v %v", uploads, err)
	}
}
