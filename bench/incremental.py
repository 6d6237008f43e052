"""Incremental snapshot of a PostgreSQL table while updates stream (figures for the closing note; not a test).

    .venv/bin/python bench/incremental.py [--rows 1000000] [--updates-per-s 1000] [--chunk 1024] [--runs 1]

Needs LAKECDC_PG_DSN (`scripts/services.sh up`). Per run: a fresh table of ROWS rows (8 columns), a `lakecdc
run` streaming it (snapshot.mode no_data, so every read event comes from the incremental snapshot), a workload
thread updating random rows at UPDATES_PER_S, then `lakecdc signal execute-snapshot`. Prints the snapshot's rows/s
(read events landed between the STARTED and COMPLETED notifications) and the streaming lag during it: for every
update event landed in that time, bronze's ingested_at minus the source commit time (p50/p99, seconds). There is no
peer here: Debezium's own incremental snapshot needs a Kafka signal channel or the source table, and its embedded
engine would be measured on a different path. Medians over runs.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psycopg2
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from pg_fresh import fresh_database  # noqa: E402

from tests.support.pg import execute  # noqa: E402

DB, SCHEMA, SOURCE, SIGNALS = "lakecdc_bench_inc", "bench", "inc", "bench.signals"


def prepare(dsn: str, rows: int) -> str:
    db = fresh_database(dsn, DB, "bench_inc")
    execute(db, f"CREATE SCHEMA {SCHEMA}",
            f"CREATE TABLE {SCHEMA}.items (id bigint PRIMARY KEY, name text, qty int, price numeric(12,2), "
            "ts timestamptz, flag boolean, note varchar(64), n bigint)",
            f"INSERT INTO {SCHEMA}.items SELECT g, 'item ' || g, g % 1000, (g % 10000) / 100.0, now(), "
            f"g % 2 = 0, md5(g::text), g FROM generate_series(1, {rows}) g",
            f"CREATE TABLE {SIGNALS} (id varchar(64) PRIMARY KEY, type varchar(32) NOT NULL, data varchar(2048))")
    return db


def config(work: Path, dsn: str, chunk: int) -> Path:
    params = dict(p.split("=", 1) for p in dsn.split())
    path = work / "lakecdc.yml"
    path.write_text(yaml.safe_dump({
        "engine": {"profile": "local", "warehouse": str(work / "warehouse")},
        "sources": {SOURCE: {
            "connector": "postgresql", "database.hostname": params.get("host", "127.0.0.1"),
            "database.port": int(params.get("port", 5432)), "database.user": params.get("user", "postgres"),
            "database.password": params.get("password", ""), "database.dbname": DB, "topic.prefix": SOURCE,
            "slot.name": "bench_inc", "publication.name": "bench_inc", "table.include.list": f"{SCHEMA}\\.items",
            "snapshot.mode": "no_data", "signal.data.collection": SIGNALS,
            "incremental.snapshot.chunk.size": chunk, "poll.interval.ms": 200}}}))
    return path


def lakecdc(path: Path, *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "ingest.cli", "--config", str(path), *args], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def updates(dsn: str, rows: int, per_s: int, stop: threading.Event) -> None:
    conn = psycopg2.connect(dsn)
    conn.autocommit = True
    rng, began, done = random.Random(3), time.monotonic(), 0
    with conn.cursor() as cur:
        while not stop.is_set():
            cur.execute(f"UPDATE {SCHEMA}.items SET qty = qty + 1, n = n + 1 WHERE id = %s", (rng.randint(1, rows),))
            done += 1
            ahead = done / per_s - (time.monotonic() - began)
            if ahead > 0:
                time.sleep(ahead)
    conn.close()


def notifications(warehouse: Path) -> list[dict]:
    from deltalake import DeltaTable

    path = warehouse / "bronze" / f"{SOURCE}_events"
    if not (path / "_delta_log").exists():
        return []
    rows = DeltaTable(str(path)).to_pyarrow_table(columns=["seq", "table_id", "value"]).to_pylist()
    return [json.loads(r["value"]) for r in sorted(rows, key=lambda r: r["seq"])
            if r["table_id"].startswith("__debezium-notification")]


def one_run(dsn: str, rows: int, per_s: int, chunk: int) -> tuple[float, float, float, int]:
    db = prepare(dsn, rows)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        path = config(work, dsn, chunk)
        first = lakecdc(path, "run", "--source", SOURCE, "--until-caught-up", "--quiet")
        assert first.wait() == 0, first.stderr.read() if first.stderr else ""
        stop = threading.Event()
        worker = threading.Thread(target=updates, args=(db, rows, per_s, stop), daemon=True)
        worker.start()
        run = lakecdc(path, "run", "--source", SOURCE, "--quiet")
        time.sleep(3)
        sent = lakecdc(path, "signal", "execute-snapshot", "--source", SOURCE, "--tables", f"{SCHEMA}.items")
        assert sent.wait() == 0
        while not any(n["type"] == "COMPLETED" for n in notifications(work / "warehouse")):
            if run.poll() is not None:
                raise SystemExit(f"lakecdc run stopped: {run.stderr.read() if run.stderr else ''}")
            time.sleep(2)
        stop.set()
        worker.join()
        run.send_signal(signal.SIGTERM)
        run.wait(timeout=120)
        return measure(work / "warehouse")


def measure(warehouse: Path) -> tuple[float, float, float, int]:
    from deltalake import DeltaTable

    table = DeltaTable(str(warehouse / "bronze" / f"{SOURCE}_events")).to_pyarrow_table(
        columns=["op", "table_id", "value", "source_ts_ms", "ingested_at"]).to_pylist()
    marks = {}
    for row in table:
        if row["table_id"].startswith("__debezium-notification"):
            note = json.loads(row["value"])
            if note["type"] in ("STARTED", "COMPLETED"):
                marks[note["type"]] = note["timestamp"] / 1000
    began, ended = marks["STARTED"], marks["COMPLETED"]
    reads = sum(1 for row in table if row["op"] == "r")
    lags = sorted(row["ingested_at"].timestamp() - row["source_ts_ms"] / 1000 for row in table
                  if row["op"] == "u" and began * 1000 <= row["source_ts_ms"] <= ended * 1000)
    p50 = lags[len(lags) // 2] if lags else float("nan")
    p99 = lags[min(len(lags) - 1, int(len(lags) * 0.99))] if lags else float("nan")
    return reads / (ended - began), p50, p99, len(lags)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--updates-per-s", type=int, default=1000)
    ap.add_argument("--chunk", type=int, default=1024)
    ap.add_argument("--runs", type=int, default=1)
    args = ap.parse_args()
    dsn = os.environ.get("LAKECDC_PG_DSN")
    if not dsn:
        raise SystemExit("set LAKECDC_PG_DSN (scripts/services.sh up; eval \"$(scripts/services.sh env)\")")
    print(f"load average {open('/proc/loadavg').read().split()[:3]}; rows {args.rows:,}; "
          f"{args.updates_per_s:,} updates/s; chunk {args.chunk}")
    figures = []
    for run in range(args.runs):
        rate, p50, p99, n = one_run(dsn, args.rows, args.updates_per_s, args.chunk)
        figures.append((rate, p50, p99))
        print(f"run {run + 1}: incremental snapshot {rate:,.0f} rows/s; streaming lag during it p50 {p50:.2f} s, "
              f"p99 {p99:.2f} s ({n:,} updates)")
    print(f"median of {args.runs}: {statistics.median(f[0] for f in figures):,.0f} rows/s; lag p50 "
          f"{statistics.median(f[1] for f in figures):.2f} s, p99 {statistics.median(f[2] for f in figures):.2f} s")


if __name__ == "__main__":
    main()
