package integration

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// The Spark engine tests (engine_spark_*_test.go) run a script of
// engines/spark/ that runs its Spark jobs in one session and writes a
// report of each; the tests check the report and the bucket.

// sparkReport is what engines/spark/s3a_jobs.py writes: one step per
// Spark job.
type sparkReport struct {
	SessionSeconds float64     `json:"session_seconds"`
	TotalSeconds   float64     `json:"total_seconds"`
	Steps          []sparkStep `json:"steps"`
}

type sparkStep struct {
	Name        string            `json:"name"`
	Conf        string            `json:"conf"`
	Committer   string            `json:"committer"`
	Options     map[string]string `json:"options"`
	Dest        string            `json:"dest"`
	WrittenTo   string            `json:"written_to"`
	Expect      string            `json:"expect"`
	ExpectError string            `json:"expect_error"`
	Outcome     string            `json:"outcome"`
	Error       string            `json:"error"`
	RowsWritten int               `json:"rows_written"`
	RowsRead    int               `json:"rows_read"`
	RowsDiff    string            `json:"rows_diff"`
	KeysBefore  []string          `json:"keys_before"`
	KeysAfter   []string          `json:"keys_after"`
	Success     *string           `json:"success"`
	Requests    map[string]int    `json:"requests"`
	Seconds     float64           `json:"seconds"`
}

// sparkSuccessData is the s3a committers' _SUCCESS manifest (Hadoop's
// SuccessData), the fields the test reads.
type sparkSuccessData struct {
	Name      string   `json:"name"`
	Committer string   `json:"committer"`
	JobID     string   `json:"jobId"`
	Filenames []string `json:"filenames"`
}

