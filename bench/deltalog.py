"""Bronze's Delta log under a busy stream (figures for docs/bronze.md; not a test).

    .venv/bin/python bench/deltalog.py [--source mariadb|postgres] [--minutes 10] [--batch-seconds 5]

Creates four tables in database/schema `deltalog_bench`, takes the snapshot, then runs `lakecdc run` (the
real CLI, in a subprocess) for MINUTES while a workload of small transactions (inserts of ~600-byte rows,
updates, deletes) runs as fast as one client can, then stops the run with SIGTERM and reports, per bronze
table: commits (Delta versions), checkpoints and their sizes, the size of `_delta_log`, data files and
their size. Uses LAKECDC_MARIADB_URL / LAKECDC_PG_DSN (scripts/services.sh env).
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import urlparse

ROOT = Path(__file__).resolve().parents[1]
DB = "deltalog_bench"
TABLES = ("a", "b", "c", "d")


def _url(name: str, default: str) -> dict:
    url = urlparse(os.environ.get(name, default))
    return {"host": url.hostname or "127.0.0.1", "port": url.port, "user": url.username or "root",
            "password": url.password or ""}


def _connect(kind: str):
    if kind == "mariadb":
        import pymysql

        p = _url("LAKECDC_MARIADB_URL", "mysql://root@127.0.0.1:3306/")
        return pymysql.connect(host=p["host"], port=p["port"], user=p["user"], password=p["password"],
                               autocommit=True), p
    import psycopg2

    dsn = dict(part.split("=", 1) for part in os.environ.get("LAKECDC_PG_DSN", "user=postgres").split())
    p = {"host": dsn.get("host", "127.0.0.1"), "port": int(dsn.get("port", 5432)), "user": dsn.get("user", "postgres"),
         "password": dsn.get("password", ""), "dbname": dsn.get("dbname", "postgres")}
    conn = psycopg2.connect(**p)
    conn.autocommit = True
    return conn, p


def prepare(kind: str) -> dict:
    conn, p = _connect(kind)
    with conn.cursor() as cur:
        if kind == "mariadb":
            cur.execute(f"DROP DATABASE IF EXISTS {DB}")
            cur.execute(f"CREATE DATABASE {DB}")
            for t in TABLES:
                cur.execute(f"CREATE TABLE {DB}.{t} (id INT PRIMARY KEY, n BIGINT, x DOUBLE, s TEXT)")
        else:
            cur.execute(f"DROP SCHEMA IF EXISTS {DB} CASCADE")
            cur.execute(f"CREATE SCHEMA {DB}")
            for t in TABLES:
                cur.execute(f"CREATE TABLE {DB}.{t} (id INT PRIMARY KEY, n BIGINT, x DOUBLE PRECISION, s TEXT)")
            cur.execute("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots "
                        "WHERE slot_name = 'deltalog_bench'")
    conn.close()
    return p


def workload(kind: str, stop: threading.Event, counter: list[int]) -> None:
    """Small transactions as fast as one client goes: 1-5 inserts, an update, sometimes a delete."""
    rng = random.Random(7)
    conn, _ = _connect(kind)
    ids = {t: 0 for t in TABLES}
    with conn.cursor() as cur:
        while not stop.is_set():
            t = rng.choice(TABLES)
            statements = []
            for _ in range(rng.randint(1, 5)):
                ids[t] += 1
                statements.append((f"INSERT INTO {DB}.{t} VALUES (%s, %s, %s, %s)",
                                   (ids[t], rng.getrandbits(40), rng.random() * 1e9, "v" * rng.randint(300, 900))))
            statements.append((f"UPDATE {DB}.{t} SET n = n + 1 WHERE id = %s", (rng.randint(1, ids[t]),)))
            if rng.random() < 0.2:
                statements.append((f"DELETE FROM {DB}.{t} WHERE id = %s", (rng.randint(1, ids[t]),)))
            cur.execute("BEGIN")
            for sql, args in statements:
                cur.execute(sql, args)
            cur.execute("COMMIT")
            counter[0] += 1
    conn.close()


def config_text(kind: str, p: dict, warehouse: Path) -> str:
    if kind == "mariadb":
        props = {"database.hostname": p["host"], "database.port": p["port"], "database.user": p["user"],
                 "database.password": p["password"], "database.server.id": 5791, "topic.prefix": "bench",
                 "database.include.list": DB}
        connector = "mariadb"
    else:
        props = {"database.hostname": p["host"], "database.port": p["port"], "database.user": p["user"],
                 "database.password": p["password"], "database.dbname": p["dbname"], "topic.prefix": "bench",
                 "schema.include.list": DB, "slot.name": "deltalog_bench", "publication.name": "deltalog_bench"}
        connector = "postgresql"
    lines = [f"engine:\n  warehouse: {warehouse}\nsources:\n  bench:\n    connector: {connector}"]
    lines += [f"    {k}: {v!r}" if isinstance(v, str) else f"    {k}: {v}" for k, v in props.items()]
    return "\n".join(lines) + "\n"


def table_report(path: Path) -> dict:
    log = path / "_delta_log"
    files = [f for f in log.iterdir() if f.is_file()]
    commits = [f for f in files if f.name.endswith(".json") and f.name[:20].isdigit()]
    checkpoints = [f for f in files if ".checkpoint" in f.name]
    data = [f for f in path.rglob("*.parquet") if "_delta_log" not in f.parts]
    return {"commits": len(commits), "checkpoints": len(checkpoints),
            "largest_checkpoint": max((f.stat().st_size for f in checkpoints), default=0),
            "log_bytes": sum(f.stat().st_size for f in files), "data_files": len(data),
            "data_bytes": sum(f.stat().st_size for f in data)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--source", choices=("mariadb", "postgres"), default="mariadb")
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--batch-seconds", type=float, default=None)
    parser.add_argument("--keep", action="store_true", help="keep the warehouse (its path is printed)")
    args = parser.parse_args()
    p = prepare(args.source)
    work = Path(tempfile.mkdtemp(prefix="deltalog-bench-"))
    warehouse = work / "warehouse"
    config = work / "lakecdc.yml"
    config.write_text(config_text(args.source, p, warehouse))
    command = [sys.executable, "-m", "ingest.cli", "--config", str(config), "run", "--quiet"]
    if args.batch_seconds:
        command += ["--batch-seconds", str(args.batch_seconds)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    stop, counter = threading.Event(), [0]
    worker = threading.Thread(target=workload, args=(args.source, stop, counter), daemon=True)
    worker.start()
    began = time.monotonic()
    run = subprocess.Popen(command, cwd=work, env=env)
    try:
        deadline = began + args.minutes * 60
        while time.monotonic() < deadline and run.poll() is None:
            time.sleep(1)
    finally:
        stop.set()
        worker.join()
        if run.poll() is None:
            run.send_signal(signal.SIGTERM)
        code = run.wait()
    print(f"{args.source}: {args.minutes:g} min, {counter[0]:,} source transactions, lakecdc run exit {code}, "
          f"batch-seconds {args.batch_seconds or 'default'}; warehouse {warehouse}")
    print(f"{'table':<28}{'commits':>8}{'ckpts':>7}{'largest ckpt':>14}{'_delta_log':>14}{'files':>8}{'data':>14}")
    for table in sorted((warehouse / "bronze").iterdir()):
        r = table_report(table)
        print(f"{table.name:<28}{r['commits']:>8}{r['checkpoints']:>7}{r['largest_checkpoint']:>14,}"
              f"{r['log_bytes']:>14,}{r['data_files']:>8}{r['data_bytes']:>14,}")
    if not args.keep:
        import shutil

        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
