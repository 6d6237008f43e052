"""Silver end to end on the local engine: bronze rows (contract columns) -> `lakecdc generate` models ->
dbt build. Semantic type decoding, TOAST, deletes (hard and soft), truncate, schema evolution without
a full refresh, full refresh equal to incremental, and no new Delta version when nothing is new."""

from __future__ import annotations

import base64
import datetime as dt
import json
from decimal import Decimal
from pathlib import Path

import pytest

from ingest.bronze.contract import EVENTS_COLUMNS
from ingest.engine import register_warehouse_tables
from ingest.generate.catalog import captured_tables
from ingest.generate.render import WriteResult, render_source, write_files
from tests.support.silver import (
    DATE,
    INT32,
    INT64,
    MICRO_TS,
    PLACEHOLDER,
    STRING,
    ZONED_TS,
    Bronze,
    decimal_field,
    delta_versions,
    encode_decimal,
    make_project,
    run_dbt,
)

pytestmark = [pytest.mark.integration, pytest.mark.slow]
T = "shop.public.items"
KEYS = [("id", INT32)]


def _generate(spark, project: Path, source: str = "inv") -> None:
    write_files(render_source(source, captured_tables(spark, source), project / "models"), WriteResult([], [], []))


def _rows(spark, table: str, order: str = "id") -> list[dict]:
    return [r.asDict() for r in spark.sql(f"SELECT * FROM {table} ORDER BY {order}").collect()]


ITEM_COLUMNS = [("id", INT32), ("name", STRING), ("qty", INT32)]


def _item_events(b: Bronze):
    """ev(op, id, name, qty): an event of the table T with columns id, name, qty (a delete has no after image)."""
    def ev(op: str, i: int, name: str | None = None, qty: int | None = None) -> dict:
        after = None if op == "d" else {"id": i, "name": name, "qty": qty}
        return b.event(T, op, {"id": i}, None, after, KEYS, ITEM_COLUMNS)

    return ev


SEMANTIC_COLUMNS = [
    ("id", INT32), ("born", DATE), ("at", MICRO_TS), ("zoned", ZONED_TS),
    ("nano", {"type": "int64", "name": "io.debezium.time.NanoTimestamp"}),
    ("t", {"type": "int64", "name": "io.debezium.time.MicroTime"}),
    ("price", decimal_field(20, 4)),
    ("vsd", {"type": "struct", "name": "io.debezium.data.VariableScaleDecimal",
             "fields": [{"type": "int32", "field": "scale"}, {"type": "bytes", "field": "value"}]}),
    ("doc", {"type": "string", "name": "io.debezium.data.Json"}),
    ("big", INT64), ("ratio", {"type": "float64"}), ("ok", {"type": "boolean"}),
    ("tags", {"type": "array", "items": {"type": "string"}}),
    ("days", {"type": "array", "items": DATE}),
    ("raw", {"type": "bytes"}),
    ("pt", {"type": "struct", "name": "io.debezium.data.geometry.Point",
            "fields": [{"type": "float64", "field": "x"}, {"type": "float64", "field": "y"}]})]
SEMANTIC_AFTER = {"id": 1, "born": 19723, "at": 1_718_000_000_123_456, "zoned": "2024-06-10T06:13:20.5+02:00",
                  "nano": 1_718_000_000_123_456_789, "t": 45_296_000_001,
                  "price": encode_decimal(Decimal("-123456789012.3456"), 4),
                  "vsd": {"scale": 3, "value": encode_decimal(Decimal("-1.5"), 3)},
                  "doc": '{"a": [1, 2]}', "big": 9_007_199_254_740_993, "ratio": 0.25, "ok": True,
                  "tags": ["x", "y"], "days": [0, 1], "raw": base64.b64encode(b"\x00\xff").decode(),
                  "pt": {"x": 1.5, "y": -2.0}}


def test_semantic_types_are_decoded(engine, warehouse: Path, tmp_path: Path):
    bronze = Bronze(engine.spark, warehouse)
    bronze.land([bronze.event(T, "c", {"id": 1}, None, SEMANTIC_AFTER, KEYS, SEMANTIC_COLUMNS)])
    project = make_project(tmp_path, warehouse)
    _generate(engine.spark, project)
    run_dbt(engine, project, "build")
    row = _rows(engine.spark, "silver.inv__items")[0]
    assert row["born"] == dt.date(2024, 1, 1)
    assert row["at"] == dt.datetime(2024, 6, 10, 6, 13, 20, 123456)
    assert row["zoned"] == dt.datetime(2024, 6, 10, 4, 13, 20, 500000)
    assert row["nano"] == dt.datetime(2024, 6, 10, 6, 13, 20, 123456)
    assert row["t"] == "12:34:56.000001"
    assert row["price"] == Decimal("-123456789012.3456")
    assert row["vsd"] == "-1.500"  # exact text, scale 3 (var lakecdc_variable_decimal_type)
    assert row["doc"] == '{"a": [1, 2]}'
    assert row["big"] == 9_007_199_254_740_993
    assert (row["ratio"], row["ok"], row["tags"]) == (0.25, True, ["x", "y"])
    assert row["days"] == [dt.date(1970, 1, 1), dt.date(1970, 1, 2)]
    assert bytes(row["raw"]) == b"\x00\xff"
    assert (row["pt"]["x"], row["pt"]["y"]) == (1.5, -2.0)
    assert row["_op"] == "c"


ODD_COLUMNS = [("id", INT32), ("a.b", STRING), ("q'uote", STRING), ("bq`x", INT64), ("ünï", STRING),
               ("Mixed", STRING), ("ratio", {"type": "float64"}), ("tags", {"type": "array", "items": STRING})]


