package integration

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// sparkConfs are the spark-conf invocations the jobs use, by the name the
// script knows them by.
func sparkConfs() map[string][]string {
	confs := map[string][]string{
		"magic": {"--committer", "magic"},
		"file":  {"--committer", "file"},
	}
	for _, c := range []string{"directory", "partitioned"} {
		for _, m := range []string{"fail", "append", "replace"} {
			confs[c+"-"+m] = []string{"--committer", c, "--conflict-mode", m}
		}
	}
	return confs
}

// TestEngineSparkS3A runs Spark DataFrame jobs (local mode, Parquet
// partitioned by date) against the server over s3a with every committer,
// configured by `cairn admin spark-conf` verbatim, and checks what each job
// left: the rows read back equal the rows generated, each conflict mode
// did what it says, the s3a committers' _SUCCESS manifests list the
// files, a retried task and an aborted job leave no partial output, and
// no multipart upload is pending at the end.
func TestEngineSparkS3A(t *testing.T) {
	eng := requireEngines(t)
	t.Setenv("CAIRN_ROOT_USER", s3User)
	t.Setenv("CAIRN_ROOT_PASSWORD", s3Secret)
	srv := startServer(t, t.TempDir(), "--drives", "4", "--parity", "2")
	srv.waitReady(readyTimeout)
	c := sdkClient(srv, s3User, s3Secret)
	const bucket = "spark-jobs"
	if _, err := c.CreateBucket(callCtx(t), &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatalf("CreateBucket: %v", err)
	}

	rep := runSparkJobs(t, eng, srv, "s3a_jobs.py", bucket, sparkConfs())

	checkSparkRun(t, c, bucket, rep, []string{
		"magic", "magic-abort", "magic-retry",
		"directory-fail-new", "directory-fail-exists", "directory-append-new", "directory-append-more",
		"directory-abort", "directory-retry", "directory-replace-new", "directory-replace-again",
		"partitioned-fail-new", "partitioned-fail-other", "partitioned-fail-exists",
		"partitioned-append-new", "partitioned-append-more", "partitioned-replace-new", "partitioned-replace-some",
		"file-v1", "file-v2",
	})
}
