package integration

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// TestEngineSparkMount runs Spark DataFrame jobs (local mode, Parquet
// partitioned by date) writing to the mount, file:///MOUNT/BUCKET/...,
// with Hadoop's FileOutputCommitter (algorithms 1 and 2), whose task and
// job commits are the mount's renames, and reads the output back over S3
// (s3a, configured by `cairn admin spark-conf --committer file`): the rows
// equal the rows generated, a retried task and an aborted job leave no
// partial output and no _temporary, and S3 lists what Spark listed.
func TestEngineSparkMount(t *testing.T) {
	eng := requireEngines(t)
	mnt := t.TempDir()
	srv := startMountAt(t, t.TempDir(), mnt, "--drives", "4", "--parity", "2")
	c := sdkClient(srv, s3User, s3Secret)
	const bucket = "spark-mount"
	if _, err := c.CreateBucket(callCtx(t), &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatalf("CreateBucket: %v", err)
	}
	deadline := time.Now().Add(fsVisible)
	for {
		if fi, err := os.Stat(filepath.Join(mnt, bucket)); err == nil && fi.IsDir() {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("bucket %s not on the mount after %v: %v", bucket, fsVisible, err)
		}
		time.Sleep(50 * time.Millisecond)
	}

	rep := runSparkJobs(t, eng, srv, "mount_jobs.py", bucket, map[string][]string{"file": {"--committer", "file"}}, mnt)
	checkSparkRun(t, c, bucket, rep, []string{"mount-v1", "mount-v2", "mount-append", "mount-retry", "mount-abort"})
}
