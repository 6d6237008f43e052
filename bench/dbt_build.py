"""Benchmark: `lakecdc dbt build` latency for many captured tables (issue 19: 20 tables with 1,000 changes each,
<= 30 s end to end), and where the time goes.

    .venv/bin/python bench/dbt_build.py [--tables 20] [--rows 1000] [--changes 1000] [--runs 3]

Needs LAKECDC_PG_DSN (`scripts/services.sh up`). Per run: a fresh PostgreSQL database with TABLES tables of ROWS rows
(typical columns: bigint key, text, int, numeric(12,2), numeric(30,10), double, timestamptz, boolean, varchar),
a project made by `lakecdc init`, the snapshot landed (`lakecdc run --until-caught-up`), `schema rebuild`,
`generate`, then the timed first `lakecdc dbt build`; then CHANGES changes per table (60% updates, 20% deletes,
20% inserts), landed, and the timed incremental `lakecdc dbt build`. For each build it prints the wall-clock time,
the CPU seconds of its process (steadier than wall time on a busy machine), and, from dbt's run_results.json, the
time in silver models, in tests, and the slowest node, and from the build's own dbt log (logs/first,
logs/incremental in the project) how many statements went to the engine and the seconds they took (both summed over
dbt's threads, so they can exceed the wall-clock time). There is no peer here: no other tool builds silver from
Debezium events with dbt. Medians over runs, with the load average.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psycopg2
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from pg_fresh import fresh_database  # noqa: E402

DB, SCHEMA, SOURCE, SLOT = "lakecdc_bench_dbt", "shop", "bdbt", "bench_dbt"
COLUMNS = ("id bigint PRIMARY KEY, name text, qty int, price numeric(12,2), total numeric(30,10), "
           "score double precision, created timestamptz, active boolean, code varchar(32)")



def prepare(dsn: str, tables: int, rows: int) -> str:
    db = fresh_database(dsn, DB, SLOT)
    conn = psycopg2.connect(db)
    conn.autocommit = True
    with conn.cursor() as cur:
        cur.execute(f"CREATE SCHEMA {SCHEMA}")
        for t in range(tables):
            cur.execute(f"CREATE TABLE {SCHEMA}.t{t:02d} ({COLUMNS})")
            cur.execute(f"INSERT INTO {SCHEMA}.t{t:02d} SELECT g, 'item ' || g, g % 1000, (g % 10000) / 100.0, "
                        "g * 1234.5678901234, g / 7.0, now(), g % 2 = 0, md5(g::text)::varchar(32) "
                        f"FROM generate_series(1, {rows}) g")
    conn.close()
    return db


def change(db: str, tables: int, rows: int, changes: int) -> None:
    """CHANGES changes per table: 60% updates and 20% deletes of existing rows, 20% inserts of new keys."""
    upd, dele = changes * 6 // 10, changes * 2 // 10
    ins = changes - upd - dele
    conn = psycopg2.connect(db)
    conn.autocommit = True
    with conn.cursor() as cur:
        for t in range(tables):
            name = f"{SCHEMA}.t{t:02d}"
            cur.execute(f"UPDATE {name} SET qty = qty + 1, price = price + 0.01, score = score * 1.5, "
                        f"name = name || ' v2' WHERE id <= {upd}")
            cur.execute(f"DELETE FROM {name} WHERE id > {upd} AND id <= {upd + dele}")
            cur.execute(f"INSERT INTO {name} SELECT g, 'new ' || g, 1, 9.99, 1.5, 0.25, now(), true, 'n' "
                        f"FROM generate_series({rows + 1}, {rows + ins}) g")
    conn.close()


def project(work: Path, dsn: str) -> tuple[Path, dict[str, str]]:
    params = dict(p.split("=", 1) for p in dsn.split())
    env = {k: v for k, v in os.environ.items() if k not in ("LAKECDC_CONFIG", "SPARK_REMOTE", "DBT_PROJECT_DIR")}
    env["RUST_LOG"] = "error"
    folder = work / "project"
    folder.mkdir()
    lakecdc(folder, env, "init")
    (folder / "lakecdc.yml").write_text(yaml.safe_dump({
        "engine": {"profile": "local", "warehouse": str(work / "warehouse")},
        "sources": {SOURCE: {
            "connector": "postgresql", "database.hostname": params.get("host", "127.0.0.1"),
            "database.port": int(params.get("port", 5432)), "database.user": params.get("user", "postgres"),
            "database.password": params.get("password", ""), "database.dbname": DB, "topic.prefix": SOURCE,
            "slot.name": SLOT, "publication.name": SLOT, "table.include.list": f"{SCHEMA}\\..*",
            "poll.interval.ms": 100}}}, sort_keys=False))
    return folder, env


def lakecdc(folder: Path, env: dict[str, str], *args: str) -> float:
    started = time.perf_counter()
    result = subprocess.run([sys.executable, "-m", "ingest.cli", *args], cwd=folder, env=env, capture_output=True,
                            text=True, timeout=3600)
    if result.returncode != 0:
        raise SystemExit(f"lakecdc {' '.join(args)} failed:\n{(result.stdout + result.stderr)[-4000:]}")
    return time.perf_counter() - started


def build(folder: Path, env: dict[str, str], name: str) -> tuple[float, float]:
    """A timed `lakecdc dbt build` whose dbt log goes to logs/<name> (where_the_time_goes counts its statements):
    its wall-clock seconds and its process's CPU seconds (user + system)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = lakecdc(folder, env, "dbt", "build", "--log-path", str(folder / "logs" / name))
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def where_the_time_goes(folder: Path, name: str) -> dict[str, float | str]:
    """From dbt's run_results.json: the time in models and in tests (summed over dbt's threads), the slowest model;
    from the build's log: the statements sent to the engine and the seconds they took (summed likewise)."""
    results = json.loads((folder / "target" / "run_results.json").read_text())["results"]
    models = [r for r in results if r["unique_id"].startswith("model.")]
    tests = [r for r in results if r["unique_id"].startswith("test.")]
    slowest = max(models, key=lambda r: r["execution_time"])
    statements = [float(m.group(1)) for log in sorted((folder / "logs" / name).glob("dbt.log*"))
                  for m in re.finditer(r"SQL status: \S+ in ([0-9.]+) seconds", log.read_text(errors="replace"))]
    return {"models_s": sum(r["execution_time"] for r in models),
            "tests_s": sum(r["execution_time"] for r in tests), "nodes": len(results),
            "slowest": f"{slowest['unique_id'].split('.')[-1]} {slowest['execution_time']:.2f} s",
            "statements": len(statements), "statements_s": sum(statements)}


