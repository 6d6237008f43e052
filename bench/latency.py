"""Benchmark: source commit -> silver visible (issue 19), with `lakecdc run` streaming and `lakecdc dbt build` looped.

    .venv/bin/python bench/latency.py [--rate 1000] [--seconds 60] [--runs 1]

Needs LAKECDC_PG_DSN (`scripts/services.sh up`). Per run: a fresh PostgreSQL database with table shop.events (id
bigint key, n int, note text, committed_at timestamptz), 10,000 rows snapshotted and built to silver; then for
SECONDS, at once:
  - a writer commits RATE changes per second, each its own transaction: half inserts of new keys (the measured
    changes: committed_at = clock_timestamp() in the transaction), half updates of older rows (load);
  - `lakecdc run` streams them into bronze (continuously, as in production);
  - `lakecdc dbt build --select <the table's current-state model>` runs back to back; after each build the silver
    table is read and every inserted key seen for the first time counts the build's end minus its commit time.
Prints the achieved change rate, the number of builds and their median time, and the median (p50) and p99
latency of the inserted rows that became visible (a row written during the last build is not counted). There
is no peer here: no other tool builds silver from Debezium events with dbt.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

import psycopg2

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import dbt_build  # noqa: E402  (its project set-up: a PostgreSQL source of tables in schema shop)
from pg_fresh import fresh_database  # noqa: E402

from tests.support.pg import execute  # noqa: E402

INITIAL_ROWS = 10_000


def prepare(dsn: str) -> str:
    db = fresh_database(dsn, dbt_build.DB, dbt_build.SLOT)
    execute(db, f"CREATE SCHEMA {dbt_build.SCHEMA}",
            f"CREATE TABLE {dbt_build.SCHEMA}.events (id bigint PRIMARY KEY, n int, note text, "
            "committed_at timestamptz)",
            f"INSERT INTO {dbt_build.SCHEMA}.events SELECT g, 0, 'row ' || g, clock_timestamp() "
            f"FROM generate_series(1, {INITIAL_ROWS}) g")
    return db


class Writer(threading.Thread):
    """`rate` single-row transactions per second until stopped: inserts of new keys and updates of older rows."""

    def __init__(self, db: str, rate: int) -> None:
        super().__init__(daemon=True)
        self.db, self.rate = db, rate
        self.stop = threading.Event()
        self.changes = 0
        self.seconds = 0.0

    def run(self) -> None:
        conn = psycopg2.connect(self.db)
        conn.autocommit = True
        rng = random.Random(7)
        next_id = INITIAL_ROWS + 1
        began = time.perf_counter()
        with conn.cursor() as cur:
            while not self.stop.is_set():
                due = int((time.perf_counter() - began) * self.rate)
                while self.changes < due:
                    if self.changes % 2 == 0:
                        cur.execute(f"INSERT INTO {dbt_build.SCHEMA}.events VALUES (%s, 0, 'new', clock_timestamp())",
                                    (next_id,))
                        next_id += 1
                    else:
                        cur.execute(f"UPDATE {dbt_build.SCHEMA}.events SET n = n + 1 WHERE id = %s",
                                    (rng.randint(1, INITIAL_ROWS),))
                    self.changes += 1
                time.sleep(0.005)
        self.seconds = time.perf_counter() - began
        conn.close()


def silver_rows(warehouse: Path) -> dict[int, datetime]:
    from deltalake import DeltaTable

    table = DeltaTable(str(warehouse / "silver" / f"{dbt_build.SOURCE}__events"))
    rows = table.to_pyarrow_table(columns=["id", "committed_at"]).to_pylist()
    return {r["id"]: r["committed_at"] for r in rows if r["id"] > INITIAL_ROWS}


def one_run(dsn: str, rate: int, seconds: float) -> dict[str, float | list[float]]:
    with tempfile.TemporaryDirectory(prefix="lakecdc-bench-latency-") as tmp:
        work = Path(tmp)
        db = prepare(dsn)
        folder, env = dbt_build.project(work, dsn)
        dbt_build.lakecdc(folder, env, "run", "--source", dbt_build.SOURCE, "--until-caught-up", "--quiet")
        dbt_build.lakecdc(folder, env, "schema", "rebuild", "--source", dbt_build.SOURCE)
        dbt_build.lakecdc(folder, env, "generate", "--source", dbt_build.SOURCE)
        model = f"{dbt_build.SOURCE}__events"
        dbt_build.lakecdc(folder, env, "dbt", "build", "--select", model)
        streaming = subprocess.Popen([sys.executable, "-m", "ingest.cli", "run", "--source", dbt_build.SOURCE,
                                      "--quiet"], cwd=folder, env=env, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        writer = Writer(db, rate)
        writer.start()
        seen: set[int] = set()
        latencies: list[float] = []
        builds: list[float] = []
        ends = time.monotonic() + seconds
        try:
            while time.monotonic() < ends:
                builds.append(dbt_build.lakecdc(folder, env, "dbt", "build", "--select", model))
                visible_at = datetime.now(UTC)
                for key, committed_at in silver_rows(work / "warehouse").items():
                    if key not in seen and committed_at is not None:
                        seen.add(key)
                        latencies.append((visible_at - committed_at.replace(tzinfo=UTC)).total_seconds())
        finally:
            writer.stop.set()
            writer.join()
            streaming.terminate()
            streaming.wait(timeout=60)
        return {"rate": writer.changes / writer.seconds, "builds": builds, "latencies": latencies}


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rate", type=int, default=1000, help="changes per second (default 1000)")
    parser.add_argument("--seconds", type=float, default=60.0, help="how long the writer runs (default 60)")
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    dsn = os.environ.get("LAKECDC_PG_DSN")
    if not dsn:
        raise SystemExit("set LAKECDC_PG_DSN (scripts/services.sh up; eval \"$(scripts/services.sh env)\")")
    print(f"source commit -> silver visible at {args.rate:,} changes/s for {args.seconds:.0f} s; load average "
          f"{os.getloadavg()[0]:.2f}", flush=True)
    p50s, p99s = [], []
    for run in range(args.runs):
        result = one_run(dsn, args.rate, args.seconds)
        latencies, builds = result["latencies"], result["builds"]
        if not latencies:
            raise SystemExit("no inserted row became visible in silver")
        p50s.append(percentile(latencies, 0.50))
        p99s.append(percentile(latencies, 0.99))
        print(f"run {run + 1}: {result['rate']:,.0f} changes/s written; {len(builds)} builds, median "
              f"{statistics.median(builds):.1f} s; {len(latencies):,} inserted rows seen: latency p50 "
              f"{p50s[-1]:.1f} s, p99 {p99s[-1]:.1f} s", flush=True)
    print(f"median of {args.runs}: latency p50 {statistics.median(p50s):.1f} s, p99 {statistics.median(p99s):.1f} s; "
          f"load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
