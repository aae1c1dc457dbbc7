"""Spark with Iceberg on Cairn's object backing (TestEngineSparkIceberg, phase 1).

In one Spark session with the SigV4 catalog (cairn) and the OAuth2 one
(cairn_oauth): namespace shop; table shop.orders partitioned by days(day),
copy-on-write for UPDATE, DELETE and MERGE; INSERTs, an UPDATE, a DELETE and
a MERGE INTO, writes alternating between the catalogs; a column added and
one renamed; time travel by snapshot id and by timestamp; a view; a second
table shop.events for Trino; expire_snapshots, and remove_orphan_files with
an orphan put through S3. After each step the rows are compared, one by
one, with what the script knows it wrote. Writes the state the
durable-strong phase needs to --state, and prints it.
"""

import datetime
import json

from iceberg_common import (
    COW,
    EVENTS,
    NAMESPACE,
    ORDERS,
    VIEW,
    VIEW_MIN,
    VIEW_SQL,
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

REGIONS = ["eu", "us", "ap"]
FIRST = ["id", "name", "region", "amount", "day"]  # the first schema
LAST = ["id", "label", "region", "amount", "day", "note"]  # after the evolution


def order(i):
    return {
        "id": i,
        "name": f"order-{i}",
        "region": REGIONS[i % 3],
        "amount": i * 7.5,
        "day": (datetime.date(2024, 6, 1) + datetime.timedelta(days=i % 4)).isoformat(),
    }


def main():
    args = parse_args()
    # spark.testing lets remove_orphan_files take an older_than of now: the
    # procedure refuses one less than a day old otherwise, and the orphan
    # this script puts there is seconds old.
    spark = session(args, "cairn-iceberg-object", {"spark.testing": "true"})
    sql = spark.sql

    def check(catalog, model, columns, what):
        got = rows(sql(f"SELECT {', '.join(columns)} FROM {catalog}.{ORDERS}"))
        expect_equal(got, model_rows(model, columns), what)
        return got

    sql(f"CREATE NAMESPACE cairn.{NAMESPACE} WITH DBPROPERTIES ('writer' = 'spark', 'phase' = 'object')")
    expect(NAMESPACE in [r[0] for r in sql("SHOW NAMESPACES IN cairn_oauth").collect()], "namespace not listed over OAuth2")
    props = {r[0]: r[1] for r in sql(f"DESCRIBE NAMESPACE EXTENDED cairn_oauth.{NAMESPACE}").collect()}
    expect("phase" in props.get("Properties", ""), f"namespace properties over OAuth2: {props}")

    tblprops = ", ".join(f"'{k}' = '{v}'" for k, v in COW.items())
    sql(
        f"CREATE TABLE cairn.{ORDERS} (id bigint NOT NULL, name string, region string, amount double, day date) "
        f"USING iceberg PARTITIONED BY (days(day)) TBLPROPERTIES ({tblprops})"
    )
    expect_equal([r[1] for r in sql(f"SHOW TABLES IN cairn_oauth.{NAMESPACE}").collect()], ["orders"], "tables over OAuth2")

    model = {}
    states = []  # (operation, the model after it), one per snapshot

    def commit(what):
        states.append((what, {k: dict(v) for k, v in model.items()}))

    batch = [order(i) for i in range(1, 13)]
    sql(f"INSERT INTO cairn.{ORDERS} VALUES {values(batch, FIRST)}")
    model.update({r["id"]: r for r in batch})
    commit("insert")
    first_rows = check("cairn_oauth", model, FIRST, "after the first INSERT, over OAuth2")

    batch = [order(i) for i in range(13, 21)]
    sql(f"INSERT INTO cairn_oauth.{ORDERS} VALUES {values(batch, FIRST)}")
    model.update({r["id"]: r for r in batch})
    commit("insert")
    check("cairn", model, FIRST, "after the second INSERT (over OAuth2), over SigV4")

    sql(f"UPDATE cairn.{ORDERS} SET amount = amount * 2 WHERE region = 'eu'")
    for r in model.values():
        if r["region"] == "eu":
            r["amount"] *= 2
    commit("update")
    check("cairn_oauth", model, FIRST, "after the UPDATE")

    sql(f"DELETE FROM cairn_oauth.{ORDERS} WHERE id % 5 = 0")
    for i in [i for i in model if i % 5 == 0]:
        del model[i]
    commit("delete")
    check("cairn", model, FIRST, "after the DELETE")

    # MERGE: 1 and 2 updated, 3 deleted, 21 and 22 inserted.
    sql(
        f"""MERGE INTO cairn.{ORDERS} t
        USING (SELECT * FROM VALUES (1, 'merged-1', 500.0D, 'u'), (2, 'merged-2', 1.5D, 'u'), (3, NULL, NULL, 'd'),
                                    (21, 'order-21', 157.5D, 'i'), (22, 'order-22', 165.0D, 'i') AS s(id, name, amount, op)) s
        ON t.id = s.id
        WHEN MATCHED AND s.op = 'd' THEN DELETE
        WHEN MATCHED THEN UPDATE SET t.name = s.name, t.amount = s.amount
        WHEN NOT MATCHED THEN INSERT (id, name, region, amount, day)
            VALUES (s.id, s.name, 'ap', s.amount, DATE '2024-06-09')"""
    )
    model[1].update(name="merged-1", amount=500.0)
    model[2].update(name="merged-2", amount=1.5)
    del model[3]
    for i, amount in ((21, 157.5), (22, 165.0)):
        model[i] = {"id": i, "name": f"order-{i}", "region": "ap", "amount": amount, "day": "2024-06-09"}
    commit("merge")
    check("cairn_oauth", model, FIRST, "after the MERGE")

    # Schema evolution: a column added (old rows read null), one renamed.
    sql(f"ALTER TABLE cairn.{ORDERS} ADD COLUMN note string")
    sql(f"ALTER TABLE cairn_oauth.{ORDERS} RENAME COLUMN name TO label")
    for r in model.values():
        r["label"] = r.pop("name")
        r["note"] = None
    cols = [r[0] for r in sql(f"DESCRIBE TABLE cairn.{ORDERS}").collect() if r[0] and not r[0].startswith("#")]
    expect_equal(cols[: len(LAST)], LAST, "columns after the evolution")
    batch = [dict(order(i), label=f"order-{i}", note=f"note-{i}") for i in range(23, 27)]
    for r in batch:
        del r["name"]
    sql(f"INSERT INTO cairn.{ORDERS} (id, label, region, amount, day, note) VALUES {values(batch, LAST)}")
    model.update({r["id"]: r for r in batch})
    commit("insert")
    final = check("cairn_oauth", model, LAST, "after the evolution and an INSERT")

    snaps = snapshots(spark, "cairn", ORDERS)
    expect_equal(len(snaps), len(states), f"snapshots {snaps} for the writes {[w for w, _ in states]}")
    expect_equal(snapshots(spark, "cairn_oauth", ORDERS), snaps, "snapshots over OAuth2")
    for prev, cur in zip([None] + snaps, snaps):
        expect_equal(cur["parent"], prev["id"] if prev else None, f"parent of snapshot {cur['id']}")

    # Time travel: each snapshot by id, in the schema it was written with
    # (Spark reads a snapshot with its own schema), and the UPDATE's by
    # its commit time.
    for s, (what, m) in zip(snaps, states):
        c = LAST if what == "insert" and s is snaps[-1] else FIRST
        got = rows(sql(f"SELECT * FROM cairn.{ORDERS} VERSION AS OF {s['id']}"))
        expect_equal([{k: r.get(k) for k in c} for r in got], [{k: m[i].get(k) for k in c} for i in sorted(m)], f"VERSION AS OF {s['id']} ({what})")
    upd = snaps[2]
    got = rows(sql(f"SELECT * FROM cairn_oauth.{ORDERS} TIMESTAMP AS OF timestamp_millis({upd['ms']})"))
    expect_equal(got, model_rows(states[2][1], FIRST), "TIMESTAMP AS OF the UPDATE's commit")
    got = rows(sql(f"SELECT * FROM cairn.{ORDERS} TIMESTAMP AS OF timestamp_millis({snaps[3]['ms'] - 1})"))
    expect_equal(got, model_rows(states[2][1], FIRST), "TIMESTAMP AS OF a millisecond before the DELETE")

    # A view over the REST catalog, seen from both catalogs.
    sql(f"CREATE VIEW cairn.{VIEW} COMMENT 'orders above {VIEW_MIN}' AS {VIEW_SQL}")
    want_view = [{"id": i, "label": model[i]["label"], "amount": model[i]["amount"]} for i in sorted(model) if model[i]["amount"] > VIEW_MIN]
    expect_equal(rows(sql(f"SELECT * FROM cairn.{VIEW}")), want_view, "the view's rows")
    expect_equal(rows(sql(f"SELECT * FROM cairn_oauth.{VIEW}")), want_view, "the view's rows over OAuth2")
    expect_equal([r[1] for r in sql(f"SHOW VIEWS IN cairn_oauth.{NAMESPACE}").collect()], ["big_orders"], "views over OAuth2")

    # A second table, for Trino: the rows TestEngineTrino's makeRows makes.
    sql(f"CREATE TABLE cairn.{EVENTS} (id bigint NOT NULL, name string, day date) USING iceberg PARTITIONED BY (months(day))")
    events = event_rows(1, 120) + event_rows(121, 80)
    for part in (events[:120], events[120:]):
        sql(f"INSERT INTO cairn_oauth.{EVENTS} VALUES {values(part, ['id', 'name', 'day'])}")
    expect_equal(rows(sql(f"SELECT * FROM cairn.{EVENTS}")), events, "the events table")

    # expire_snapshots: all but the last three go, with the data files only
    # they held (the copy-on-write rewrites left some).
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f")
    res = sql(f"CALL cairn.system.expire_snapshots(table => '{ORDERS}', older_than => TIMESTAMP '{now}', retain_last => 3)").collect()[0].asDict()
    expect(res["deleted_data_files_count"] > 0 and res["deleted_manifest_lists_count"] == len(snaps) - 3, f"expire_snapshots: {res}")
    kept = snapshots(spark, "cairn_oauth", ORDERS)
    expect_equal(kept, snaps[-3:], "snapshots after expire_snapshots")
    try:
        sql(f"SELECT * FROM cairn.{ORDERS} VERSION AS OF {snaps[0]['id']}").collect()
        raise AssertionError(f"snapshot {snaps[0]['id']} still readable after expire_snapshots")
    except AssertionError:
        raise
    except Exception as e:  # Spark's error for a snapshot that is gone
        expect("snapshot" in str(e).lower(), f"reading an expired snapshot: {e}")
    check("cairn", model, LAST, "after expire_snapshots")

    # remove_orphan_files: a file nothing references, put through S3 (the
    # table's S3FileIO), is listed by a dry run, then removed, and only it.
    tbl = iceberg_table(spark, f"cairn.{ORDERS}")
    orphan = tbl.location() + "/data/day_day=2024-06-01/orphan-put-over-s3.parquet"
    out = tbl.io().newOutputFile(orphan).create()
    out.write(bytearray(b"not referenced by any snapshot\n" * 64))
    out.close()
    expect(tbl.io().newInputFile(orphan).exists(), f"the orphan {orphan} was not written")
    later = (datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=5)).strftime("%Y-%m-%d %H:%M:%S")
    call = f"CALL cairn.system.remove_orphan_files(table => '{ORDERS}', older_than => TIMESTAMP '{later}', prefix_listing => true"
    dry = [r[0] for r in sql(call + ", dry_run => true)").collect()]
    expect_equal(dry, [orphan], "remove_orphan_files dry run")
    expect(tbl.io().newInputFile(orphan).exists(), "the dry run removed the orphan")
    removed = [r[0] for r in sql(call + ")").collect()]
    expect_equal(removed, [orphan], "remove_orphan_files")
    expect(not tbl.io().newInputFile(orphan).exists(), f"the orphan {orphan} is still there")
    check("cairn_oauth", model, LAST, "after remove_orphan_files")
    expect_equal(rows(sql(f"SELECT * FROM cairn.{VIEW}")), want_view, "the view after the maintenance")

    tbl.refresh()
    state = {
        "uuid": tbl.uuid().toString(),
        "metadata_location": tbl.operations().current().metadataFileLocation(),
        "snapshots": kept,
        "all_snapshots": snaps,
        "operations": [w for w, _ in states],
        "columns": LAST,
        "rows": final,
        "first_rows": first_rows,
        "snapshot_rows": {str(s["id"]): model_rows(m, LAST if s is snaps[-1] else FIRST) for s, (_, m) in zip(snaps, states) if s in kept},
        "view_rows": want_view,
        "events": len(events),
        "orphan": orphan,
        "expired": {k: int(v) for k, v in res.items()},
    }
    with open(args.state, "w", encoding="utf-8") as f:
        json.dump(state, f)
    spark.stop()
    report(state)


if __name__ == "__main__":
    main()
