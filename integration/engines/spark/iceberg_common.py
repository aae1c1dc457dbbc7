"""What both Spark Iceberg phases of TestEngineSparkIceberg share.

One Spark session (local mode) per phase, with two Iceberg catalogs on the
same Cairn REST catalog, configured as docs/engines.md tells a user to:

- cairn: requests signed with SigV4 (signing name s3);
- cairn_oauth: OAuth2 client credentials (credential=ACCESS_KEY:SECRET,
  exchanged at Cairn's token endpoint for a bearer token).

Both read and write data and metadata files with Iceberg's S3FileIO on
Cairn's S3 face. The phases get the server from the command line
(--endpoint, --warehouse, --jars, --state) and the credentials from
CAIRN_ACCESS_KEY, CAIRN_SECRET_KEY and CAIRN_REGION. Each prints one JSON
report as the last line of its standard output; Spark's log goes to
standard error.
"""

import argparse
import datetime
import glob
import json
import os
import sys

from pyspark.sql import SparkSession

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from checks import expect, expect_equal, plain  # noqa: E402  (re-exported to the phases)

NAMESPACE = "shop"
ORDERS = f"{NAMESPACE}.orders"
EVENTS = f"{NAMESPACE}.events"
VIEW = f"{NAMESPACE}.big_orders"
# The view's query, over the SigV4 catalog. Rows with an amount above
# VIEW_MIN are in it.
VIEW_MIN = 50.0
VIEW_SQL = f"SELECT id, label, amount FROM cairn.{ORDERS} WHERE amount > {VIEW_MIN}"
# The table properties of orders: row-level changes rewrite data files
# (copy-on-write) rather than writing delete files.
COW = {
    "format-version": "2",
    "write.update.mode": "copy-on-write",
    "write.delete.mode": "copy-on-write",
    "write.merge.mode": "copy-on-write",
}


def parse_args():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--endpoint", required=True, help="the Cairn server, http://HOST:PORT")
    p.add_argument("--warehouse", required=True, help="the table bucket")
    p.add_argument("--jars", required=True, help="the directory holding iceberg-spark-runtime and iceberg-aws-bundle")
    p.add_argument("--state", required=True, help="JSON file the object phase writes and the durable-strong phase reads")
    return p.parse_args()


def credentials():
    try:
        return os.environ["CAIRN_ACCESS_KEY"], os.environ["CAIRN_SECRET_KEY"], os.environ.get("CAIRN_REGION", "us-east-1")
    except KeyError as e:
        sys.exit(f"set {e.args[0]} (the Cairn access key and secret the catalogs use)")


def catalog_conf(name, endpoint, warehouse, auth):
    """The spark.sql.catalog.NAME.* settings of docs/engines.md."""
    access, secret, region = credentials()
    c = f"spark.sql.catalog.{name}"
    conf = {
        c: "org.apache.iceberg.spark.SparkCatalog",
        f"{c}.type": "rest",
        f"{c}.uri": f"{endpoint}/iceberg",
        f"{c}.warehouse": warehouse,
        # Every query loads the table's current metadata: other catalogs,
        # sessions and engines commit to the same tables.
        f"{c}.cache-enabled": "false",
        # Data and metadata files through Cairn's S3 face.
        f"{c}.io-impl": "org.apache.iceberg.aws.s3.S3FileIO",
        f"{c}.s3.endpoint": endpoint,
        f"{c}.s3.path-style-access": "true",
        f"{c}.client.region": region,
        f"{c}.s3.access-key-id": access,
        f"{c}.s3.secret-access-key": secret,
    }
    if auth == "sigv4":
        conf.update(
            {
                f"{c}.rest.auth.type": "sigv4",
                f"{c}.rest.auth.sigv4.delegate-auth-type": "none",
                f"{c}.rest.signing-name": "s3",
                f"{c}.rest.signing-region": region,
                f"{c}.rest.access-key-id": access,
                f"{c}.rest.secret-access-key": secret,
            }
        )
    elif auth == "oauth2":
        conf.update(
            {
                f"{c}.rest.auth.type": "oauth2",
                f"{c}.credential": f"{access}:{secret}",
                f"{c}.oauth2-server-uri": f"{endpoint}/iceberg/v1/oauth/tokens",
            }
        )
    else:
        raise ValueError(f"unknown catalog auth {auth!r}")
    return conf


def session(args, app, extra=None):
    """The phase's Spark session: local mode, Iceberg's SQL extensions
    (MERGE, UPDATE, DELETE, CALL), the two catalogs, UTC."""
    jars = sorted(glob.glob(os.path.join(args.jars, "iceberg-spark-runtime-*.jar")) + glob.glob(os.path.join(args.jars, "iceberg-aws-bundle-*.jar")))
    if len(jars) != 2:
        sys.exit(f"{args.jars} does not hold iceberg-spark-runtime and iceberg-aws-bundle (found {jars}): run `make engines`")
    # Loopback only: left alone, Spark binds its driver to the address the
    # host name resolves to, or to the first interface's.
    os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
    b = (
        SparkSession.builder.master("local[2]")
        .appName(app)
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.jars", ",".join(jars))
        .config("spark.sql.extensions", "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "4")
    )
    for name, auth in (("cairn", "sigv4"), ("cairn_oauth", "oauth2")):
        for k, v in catalog_conf(name, args.endpoint, args.warehouse, auth).items():
            b = b.config(k, v)
    for k, v in (extra or {}).items():
        b = b.config(k, v)
    spark = b.getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    return spark




def rows(df):
    """The rows of a DataFrame as plain dicts (dates as ISO strings), by id."""
    out = [{k: plain(v) for k, v in r.asDict().items()} for r in df.collect()]
    return sorted(out, key=lambda r: r["id"])


def model_rows(model, columns):
    """The rows the script knows it wrote, in columns, by id."""
    return [{c: model[i].get(c) for c in columns} for i in sorted(model)]


def snapshots(spark, catalog, table):
    """The table's snapshots in commit order: id, parent, operation and
    commit time (milliseconds)."""
    df = spark.sql(
        f"SELECT snapshot_id, parent_id, operation, unix_millis(committed_at) AS ms FROM {catalog}.{table}.snapshots ORDER BY committed_at, snapshot_id"
    )
    return [{"id": r.snapshot_id, "parent": r.parent_id, "operation": r.operation, "ms": r.ms} for r in df.collect()]


def iceberg_table(spark, name):
    """The Iceberg Java table behind a Spark name (uuid, location, FileIO)."""
    return spark._jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(spark._jsparkSession, name)


def event_rows(first, n):
    """The rows of the events table as TestEngineTrino's makeRows makes
    them (prefix spark): id, name spark-ID, day 19000 + id % 365 days."""
    epoch = datetime.date(1970, 1, 1)
    return [{"id": i, "name": f"spark-{i}", "day": (epoch + datetime.timedelta(days=19000 + i % 365)).isoformat()} for i in range(first, first + n)]


def values(records, columns):
    """A VALUES list of records in columns (strings quoted, dates typed)."""

    def lit(c, v):
        if v is None:
            return "NULL"
        if c == "day":
            return f"DATE '{v}'"
        if isinstance(v, str):
            return "'" + v.replace("'", "''") + "'"
        if isinstance(v, float):
            return f"{v!r}D"
        return str(v)

    return ", ".join("(" + ", ".join(lit(c, r.get(c)) for c in columns) + ")" for r in records)


def report(obj):
    print(json.dumps(obj, sort_keys=True))
