"""Job-commit time of each committer for a job of FILES output files, and
the S3 requests each job made: the benchmark bench/committers.sh runs.

Usage: commit_bench.py CONFDIR BUCKET ENDPOINT WORKDIR REPORT MOUNT ROUNDS FILES [VARIANTS]

CONFDIR holds `cairn admin spark-conf` outputs named magic.conf,
directory.conf, partitioned.conf and file.conf. Each job writes
spark.range over FILES partitions (one task, and one Parquet file, per
partition; no partitionBy) in save mode append to a new destination, with
one of the variants below, in ROUNDS rounds (the variants in order in odd
rounds, reversed in even ones), after one unrecorded warm-up job of each.
VARIANTS (comma-separated) runs only some.

What is measured, per job:
- commit_ms: Spark's own "job commit time" SQL metric (FileFormatWriter
  times committer.commitJob and posts it), read from the event log;
- task_commit_ms: the tasks' "task commit time", summed over the tasks;
- tasks_ms: the Spark job's submission to its completion (the tasks,
  before commitJob);
- job_ms: the write command's SQL execution, start to end;
- requests: the S3 requests the job made, per API, from /metrics
  (cairn_s3_requests_total, before and after), and those answered with a
  status of 300 or more.
Each job's output is then listed over s3a: FILES part files and a
_SUCCESS, or the run fails.
"""

import glob
import json
import os
import sys

import common

# name: (conf, on the mount, FileOutputCommitter algorithm 2)
VARIANTS = {
    "magic": ("magic", False, False),
    "directory": ("directory", False, False),
    "partitioned": ("partitioned", False, False),
    "file-v1": ("file", False, False),
    "file-v2": ("file", False, True),
    "mount-v1": ("file", True, False),
    "mount-v2": ("file", True, True),
}

ROWS_PER_FILE = 100

def request_delta(before, after):
    """Per API: the requests between the snapshots, and how many of them
    were answered 300 or above."""
    total, failed = {}, {}
    for (api, status), n in after.items():
        d = n - before.get((api, status), 0)
        if d:
            total[api] = total.get(api, 0) + d
            if status >= 300:
                failed[api] = failed.get(api, 0) + d
    return total, failed