def test_row_images_decoded_once_by_field_name(engine, warehouse: Path, tmp_path: Path):
    """Staging parses each event's row image once into a struct of strings with a field per column name (quoted:
    dots, quotes, backticks, non-ASCII), creates, updates and deletes alike; the compiled model says so."""
    spark = engine.spark
    b = Bronze(spark, warehouse)

    def row(i: int, tag: str) -> dict:
        return {"id": i, "a.b": f"ab{tag}", "q'uote": f"q{tag}", "bq`x": 10**15 + i, "ünï": f"é{tag}",
                "Mixed": None if tag == "2" else f"M{tag}", "ratio": 0.1 * i, "tags": [tag, "z"]}

    b.land([b.event(T, "c", {"id": i}, None, row(i, str(i)), KEYS, ODD_COLUMNS) for i in (1, 2, 3)])
    project = make_project(tmp_path, warehouse)
    _generate(spark, project)
    run_dbt(engine, project, "build")
    b.land([b.event(T, "u", {"id": 1}, row(1, "1"), row(1, "new"), KEYS, ODD_COLUMNS),
            b.event(T, "d", {"id": 2}, row(2, "2"), None, KEYS, ODD_COLUMNS)])
    run_dbt(engine, project, "build")
    got = [(r["id"], r["a.b"], r["q'uote"], r["bq`x"], r["ünï"], r["Mixed"], r["ratio"], r["tags"])
           for r in _rows(spark, "silver.inv__items")]
    assert got == [(1, "abnew", "qnew", 10**15 + 1, "énew", "Mnew", 0.1, ["new", "z"]),
                   (3, "ab3", "q3", 10**15 + 3, "é3", "M3", 0.1 * 3, ["3", "z"])]
    compiled = next((project / "target" / "compiled").rglob("inv__items.sql")).read_text()
    assert "'before struct<`id`:string,`a.b`:string,`q\\'uote`:string,`bq``x`:string," in compiled, compiled[:3000]
    assert "from_json(e.key, 'struct<`id`:string>')" in compiled


def test_incremental_toast_truncate_and_no_new_version(engine, warehouse: Path, tmp_path: Path):
    spark = engine.spark
    b = Bronze(spark, warehouse)
    ev = _item_events(b)

    b.land([ev("r", 1, "a", 1), ev("r", 2, "b", 2), ev("r", 3, "c", 3)])
    project = make_project(tmp_path, warehouse)
    _generate(spark, project)
    run_dbt(engine, project, "build")
    b.land([ev("u", 1, PLACEHOLDER, 10), ev("d", 2), ev("c", 4, "d", 4), ev("u", 4, "d2", 5)])
    run_dbt(engine, project, "build")
    current = [(r["id"], r["name"], r["qty"], r["_op"]) for r in _rows(spark, "silver.inv__items")]
    assert current == [(1, "a", 10, "u"), (3, "c", 3, "r"), (4, "d2", 5, "u")]
    history = [(r["id"], r["name"], r["qty"], r["is_current"])
               for r in _rows(spark, "silver.inv__items_history", "id, valid_from_seq")]
    assert history == [(1, "a", 1, False), (1, "a", 10, True), (2, "b", 2, False), (3, "c", 3, True),
                       (4, "d", 4, False), (4, "d2", 5, True)]

    tables = [warehouse / "silver" / n for n in ("inv__items", "inv__items_history", "lakecdc_state")]
    before = [delta_versions(p) for p in tables]
    log = project / "logs" / "dbt.log"
    log_start = log.stat().st_size
    run_dbt(engine, project, "build")
    assert [delta_versions(p) for p in tables] == before, "a build with no new bronze rows wrote a Delta version"
    with log.open("rb") as f:
        f.seek(log_start)
        assert b"size(_unavailable)" not in f.read(), "a build with no new bronze rows decoded the table's events"

    # dbt docs: the catalog lists the silver tables with their columns and types. The tables are registered again
    # as the engine does at start (by location, without columns: Sail's DESCRIBE then lists none).
    for table in ("inv__items", "inv__items_history"):
        spark.sql(f"DROP TABLE silver.{table}")
    register_warehouse_tables(spark, warehouse)
    assert spark.sql("DESCRIBE TABLE EXTENDED silver.inv__items").collect()[0]["col_name"] == ""  # the case itself
    run_dbt(engine, project, "docs", "generate")
    catalog = json.loads((project / "target" / "catalog.json").read_text())
    nodes = {node["metadata"]["name"]: node for node in catalog["nodes"].values()}
    types = {n: c["type"] for n, c in nodes["inv__items"]["columns"].items()}
    assert types.items() >= {"id": "int", "name": "string", "qty": "int", "_op": "string"}.items()
    assert "is_current" in nodes["inv__items_history"]["columns"]
    assert catalog["sources"], "the bronze sources are missing from the catalog"

    update = ev("u", 3, "c2", 30)
    truncate = {**b.event(T, "t", None, None, None, KEYS, ITEM_COLUMNS), "key": None}  # seq after the update
    b.land([update, truncate, ev("c", 5, "e", 5)])
    run_dbt(engine, project, "build")
    assert [(r["id"], r["name"]) for r in _rows(spark, "silver.inv__items")] == [(5, "e")]
    open_versions = spark.sql("SELECT id FROM silver.inv__items_history WHERE is_current").collect()
    assert [r["id"] for r in open_versions] == [5]
    closed = spark.sql("SELECT valid_to_seq FROM silver.inv__items_history WHERE id = 3 AND name = 'c2'").collect()
    assert closed[0]["valid_to_seq"] == truncate["seq"]


