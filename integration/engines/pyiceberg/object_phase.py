"""PyIceberg against Cairn on the object backing (TestEnginePyIceberg, phase 1).

Creates namespace sales and table sales.orders from an Arrow schema
(partitioned by region), appends, overwrites the eu partition, scans with
row filters, evolves the schema (a column added, one renamed), lists the
snapshots and reads an older one; each write goes through one of the two
catalogs (SigV4, OAuth2) and is read back through the other. It writes the
table's state to --state for the durable-strong phase and prints it.
"""

import json

from pyiceberg.expressions import And, EqualTo, GreaterThan, GreaterThanOrEqual, In, LessThan
from pyiceberg.types import StringType

from catalogs import (
    ARCHIVE,
    NAMESPACE,
    ORDERS,
    ORDERS_ARROW,
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

REGIONS = ["eu", "us", "ap"]


def order(i, region=None, amount=None):
    return {
        "id": i,
        "region": region or REGIONS[i % 3],
        "amount": amount if amount is not None else i * 10.5,
        "day": f"2024-05-{1 + i % 28:02d}",
    }


def main():
    args = parse_args()
    sig = open_sigv4(args.endpoint, args.warehouse)
    oauth = open_oauth(args.endpoint, args.warehouse)

    # Namespace: made over SigV4, seen over OAuth2.
    sig.create_namespace(NAMESPACE, {"owner": "pyiceberg", "phase": "object"})
    expect((NAMESPACE,) in oauth.list_namespaces(), f"namespace {NAMESPACE} not listed over OAuth2")
    props = oauth.load_namespace_properties(NAMESPACE)
    expect_equal({k: props.get(k) for k in ("owner", "phase")}, {"owner": "pyiceberg", "phase": "object"}, "namespace properties")

    # The table from an Arrow schema, then partitioned by region. Old
    # metadata files are deleted after each commit, as a user may ask.
    tbl = sig.create_table(
        ORDERS,
        schema=ORDERS_ARROW,
        properties={"write.metadata.delete-after-commit.enabled": "true", "write.metadata.previous-versions-max": "4"},
    )
    expect(tbl.location().startswith(f"s3://{args.warehouse}/"), f"table location {tbl.location()} is not in the table bucket")
    with tbl.update_spec() as spec:
        spec.add_identity("region")
    expect_equal([f.name for f in tbl.spec().fields], ["region"], "partition fields")
    expect_equal(sig.list_tables(NAMESPACE), [ORDERS], "tables")

    model = {}
    batch1 = [order(i) for i in range(1, 7)]
    tbl.append(arrow_rows(ORDERS_ARROW, batch1))
    model.update({r["id"]: dict(r) for r in batch1})
    first_snapshot = tbl.current_snapshot().snapshot_id

    # The second append over OAuth2, on the table as that catalog loads it.
    tbl_o = oauth.load_table(ORDERS)
    expect_equal(tbl_o.metadata_location, tbl.metadata_location, "metadata location over OAuth2")
    batch2 = [order(i) for i in range(7, 13)]
    tbl_o.append(arrow_rows(ORDERS_ARROW, batch2))
    model.update({r["id"]: dict(r) for r in batch2})
    expect_equal(rows(sig.load_table(ORDERS).scan().to_arrow()), sorted(model.values(), key=lambda r: r["id"]), "rows after two appends (over SigV4)")

    # Overwrite the eu partition with new rows.
    replacement = [order(i, "eu", i * 1.25) for i in (101, 104)]
    tbl_o.overwrite(arrow_rows(ORDERS_ARROW, replacement), overwrite_filter=EqualTo("region", "eu"))
    model = {k: r for k, r in model.items() if r["region"] != "eu"}
    model.update({r["id"]: dict(r) for r in replacement})
    after_overwrite = tbl_o.current_snapshot().snapshot_id

    tbl = sig.load_table(ORDERS)
    want = sorted(model.values(), key=lambda r: r["id"])
    expect_equal(rows(tbl.scan().to_arrow()), want, "rows after the overwrite")

    # Row filters, as strings and as expressions, with projections.
    filters = [
        ("region = 'us' and amount > 50", lambda r: r["region"] == "us" and r["amount"] > 50),
        (And(GreaterThanOrEqual("id", 4), LessThan("id", 10)), lambda r: 4 <= r["id"] < 10),
        (In("region", {"eu", "ap"}), lambda r: r["region"] in ("eu", "ap")),
        ("day >= '2024-05-10'", lambda r: r["day"] >= "2024-05-10"),
        (GreaterThan("amount", 1000.0), lambda r: False),
    ]
    for f, keep in filters:
        got = rows(tbl.scan(row_filter=f).to_arrow())
        expect_equal(got, [r for r in want if keep(r)], f"scan with filter {f}")
    got = rows(tbl.scan(row_filter="region = 'ap'", selected_fields=("id", "amount")).to_arrow())
    expect_equal(got, [{"id": r["id"], "amount": r["amount"]} for r in want if r["region"] == "ap"], "projected scan")

    # Schema evolution over SigV4: add note, rename amount to total.
    with tbl.update_schema() as upd:
        upd.add_column("note", StringType(), doc="added by the object phase")
        upd.rename_column("amount", "total")
    tbl = oauth.load_table(ORDERS)
    expect_equal([f.name for f in tbl.schema().fields], ["id", "region", "total", "day", "note"], "columns after evolution (over OAuth2)")
    for r in model.values():
        r["total"] = r.pop("amount")
        r["note"] = None
    batch3 = []
    for i in range(13, 16):
        r = order(i)
        r["total"] = r.pop("amount")
        r["note"] = f"note {i}"
        batch3.append(r)
    tbl.append(arrow_rows(tbl.schema().as_arrow(), batch3))
    model.update({r["id"]: dict(r) for r in batch3})
    want = sorted(model.values(), key=lambda r: r["id"])
    tbl = sig.load_table(ORDERS)
    expect_equal(rows(tbl.scan().to_arrow()), want, "rows after evolution: old rows read with a null note")
    expect_equal(rows(tbl.scan(row_filter="note is null").to_arrow()), [r for r in want if r["note"] is None], "scan note is null")
    expect_equal(rows(tbl.scan(row_filter="total > 100").to_arrow()), [r for r in want if r["total"] > 100], "scan on the renamed column")

    # Snapshots: append, append, the overwrite (PyIceberg rewrites the eu
    # partition as a delete of its files, then an append), append.
    snaps = snapshots(tbl)
    expect_equal([s["operation"] for s in snaps], ["append", "append", "delete", "append", "append"], "snapshot operations")
    check_lineage(snaps, "snapshots")
    expect_equal(snaps[0]["id"], first_snapshot, "first snapshot")
    expect_equal(snaps[3]["id"], after_overwrite, "snapshot of the overwrite's append")
    # The snapshot log leaves out the overwrite's delete: it was committed
    # with its append and never current (the Java reference does the same).
    expect_equal([h.snapshot_id for h in tbl.history()], [s["id"] for i, s in enumerate(snaps) if i != 2], "snapshot log")

    # An older snapshot by id reads with its own schema (amount, no note).
    first_rows = rows(tbl.scan(snapshot_id=first_snapshot).to_arrow())
    expect_equal(first_rows, sorted(batch1, key=lambda r: r["id"]), "rows of the first snapshot")
    mid = rows(tbl.scan(snapshot_id=after_overwrite, row_filter="region = 'eu'").to_arrow())
    expect_equal(mid, replacement, "eu rows of the overwrite's snapshot")

    # A nested namespace and an escaped table name, over SigV4.
    sig.create_namespace(ARCHIVE[:-1], {"kind": "archive"})
    expect_equal(oauth.list_namespaces(NAMESPACE), [ARCHIVE[:-1]], "namespaces under sales")
    arch = sig.create_table(ARCHIVE, schema=ORDERS_ARROW)
    arch.append(arrow_rows(ORDERS_ARROW, batch1[:2]))
    expect_equal(rows(sig.load_table(ARCHIVE).scan().to_arrow()), batch1[:2], "rows of the archive table (over SigV4)")
    expect_equal(oauth.list_tables(ARCHIVE[:-1]), [ARCHIVE], "tables of the nested namespace")

    state = {
        "archive_rows": batch1[:2],
        "uuid": str(tbl.metadata.table_uuid),
        "metadata_location": tbl.metadata_location,
        "snapshots": snaps,
        "rows": want,
        "columns": [f.name for f in tbl.schema().fields],
        "first_snapshot": first_snapshot,
        "first_rows": first_rows,
    }
    with open(args.state, "w", encoding="utf-8") as f:
        json.dump(state, f, sort_keys=True)
    report(state)


if __name__ == "__main__":
    main()
