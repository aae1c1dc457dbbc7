"""PyIceberg against Cairn after the cutover (TestEnginePyIceberg, phase 2).

The server now runs on the durable-strong backing. On the table the object
phase left (--state): load it over both catalogs (same uuid, metadata file,
snapshots and rows), read the object phase's first snapshot, append, evolve
the schema again, delete rows, and see the snapshot list grow; then create
a second table and write and read it. Prints what it found.
"""

import json

from pyiceberg.expressions import EqualTo
from pyiceberg.types import IntegerType

from catalogs import (
    ARCHIVE,
    NAMESPACE,
    ORDERS,
    ORDERS_ARROW,
    RETURNS,
    arrow_rows,
    check_lineage,
    expect,
    expect_equal,
    open_oauth,
    open_sigv4,
    parse_args,
    report,
    rows,
    snapshots,
)


def main():
    args = parse_args()
    with open(args.state, encoding="utf-8") as f:
        before = json.load(f)
    sig = open_sigv4(args.endpoint, args.warehouse)
    oauth = open_oauth(args.endpoint, args.warehouse)

    # The table as the object backing left it, over both catalogs.
    loaded = {}
    for name, cat in (("SigV4", sig), ("OAuth2", oauth)):
        tbl = cat.load_table(ORDERS)
        expect_equal(str(tbl.metadata.table_uuid), before["uuid"], f"table uuid over {name}")
        expect_equal(tbl.metadata_location, before["metadata_location"], f"metadata location over {name}")
        expect_equal(snapshots(tbl), before["snapshots"], f"snapshots over {name}")
        expect_equal([f.name for f in tbl.schema().fields], before["columns"], f"columns over {name}")
        expect_equal(rows(tbl.scan().to_arrow()), before["rows"], f"rows over {name}")
        loaded[name] = tbl
    expect((NAMESPACE,) in sig.list_namespaces(), "namespace not listed")
    expect_equal(sig.load_namespace_properties(NAMESPACE).get("phase"), "object", "namespace property")
    tbl = loaded["SigV4"]
    expect_equal(
        rows(tbl.scan(snapshot_id=before["first_snapshot"]).to_arrow()),
        before["first_rows"],
        "rows of the object phase's first snapshot",
    )

    arch = sig.load_table(ARCHIVE)
    expect_equal(rows(arch.scan().to_arrow()), before["archive_rows"], "rows of the archive table (over SigV4)")
    expect_equal(sig.load_namespace_properties(ARCHIVE[:-1]).get("kind"), "archive", "nested namespace property")

    model = {r["id"]: dict(r) for r in before["rows"]}

    # Append over SigV4 with the object phase's schema.
    batch4 = [
        {"id": i, "region": "us", "total": i * 2.0, "day": "2024-06-01", "note": "strong"} for i in range(201, 204)
    ]
    tbl.append(arrow_rows(tbl.schema().as_arrow(), batch4))
    model.update({r["id"]: dict(r) for r in batch4})

    # Evolve over OAuth2: add qty, rename note to comment; append with it.
    tbl = oauth.load_table(ORDERS)
    with tbl.update_schema() as upd:
        upd.add_column("qty", IntegerType())
        upd.rename_column("note", "comment")
    expect_equal([f.name for f in tbl.schema().fields], ["id", "region", "total", "day", "comment", "qty"], "columns after the second evolution")
    for r in model.values():
        r["comment"] = r.pop("note")
        r["qty"] = None
    batch5 = [
        {"id": i, "region": "ap", "total": i * 3.0, "day": "2024-06-02", "comment": None, "qty": i - 300} for i in range(301, 305)
    ]
    tbl.append(arrow_rows(tbl.schema().as_arrow(), batch5))
    model.update({r["id"]: dict(r) for r in batch5})

    # A row-level delete over SigV4 (rewrites the us partition's files).
    tbl = sig.load_table(ORDERS)
    tbl.delete(EqualTo("id", 202))
    del model[202]

    want = sorted(model.values(), key=lambda r: r["id"])
    tbl = oauth.load_table(ORDERS)
    expect_equal(rows(tbl.scan().to_arrow()), want, "rows on durable-strong")
    expect_equal(rows(tbl.scan(row_filter="qty is not null").to_arrow()), [r for r in want if r["qty"] is not None], "scan qty is not null")
    expect_equal(rows(tbl.scan(row_filter="comment = 'strong'").to_arrow()), [r for r in want if r["comment"] == "strong"], "scan on the renamed column")
    expect_equal(
        rows(tbl.scan(row_filter="region = 'eu' and total > 127", selected_fields=("id", "total")).to_arrow()),
        [{"id": r["id"], "total": r["total"]} for r in want if r["region"] == "eu" and r["total"] > 127],
        "projected scan with filter",
    )

    # The snapshot list grew: the object phase's, then two appends and the
    # delete's rewrite of one file (an overwrite).
    snaps = snapshots(tbl)
    expect_equal(snaps[: len(before["snapshots"])], before["snapshots"], "the object phase's snapshots")
    expect_equal([s["operation"] for s in snaps[len(before["snapshots"]) :]], ["append", "append", "overwrite"], "new snapshot operations")
    check_lineage(snaps, "snapshots")

    # A second table, made on durable-strong.
    ret = oauth.create_table(RETURNS, schema=ORDERS_ARROW)
    first = [{"id": i, "region": "eu", "amount": float(i), "day": "2024-07-01"} for i in (1, 2, 3)]
    ret.append(arrow_rows(ORDERS_ARROW, first))
    ret = sig.load_table(RETURNS)
    ret.overwrite(arrow_rows(ORDERS_ARROW, [{"id": 9, "region": "us", "amount": 9.0, "day": "2024-07-02"}]))
    ret_rows = rows(oauth.load_table(RETURNS).scan().to_arrow())
    expect_equal(ret_rows, [{"id": 9, "region": "us", "amount": 9.0, "day": "2024-07-02"}], "rows of the second table")
    expect_equal(
        rows(ret.scan(snapshot_id=ret.snapshots()[0].snapshot_id).to_arrow()), first, "the second table's first snapshot"
    )
    expect_equal(sorted(sig.list_tables(NAMESPACE)), [ORDERS, RETURNS], "tables")

    report(
        {
            "uuid": str(tbl.metadata.table_uuid),
            "snapshots": snaps,
            "rows": want,
            "columns": [f.name for f in tbl.schema().fields],
            "returns_snapshots": snapshots(oauth.load_table(RETURNS)),
            "returns_rows": ret_rows,
        }
    )


if __name__ == "__main__":
    main()