def test_schema_evolution_without_full_refresh(engine, warehouse: Path, tmp_path: Path):
    spark = engine.spark
    v1 = [("id", INT32), ("n", INT32), ("amount", decimal_field(5, 2))]
    v2 = [("id", INT32), ("n", INT64), ("amount", decimal_field(12, 4)), ("note", STRING)]
    b = Bronze(spark, warehouse)
    b.land([b.event(T, "c", {"id": i}, None, {"id": i, "n": i, "amount": encode_decimal(Decimal("1.25"), 2)},
                    KEYS, v1) for i in (1, 2)])
    project = make_project(tmp_path, warehouse)
    _generate(spark, project)
    run_dbt(engine, project, "build", "--select", "inv__items")
    b.land([b.event(T, "u", {"id": 2}, None, {"id": 2, "n": 5_000_000_000,
                                              "amount": encode_decimal(Decimal("12345678.1234"), 4), "note": "hi"},
                    KEYS, v2)])
    run_dbt(engine, project, "build")  # incremental: the table exists, no --full-refresh
    types = {f.name: f.dataType.simpleString() for f in spark.table("silver.inv__items").schema.fields}
    assert (types["n"], types["amount"], types["note"]) == ("bigint", "decimal(12,4)", "string")
    incremental = [(r["id"], r["n"], r["amount"], r["note"]) for r in _rows(spark, "silver.inv__items")]
    assert incremental == [(1, 1, Decimal("1.25"), None), (2, 5_000_000_000, Decimal("12345678.1234"), "hi")]
    run_dbt(engine, project, "build", "--full-refresh")
    rebuilt = [(r["id"], r["n"], r["amount"], r["note"]) for r in _rows(spark, "silver.inv__items")]
    assert rebuilt == incremental


@pytest.mark.parametrize("strategy", ["overwrite", "merge"])
def test_soft_deletes(engine, warehouse: Path, tmp_path: Path, strategy: str):
    spark = engine.spark
    cols = [("id", INT32), ("name", STRING)]
    b = Bronze(spark, warehouse)
    b.land([b.event(T, "c", {"id": i}, None, {"id": i, "name": f"n{i}"}, KEYS, cols) for i in (1, 2)])
    project = make_project(tmp_path, warehouse)
    _generate(spark, project)
    dbt_vars = f"{{lakecdc_delete_mode: soft, lakecdc_merge_strategy: {strategy}}}"
    run_dbt(engine, project, "build", "--vars", dbt_vars)
    # a deleted key keeps its last values (the deletes' before images hold the key only, as PostgreSQL's do with
    # REPLICA IDENTITY DEFAULT); a key inserted and deleted between two builds comes in as deleted
    b.land([b.event(T, "d", {"id": 1}, {"id": 1}, None, KEYS, cols, ts_ms=1_700_000_100_000),
            b.event(T, "u", {"id": 2}, {"id": 2, "name": "n2"}, {"id": 2, "name": "n2b"}, KEYS, cols),
            b.event(T, "c", {"id": 3}, None, {"id": 3, "name": "n3"}, KEYS, cols),
            b.event(T, "d", {"id": 3}, {"id": 3}, None, KEYS, cols, ts_ms=1_700_000_200_000)])
    run_dbt(engine, project, "build", "--vars", dbt_vars)
    rows = [(r["id"], r["name"], r["_is_deleted"], r["_deleted_at"]) for r in _rows(spark, "silver.inv__items")]
    assert rows == [(1, "n1", True, dt.datetime(2023, 11, 14, 22, 15)), (2, "n2b", False, None),
                    (3, None, True, dt.datetime(2023, 11, 14, 22, 16, 40))]


@pytest.mark.parametrize("new_name", ["details", "Descr"])
def test_renamed_column_keeps_its_data(engine, warehouse: Path, tmp_path: Path, new_name: str):
    """The schema history shows `descr` renamed to `details` (same position and type): silver moves the
    old values to the new name, without a full refresh, and a full refresh gives the same table. Renamed to
    `Descr`, the row images hold two field names that differ only in case (staging decodes them by map)."""
    import json

    from ingest.bronze.contract import ddl_columns
    from ingest.schema.history import HISTORY_COLUMNS

    spark = engine.spark
    v1 = [("id", INT32), ("descr", STRING)]
    v2 = [("id", INT32), (new_name, STRING)]
    b = Bronze(spark, warehouse)
    b.land([b.event(T, "c", {"id": i}, None, {"id": i, "descr": f"d{i}"}, KEYS, v1) for i in (1, 2)])
    project = make_project(tmp_path, warehouse)
    _generate(spark, project)
    run_dbt(engine, project, "build")

    def version(n: int, names: list[str]) -> dict:
        cols = [{"name": c, "position": i + 1, "type_name": "INT" if c == "id" else "VARCHAR", "key": c == "id",
                 "spark_type": "INT" if c == "id" else "STRING"} for i, c in enumerate(names)]
        row = {name: None for name, _ in HISTORY_COLUMNS}
        row.update(source="inv", table_id=T, version=n, valid_from_seq=f"{n:012x}", change_kind="ALTER" if n > 1
                   else "CREATE", columns=json.dumps(cols), primary_key='["id"]', parse_status="ok")
        return row

    rows = [version(1, ["id", "descr"]), version(2, ["id", new_name])]
    spark.createDataFrame([tuple(r[name] for name, _ in HISTORY_COLUMNS) for r in rows],
                          schema=ddl_columns(HISTORY_COLUMNS)).write.format("delta").save(
        str(warehouse / "bronze" / "inv_schema_history"))
    spark.sql(f"CREATE TABLE bronze.inv_schema_history USING delta LOCATION '{warehouse}/bronze/inv_schema_history'")
    b.land([b.event(T, "u", {"id": 2}, None, {"id": 2, new_name: "new2"}, KEYS, v2)])
    run_dbt(engine, project, "build")
    incremental = _rows(spark, "silver.inv__items")
    # the engine resolves names case-insensitively: renamed by case, the silver column keeps its first spelling
    column = next(name for name in incremental[0] if name.lower() == new_name.lower())
    assert [(r["id"], r[column]) for r in incremental] == [(1, "d1"), (2, "new2")]
    assert list(incremental[0]) == ["id", column, "_op", "_seq", "_source_ts"], incremental[0]
    history = [(r["id"], r[column]) for r in _rows(spark, "silver.inv__items_history", "id, valid_from_seq")]
    assert history == [(1, "d1"), (2, "d2"), (2, "new2")]
    run_dbt(engine, project, "build", "--full-refresh")
    # the same rows; a full refresh spells the column as the latest schema does
    assert ([{k.lower(): v for k, v in r.items()} for r in _rows(spark, "silver.inv__items")]
            == [{k.lower(): v for k, v in r.items()} for r in incremental])