// runSparkJobs writes a spark-conf output per confs entry (the name the
// script knows it by, and the command's flags) and runs script with the
// conf directory, bucket, endpoint, a work directory, the report path and
// extra; it returns the report.
func runSparkJobs(t *testing.T, eng engines, srv *server, script, bucket string, confs map[string][]string, extra ...string) sparkReport {
	t.Helper()
	confDir := t.TempDir()
	for name, args := range confs {
		res := runCairn(t, 30*time.Second, append([]string{"admin", "spark-conf", "--endpoint", srv.url("")}, args...)...)
		if res.code != 0 {
			t.Fatalf("cairn admin spark-conf %v: exit %d\n%s", args, res.code, res.stderr)
		}
		if err := os.WriteFile(filepath.Join(confDir, name+".conf"), []byte(res.stdout), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	path, err := filepath.Abs(filepath.Join("engines", "spark", script))
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	reportPath := filepath.Join(work, "report.json")
	start := time.Now()
	args := append([]string{confDir, bucket, srv.url(""), work, reportPath}, extra...)
	out := eng.runPython(t, 20*time.Minute, nil, path, args...)
	t.Logf("%s: %v\n%s", script, time.Since(start).Round(time.Second), out)
	raw, err := os.ReadFile(reportPath)
	if err != nil {
		t.Fatalf("%s wrote no report: %v", script, err)
	}
	var rep sparkReport
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatalf("report: %v", err)
	}
	t.Logf("session start %.1fs, all jobs %.1fs", rep.SessionSeconds, rep.TotalSeconds)
	return rep
}

// checkSparkRun checks each step of rep (in a subtest named after it),
// that the steps were want, and that the bucket holds what Spark listed
// last under each destination and nothing else, with no multipart upload
// pending.
func checkSparkRun(t *testing.T, c *s3.Client, bucket string, rep sparkReport, want []string) {
	t.Helper()
	var names []string
	last := map[string]sparkStep{} // the last step of each destination
	for _, st := range rep.Steps {
		names = append(names, st.Name)
		last[st.Dest] = st
		t.Run(st.Name, func(t *testing.T) { checkSparkStep(t, bucket, st) })
	}
	if !slices.Equal(names, want) {
		t.Fatalf("the script ran %v, want %v", names, want)
	}
	// What Spark saw last is what S3 shows: per destination the same keys,
	// and nothing else in the bucket (no __magic, _temporary, staging
	// leftovers), directory markers aside.
	got := map[string][]string{}
	for _, k := range listAllKeys(t, c, bucket) {
		if strings.HasSuffix(k, "/") {
			continue
		}
		dest, _, _ := strings.Cut(k, "/")
		got[dest] = append(got[dest], k)
	}
	for dest, st := range last {
		if !slices.Equal(got[dest], st.KeysAfter) {
			t.Errorf("%s: S3 lists %v, Spark listed %v after %s", dest, got[dest], st.KeysAfter, st.Name)
		}
		delete(got, dest)
	}
	if len(got) > 0 {
		t.Errorf("keys outside the jobs' destinations: %v", got)
	}
	ups, err := c.ListMultipartUploads(callCtx(t), &s3.ListMultipartUploadsInput{Bucket: aws.String(bucket)})
	if err != nil {
		t.Fatalf("ListMultipartUploads: %v", err)
	}
	for _, u := range ups.Uploads {
		t.Errorf("pending upload left: %s (%s)", aws.ToString(u.Key), aws.ToString(u.UploadId))
	}
}

// checkSparkStep checks one job of the report.
func checkSparkStep(t *testing.T, bucket string, st sparkStep) {
	t.Logf("%s (%s): %s in %.1fs, %d rows read; requests %v", st.Name, st.Conf, st.Outcome, st.Seconds, st.RowsRead, st.Requests)
	if st.Outcome != st.Expect {
		t.Fatalf("job %s, want %s; error: %s", st.Outcome, st.Expect, st.Error)
	}
	if st.Outcome == "failed" && !strings.Contains(st.Error, st.ExpectError) {
		t.Errorf("job failed, but not with %q: %s", st.ExpectError, st.Error)
	}
	if st.RowsDiff != "" {
		t.Errorf("rows read back: %s", st.RowsDiff)
	}
	for _, k := range st.KeysAfter {
		for _, junk := range []string{"__magic", "_temporary", "__temp-data", ".pending", "staging-uploads"} {
			if strings.Contains(k, junk) {
				t.Errorf("left behind: %s", k)
			}
		}
	}
	before, after := sparkDataKeys(st.KeysBefore), sparkDataKeys(st.KeysAfter)
	var added []string
	for _, k := range after {
		if !slices.Contains(before, k) {
			added = append(added, k)
		}
	}
	if st.Outcome == "failed" {
		if !slices.Equal(before, after) {
			t.Errorf("a failed job changed the output: data files %v before, %v after", before, after)
		}
		return
	}
	if len(added) == 0 {
		t.Fatalf("the job added no data file (before %v, after %v)", before, after)
	}
	if st.Success == nil {
		t.Fatalf("no _SUCCESS after a committed job")
	}
	copies := st.Requests["CopyObject"]
	if st.Committer == "file" {
		if *st.Success != "" {
			t.Errorf("FileOutputCommitter's _SUCCESS holds %q, want it empty", *st.Success)
		}
		// Over s3a a rename is a copy per file: algorithm 1 renames each
		// file twice (task commit, job commit), 2 once. On the mount a
		// rename is the mount's, and S3 sees no copy.
		n := len(added)
		switch v := st.Options["mapreduce.fileoutputcommitter.algorithm.version"]; {
		case strings.HasPrefix(st.WrittenTo, "file://"):
			if copies != 0 {
				t.Errorf("a job on the mount made %d S3 copies", copies)
			}
		case v == "2":
			if copies < n || copies >= 2*n {
				t.Errorf("algorithm 2 made %d copies for %d files, want one per file", copies, n)
			}
		default:
			if copies < 2*n {
				t.Errorf("algorithm 1 made %d copies for %d files, want two per file", copies, n)
			}
		}
		return
	}
	if copies != 0 {
		t.Errorf("the %s committer made %d copies; its commit completes uploads and renames nothing", st.Committer, copies)
	}
	var sd sparkSuccessData
	if err := json.Unmarshal([]byte(*st.Success), &sd); err != nil {
		t.Fatalf("_SUCCESS is not the s3a committers' JSON manifest: %v\n%s", err, *st.Success)
	}
	if sd.Name != "org.apache.hadoop.fs.s3a.commit.files.SuccessData/1" || sd.Committer != st.Committer || sd.JobID == "" {
		t.Errorf("_SUCCESS: name %q committer %q jobId %q, want SuccessData/1 by %s with a job id", sd.Name, sd.Committer, sd.JobID, st.Committer)
	}
	var listed []string
	for _, f := range sd.Filenames {
		listed = append(listed, strings.TrimPrefix(f, "/"))
	}
	slices.Sort(listed)
	if !slices.Equal(listed, added) {
		t.Errorf("_SUCCESS lists %v, the job added %v", listed, added)
	}
	for _, k := range added {
		if !strings.HasPrefix(k, st.Dest+"/date=") {
			t.Errorf("%s is not in a date partition of %s/%s", k, bucket, st.Dest)
		}
	}
}

// sparkDataKeys are the Parquet files among keys, sorted.
func sparkDataKeys(keys []string) []string {
	var out []string
	for _, k := range keys {
		if strings.HasSuffix(k, ".parquet") {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// listAllKeys lists every key of bucket (ListObjectsV2, all pages), in
// order.
func listAllKeys(t *testing.T, c *s3.Client, bucket string) []string {
	t.Helper()
	var keys []string
	p := s3.NewListObjectsV2Paginator(c, &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
	for p.HasMorePages() {
		page, err := p.NextPage(callCtx(t))
		if err != nil {
			t.Fatalf("ListObjectsV2 %s: %v", bucket, err)
		}
		for _, o := range page.Contents {
			keys = append(keys, aws.ToString(o.Key))
		}
	}
	return keys
}
