"""What the Spark job scripts share: a local Spark session configured from
`cairn admin spark-conf` output, the rows a job writes, reading them back,
and the server's request counters.

The scripts run under the engines' venv (integration/engines/install.sh);
CAIRN_ENGINES names the cache whose jars/ holds hadoop-aws and the rest.
"""

import collections
import glob
import os
import random
import re
import sys
import time
import urllib.request

# Each job writes these dates, or a part of them, as its partitions.
DATES = ["2026-11-27", "2026-11-28", "2026-11-29", "2026-11-30"]

SCHEMA = "id long, date string, tag string, value string, amount double"


def read_spark_defaults(path):
    """Parses spark-defaults.conf text as Spark does: '#' and blank lines
    skipped, then a key, white space and the value."""
    conf = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            key, _, value = line.partition(" ")
            conf[key] = value.strip()
    return conf


def session(conf, workdir, app):
    """A local Spark session with the spark-conf settings conf, two worker
    threads and up to three attempts per task (local[2,3]: local mode
    ignores spark.task.maxFailures)."""
    from pyspark.sql import SparkSession

    os.environ["PYSPARK_PYTHON"] = sys.executable
    # Loopback only: left alone, Spark binds its driver to the address the
    # host name resolves to, or to the first interface's.
    os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
    # Spark's and Hadoop's relative paths (the staging committers'
    # tmp/staging in local mode) land in workdir.
    os.chdir(workdir)
    jars = sorted(glob.glob(os.path.join(os.environ["CAIRN_ENGINES"], "jars", "*.jar")))
    if not jars:
        raise SystemExit("no jars under $CAIRN_ENGINES/jars: run make engines")
    b = (
        SparkSession.builder.master("local[2,3]")
        .appName(app)
        .config("spark.jars", ",".join(jars))
        .config("spark.ui.enabled", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.local.dir", os.path.join(workdir, "spark-local"))
        .config("spark.driver.extraJavaOptions", "-Djava.io.tmpdir=" + workdir)
        # Where s3a buffers blocks and the staging committers keep task
        # output: the test's directory, not /tmp.
        .config("spark.hadoop.hadoop.tmp.dir", os.path.join(workdir, "hadoop"))
        # Partition values stay strings, as written.
        .config("spark.sql.sources.partitionColumnTypeInference.enabled", "false")
    )
    for k, v in conf.items():
        b = b.config(k, v)
    spark = b.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


class Configurator:
    """Switches a running session from one spark-conf output to another, as
    a new session started with it would have it: spark.hadoop.* keys go to
    the Hadoop configuration every job copies (prefix dropped, as Spark does
    at start), the rest to the SQL configuration; keys of the previous
    configuration that the new one lacks are unset."""

    def __init__(self, spark, conf):
        self.spark = spark
        self.current = dict(conf)

    def use(self, conf):
        hconf = self.spark.sparkContext._jsc.hadoopConfiguration()
        for k in self.current:
            if k not in conf:
                if k.startswith("spark.hadoop."):
                    hconf.unset(k[len("spark.hadoop."):])
                else:
                    self.spark.conf.unset(k)
        for k, v in conf.items():
            if k.startswith("spark.hadoop."):
                hconf.set(k[len("spark.hadoop."):], v)
            else:
                self.spark.conf.set(k, v)
        self.current = dict(conf)


def rows(tag, n, dates):
    """n rows of job tag over dates, the same on every run: ids unique
    within the tag, values random from a generator seeded by the tag."""
    rnd = random.Random(tag)
    base = sum(map(ord, tag)) * 1_000_000
    return [
        (base + i, dates[i % len(dates)], tag, "%s-%05d-%08x" % (tag, i, rnd.getrandbits(32)), round(rnd.uniform(-1e6, 1e6), 3))
        for i in range(n)
    ]


def dataframe(spark, data, fail=None):
    """data as a DataFrame of two partitions (two write tasks), sorted by
    date within each, so a task writes its dates' files one after another.
    fail, if given, is (udf_factory_name, id): the row with that id fails
    its task, on the first attempt only ("once") or on every one
    ("always"), when the task has already written the files of the dates
    before it."""
    from pyspark.sql import functions as F

    df = spark.createDataFrame(spark.sparkContext.parallelize(data, 2), SCHEMA).sortWithinPartitions("date")
    if fail is None:
        return df
    how, fail_id = fail
    if how == "always":
        # A JVM expression: every attempt of the task fails.
        value = F.when(F.col("id") == F.lit(fail_id), F.raise_error(F.lit("engine test: this task always fails"))).otherwise(F.col("value"))
    else:
        value = _fail_once_udf()(F.col("value"), F.col("id"), F.lit(fail_id))
    return df.select("id", "date", "tag", value.alias("value"), "amount")


def _fail_once_udf():
    from pyspark import TaskContext
    from pyspark.sql import functions as F

    @F.udf("string")
    def fail_once(value, row_id, fail_id):
        if row_id == fail_id and TaskContext.get().attemptNumber() == 0:
            raise RuntimeError("engine test: first attempt of this task fails")
        return value

    return fail_once


def late_row(data):
    """The id of a row of data's last date: after the sort, its task has
    closed the files of every other date before it reaches this row."""
    last = max(r[1] for r in data)
    return next(r[0] for r in data if r[1] == last)


def read_rows(spark, uri):
    """The rows under uri, as tuples in the order of SCHEMA, through Spark's
    Parquet reader (the date coming back from the partition directories)."""
    df = spark.read.parquet(uri)
    return [(r["id"], str(r["date"]), r["tag"], r["value"], r["amount"]) for r in df.collect()]


def compare_rows(want, got):
    """'' when got holds exactly the rows of want (as multisets), else what
    differs."""
    w, g = collections.Counter(want), collections.Counter(got)
    if w == g:
        return ""
    missing, extra = w - g, g - w
    return "%d rows, want %d: %d missing (e.g. %s), %d unexpected (e.g. %s)" % (
        len(got), len(want), sum(missing.values()), list(missing)[:3], sum(extra.values()), list(extra)[:3])


_REQUESTS = re.compile(r'^cairn_s3_requests_total\{api="([A-Za-z0-9]+)",status="(\d+)"\} (\d+)$')


def requests(endpoint):
    """The server's S3 request counts as {(api, status): n}, from /metrics."""
    with urllib.request.urlopen(endpoint.rstrip("/") + "/metrics", timeout=30) as resp:
        text = resp.read().decode()
    out = {}
    for line in text.splitlines():
        m = _REQUESTS.match(line)
        if m:
            out[(m.group(1), int(m.group(2)))] = int(m.group(3))
    return out


def request_counts(endpoint):
    """The server's S3 request counts by API, whatever their status."""
    out = collections.Counter()
    for (api, _), n in requests(endpoint).items():
        out[api] += n
    return dict(out)


def error_text(e):
    """What a failed job raised: the message, then each cause's from the
    JVM (a task's failure reaches the driver wrapped several times)."""
    parts = [str(e).split("\n\tat ")[0][:2000]]
    cause = getattr(e, "java_exception", None) or getattr(e, "_origin", None)
    seen = 0
    while cause is not None and seen < 10:
        parts.append("%s: %s" % (cause.getClass().getName(), cause.getMessage()))
        cause, seen = cause.getCause(), seen + 1
    return "\ncaused by ".join(parts)


def delta(before, after):
    return {k: after.get(k, 0) - before.get(k, 0) for k in after if after.get(k, 0) != before.get(k, 0)}


class Clock:
    def __init__(self):
        self.t0 = time.monotonic()

    def seconds(self):
        return round(time.monotonic() - self.t0, 2)
