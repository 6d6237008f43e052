"""PostgreSQL connector benchmark (figures for the closing note; not a test).

    .venv/bin/python bench/postgres.py [--rows 1000000] [--updates 200000] [--skip-dlt] [--runs 3]

1. Snapshot of a ROWS-row, 8-column table: the connector alone (rows/s), and `run_source` (connector +
   BronzeWriter into Delta through the embedded engine, the product path); compared with dlt's
   sql_database source (pyarrow backend) loading the same table to Delta (filesystem destination,
   table_format=delta) in the same run.
2. Streaming of UPDATES single-row updates (one transaction each), RUNS times over new updates: the connector
   alone and `run_source` into bronze; compared with `pg_recvlogical` reading the same pgoutput stream (a slot
   created at the same point) to /dev/null in the same run: the decode limit of the server. Medians printed,
   with the ratio of each run (the machine's speed varies between minutes).

Uses database pgconn_test (schema pgconn_bench, slots pgconn_bench*) on LAKECDC_PG_DSN.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import psycopg2  # noqa: E402
from cpu import cpu_use  # noqa: E402

from ingest.bronze.contract import BatchLimits, ResumeState  # noqa: E402
from ingest.config import EngineSettings, ProjectConfig, SourceSettings  # noqa: E402
from ingest.connectors.postgres import PostgresConnector  # noqa: E402

DB = "pgconn_test"
SCHEMA = "pgconn_bench"
SOURCE = "pgconn_bench"


def dsn_parts() -> dict[str, str]:
    dsn = os.environ.get("LAKECDC_PG_DSN", "host=127.0.0.1 port=55432 user=postgres dbname=postgres")
    parts = dict(p.split("=", 1) for p in dsn.split())
    return {"host": parts.get("host", "127.0.0.1"), "port": parts.get("port", "5432"),
            "user": parts.get("user", "postgres"), "password": parts.get("password", "")}


def connect(dbname: str = DB):
    p = dsn_parts()
    conn = psycopg2.connect(host=p["host"], port=p["port"], user=p["user"], password=p["password"], dbname=dbname)
    conn.autocommit = True
    return conn


def sql(statement: str, dbname: str = DB) -> list[tuple]:
    conn = connect(dbname)
    with conn.cursor() as cur:
        cur.execute(statement)
        rows = cur.fetchall() if cur.description else []
    conn.close()
    return rows


def properties(slot: str, mode: str = "initial") -> dict:
    p = dsn_parts()
    return {"database.hostname": p["host"], "database.port": int(p["port"]), "database.user": p["user"],
            "database.password": p["password"], "database.dbname": DB, "topic.prefix": "bench",
            "slot.name": slot, "publication.name": "pgconn_bench", "publication.autocreate.mode": "filtered",
            "table.include.list": f"{SCHEMA}\\.t", "snapshot.mode": mode, "snapshot.fetch.size": 50_000,
            "poll.interval.ms": 200}


def drop_slots() -> None:
    for (slot,) in sql("SELECT slot_name FROM pg_replication_slots WHERE slot_name LIKE 'pgconn_bench%'"):
        sql(f"SELECT pg_drop_replication_slot('{slot}')")


def prepare(rows: int) -> None:
    if not sql(f"SELECT 1 FROM pg_database WHERE datname = '{DB}'", "postgres"):
        sql(f"CREATE DATABASE {DB}", "postgres")
    drop_slots()
    sql("DROP PUBLICATION IF EXISTS pgconn_bench")
    sql(f"DROP SCHEMA IF EXISTS {SCHEMA} CASCADE")
    sql(f"CREATE SCHEMA {SCHEMA}")
    sql(f"CREATE TABLE {SCHEMA}.t (id bigint PRIMARY KEY, a int, b text, c numeric(12,2), d timestamptz, "
        f"e boolean, f double precision, g varchar(32))")
    sql(f"INSERT INTO {SCHEMA}.t SELECT g, g % 1000, 'name ' || g, g / 7.0, "
        f"'2024-01-01'::timestamptz + g * interval '1 second', g % 2 = 0, g * 0.5, md5(g::text) "
        f"FROM generate_series(1, {rows}) g")
    sql(f"VACUUM ANALYZE {SCHEMA}.t")


def connector_alone(slot: str, mode: str, resume: ResumeState) -> tuple[int, float]:
    conn = PostgresConnector(SourceSettings("alone", "postgresql", properties(slot, mode)))
    began = time.perf_counter()
    n = 0
    try:
        for batch in conn.batches(resume, BatchLimits(max_events=10_000, max_seconds=5)):
            n += batch.event_count
            conn.acknowledge(batch)
            if batch.caught_up:
                break
    finally:
        conn.close()
    return n, time.perf_counter() - began


def product_run(warehouse: Path, mode: str) -> tuple[int, float]:
    from ingest.runner import run_source

    config = ProjectConfig(engine=EngineSettings(profile="local", warehouse=warehouse),
                           sources={SOURCE: SourceSettings(SOURCE, "postgresql", properties("pgconn_bench", mode))})
    result = run_source(config, SOURCE, until_caught_up=True, limits=BatchLimits(max_events=50_000, max_seconds=10),
                        progress=False)
    return result.events, result.seconds


def dlt_snapshot(work: Path) -> float | None:
    try:
        import dlt
        from dlt.sources.sql_database import sql_table
    except ImportError as exc:
        print(f"  dlt: not available ({exc}); pip install -e .[bench]")
        return None
    p = dsn_parts()
    credentials = f"postgresql+psycopg2://{p['user']}:{p['password']}@{p['host']}:{p['port']}/{DB}"
    source = sql_table(credentials=credentials, table="t", schema=SCHEMA, backend="pyarrow", chunk_size=100_000)
    pipeline = dlt.pipeline(pipeline_name="pgconn_bench", pipelines_dir=str(work / "dlt_pipelines"),
                            destination=dlt.destinations.filesystem(bucket_url=str(work / "dlt_data")),
                            dataset_name="bench")
    began = time.perf_counter()
    pipeline.run(source, table_format="delta", loader_file_format="parquet")
    return time.perf_counter() - began


def recvlogical(endpos: str) -> float | None:
    tool = shutil.which("pg_recvlogical") or "/usr/lib/postgresql/15/bin/pg_recvlogical"
    if not Path(tool).exists():
        print("  pg_recvlogical: not found")
        return None
    p = dsn_parts()
    conninfo = f"host={p['host']} port={p['port']} user={p['user']} dbname={DB}"
    began = time.perf_counter()
    subprocess.run([tool, "-d", conninfo, "--slot", "pgconn_bench_recv", "--start", "-o", "proto_version=1",
                    "-o", "publication_names=pgconn_bench", "-E", endpos, "--no-loop", "-f", "/dev/null"],
                   check=True, env={**os.environ, "PGPASSWORD": p["password"]})
    return time.perf_counter() - began


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--updates", type=int, default=200_000)
    ap.add_argument("--skip-dlt", action="store_true")
    ap.add_argument("--runs", type=int, default=3, help="streaming runs, each over new updates (medians printed)")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="pgconn_bench_"))
    try:
        t = time.perf_counter()
        prepare(args.rows)
        print(f"prepared {args.rows:,} rows in {time.perf_counter() - t:.1f}s")

        print("1. snapshot")
        n, s = connector_alone("pgconn_bench_alone", "initial_only", ResumeState())
        print(f"  connector alone:           {n:>10,} rows  {s:6.1f}s  {n / s:>10,.0f} rows/s")
        sql("SELECT pg_drop_replication_slot('pgconn_bench_alone')")
        n, s = product_run(work / "warehouse", "initial_only")
        ours = n / s
        print(f"  run_source -> bronze:      {n:>10,} rows  {s:6.1f}s  {ours:>10,.0f} rows/s")
        if not args.skip_dlt:
            d = dlt_snapshot(work)
            if d:
                print(f"  dlt sql_database (pyarrow) -> delta: {args.rows:,} rows  {d:6.1f}s  "
                      f"{args.rows / d:>10,.0f} rows/s")
                print(f"  ratio lakecdc / dlt:       {ours / (args.rows / d):.2f}")

        print(f"2. streaming (single-row updates, one transaction each; {args.runs} run(s), each on new updates; "
              f"load average {' '.join(open('/proc/loadavg').read().split()[:3])})")
        recv_rates, alone_rates, bronze_rates, ratios = [], [], [], []
        for run in range(1, args.runs + 1):
            # two more slots at the current point: one for the connector alone, one for pg_recvlogical; the
            # product's own slot goes on from where its bronze tables end (the snapshot, then each run before)
            for slot in ("pgconn_bench_alone", "pgconn_bench_recv"):
                if sql(f"SELECT 1 FROM pg_replication_slots WHERE slot_name = '{slot}'"):
                    sql(f"SELECT pg_drop_replication_slot('{slot}')")
                sql(f"SELECT pg_create_logical_replication_slot('{slot}', 'pgoutput')")
            t = time.perf_counter()
            sql(f"DO $$ BEGIN FOR i IN 1..{args.updates} LOOP "
                f"UPDATE {SCHEMA}.t SET a = a + 1 WHERE id = 1 + ((i::bigint + {run * 104_729}) * 7919) % {args.rows}; "
                f"COMMIT; END LOOP; END $$")
            endpos = sql("SELECT pg_current_wal_lsn()::text")[0][0]
            print(f"  run {run}: generated {args.updates:,} updates in {time.perf_counter() - t:.1f}s "
                  f"(WAL up to {endpos})")
            with cpu_use() as use:
                r = recvlogical(endpos)
            if r:
                recv_rates.append(args.updates / r)
                print(f"  pg_recvlogical > /dev/null: {args.updates:>9,} txns  {r:6.1f}s  "
                      f"{args.updates / r:>10,.0f} events/s  ({use.text(r)}; {use.per_event(args.updates)})")
            with cpu_use() as use:
                n, s = connector_alone("pgconn_bench_alone", "initial",
                                       ResumeState(position={"phase": "streaming", "restart_lsn": 0}))
            alone_rates.append(n / s)
            print(f"  connector alone:           {n:>10,} events {s:6.1f}s  {n / s:>10,.0f} events/s  "
                  f"({use.text(s)}; {use.per_event(n)})")
            with cpu_use() as use:
                n, s = product_run(work / "warehouse", "initial")
            ours = n / s
            bronze_rates.append(ours)
            print(f"  run_source -> bronze:      {n:>10,} events {s:6.1f}s  {ours:>10,.0f} events/s  "
                  f"({use.text(s)}; {use.per_event(n)})")
            if r:
                ratios.append(ours / (args.updates / r))
                print(f"  ratio lakecdc / pg_recvlogical: {ratios[-1]:.2f}")
        median = statistics.median
        print(f"  medians of {args.runs}: pg_recvlogical {median(recv_rates) if recv_rates else 0:,.0f}, connector "
              f"alone {median(alone_rates):,.0f}, into bronze {median(bronze_rates):,.0f} events/s; ratio "
              f"{median(ratios) if ratios else 0:.2f} (each run's own; issue 19's target 0.85)")
        print(f"  peak RSS of this process {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:,.0f} MB")
    finally:
        drop_slots()
        sql("DROP PUBLICATION IF EXISTS pgconn_bench")
        sql(f"DROP SCHEMA IF EXISTS {SCHEMA} CASCADE")
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