def _write_history(spark, warehouse: Path, rows: list[dict], changes: list[tuple[str, int, int]]) -> None:
    """bronze.inv_schema_history rows, and bronze.inv_schema_changes rows (seq, ts_ms, batch_id)."""
    from ingest.bronze.contract import SCHEMA_CHANGES_COLUMNS, ddl_columns
    from ingest.schema.history import HISTORY_COLUMNS

    for name, columns, data in (
            ("inv_schema_history", HISTORY_COLUMNS, [tuple(r.get(n) for n, _ in HISTORY_COLUMNS) for r in rows]),
            ("inv_schema_changes", SCHEMA_CHANGES_COLUMNS,
             [("inv", seq, ts, "shop", "public", "DROP TABLE items", "[]", "{}", None, batch, None)
              for seq, ts, batch in changes])):
        spark.createDataFrame(data, schema=ddl_columns(columns)).write.format("delta").mode("overwrite").save(
            str(warehouse / "bronze" / name))
        spark.sql(f"CREATE TABLE IF NOT EXISTS bronze.{name} USING delta LOCATION '{warehouse}/bronze/{name}'")


def _log_count(project: Path, text: str) -> int:
    """How often `text` occurs in dbt's log of the project's builds so far."""
    return sum(log.read_text().count(text) for log in (project / "logs").glob("dbt.log*"))


def _history_reads(project: Path) -> int:
    """How often the builds so far read the source's schema history (lakecdc_lineage's query)."""
    return _log_count(project, "select h.table_id, h.valid_from_seq")


def test_dropped_table_ends_in_silver(engine, warehouse: Path, tmp_path: Path):
    """The source drops the table (no delete events): once the schema history holds the DROP, current state is
    empty and every history version is closed at the drop's time; the table created again fills up from its
    new events. Incremental and full refresh agree."""
    import json

    spark = engine.spark
    cols = [("id", INT32), ("name", STRING)]
    b = Bronze(spark, warehouse)
    b.land([b.event(T, "c", {"id": i}, None, {"id": i, "name": f"n{i}"}, KEYS, cols) for i in (1, 2, 3)])
    project = make_project(tmp_path, warehouse)
    _generate(spark, project)
    run_dbt(engine, project, "build")
    assert len(_rows(spark, "silver.inv__items")) == 3

    columns = json.dumps([{"name": "id", "position": 1, "type_name": "INT", "key": True, "spark_type": "INT"},
                          {"name": "name", "position": 2, "type_name": "VARCHAR", "spark_type": "STRING"}])
    drop_seq = b.next_seq()
    drop_ms = 1_700_000_000_000
    b.batch += 1   # the schema change's own batch, as the runner lands it
    base = {"source": "inv", "table_id": T, "columns": columns, "primary_key": '["id"]', "parse_status": "ok"}
    _write_history(spark, warehouse, [{**base, "version": 1, "valid_from_seq": "0" * 16, "change_kind": "CREATE"},
                                      {**base, "version": 2, "valid_from_seq": drop_seq, "change_kind": "DROP"}],
                   [(drop_seq, drop_ms, b.batch)])
    run_dbt(engine, project, "build", "--threads", "1")   # counted reads: no two threads racing to read first
    assert _rows(spark, "silver.inv__items") == []
    # the source's schema history is read once per build (lakecdc_invocation_cache), not by each of the staging
    # model and the two materializations; the next build reads it again
    assert _history_reads(project) == 1
    history = _rows(spark, "silver.inv__items_history", "id, valid_from_seq")
    assert [(r["id"], r["is_current"], r["valid_to_seq"]) for r in history] == [(i, False, drop_seq) for i in (1, 2, 3)]
    assert {int(r["valid_to"].timestamp() * 1000) for r in history} == {drop_ms}

    # created again: the new rows only
    b.land([b.event(T, "c", {"id": 2}, None, {"id": 2, "name": "again"}, KEYS, cols)])
    run_dbt(engine, project, "build", "--threads", "1")
    assert _history_reads(project) == 2
    incremental = _rows(spark, "silver.inv__items")
    assert [(r["id"], r["name"]) for r in incremental] == [(2, "again")]
    incremental_history = _rows(spark, "silver.inv__items_history", "id, valid_from_seq")
    run_dbt(engine, project, "build", "--full-refresh")
    assert _rows(spark, "silver.inv__items") == incremental
    assert _rows(spark, "silver.inv__items_history", "id, valid_from_seq") == incremental_history


