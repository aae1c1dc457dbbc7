"""Spark DataFrame jobs writing Parquet partitioned by date to a Cairn
mount (file:///MOUNT/BUCKET/...) with Hadoop's FileOutputCommitter, whose
task and job commits are the mount's renames; the output is listed and
read back over S3 (s3a).

Usage: mount_jobs.py CONFDIR BUCKET ENDPOINT WORKDIR REPORT MOUNT

CONFDIR holds `cairn admin spark-conf --committer file` output as
file.conf (for reading back over s3a; the writes to file:// use none of
it). REPORT is as s3a_jobs.py's.
"""

import json
import os
import sys

import common
from common import DATES
from runner import Runner


def main(confdir, bucket, endpoint, workdir, report_path, mount):
    clock = common.Clock()
    r = Runner(confdir, bucket, endpoint, workdir, "file", write_root="file://" + os.path.join(mount, bucket))
    n = 400
    v2 = {"mapreduce.fileoutputcommitter.algorithm.version": "2"}

    m1 = common.rows("mount-v1", n, DATES)
    r.step("mount-v1", "file", "mount-v1", m1, m1, mode="overwrite")
    m2 = common.rows("mount-v2", n, DATES)
    r.step("mount-v2", "file", "mount-v2", m2, m2, mode="overwrite", options=v2)
    ma = common.rows("mount-more", n, DATES[1:])
    r.step("mount-append", "file", "mount-v1", ma, m1 + ma)
    mr = common.rows("mount-retry", n, DATES)
    r.step("mount-retry", "file", "mount-retry", mr, mr, mode="overwrite", fail=("once", common.late_row(mr)))
    mx = common.rows("mount-abort", n, DATES)
    r.step("mount-abort", "file", "mount-v1", mx, m1 + ma, expect="failed", expect_error="this task always fails",
           fail=("always", common.late_row(mx)))

    r.spark.stop()
    r.report["total_seconds"] = clock.seconds()
    with open(report_path, "w", encoding="utf-8") as f:
        json.dump(r.report, f, indent=1)


if __name__ == "__main__":
    if len(sys.argv) != 7:
        raise SystemExit(__doc__)
    main(*sys.argv[1:])
