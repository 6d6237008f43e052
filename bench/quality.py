"""Quality report benchmark: `lakecdc quality` over N silver tables of M rows each (default 50 x 1M).

    .venv/bin/python bench/quality.py [--tables 50] [--rows 1000000] [--runs 2] [--bronze]

Builds the tables on the local engine in a temporary warehouse (not timed), then times complete quality
runs: default suite generation, validation of every suite on Spark (key unique and not null, types,
nullability, enum domain, CDC op domain, placeholder scan over every string column), offending-row
samples, GX Data Docs, HTML pages and JSON. With --bronze every table also gets its bronze change events
(M events per table), so the bronze vs silver reconciliation runs too. Prints one JSON line per run.
Target (issue 8): 50 tables x 1M rows in under 180 s.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ingest.config import EngineSettings, ProjectConfig  # noqa: E402
from ingest.engine import start_engine  # noqa: E402
from ingest.quality.api import run_quality  # noqa: E402


def build_tables(spark, warehouse: Path, tables: int, rows: int, bronze: bool) -> None:
    spark.sql("CREATE SCHEMA IF NOT EXISTS silver")
    spark.sql("CREATE SCHEMA IF NOT EXISTS bronze")
    base = spark.range(rows).selectExpr(
        "id", "concat('customer ', cast(id as string)) AS name",
        "CASE WHEN id % 10 = 0 THEN 'closed' ELSE 'active' END AS status",
        "cast(id % 1000 as double) / 10 AS balance",
        "lpad(hex(id), 16, '0') AS _seq", "timestamp_millis(1700000000000 + id) AS _source_ts", "'r' AS _op")
    for i in range(tables):
        name = f"bench_t{i:02d}"
        location = warehouse / "silver" / name
        base.write.format("delta").mode("overwrite").save(str(location))
        spark.sql(f"CREATE TABLE silver.{name} USING delta LOCATION '{location}'")
    if bronze:
        events = None
        for i in range(tables):
            part = spark.range(rows).selectExpr(
                "'bench' AS source", "'bench' AS topic", f"'benchdb.public.t{i:02d}' AS table_id", "'r' AS op",
                "lpad(hex(id), 16, '0') AS seq", "concat('{\"id\":', cast(id as string), '}') AS key",
                "'{}' AS value", "unix_millis(current_timestamp()) - 60000 + id % 1000 AS ts_ms",
                "unix_millis(current_timestamp()) - 60000 + id % 1000 AS source_ts_ms", "'true' AS snapshot",
                "cast(1 as bigint) AS batch_id",
                "current_timestamp() AS ingested_at")
            events = part if events is None else events.unionByName(part)
        location = warehouse / "bronze" / "bench_events"
        events.write.format("delta").mode("overwrite").partitionBy("table_id").save(str(location))
        spark.sql(f"CREATE TABLE bronze.bench_events USING delta LOCATION '{location}'")
        # the schema history names each table's key, so generated suites know what to reconcile
        history = ", ".join(f"('benchdb.public.t{i:02d}', 1, array('id'), '[]', 'ok', CAST(NULL AS STRING))"
                            for i in range(tables))
        location = warehouse / "bronze" / "bench_schema_history"
        spark.sql(f"CREATE TABLE bronze.bench_schema_history (table_id STRING, version INT, primary_key ARRAY<STRING>,"
                  f" columns STRING, parse_status STRING, parse_error STRING) USING delta LOCATION '{location}'")
        spark.sql(f"INSERT INTO bronze.bench_schema_history VALUES {history}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tables", type=int, default=50)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--bronze", action="store_true", help="also land bronze events and reconcile them")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="lakecdc-bench-quality-") as tmp:
        root = Path(tmp)
        warehouse = root / "warehouse"
        settings = EngineSettings(profile="local", warehouse=warehouse)
        engine = start_engine(settings)
        t0 = time.perf_counter()
        build_tables(engine.spark, warehouse, args.tables, args.rows, args.bronze)
        print(json.dumps({"setup_s": round(time.perf_counter() - t0, 1), "tables": args.tables, "rows": args.rows,
                          "bronze": args.bronze}), flush=True)
        config = ProjectConfig(engine=settings, sources={}, path=None)
        for run in range(args.runs):
            t0 = time.perf_counter()
            result = run_quality(config, generate=True, output=root / "reports", expectations_dir=root / "expectations",
                                 spark=engine.spark)
            elapsed = time.perf_counter() - t0
            expectations = sum(len(s.outcomes) for s in result.result.suites)
            failed = sum(not o.success for s in result.result.suites for o in s.outcomes)
            print(json.dumps({"run": run + 1, "report_s": round(elapsed, 1), "suites": len(result.result.suites),
                              "expectations": expectations, "failed": failed,
                              "target_met": elapsed < 180}), flush=True)
        engine.stop()


if __name__ == "__main__":
    main()