def test_renamed_tables_take_their_rows_to_the_new_name(engine, warehouse: Path, tmp_path: Path):
    """RENAME TABLE items TO moved, then a swap in one statement (a TO tmp, b TO a, tmp TO b) as online schema
    change tools do it (b: a's copy with a new column): silver follows the tables, not the names. moved holds
    items' rows and its later changes, items is empty; a holds b's rows (the new column's values too) and b
    holds a's. Incremental (the old names were built before) and full refresh agree."""
    import json

    spark = engine.spark
    cols = [("id", INT32), ("name", STRING)]
    b = Bronze(spark, warehouse)
    A, B, MOVED = "shop.public.a", "shop.public.b", "shop.public.moved"

    def ev(table: str, op: str, i: int, name: str, note: str | None = None) -> dict:
        if note is None:
            return b.event(table, op, {"id": i}, None, {"id": i, "name": name}, KEYS, cols)
        return b.event(table, op, {"id": i}, None, {"id": i, "name": name, "note": note}, KEYS,
                       [*cols, ("note", STRING)])

    b.land([ev(T, "c", 1, "i1"), ev(T, "c", 2, "i2"), ev(A, "c", 1, "a1"), ev(A, "c", 2, "a2"),
            ev(B, "c", 1, "b1", "n1"), ev(T, "u", 1, "i1u")])
    project = make_project(tmp_path, warehouse)
    _generate(spark, project)
    run_dbt(engine, project, "build")

    two = [{"name": "id", "position": 1, "type_name": "INT", "key": True, "spark_type": "INT"},
           {"name": "name", "position": 2, "type_name": "VARCHAR", "spark_type": "STRING"}]
    three = json.dumps([*two, {"name": "note", "position": 3, "type_name": "VARCHAR", "spark_type": "STRING",
                               "has_default": True, "default": "none yet"}])
    columns = json.dumps(two)
    base = {"source": "inv", "columns": columns, "primary_key": '["id"]', "parse_status": "ok", "version": 1}
    created = [{**base, "table_id": t, "valid_from_seq": "0" * 16, "change_kind": "CREATE",
                "columns": three if t == B else columns} for t in (T, A, B)]
    rename, swap = b.next_seq(), b.next_seq()
    b.batch += 1   # the schema changes' own batch, as the runner lands it
    history = created + [
        {**base, "table_id": T, "valid_from_seq": rename, "statement_index": 0, "change_kind": "DROP"},
        {**base, "table_id": MOVED, "valid_from_seq": rename, "statement_index": 1, "change_kind": "ALTER",
         "previous_table_id": T}]
    tmp = "shop.public.tmp"
    for index, (table, previous, kind) in enumerate([(tmp, A, "ALTER"), (A, B, "ALTER"), (tmp, None, "DROP"),
                                                     (B, tmp, "ALTER")]):
        history.append({**base, "table_id": table, "valid_from_seq": swap, "statement_index": index,
                        "change_kind": kind, "previous_table_id": previous,
                        "columns": three if table == A else columns})
    _write_history(spark, warehouse, history,
                   [(rename, 1_700_000_000_000, b.batch), (swap, 1_700_000_001_000, b.batch)])
    b.land([ev(MOVED, "u", 2, "i2x"), ev(A, "c", 2, "b2", "n2"), ev(B, "c", 3, "a3")])
    _generate(spark, project)   # moved is a captured table now

    def state() -> dict[str, list[tuple]]:
        return {t: [(r["id"], r["name"]) for r in _rows(spark, f"silver.inv__{t}")]
                for t in ("items", "moved", "a", "b")}

    want = {"items": [], "moved": [(1, "i1u"), (2, "i2x")], "a": [(1, "b1"), (2, "b2")],
            "b": [(1, "a1"), (2, "a2"), (3, "a3")]}
    run_dbt(engine, project, "build")
    assert state() == want
    # the column b had (a's new one): its values came along, the default is not put in their place
    assert [r["note"] for r in _rows(spark, "silver.inv__a")] == ["n1", "n2"]
    moved_history = [(r["id"], r["name"], r["is_current"])
                     for r in _rows(spark, "silver.inv__moved_history", "id, valid_from_seq")]
    assert moved_history == [(1, "i1", False), (1, "i1u", True), (2, "i2", False), (2, "i2x", True)]
    carried = _rows(spark, "silver.inv__moved", "id")[0]["_seq"]
    assert carried.startswith(rename + "."), carried   # a carried row's seq: the rename's, then its own
    run_dbt(engine, project, "build", "--full-refresh")
    assert state() == want
    assert [r["note"] for r in _rows(spark, "silver.inv__a")] == ["n1", "n2"]


def test_history_versions_never_end_before_they_start(engine, warehouse: Path, tmp_path: Path):
    """MariaDB: a snapshot read carries milliseconds (16.038 s), the binlog update of the same row in the same
    second only seconds (16.000 s), later in seq. The versions start at the key's latest source time so far:
    no interval is inverted, the quality SCD2 check holds (found by the new-user walkthrough)."""
    spark = engine.spark
    cols = [("id", INT32), ("name", STRING)]
    b = Bronze(spark, warehouse)
    read_ms, binlog_ms = 1_700_000_016_038, 1_700_000_016_000
    b.land([b.event(T, "r", {"id": 1}, None, {"id": 1, "name": "a"}, KEYS, cols, ts_ms=read_ms),
            b.event(T, "r", {"id": 2}, None, {"id": 2, "name": "b"}, KEYS, cols, ts_ms=read_ms)])
    b.land([b.event(T, "u", {"id": 1}, None, {"id": 1, "name": "a2"}, KEYS, cols, ts_ms=binlog_ms),
            b.event(T, "u", {"id": 1}, None, {"id": 1, "name": "a3"}, KEYS, cols, ts_ms=binlog_ms + 2000),
            b.event(T, "t", None, None, None, KEYS, cols, ts_ms=binlog_ms)])
    project = make_project(tmp_path, warehouse)
    _generate(spark, project)
    run_dbt(engine, project, "build")
    history = _rows(spark, "silver.inv__items_history", "id, valid_from_seq")
    got = [(r["id"], r["name"], int(r["valid_from"].timestamp() * 1000),
            None if r["valid_to"] is None else int(r["valid_to"].timestamp() * 1000)) for r in history]
    assert got == [(1, "a", read_ms, read_ms), (1, "a2", read_ms, binlog_ms + 2000),
                   (1, "a3", binlog_ms + 2000, binlog_ms + 2000), (2, "b", read_ms, read_ms)]
    assert all(r["valid_to"] >= r["valid_from"] for r in history)


