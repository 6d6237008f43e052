"""Benchmark: merge change events into a large silver table with lakecdc's CDC materialization (dbt on
the local Sail engine), and the same changes with dlt's `merge` write disposition (delta-rs) as the peer.

    .venv/bin/python bench/merge.py                      # 1,000,000 changes into 10,000,000 rows
    .venv/bin/python bench/merge.py --rows 1000000 --changes 100000

Changes: 60% updates and 20% deletes of existing keys, 20% inserts of new keys, landed as Debezium JSON
events (one bronze batch). lakecdc's time is `dbt run` of the silver model, in a project parsed before (as
every build after a project's first finds it; the first parse is printed apart): decoding the JSON payloads,
latest event per key, and writing them into the table (`--strategy`: var lakecdc_merge_strategy, on Sail
`overwrite` by default; `merge` for a Delta MERGE). dlt gets the already decoded changes (it does not read
Debezium envelopes) with a hard-delete flag, and merges them into its own copy of the table.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SOURCE, TABLE_ID = "bench", "db.public.items"


def _envelope(topic: str) -> tuple[str, str]:
    row = [{"type": "int64", "optional": False, "field": "id"}, {"type": "string", "optional": True, "field": "name"},
           {"type": "int32", "optional": True, "field": "qty"}]
    value = {"type": "struct", "name": f"{topic}.Envelope", "optional": False, "fields": [
        {"type": "struct", "optional": True, "name": f"{topic}.Value", "field": "before", "fields": row},
        {"type": "struct", "optional": True, "name": f"{topic}.Value", "field": "after", "fields": row},
        {"type": "string", "optional": False, "field": "op"}, {"type": "int64", "optional": True, "field": "ts_ms"}]}
    key = {"type": "struct", "name": f"{topic}.Key", "optional": False, "fields": row[:1]}
    return json.dumps(key), json.dumps(value)


def _change_sql(rows: int, changes: int) -> str:
    """One row per change: id, op (u 60% / d 20% / c 20%) from range(changes)."""
    upd, dele = changes * 6 // 10, changes * 2 // 10
    return (f"SELECT CASE WHEN i < {upd} THEN i WHEN i < {upd + dele} THEN i ELSE {rows} + i END AS id, "
            f"CASE WHEN i < {upd} THEN 'u' WHEN i < {upd + dele} THEN 'd' ELSE 'c' END AS op, i "
            f"FROM (SELECT id AS i FROM range({changes})) r")


def prepare(spark, warehouse: Path, rows: int, changes: int) -> None:
    from ingest.bronze.contract import EVENTS_COLUMNS, SCHEMAS_COLUMNS, ddl_columns

    for schema in ("bronze", "silver"):
        spark.sql(f"CREATE SCHEMA IF NOT EXISTS {schema}")
    spark.sql(f"CREATE TABLE bronze.{SOURCE}_schemas ({ddl_columns(SCHEMAS_COLUMNS)}) USING delta "
              f"LOCATION '{warehouse}/bronze/{SOURCE}_schemas'")
    spark.sql(f"CREATE TABLE bronze.{SOURCE}_events ({ddl_columns(EVENTS_COLUMNS)}) USING delta "
              f"LOCATION '{warehouse}/bronze/{SOURCE}_events'")
    key, value = _envelope(f"{SOURCE}.{TABLE_ID}")
    spark.createDataFrame([("k1", key, "0", 1, None), ("v1", value, "0", 1, None)],
                          schema=ddl_columns(SCHEMAS_COLUMNS)).write.format("delta").mode("append").save(
        f"{warehouse}/bronze/{SOURCE}_schemas")
    spark.sql(f"""
        INSERT INTO bronze.{SOURCE}_events
        SELECT '{SOURCE}' AS source, '{SOURCE}.{TABLE_ID}' AS topic, '{TABLE_ID}' AS table_id, op,
               concat(lpad(lower(hex(i + 1)), 12, '0'), '-0000') AS seq,
               to_json(named_struct('id', id)) AS key,
               to_json(named_struct('before', cast(null as string),
                                    'after', CASE WHEN op <> 'd' THEN named_struct(
                                        'id', id, 'name', concat('changed-', cast(id AS string)),
                                        'qty', cast(id % 97 AS int)) END,
                                    'op', op, 'ts_ms', 1700000000000 + i)) AS value,
               'k1' AS key_schema_id, 'v1' AS value_schema_id, 1700000000000 + i AS ts_ms,
               1700000000000 + i AS source_ts_ms, cast(null as string) AS txn_id, 'false' AS snapshot,
               cast(null as string) AS position, cast(1 AS bigint) AS batch_id, current_timestamp() AS ingested_at
        FROM ({_change_sql(rows, changes)}) c""")
    # the silver table as an earlier run would have left it: `rows` rows, all older than the changes
    spark.sql(f"""
        CREATE TABLE silver.{SOURCE}__items USING delta LOCATION '{warehouse}/silver/{SOURCE}__items' AS
        SELECT id, concat('name-', cast(id AS string)) AS name, cast(id % 13 AS int) AS qty,
               'r' AS _op, '000000000000-0000' AS _seq, timestamp_millis(1600000000000) AS _source_ts
        FROM range({rows})""")


def expected_rows_and_qty_sum(rows: int, changes: int) -> tuple[int, int]:
    """Silver after the merge: untouched rows keep qty = id % 13, updated and inserted ones have id % 97."""
    upd, dele = changes * 6 // 10, changes * 2 // 10
    kept = range(upd + dele, rows)
    inserted = range(rows + upd + dele, rows + changes)
    qty = sum(i % 13 for i in kept) + sum(i % 97 for i in range(upd)) + sum(i % 97 for i in inserted)
    return upd + len(kept) + len(inserted), qty


def run_lakecdc(engine, warehouse: Path, workdir: Path, strategy: str | None) -> tuple[float, float]:
    """(seconds of the project's first `dbt parse`, seconds of `dbt run` of the silver model)."""
    from dbt.cli.main import dbtRunner

    from ingest.dbt_runner import DBT_PACKAGE_MACROS
    from ingest.generate.catalog import captured_tables
    from ingest.generate.render import WriteResult, render_source, write_files

    project = workdir / "proj"
    (project / "models").mkdir(parents=True)
    shutil.copy(ROOT / "profiles.yml", project / "profiles.yml")
    (project / "dbt_project.yml").write_text(
        f"name: lakecdc\nversion: '1.0'\nconfig-version: 2\nprofile: lakecdc\nmacro-paths: ['{DBT_PACKAGE_MACROS}']\n"
        "on-run-start: [\"{{ lakecdc.lakecdc_on_run_start() }}\"]\n"
        "on-run-end: [\"{{ lakecdc.lakecdc_on_run_end() }}\"]\n"
        f"vars:\n  lakecdc_warehouse: '{warehouse}'\nmodels:\n  lakecdc:\n    +file_format: delta\n")
    write_files(render_source(SOURCE, captured_tables(engine.spark, SOURCE), project / "models"),
                WriteResult([], [], []))
    os.environ["SPARK_REMOTE"] = engine.remote_url
    common = ["--project-dir", str(project), "--profiles-dir", str(project), "--log-path", str(project / "logs"),
              "--target-path", str(project / "target"), "--quiet"]
    if strategy:
        common += ["--vars", f"{{lakecdc_merge_strategy: {strategy}}}"]
    # the project is parsed first, as every build of a project after its first finds it (dbt's partial parsing)
    start = time.perf_counter()
    if not dbtRunner().invoke(["parse", *common]).success:
        raise SystemExit(f"dbt parse failed; see {project / 'logs' / 'dbt.log'}")
    parse_s = time.perf_counter() - start
    start = time.perf_counter()
    result = dbtRunner().invoke(["run", "--select", f"{SOURCE}__items", *common])
    elapsed = time.perf_counter() - start
    if not result.success:
        raise SystemExit(f"dbt run failed; see {project / 'logs' / 'dbt.log'}")
    return parse_s, elapsed


def run_dlt(workdir: Path, rows: int, changes: int) -> float | None:
    try:
        import dlt
        import pyarrow as pa
    except ImportError:
        print("dlt: not installed (pip install 'lakecdc[bench]'); no peer figure", flush=True)
        return None
    import pyarrow.compute as pc

    upd, dele = changes * 6 // 10, changes * 2 // 10
    base_ids = pa.array(range(rows), pa.int64())
    base = pa.table({"id": base_ids, "name": pc.binary_join_element_wise("name-", pc.cast(base_ids, pa.string()), ""),
                     "qty": pc.cast(pc.remainder(base_ids, 13), pa.int32()),
                     "_seq": pa.array(["000000000000-0000"] * rows),
                     "_deleted": pa.array([False] * rows)})
    ids = list(range(upd + dele)) + [rows + i for i in range(upd + dele, changes)]
    ch_ids = pa.array(ids, pa.int64())
    change = pa.table({"id": ch_ids, "name": pc.binary_join_element_wise("changed-", pc.cast(ch_ids, pa.string()), ""),
                       "qty": pc.cast(pc.remainder(ch_ids, 97), pa.int32()),
                       "_seq": pa.array([f"{i + 1:012x}-0000" for i in range(changes)]),
                       "_deleted": pa.array([upd <= i < upd + dele for i in range(changes)])})
    hints = {"write_disposition": {"disposition": "merge", "strategy": "upsert"}, "primary_key": "id",
             "table_format": "delta", "columns": {"_deleted": {"hard_delete": True}}}
    os.environ["DLT_DATA_DIR"] = str(workdir / "dlt_data")
    pipeline = dlt.pipeline(pipeline_name="lakecdc_bench", destination=dlt.destinations.filesystem(
        str(workdir / "dlt_lake")), dataset_name="silver", pipelines_dir=str(workdir / "dlt_pipelines"))
    pipeline.run(dlt.resource(base, name="items", **hints))
    start = time.perf_counter()
    pipeline.run(dlt.resource(change, name="items", **hints))
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000, help="silver table rows before the merge")
    parser.add_argument("--changes", type=int, default=1_000_000, help="change events to merge")
    parser.add_argument("--strategy", choices=["overwrite", "merge"], help="var lakecdc_merge_strategy (default: "
                        "the engine's, overwrite on Sail)")
    parser.add_argument("--skip-dlt", action="store_true")
    parser.add_argument("--keep", action="store_true", help="keep the work folder (dbt's log: proj/logs/dbt.log)")
    args = parser.parse_args()

    from ingest.config import EngineSettings
    from ingest.engine import start_engine

    workdir = Path(tempfile.mkdtemp(prefix="lakecdc-bench-merge-"))
    try:
        warehouse = workdir / "warehouse"
        warehouse.mkdir()
        engine = start_engine(EngineSettings(profile="local", warehouse=warehouse))
        t0 = time.perf_counter()
        prepare(engine.spark, warehouse, args.rows, args.changes)
        print(f"setup: {args.rows:,} silver rows and {args.changes:,} bronze events in "
              f"{time.perf_counter() - t0:.1f} s", flush=True)
        parse_s, lakecdc_s = run_lakecdc(engine, warehouse, workdir, args.strategy)
        print(f"dbt parse of the new project (not in lakecdc's time): {parse_s:.1f} s", flush=True)
        count, qty_sum = engine.spark.sql(f"SELECT count(*), sum(qty) FROM silver.{SOURCE}__items").collect()[0]
        expected = expected_rows_and_qty_sum(args.rows, args.changes)
        status = "ok" if (count, qty_sum) == expected else f"WRONG (expected {expected[0]:,} rows, qty {expected[1]})"
        print(f"lakecdc (dbt run, Sail, {args.strategy or 'default strategy'}): {lakecdc_s:.1f} s, "
              f"{args.changes / lakecdc_s:,.0f} changes/s; "
              f"silver rows after: {count:,}, sum(qty) {qty_sum:,} {status}", flush=True)
        engine.stop()
        if not args.skip_dlt:
            dlt_s = run_dlt(workdir, args.rows, args.changes)
            if dlt_s is not None:
                print(f"dlt merge (delta-rs): {dlt_s:.1f} s, {args.changes / dlt_s:,.0f} changes/s", flush=True)
                print(f"ratio lakecdc/dlt wall time: {lakecdc_s / dlt_s:.2f}", flush=True)
    finally:
        if args.keep:
            print(f"kept {workdir}", flush=True)
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
