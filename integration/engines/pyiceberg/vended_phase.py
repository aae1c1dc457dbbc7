"""PyIceberg on Cairn without S3 keys: vended credentials.

The catalog is configured with a user's catalog credentials only (OAuth2
client credentials of a user whose policy covers one table bucket), and no
s3.* keys: PyIceberg asks for vended credentials (its default
X-Iceberg-Access-Delegation) and reads and writes the table's files with
the temporary credentials Cairn answers. The vended key is refused an
object outside the table's location. (Remote signing needs PyIceberg's
fsspec FileIO and s3fs, which the engines' pinned environment leaves out:
its aiobotocore pins another botocore than boto3's.)

Arguments: --endpoint, --warehouse, --state (unused); the user's keys from
CAIRN_ACCESS_KEY and CAIRN_SECRET_KEY. Prints one JSON report.
"""

import os
import sys

import boto3
import botocore
from botocore.config import Config

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from catalogs import ORDERS_ARROW, arrow_rows, expect, expect_equal, parse_args, report, rows  # noqa: E402
from pyiceberg.catalog import load_catalog  # noqa: E402

NS = "vend"


def open_catalog(endpoint, warehouse, delegation):
    access, secret = os.environ["CAIRN_ACCESS_KEY"], os.environ["CAIRN_SECRET_KEY"]
    props = {
        "type": "rest",
        "uri": endpoint + "/iceberg",
        "warehouse": warehouse,
        "credential": f"{access}:{secret}",
        "oauth2-server-uri": endpoint + "/iceberg/v1/oauth/tokens",
        "header.X-Iceberg-Access-Delegation": delegation,
    }
    return load_catalog("cairn-" + delegation, **props)


def main():
    args = parse_args()
    records = [
        {"id": i, "region": r, "amount": float(i) * 1.5, "day": "2026-12-0%d" % (1 + i % 7)}
        for i, r in enumerate(["eu", "us", "ap", "eu", "us"], start=1)
    ]

    cat = open_catalog(args.endpoint, args.warehouse, "vended-credentials")
    cat.create_namespace(NS)
    tbl = cat.create_table((NS, "events"), schema=ORDERS_ARROW)
    props = tbl.io.properties
    expect("s3.session-token" in props and props.get("s3.access-key-id", "").startswith("ASIA"),
           "the table's FileIO holds vended temporary credentials, not the user's keys")
    expect(props.get("s3.access-key-id") != os.environ["CAIRN_ACCESS_KEY"], "the FileIO does not use the user's own key")
    tbl.append(arrow_rows(ORDERS_ARROW, records[:3]))
    tbl = cat.load_table((NS, "events"))
    expect_equal(rows(tbl.scan().to_arrow()), records[:3], "rows read back with vended credentials")
    tbl.append(arrow_rows(ORDERS_ARROW, records[3:]))

    # The vended key writes only inside the table's location.
    s3 = boto3.client("s3", endpoint_url=args.endpoint, region_name="us-east-1",
                      aws_access_key_id=props["s3.access-key-id"],
                      aws_secret_access_key=props["s3.secret-access-key"],
                      aws_session_token=props["s3.session-token"],
                      config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1}))
    location = tbl.location()
    inside = location[len("s3://" + args.warehouse + "/"):] + "/data/vended-probe"
    s3.put_object(Bucket=args.warehouse, Key=inside, Body=b"inside")
    refused = None
    try:
        s3.put_object(Bucket=args.warehouse, Key="elsewhere/probe", Body=b"outside")
    except botocore.exceptions.ClientError as e:
        refused = e.response["Error"]["Code"]
    expect_equal(refused, "AccessDenied", "a put outside the table's location with the vended key")

    report({
        "rows": rows(cat.load_table((NS, "events")).scan().to_arrow()),
        "vended_key_prefix": props["s3.access-key-id"][:4],
    })


if __name__ == "__main__":
    main()