def test_added_column_default_from_the_value_schema(engine, warehouse: Path, tmp_path: Path):
    """PostgreSQL-style: the schema history shows the column added (without its default), the value schema after
    the ADD carries Debezium's `default`: the rows older than the ADD get it, incremental and full refresh."""
    import json

    from ingest.bronze.contract import ddl_columns, encode_seq
    from ingest.schema.history import HISTORY_COLUMNS

    spark = engine.spark
    v1 = [("id", INT32), ("name", STRING)]
    v2 = [*v1, ("prio", {"type": "int32", "default": -2}), ("tag", {"type": "string", "default": "it's"}),
          ("ratio", {"type": "double", "default": 0.1}), ("plain", INT32)]
    b = Bronze(spark, warehouse)
    b.land([b.event(T, "c", {"id": i}, None, {"id": i, "name": f"n{i}"}, KEYS, v1) for i in (1, 2)])
    project = make_project(tmp_path, warehouse)
    _generate(spark, project)
    run_dbt(engine, project, "build")

    def version(n: int, names: list[str], seq: str) -> tuple:
        cols = [{"name": c, "position": i + 1, "type_name": "int4", "key": c == "id", "has_default": False,
                 "default": None} for i, c in enumerate(names)]
        row = {name: None for name, _ in HISTORY_COLUMNS}
        row.update(source="inv", table_id=T, version=n, valid_from_seq=seq, change_kind="ALTER" if n > 1
                   else "CREATE", columns=json.dumps(cols), primary_key='["id"]', parse_status="ok")
        return tuple(row[name] for name, _ in HISTORY_COLUMNS)

    rows = [version(1, ["id", "name"], encode_seq([0, 0], [12, 4])),
            version(2, ["id", "name", "prio", "tag", "ratio", "plain"], encode_seq([2, 0], [12, 4]))]
    spark.createDataFrame(rows, schema=ddl_columns(HISTORY_COLUMNS)).write.format("delta").save(
        str(warehouse / "bronze" / "inv_schema_history"))
    spark.sql(f"CREATE TABLE bronze.inv_schema_history USING delta LOCATION '{warehouse}/bronze/inv_schema_history'")
    b.land([b.event(T, "u", {"id": 2}, None, {"id": 2, "name": "n2", "prio": 5, "tag": "t", "ratio": 1.5,
                                              "plain": 3}, KEYS, v2)])
    run_dbt(engine, project, "build")
    incremental = [(r["id"], r["prio"], r["tag"], r["ratio"], r["plain"]) for r in _rows(spark, "silver.inv__items")]
    assert incremental == [(1, -2, "it's", 0.1, None), (2, 5, "t", 1.5, 3)]
    history = [(r["id"], r["prio"], r["is_current"])
               for r in _rows(spark, "silver.inv__items_history", "id, valid_from_seq")]
    assert history == [(1, -2, True), (2, -2, False), (2, 5, True)]
    run_dbt(engine, project, "build", "--full-refresh")
    assert [(r["id"], r["prio"], r["tag"], r["ratio"], r["plain"]) for r in _rows(spark, "silver.inv__items")] \
        == incremental


def test_a_table_without_a_key_gets_a_changelog(engine, warehouse: Path, tmp_path: Path):
    """Issue 20 item 3: a keyless table is generated as a changelog model (every change, the row as the event
    leaves it, deletes with their old row), `dbt build` passes, and a hand-written current-state model on it
    stops with one clear line instead of a SQL parser error."""
    from ingest.generate.render import silver_sql

    spark = engine.spark
    table = "shop.public.nokey"
    cols = [("a", INT32), ("b", STRING)]
    b = Bronze(spark, warehouse)

    def ev(op, before, after):
        return b.event(table, op, None, before, after, [], cols)

    b.land([ev("r", None, {"a": 1, "b": "x"}), ev("r", None, {"a": 1, "b": "x"}), ev("c", None, {"a": 2, "b": "y"})])
    project = make_project(tmp_path, warehouse)
    _generate(spark, project)
    silver = project / "models" / "silver" / "inv"
    assert (silver / "inv__nokey_changelog.sql").exists() and not (silver / "inv__nokey.sql").exists()
    run_dbt(engine, project, "build")
    b.land([ev("d", {"a": 1, "b": "x"}, None), ev("u", {"a": 2, "b": "y"}, {"a": 2, "b": "z"})])
    run_dbt(engine, project, "build")
    rows = [(r["a"], r["b"], r["_op"]) for r in _rows(spark, "silver.inv__nokey_changelog", "_seq")]
    assert rows == [(1, "x", "r"), (1, "x", "r"), (2, "y", "c"), (1, "x", "d"), (2, "z", "u")]

    (silver / "inv__nokey.sql").write_text(silver_sql(captured_tables(spark, "inv")[0], "inv__nokey", "current"))
    with pytest.raises(AssertionError, match="shop.public.nokey has no primary key"):
        run_dbt(engine, project, "build", "--select", "inv__nokey")


def _project_testing_tables(engine, warehouse: Path, tmp_path: Path, test: str,
                            tables: dict[str, tuple[str, str]]) -> Path:
    """Silver tables of VALUES rows ({name: (rows, columns)}) and a project whose sources.yml gives each of them the
    generic test `test` on the key id (`dbt test --select source:s.<name>`)."""
    engine.spark.sql("create schema if not exists silver")
    for name, (rows, columns) in tables.items():
        engine.spark.sql(f"create table silver.{name} using delta location '{warehouse / 'silver' / name}' "
                         f"as select * from values {rows} as t({columns})")
    project = make_project(tmp_path, warehouse)
    (project / "models" / "sources.yml").write_text(
        "version: 2\nsources:\n  - name: s\n    schema: silver\n    tables:\n"
        + "".join(f"      - name: {name}\n        data_tests:\n          - {test}:\n"
                  "              arguments:\n                keys: [id]\n" for name in tables))
    return project


