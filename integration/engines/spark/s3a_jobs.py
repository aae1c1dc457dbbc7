"""Spark DataFrame jobs writing Parquet partitioned by date to Cairn over
s3a, with each committer `cairn admin spark-conf` configures.

Usage: s3a_jobs.py CONFDIR BUCKET ENDPOINT WORKDIR REPORT

CONFDIR holds spark-conf outputs named <committer>.conf and
<committer>-<conflict mode>.conf (magic, directory-*, partitioned-*, file).
One Spark session runs every job in turn, switching to each job's
configuration (common.Configurator). For each job the script records in
REPORT (JSON): the outcome against the expected one, the rows read back
against the rows the job generated (and those of the jobs before it that
must still be there), the files under the destination before and after,
the _SUCCESS file's text, and the S3 requests the job made (from the
server's /metrics). The Go test (integration/engine_spark_s3a_test.go)
checks the report and the bucket.
"""

import json
import sys

import common
from common import DATES
from runner import Runner


def main(confdir, bucket, endpoint, workdir, report_path):
    clock = common.Clock()
    r = Runner(confdir, bucket, endpoint, workdir, "magic")
    n = 400

    # Magic: a job, then one that fails for good (the output stays the
    # first job's), then one whose task fails once and is retried.
    m1 = common.rows("magic-1", n, DATES[:3])
    r.step("magic", "magic", "magic", m1, m1, mode="overwrite")
    m2 = common.rows("magic-2", n, DATES)
    r.step("magic-abort", "magic", "magic", m2, m1, expect="failed", expect_error="this task always fails",
           fail=("always", common.late_row(m2)))
    mr = common.rows("magic-retry", n, DATES)
    r.step("magic-retry", "magic", "magic-retry", mr, mr, mode="overwrite", fail=("once", common.late_row(mr)))

    # Directory staging, each conflict mode against an existing output.
    d1, d2 = common.rows("dir-fail-1", n, DATES[:2]), common.rows("dir-fail-2", n, DATES[2:])
    r.step("directory-fail-new", "directory-fail", "dir-fail", d1, d1)
    r.step("directory-fail-exists", "directory-fail", "dir-fail", d2, d1, expect="failed", expect_error="exists")
    a1, a2 = common.rows("dir-append-1", n, DATES[:2]), common.rows("dir-append-2", n, DATES[1:])
    r.step("directory-append-new", "directory-append", "dir-append", a1, a1)
    r.step("directory-append-more", "directory-append", "dir-append", a2, a1 + a2)
    ax = common.rows("dir-abort", n, DATES)
    r.step("directory-abort", "directory-append", "dir-append", ax, a1 + a2, expect="failed", expect_error="this task always fails",
           fail=("always", common.late_row(ax)))
    dr = common.rows("dir-retry", n, DATES)
    r.step("directory-retry", "directory-append", "dir-retry", dr, dr, fail=("once", common.late_row(dr)))
    p1, p2 = common.rows("dir-replace-1", n, DATES[:3]), common.rows("dir-replace-2", n, DATES[2:])
    r.step("directory-replace-new", "directory-replace", "dir-replace", p1, p1)
    r.step("directory-replace-again", "directory-replace", "dir-replace", p2, p2)

    # Partitioned staging: the conflict modes act on the partitions a job
    # writes, not on the whole output.
    f1, f2 = common.rows("part-fail-1", n, DATES[:2]), common.rows("part-fail-2", n, DATES[2:3])
    f3 = common.rows("part-fail-3", n, [DATES[1], DATES[3]])
    r.step("partitioned-fail-new", "partitioned-fail", "part-fail", f1, f1)
    r.step("partitioned-fail-other", "partitioned-fail", "part-fail", f2, f1 + f2)
    r.step("partitioned-fail-exists", "partitioned-fail", "part-fail", f3, f1 + f2, expect="failed", expect_error="exists")
    q1, q2 = common.rows("part-append-1", n, DATES[:2]), common.rows("part-append-2", n, DATES[1:3])
    r.step("partitioned-append-new", "partitioned-append", "part-append", q1, q1)
    r.step("partitioned-append-more", "partitioned-append", "part-append", q2, q1 + q2)
    s1, s2 = common.rows("part-replace-1", n, DATES[:3]), common.rows("part-replace-2", n, [DATES[1], DATES[3]])
    kept = [row for row in s1 if row[1] not in (DATES[1], DATES[3])]
    r.step("partitioned-replace-new", "partitioned-replace", "part-replace", s1, s1)
    r.step("partitioned-replace-some", "partitioned-replace", "part-replace", s2, kept + s2)

    # FileOutputCommitter over s3a, both algorithms.
    v1, v2 = common.rows("file-v1", n, DATES), common.rows("file-v2", n, DATES)
    r.step("file-v1", "file", "file-v1", v1, v1, mode="overwrite")
    r.step("file-v2", "file", "file-v2", v2, v2, mode="overwrite",
           options={"mapreduce.fileoutputcommitter.algorithm.version": "2"})

    r.spark.stop()
    r.report["total_seconds"] = clock.seconds()
    with open(report_path, "w", encoding="utf-8") as f:
        json.dump(r.report, f, indent=1)


if __name__ == "__main__":
    if len(sys.argv) != 6:
        raise SystemExit(__doc__)
    main(*sys.argv[1:])
