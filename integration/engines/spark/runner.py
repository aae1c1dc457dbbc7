"""Runner runs Spark jobs one after another in one session and records,
for each, what the Go tests check (see s3a_jobs.py)."""

import os

import common


class Runner:
    def __init__(self, confdir, bucket, endpoint, workdir, first_conf, write_root=None):
        self.confs = {
            name[: -len(".conf")]: common.read_spark_defaults(os.path.join(confdir, name))
            for name in sorted(os.listdir(confdir))
            if name.endswith(".conf")
        }
        self.bucket, self.endpoint = bucket, endpoint
        clock = common.Clock()
        # The session starts with first_conf as printed; each job switches
        # to its own.
        self.spark = common.session(self.confs[first_conf], workdir, "cairn-engine-" + first_conf)
        self.cfg = common.Configurator(self.spark, self.confs[first_conf])
        # Jobs write under write_root (default the bucket over s3a); the
        # output is always listed and read back over s3a.
        self.write_root = write_root or "s3a://" + bucket
        self.report = {"session_seconds": clock.seconds(), "steps": []}

    def uri(self, dest):
        return "s3a://%s/%s" % (self.bucket, dest)

    def _fs(self, uri):
        jvm = self.spark._jvm
        path = jvm.org.apache.hadoop.fs.Path(uri)
        return path.getFileSystem(self.spark.sparkContext._jsc.hadoopConfiguration()), path

    def keys(self, dest):
        """Every file under dest (s3a's recursive listing: objects, not
        directory markers), as bucket keys."""
        fs, path = self._fs(self.uri(dest))
        if not fs.exists(path):
            return []
        it = fs.listFiles(path, True)
        out = []
        while it.hasNext():
            out.append(it.next().getPath().toUri().getPath().lstrip("/"))
        return sorted(out)

    def success(self, dest):
        """The text of dest/_SUCCESS, or None when there is none."""
        fs, path = self._fs(self.uri(dest) + "/_SUCCESS")
        if not fs.exists(path):
            return None
        stream = fs.open(path)
        try:
            return self.spark._jvm.org.apache.commons.io.IOUtils.toString(stream, "UTF-8")
        finally:
            stream.close()

    def step(self, name, conf, dest, data, want, mode="append", expect="committed", expect_error="", options=None, fail=None):
        """Runs one job: data written to dest with configuration conf, then
        read back and compared with want."""
        self.cfg.use(self.confs[conf])
        before = self.keys(dest)
        requests = common.request_counts(self.endpoint)
        clock = common.Clock()
        outcome, error = "committed", ""
        try:
            w = common.dataframe(self.spark, data, fail).write.mode(mode).partitionBy("date")
            for k, v in (options or {}).items():
                w = w.option(k, v)
            w.parquet(self.write_root + "/" + dest)
        except Exception as e:  # the job failed; the report says how
            outcome, error = "failed", common.error_text(e)
        seconds = clock.seconds()
        made = common.delta(requests, common.request_counts(self.endpoint))
        after = self.keys(dest)
        has_data = any(k.endswith(".parquet") for k in after)
        got = common.read_rows(self.spark, self.uri(dest)) if has_data else []
        self.report["steps"].append({
            "name": name,
            "conf": conf,
            "committer": self.confs[conf]["spark.hadoop.fs.s3a.committer.name"],
            "options": options or {},
            "dest": dest,
            "written_to": self.write_root + "/" + dest,
            "expect": expect,
            "expect_error": expect_error,
            "outcome": outcome,
            "error": error,
            "rows_written": len(data),
            "rows_read": len(got),
            "rows_diff": common.compare_rows(want, got),
            "keys_before": before,
            "keys_after": after,
            "success": self.success(dest),
            "requests": made,
            "seconds": seconds,
        })
        print("%-24s %-10s %6.1fs rows %d" % (name, outcome, seconds, len(got)), flush=True)
