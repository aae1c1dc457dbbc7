"""Spark with Iceberg after the cutover (TestEngineSparkIceberg, phase 2).

The server now runs on the durable-strong backing. On what the object phase
left (--state): shop.orders loads over both catalogs with the same uuid,
metadata file, snapshots, columns and rows; each retained snapshot reads as
it did; the view answers; shop.events holds its rows. Then writes again: an
INSERT over OAuth2 and a MERGE INTO over SigV4, each a new snapshot on top
of the old ones, the rows and the view checked after each. Prints what it
found.
"""

import json

from iceberg_common import (
    EVENTS,
    NAMESPACE,
    ORDERS,
    VIEW,
    VIEW_MIN,
    event_rows,
    expect,
    expect_equal,
    iceberg_table,
    model_rows,
    parse_args,
    report,
    rows,
    session,
    snapshots,
    values,
)


def main():
    args = parse_args()
    with open(args.state, encoding="utf-8") as f:
        before = json.load(f)
    spark = session(args, "cairn-iceberg-strong")
    sql = spark.sql
    columns = before["columns"]
    select = f"SELECT {', '.join(columns)} FROM"

    # What the object backing left, over both catalogs.
    for cat in ("cairn", "cairn_oauth"):
        tbl = iceberg_table(spark, f"{cat}.{ORDERS}")
        expect_equal(tbl.uuid().toString(), before["uuid"], f"table uuid over {cat}")
        expect_equal(tbl.operations().current().metadataFileLocation(), before["metadata_location"], f"metadata location over {cat}")
        expect_equal(snapshots(spark, cat, ORDERS), before["snapshots"], f"snapshots over {cat}")
        expect_equal(rows(sql(f"{select} {cat}.{ORDERS}")), before["rows"], f"rows over {cat}")
    expect(NAMESPACE in [r[0] for r in sql("SHOW NAMESPACES IN cairn").collect()], "namespace not listed")
    for sid, want in before["snapshot_rows"].items():
        got = rows(sql(f"SELECT * FROM cairn.{ORDERS} VERSION AS OF {sid}"))
        expect_equal([{k: r.get(k) for k in want[0]} for r in got], want, f"VERSION AS OF {sid}")
    expect_equal(rows(sql(f"SELECT * FROM cairn_oauth.{VIEW}")), before["view_rows"], "the view")
    expect_equal(rows(sql(f"SELECT * FROM cairn.{EVENTS}")), event_rows(1, before["events"]), "the events table")

    model = {r["id"]: dict(r) for r in before["rows"]}

    def check(cat, what):
        got = rows(sql(f"{select} {cat}.{ORDERS}"))
        expect_equal(got, model_rows(model, columns), what)
        want_view = [{"id": i, "label": model[i]["label"], "amount": model[i]["amount"]} for i in sorted(model) if model[i]["amount"] > VIEW_MIN]
        expect_equal(rows(sql(f"SELECT * FROM cairn.{VIEW}")), want_view, f"the view {what}")
        return got, want_view

    batch = [
        {"id": i, "label": f"strong-{i}", "region": "us", "amount": i * 3.0, "day": "2024-07-01", "note": "durable-strong"} for i in range(40, 44)
    ]
    sql(f"INSERT INTO cairn_oauth.{ORDERS} ({', '.join(columns)}) VALUES {values(batch, columns)}")
    model.update({r["id"]: r for r in batch})
    check("cairn", "after an INSERT on durable-strong")

    sql(
        f"""MERGE INTO cairn.{ORDERS} t
        USING (SELECT * FROM VALUES (40, 'strong-merged', 999.0D), (44, 'strong-44', 44.0D) AS s(id, label, amount)) s
        ON t.id = s.id
        WHEN MATCHED THEN UPDATE SET t.label = s.label, t.amount = s.amount
        WHEN NOT MATCHED THEN INSERT (id, label, region, amount, day, note)
            VALUES (s.id, s.label, 'eu', s.amount, DATE '2024-07-02', NULL)"""
    )
    model[40].update(label="strong-merged", amount=999.0)
    model[44] = {"id": 44, "label": "strong-44", "region": "eu", "amount": 44.0, "day": "2024-07-02", "note": None}
    final, view = check("cairn_oauth", "after a MERGE on durable-strong")

    snaps = snapshots(spark, "cairn_oauth", ORDERS)
    n = len(before["snapshots"])
    expect_equal(snaps[:n], before["snapshots"], "the object phase's snapshots")
    expect_equal([s["parent"] for s in snaps[n:]], [snaps[n - 1]["id"], snaps[n]["id"]], "the new snapshots' parents")
    spark.stop()
    report({"uuid": before["uuid"], "snapshots": snaps, "rows": final, "view_rows": view})


if __name__ == "__main__":
    main()