class Bench:
    def __init__(self, confdir, bucket, endpoint, workdir, mount, files):
        self.confs = {
            name[: -len(".conf")]: common.read_spark_defaults(os.path.join(confdir, name))
            for name in sorted(os.listdir(confdir))
            if name.endswith(".conf")
        }
        self.bucket, self.endpoint, self.mount, self.files = bucket, endpoint, mount, files
        self.events = os.path.join(workdir, "events")
        os.makedirs(self.events, exist_ok=True)
        # The event log is a static setting: given at start, kept out of
        # what the Configurator switches.
        first = dict(self.confs["magic"])
        first["spark.eventLog.enabled"] = "true"
        first["spark.eventLog.dir"] = "file://" + self.events
        first["spark.eventLog.rolling.enabled"] = "false"
        first["spark.eventLog.compress"] = "false"
        first["spark.ui.showConsoleProgress"] = "false"
        self.spark = common.session(first, workdir, "cairn-commit-bench")
        self.cfg = common.Configurator(self.spark, self.confs["magic"])
        self.jobs = []

    def _fs(self, uri):
        path = self.spark._jvm.org.apache.hadoop.fs.Path(uri)
        return path.getFileSystem(self.spark.sparkContext._jsc.hadoopConfiguration()), path

    def listed(self, dest):
        """The part files under dest over s3a, and whether _SUCCESS is there."""
        fs, path = self._fs("s3a://%s/%s" % (self.bucket, dest))
        it = fs.listFiles(path, True)
        parts, success = 0, False
        while it.hasNext():
            name = it.next().getPath().getName()
            parts += name.startswith("part-") and name.endswith(".parquet")
            success |= name == "_SUCCESS"
        return parts, success

    def job(self, variant, label, files):
        conf, on_mount, v2 = VARIANTS[variant]
        self.cfg.use(self.confs[conf])
        dest = "bench/" + label
        root = ("file://" + os.path.join(self.mount, self.bucket)) if on_mount else ("s3a://" + self.bucket)
        df = self.spark.range(0, files * ROWS_PER_FILE, 1, files).selectExpr(
            "id", "sha2(cast(id as string), 256) as payload")
        w = df.write.mode("append")
        if v2:
            w = w.option("mapreduce.fileoutputcommitter.algorithm.version", "2")
        # The write's SQL execution carries the label as its description,
        # which is how the event log names it.
        self.spark.sparkContext.setJobDescription(label)
        before = common.requests(self.endpoint)
        clock = common.Clock()
        try:
            w.parquet(root + "/" + dest)
        finally:
            self.spark.sparkContext.setJobDescription(None)
        wall = clock.seconds()
        total, failed = request_delta(before, common.requests(self.endpoint))
        parts, success = self.listed(dest)
        if parts != files or not success:
            raise SystemExit("%s: %d part files and %s _SUCCESS over s3a, want %d and one" % (
                label, parts, "a" if success else "no", files))
        print("%-22s %7.1fs wall, %d requests" % (label, wall, sum(total.values())), flush=True)
        return {"variant": variant, "label": label, "files": files, "wall_s": wall,
                "requests": total, "requests_failed": failed}

    def run(self, rounds, variants):
        for v in variants:
            self.job(v, "warmup-" + v, max(10, self.files // 20))
        for r in range(1, rounds + 1):
            order = variants if r % 2 else list(reversed(variants))
            for v in order:
                rec = self.job(v, "%s-r%d" % (v, r), self.files)
                rec["round"] = r
                self.jobs.append(rec)
        self.spark.stop()
        timings = event_timings(self.events)
        for rec in self.jobs:
            t = timings.get(rec["label"])
            if t is None or t.get("commit_ms") is None:
                raise SystemExit("%s: no job commit time in the event log (%s)" % (rec["label"], t))
            rec.update(t)


def _plan_metrics(info, out):
    for m in info.get("metrics", []):
        out[m["name"]] = m["accumulatorId"]
    for c in info.get("children", []):
        _plan_metrics(c, out)


def event_timings(events_dir):
    """Per SQL execution description: the write's job commit time, the
    tasks' commit times summed, the Spark job's and the execution's
    durations (ms), from the Spark event log in events_dir."""
    logs = [p for p in glob.glob(os.path.join(events_dir, "*")) if not p.endswith(".inprogress")]
    if len(logs) != 1:
        raise SystemExit("want one finished event log in %s, found %s" % (events_dir, os.listdir(events_dir)))
    execs, by_acc, jobs = {}, {}, {}
    with open(logs[0], encoding="utf-8") as f:
        for line in f:
            e = json.loads(line)
            kind = e["Event"].rsplit(".", 1)[-1]
            if kind == "SparkListenerSQLExecutionStart":
                metrics = {}
                _plan_metrics(e["sparkPlanInfo"], metrics)
                x = {"desc": e["description"], "start": e["time"], "commit_ms": None, "task_commit_ms": 0}
                execs[e["executionId"]] = x
                if "job commit time" in metrics:
                    by_acc[metrics["job commit time"]] = ("commit_ms", x)
                if "task commit time" in metrics:
                    by_acc[metrics["task commit time"]] = ("task_commit_ms", x)
            elif kind == "SparkListenerSQLExecutionEnd":
                execs[e["executionId"]]["end"] = e["time"]
            elif kind == "SparkListenerDriverAccumUpdates":
                for acc, value in e["accumUpdates"]:
                    if acc in by_acc and by_acc[acc][0] == "commit_ms":
                        by_acc[acc][1]["commit_ms"] = value
            elif kind == "SparkListenerTaskEnd":
                for a in e["Task Info"].get("Accumulables", []):
                    if a["ID"] in by_acc and by_acc[a["ID"]][0] == "task_commit_ms":
                        by_acc[a["ID"]][1]["task_commit_ms"] += int(a["Update"])
            elif kind == "SparkListenerJobStart":
                xid = (e.get("Properties") or {}).get("spark.sql.execution.id")
                if xid is not None:
                    jobs[e["Job ID"]] = {"exec": int(xid), "submitted": e["Submission Time"]}
            elif kind == "SparkListenerJobEnd" and e["Job ID"] in jobs:
                jobs[e["Job ID"]]["completed"] = e["Completion Time"]
    out = {}
    for xid, x in execs.items():
        if x["commit_ms"] is None:
            continue
        spans = [j for j in jobs.values() if j["exec"] == xid and "completed" in j]
        out[x["desc"]] = {
            "commit_ms": x["commit_ms"],
            "task_commit_ms": x["task_commit_ms"],
            "tasks_ms": sum(j["completed"] - j["submitted"] for j in spans),
            "job_ms": x["end"] - x["start"],
        }
    return out


def main(confdir, bucket, endpoint, workdir, report_path, mount, rounds, files, variants=""):
    chosen = [v for v in VARIANTS if not variants or v in variants.split(",")]
    unknown = set(variants.split(",")) - set(VARIANTS) if variants else set()
    if unknown or not chosen:
        raise SystemExit("unknown variants %s; known: %s" % (sorted(unknown), ", ".join(VARIANTS)))
    b = Bench(confdir, bucket, endpoint, workdir, mount, int(files))
    b.run(int(rounds), chosen)
    with open(report_path, "w", encoding="utf-8") as f:
        json.dump({"files": int(files), "rows_per_file": ROWS_PER_FILE, "jobs": b.jobs}, f, indent=1)


if __name__ == "__main__":
    if len(sys.argv) not in (9, 10):
        raise SystemExit(__doc__)
    main(*sys.argv[1:])