def test_unique_current_leaves_soft_deleted_rows_out(engine, warehouse: Path, tmp_path: Path):
    """lakecdc_unique_current counts a key's rows that are not soft-deleted where the table has `_is_deleted`
    (it reads the table's column names to know), and every row where it has none; a null key fails it too (the
    generated current models have no separate not_null test)."""
    project = _project_testing_tables(engine, warehouse, tmp_path, "lakecdc.lakecdc_unique_current", {
        "soft_dupes": ("(1, false), (1, true), (2, false)", "id, _is_deleted"),
        "dupes": ("(1, 'a'), (1, 'b'), (2, 'c')", "id, name"),
        "null_key": ("(cast(null as int), 'a'), (2, 'c')", "id, name")})
    run_dbt(engine, project, "test", "--select", "source:s.soft_dupes")
    with pytest.raises(AssertionError, match="dbt test --select source:s.null_key failed"):
        run_dbt(engine, project, "test", "--select", "source:s.null_key")
    with pytest.raises(AssertionError, match="dbt test --select source:s.dupes failed"):
        run_dbt(engine, project, "test", "--select", "source:s.dupes")
    assert "lakecdc_unique_current_s_dupes_id" in (project / "target" / "run_results.json").read_text()


def test_a_tables_spec_and_the_bronze_bound_are_read_once_per_build(engine, warehouse: Path, tmp_path: Path):
    """The staging model, the current and the history model of a table share one read of its spec per dbt
    invocation, the source's bronze bound is read once (lakecdc_table_spec, lakecdc_bronze_bound) and so are the
    models' watermarks (lakecdc_read_watermark; a first build has none to read); the next build reads them again
    and sees the schema bronze has by then."""
    spark = engine.spark
    v1, v2 = [("id", INT32), ("name", STRING)], [("id", INT32), ("name", STRING), ("note", STRING)]
    b = Bronze(spark, warehouse)
    b.land([b.event(T, "c", {"id": 1}, None, {"id": 1, "name": "a"}, KEYS, v1)])
    project = make_project(tmp_path, warehouse)
    _generate(spark, project)
    run_dbt(engine, project, "build", "--threads", "1")   # counted reads: no two threads racing to read first
    reads = ("select u.kind, s.schema_id", "select max(batch_id) as b from bronze.inv_events",
             "select model, max(batch_id) from silver.lakecdc_state")
    assert [_log_count(project, text) for text in reads] == [1, 1, 0]
    b.land([b.event(T, "u", {"id": 1}, None, {"id": 1, "name": "b", "note": "n"}, KEYS, v2)])
    run_dbt(engine, project, "build", "--threads", "1")
    assert [_log_count(project, text) for text in reads] == [2, 2, 1]
    assert [(r["id"], r["name"], r["note"]) for r in _rows(spark, "silver.inv__items")] == [(1, "b", "n")]


def test_a_batch_landed_while_dbt_runs_waits_for_the_next_build(engine, warehouse: Path, tmp_path: Path):
    """A batch that bronze commits after the build began (here by the current model's pre-hook, after its spec
    and staging SQL were made; the batch brings a new column) is not merged by that build: every model reads
    bronze up to the batch the build's specs saw, and the next build takes the new batch with its new column.
    Merged with the older spec, the new column's value would be lost and the watermark would pass it."""
    spark = engine.spark
    v1, v2 = [("id", INT32), ("name", STRING)], [("id", INT32), ("name", STRING), ("note", STRING)]
    b = Bronze(spark, warehouse)
    b.land([b.event(T, "c", {"id": 1}, None, {"id": 1, "name": "a"}, KEYS, v1)])
    # the late batch, staged in bronze tables of another source name; the hook copies it into the source's tables
    late = Bronze(spark, warehouse, source="late", batch=b.batch, counter=b.counter, registered=set(b.registered))
    late_batch = late.land([b.event(T, "u", {"id": 1}, None, {"id": 1, "name": "b", "note": "n"}, KEYS, v2)])
    columns = ", ".join("'inv'" if name == "source" else f"`{name}`" for name, _ in EVENTS_COLUMNS)
    hooks = [
        "insert into bronze.inv_schemas select l.* from bronze.late_schemas l "
        "left anti join bronze.inv_schemas s on s.schema_id = l.schema_id",
        f"insert into bronze.inv_events select {columns} from bronze.late_events "
        f"where (select count(*) from bronze.inv_events where batch_id = {late_batch}) = 0"]
    project = make_project(tmp_path, warehouse)
    _generate(spark, project)
    model = next((project / "models").rglob("inv__items.sql"))
    text = model.read_text()
    assert "schema='silver', " in text
    model.write_text(text.replace("schema='silver', ", f"schema='silver', pre_hook={json.dumps(hooks)}, ", 1))

    run_dbt(engine, project, "build")
    assert spark.sql(f"select count(*) from bronze.inv_events where batch_id = {late_batch}").collect()[0][0] == 1
    assert [(r["id"], r["name"]) for r in _rows(spark, "silver.inv__items")] == [(1, "a")]
    assert "note" not in _rows(spark, "silver.inv__items")[0]
    run_dbt(engine, project, "build")
    assert [(r["id"], r["name"], r["note"]) for r in _rows(spark, "silver.inv__items")] == [(1, "b", "n")]
    history = _rows(spark, "silver.inv__items_history", "valid_from_seq")
    assert [(r["name"], r["note"], r["is_current"]) for r in history] == [("a", None, False), ("b", "n", True)]


def _watermarks(spark) -> dict[str, int]:
    rows = spark.sql("select model, max(batch_id) from silver.lakecdc_state group by model").collect()
    return {r[0]: r[1] for r in rows}


