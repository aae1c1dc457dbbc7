"""What both PyIceberg phases of TestEnginePyIceberg share.

The catalogs are configured the way a user would write them against a Cairn
server: the REST catalog at http://HOST:PORT/iceberg, the warehouse a table
bucket, the FileIO on Cairn's S3 face (endpoint, path-style, region, the
access key and secret), and catalog auth by either SigV4 (signing name s3)
or OAuth2 client credentials (credential=ACCESS_KEY:SECRET).

The phases get the server from the command line (--endpoint, --warehouse,
--state) and the credentials from CAIRN_ACCESS_KEY, CAIRN_SECRET_KEY and
CAIRN_REGION. Each prints one JSON report on stdout; warnings go to stderr.
"""

import argparse
import datetime
import json
import os
import sys

import pyarrow as pa

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from checks import expect, expect_equal, plain  # noqa: E402  (re-exported to the phases)
from pyiceberg.catalog import load_catalog

NAMESPACE = "sales"
ORDERS = (NAMESPACE, "orders")
RETURNS = (NAMESPACE, "returns")
# A nested namespace and a table name that must be escaped in the URL
# (sales\x1farchive, "2024 orders"): what a SigV4 signer encodes twice.
ARCHIVE = (NAMESPACE, "archive", "2024 orders")

# The orders table as PyIceberg creates it from Arrow: a required id, and
# optional columns (Iceberg field ids 1 to 4 in this order).
ORDERS_ARROW = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        pa.field("region", pa.string()),
        pa.field("amount", pa.float64()),
        pa.field("day", pa.date32()),
    ]
)


def parse_args():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--endpoint", required=True, help="the Cairn server, http://HOST:PORT")
    p.add_argument("--warehouse", required=True, help="the table bucket")
    p.add_argument("--state", required=True, help="JSON file the object phase writes and the durable-strong phase reads")
    return p.parse_args()


def _credentials():
    try:
        return os.environ["CAIRN_ACCESS_KEY"], os.environ["CAIRN_SECRET_KEY"], os.environ.get("CAIRN_REGION", "us-east-1")
    except KeyError as e:
        sys.exit(f"set {e.args[0]} (the Cairn access key and secret the catalogs use)")


def _file_io(endpoint):
    access, secret, region = _credentials()
    return {
        "s3.endpoint": endpoint,
        "s3.force-virtual-addressing": "false",
        "s3.region": region,
        "s3.access-key-id": access,
        "s3.secret-access-key": secret,
    }


def open_sigv4(endpoint, warehouse):
    """The REST catalog signing every request with SigV4 (service s3)."""
    access, secret, region = _credentials()
    return load_catalog(
        "cairn-sigv4",
        **{
            "type": "rest",
            "uri": endpoint + "/iceberg",
            "warehouse": warehouse,
            "rest.sigv4-enabled": "true",
            "rest.signing-name": "s3",
            "rest.signing-region": region,
            "client.access-key-id": access,
            "client.secret-access-key": secret,
            "client.region": region,
            **_file_io(endpoint),
        },
    )


def open_oauth(endpoint, warehouse):
    """The REST catalog with OAuth2 client credentials (a bearer token)."""
    access, secret, _ = _credentials()
    return load_catalog(
        "cairn-oauth",
        **{
            "type": "rest",
            "uri": endpoint + "/iceberg",
            "warehouse": warehouse,
            "credential": f"{access}:{secret}",
            "oauth2-server-uri": endpoint + "/iceberg/v1/oauth/tokens",
            **_file_io(endpoint),
        },
    )




def rows(arrow_table):
    """The rows of a scan as plain dicts (dates as ISO strings), by id."""
    out = [{k: plain(v) for k, v in r.items()} for r in arrow_table.to_pylist()]
    return sorted(out, key=lambda r: r["id"])


def arrow_rows(schema, records):
    """An Arrow table of records (dicts, dates as ISO strings) in schema."""
    fixed = []
    for r in records:
        r = dict(r)
        if r.get("day") is not None:
            r["day"] = datetime.date.fromisoformat(r["day"])
        fixed.append(r)
    return pa.Table.from_pylist(fixed, schema=schema)


def snapshots(tbl):
    """The table's snapshots in commit order: id, parent and operation."""
    return [
        {"id": s.snapshot_id, "parent": s.parent_snapshot_id, "operation": s.summary.operation.value}
        for s in tbl.snapshots()
    ]


def check_lineage(snaps, what):
    """Each snapshot's parent is the one before it (one linear main)."""
    for prev, cur in zip([None] + snaps, snaps):
        expect_equal(cur["parent"], prev["id"] if prev else None, f"{what}: parent of snapshot {cur['id']}")


def report(obj):
    print(json.dumps(obj, sort_keys=True))