def one_run(dsn: str, tables: int, rows: int, changes: int, keep: bool = False) -> dict[str, float]:
    folder = (contextlib.nullcontext(tempfile.mkdtemp(prefix="lakecdc-bench-dbt-")) if keep
              else tempfile.TemporaryDirectory(prefix="lakecdc-bench-dbt-"))
    with folder as tmp:
        work = Path(tmp)
        if keep:
            print(f"  project kept in {work / 'project'} (dbt's log: logs/dbt.log)")
        db = prepare(dsn, tables, rows)
        folder, env = project(work, dsn)
        lakecdc(folder, env, "run", "--source", SOURCE, "--until-caught-up", "--quiet")
        lakecdc(folder, env, "schema", "rebuild", "--source", SOURCE)
        lakecdc(folder, env, "generate", "--source", SOURCE)
        first, first_cpu = build(folder, env, "first")
        first_parts = where_the_time_goes(folder, "first")
        change(db, tables, rows, changes)
        lakecdc(folder, env, "run", "--source", SOURCE, "--until-caught-up", "--quiet")
        second, second_cpu = build(folder, env, "incremental")
        second_parts = where_the_time_goes(folder, "incremental")
        print(f"  first build {first:6.1f} s, {first_cpu:.1f} s CPU (models {first_parts['models_s']:.1f} s, tests "
              f"{first_parts['tests_s']:.1f} s, {first_parts['nodes']} nodes, slowest {first_parts['slowest']}; "
              f"{first_parts['statements']} engine statements, {first_parts['statements_s']:.1f} s)")
        print(f"  incremental {second:6.1f} s, {second_cpu:.1f} s CPU (models {second_parts['models_s']:.1f} s, tests "
              f"{second_parts['tests_s']:.1f} s, slowest {second_parts['slowest']}; "
              f"{second_parts['statements']} engine statements, {second_parts['statements_s']:.1f} s)", flush=True)
        return {"first": first, "incremental": second, "first_cpu": first_cpu, "incremental_cpu": second_cpu}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=20)
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--changes", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--keep", action="store_true", help="keep each run's project and warehouse (to read dbt's log)")
    args = parser.parse_args()
    dsn = os.environ.get("LAKECDC_PG_DSN")
    if not dsn:
        raise SystemExit("LAKECDC_PG_DSN is not set: start the servers with `scripts/services.sh up` and export "
                         "`scripts/services.sh env`")
    print(f"dbt build: {args.tables} tables x {args.rows} rows, then {args.changes} changes each; "
          f"load average {os.getloadavg()[0]:.2f}", flush=True)
    runs = []
    for n in range(args.runs):
        print(f"run {n + 1}/{args.runs}", flush=True)
        runs.append(one_run(dsn, args.tables, args.rows, args.changes, args.keep))
    first = statistics.median(r["first"] for r in runs)
    incremental = statistics.median(r["incremental"] for r in runs)
    print(f"median of {len(runs)}: first build {first:.1f} s, incremental build {incremental:.1f} s "
          f"(target <= 30 s); CPU of the build process {statistics.median(r['first_cpu'] for r in runs):.1f} s / "
          f"{statistics.median(r['incremental_cpu'] for r in runs):.1f} s; load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