def test_a_build_asks_bronze_once_per_table_and_writes_its_watermarks_in_one_commit(engine, warehouse: Path,
                                                                                  tmp_path: Path):
    """One thread, so that a table's history model runs after its current model: the history model takes the
    current model's answers about the new bronze rows (lakecdc_bounded_rows), the tests after the models take
    the columns the models wrote (lakecdc_remember_columns) instead of reading them, and the package's on-run-end
    hook writes both models' watermarks in one Delta commit of lakecdc_state."""
    spark = engine.spark
    b = Bronze(spark, warehouse)
    ev = _item_events(b)
    b.land([ev("c", i, f"n{i}", i) for i in (1, 2)])
    project = make_project(tmp_path, warehouse)
    _generate(spark, project)
    quick = ("--threads", "1", "--vars", "{lakecdc_verify_remembered_columns: false}")
    run_dbt(engine, project, "build", *quick)
    state = warehouse / "silver" / "lakecdc_state"
    versions = delta_versions(state)
    assert _watermarks(spark) == {"silver.inv__items": b.batch, "silver.inv__items_history": b.batch}
    batch = b.land([ev("u", 1, "m1", 1)])
    questions = _log_count(project, "select 'n' as kind")
    column_reads = _log_count(project, " limit 0")
    run_dbt(engine, project, "build", *quick)
    assert _log_count(project, "select 'n' as kind") == questions + 1
    # the current and the history model read their own tables' columns before merging; the tests read none
    assert _log_count(project, " limit 0") == column_reads + 2
    assert delta_versions(state) == versions + 1
    assert _watermarks(spark) == {"silver.inv__items": batch, "silver.inv__items_history": batch}
    assert [(r["id"], r["name"]) for r in _rows(spark, "silver.inv__items")] == [(1, "m1"), (2, "n2")]


def test_without_the_run_end_hook_each_model_writes_its_watermark(engine, warehouse: Path, tmp_path: Path):
    """A project that takes the macros through macro-paths and declares only on-run-start (as projects made before
    the hook did) gets each model's watermark written with the model, as before."""
    spark = engine.spark
    b = Bronze(spark, warehouse)
    ev = _item_events(b)
    b.land([ev("c", 1, "a", 1)])
    project = make_project(tmp_path, warehouse, run_end=False)
    _generate(spark, project)
    run_dbt(engine, project, "build")
    state = warehouse / "silver" / "lakecdc_state"
    versions = delta_versions(state)
    batch = b.land([ev("u", 1, "b", 1)])
    run_dbt(engine, project, "build")
    assert delta_versions(state) == versions + 2
    assert _watermarks(spark) == {"silver.inv__items": batch, "silver.inv__items_history": batch}
    run_dbt(engine, project, "build")
    assert delta_versions(state) == versions + 2, "a build with no new bronze rows wrote a watermark"


def test_a_build_stopped_before_its_run_end_hook_is_redone_by_the_next(engine, warehouse: Path, tmp_path: Path):
    """The watermarks wait for the on-run-end hook: a build that stops before it (here a hook ahead of it fails)
    leaves silver written and the watermarks where they were. The next build merges the same batches again from
    all their keys' events, and silver (current state and every history version) is what builds that never stopped
    give."""
    spark = engine.spark
    b = Bronze(spark, warehouse)
    ev = _item_events(b)
    first = b.land([ev("r", 1, "a", 1), ev("r", 2, "b", 2), ev("r", 3, "c", 3)])
    project = make_project(tmp_path, warehouse)
    _generate(spark, project)
    run_dbt(engine, project, "build")
    settings = project / "dbt_project.yml"
    hook = "on-run-end: [\"{{ lakecdc.lakecdc_on_run_end() }}\"]"
    text = settings.read_text()
    assert hook in text
    stop = "{% if execute %}{{ exceptions.raise_compiler_error('stopped') }}{% endif %}"
    settings.write_text(text.replace(hook, f"on-run-end: [\"{stop}\", \"{{{{ lakecdc.lakecdc_on_run_end() }}}}\"]"))
    b.land([ev("u", 1, "a2", 10), ev("d", 2), ev("c", 4, "d", 4)])
    with pytest.raises(AssertionError, match="stopped"):
        run_dbt(engine, project, "build")
    assert [(r["id"], r["name"]) for r in _rows(spark, "silver.inv__items")] == [(1, "a2"), (3, "c"), (4, "d")]
    assert set(_watermarks(spark).values()) == {first}
    settings.write_text(text)
    last = b.land([ev("u", 1, "a3", 11), ev("u", 4, "d2", 5), ev("c", 2, "b2", 20)])
    run_dbt(engine, project, "build")
    current = [(r["id"], r["name"], r["qty"]) for r in _rows(spark, "silver.inv__items")]
    assert current == [(1, "a3", 11), (2, "b2", 20), (3, "c", 3), (4, "d2", 5)]
    history = [(r["id"], r["name"], r["is_current"])
               for r in _rows(spark, "silver.inv__items_history", "id, valid_from_seq")]
    assert history == [(1, "a", False), (1, "a2", False), (1, "a3", True), (2, "b", False), (2, "b2", True),
                       (3, "c", True), (4, "d", False), (4, "d2", True)]
    assert set(_watermarks(spark).values()) == {last}


def test_history_no_overlap_finds_overlapping_and_two_open_versions_of_a_key(engine, warehouse: Path,
                                                                            tmp_path: Path):
    """lakecdc_history_no_overlap, the one test generated for a history model: it fails on a key with two open
    versions (valid_to_seq null: what a unique_current test on is_current would find) and on versions that overlap,
    and passes on versions that follow each other."""
    open_, columns = "cast(null as string)", "id, valid_from_seq, valid_to_seq"
    project = _project_testing_tables(engine, warehouse, tmp_path, "lakecdc.lakecdc_history_no_overlap", {
        "good": (f"(1, '1', '2'), (1, '2', {open_}), (2, '1', {open_})", columns),
        "two_open": (f"(1, '1', {open_}), (1, '2', {open_}), (2, '1', {open_})", columns),
        "overlap": (f"(1, '1', '3'), (1, '2', {open_})", columns)})
    run_dbt(engine, project, "test", "--select", "source:s.good")
    for name in ("two_open", "overlap"):
        with pytest.raises(AssertionError, match=f"dbt test --select source:s.{name} failed"):
            run_dbt(engine, project, "test", "--select", f"source:s.{name}")
