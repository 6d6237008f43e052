"""MariaDB connector benchmark (figures for the closing note; not a test).

    .venv/bin/python bench/mariadb.py [--rows 1000000] [--stream-rows 200000] [--single-row-txns 50000]
                                      [--runs 3] [--batch-size 10000] [--skip-bronze] [--row-path]

1. Snapshot of a ROWS-row, 8-column table: connector alone (rows/s) and `run_source` (the product path of
   `lakecdc run`: the connector, with the bronze writer's thread landing batch N while batch N+1 is read, into
   Delta through the embedded engine; rows/s). Tables with a primary key are read in columnar chunks
   (ingest.connectors.mysql.snapshot_block); --row-path measures the row-by-row path instead.
2. Streaming of STREAM_ROWS row events (multi-row INSERTs and UPDATEs): connector alone (fast row decoder,
   then the generic row path) and into bronze (`run_source` of the same source, going on where its snapshot
   ended); compared with a bare mysql-replication loop decoding the
   rows of the same binlog range (the library's own decoding speed) and with
   `mariadb-binlog`/`mysqlbinlog` reading the same range to /dev/null (the decode limit).
3. Single-row transactions: SINGLE_ROW_TXNS autocommit INSERTs (GTID, table map, rows and XID events for each
   row): connector alone and into bronze (`run_source` again), against `mariadb-binlog` over the same range
   (issue 19's target: >= 30,000 events/s into bronze).
Sections 2 and 3 run RUNS times, each on a new workload after the last (the machine's speed varies between
minutes); every figure's median and per-run values are printed at the end, with the peak RSS of the process.

Uses database mysqlconn_bench (or $LAKECDC_BENCH_DB) on LAKECDC_MARIADB_URL (scripts/services.sh env).
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
from urllib.parse import urlparse

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import pymysql  # noqa: E402
from cpu import cpu_use  # noqa: E402

from ingest.bronze.contract import BatchLimits, ResumeState  # noqa: E402
from ingest.config import EngineSettings, ProjectConfig, SourceSettings  # noqa: E402
from ingest.connectors.mysql import MySqlConnector  # noqa: E402
from ingest.connectors.mysql.binlog_reader import BinlogReader  # noqa: E402
from ingest.connectors.mysql.streaming import EVENTS  # noqa: E402

DB = os.environ.get("LAKECDC_BENCH_DB", "mysqlconn_bench")


def params() -> dict:
    url = urlparse(os.environ.get("LAKECDC_MARIADB_URL", "mysql://root@127.0.0.1:53306/"))
    return {"host": url.hostname or "127.0.0.1", "port": url.port or 3306, "user": url.username or "root",
            "password": url.password or ""}


def settings(p: dict, server_id: int, **extra) -> SourceSettings:
    return SourceSettings(name="bench", connector="mariadb", properties={
        "database.hostname": p["host"], "database.port": p["port"], "database.user": p["user"],
        "database.password": p["password"], "database.server.id": server_id, "topic.prefix": "bench",
        "database.include.list": DB, "snapshot.chunk.size": 20_000, **extra})


def prepare(conn, rows: int) -> None:
    with conn.cursor() as cur:
        cur.execute(f"DROP DATABASE IF EXISTS {DB}")
        cur.execute(f"CREATE DATABASE {DB}")
        cur.execute(f"""CREATE TABLE {DB}.t (id INT NOT NULL, a BIGINT, b VARCHAR(40), c DECIMAL(12,2),
                        d DATETIME(3), e DOUBLE, f TINYINT, g DATE, PRIMARY KEY (id))""")
        cur.execute(f"""INSERT INTO {DB}.t SELECT seq, seq * 7, CONCAT('name-', seq), seq / 100,
                        '2024-01-01' + INTERVAL seq SECOND, seq / 3, seq % 100, '2020-01-01' + INTERVAL (seq % 999) DAY
                        FROM {DB}.seq_1_to_{rows}""")


def drain(conn: MySqlConnector, resume: ResumeState) -> tuple[int, float, ResumeState]:
    """The connector alone from `resume` until caught up: (events, seconds, where it ended)."""
    began = time.perf_counter()
    count = 0
    last = None
    for batch in conn.batches(resume, BatchLimits(max_events=50_000, max_seconds=30)):
        count += batch.event_count
        if batch.event_count:
            last = last_event(batch)
        if batch.caught_up:
            break
    seconds = time.perf_counter() - began
    import json

    state = ResumeState(last[0], json.loads(last[1])) if last else resume
    return count, seconds, state


def product(warehouse: Path, p: dict, batch_size: int, **extra) -> tuple[int, float]:
    """One `run_source` of the bench's bronze source until caught up (it resumes where its bronze ends): the
    events landed and the seconds from its first batch on (the engine's start not counted)."""
    from ingest.runner import run_source

    config = ProjectConfig(engine=EngineSettings(profile="local", warehouse=warehouse),
                           sources={"bench": settings(p, 410_002, **extra)})
    result = run_source(config, "bench", until_caught_up=True, limits=BatchLimits(max_events=batch_size),
                        progress=False)
    return result.events, result.seconds


def last_event(batch) -> tuple[str, str]:
    """(seq, position) of the batch's last event; snapshot rows come in columnar blocks."""
    if batch.blocks and (not batch.events or batch.blocks[-1].max_seq() > batch.events[-1].seq):
        columns = batch.blocks[-1].columns
        return columns.column("seq")[-1].as_py(), columns.column("position")[-1].as_py()
    return batch.events[-1].seq, batch.events[-1].position


def bare_loop(p: dict, file: str, pos: int, server_id: int) -> tuple[int, float]:
    began = time.perf_counter()
    reader = BinlogReader(connection_settings=dict(p), server_id=server_id, blocking=False, resume_stream=True,
                          log_file=file, log_pos=pos, only_events=EVENTS, is_mariadb=True, enable_logging=False,
                          only_schemas=[DB])
    rows = 0
    for event in reader:
        if hasattr(event, "rows"):
            rows += len(event.rows)
    reader.close()
    return rows, time.perf_counter() - began


def binlog_tool(p: dict, file: str, pos: int) -> float | None:
    tool = shutil.which("mariadb-binlog") or shutil.which("mysqlbinlog")
    if tool is None:
        return None
    began = time.perf_counter()
    subprocess.run([tool, "--read-from-remote-server", f"--host={p['host']}", f"--port={p['port']}",
                    f"--user={p['user']}", f"--start-position={pos}", "--to-last-log", "--base64-output=decode-rows",
                    "--verbose", file], stdout=subprocess.DEVNULL, check=True,
                   env={**os.environ, "MYSQL_PWD": p["password"]})
    return time.perf_counter() - began


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--stream-rows", type=int, default=200_000)
    ap.add_argument("--single-row-txns", type=int, default=50_000)
    ap.add_argument("--skip-bronze", action="store_true")
    ap.add_argument("--row-path", action="store_true", help="snapshot through the row path (no columnar blocks)")
    ap.add_argument("--runs", type=int, default=3, help="runs of sections 2 and 3, each on a new workload (medians)")
    ap.add_argument("--batch-size", type=int, default=BatchLimits().max_events,
                    help="events per landed batch into bronze (default: lakecdc run's --batch-size default)")
    args = ap.parse_args()
    if args.row_path:
        from ingest.connectors.mysql.snapshot import MySqlSnapshotSource

        MySqlSnapshotSource.columnar = False
    p = params()
    conn = pymysql.connect(**p, autocommit=True)
    prepare(conn, args.rows)
    print(f"table {DB}.t: {args.rows} rows, 8 columns")

    # initial_only: the snapshot alone (no catch-up on the shared server's binlog in the figure)
    c = MySqlConnector(settings(p, 410_001, **{"snapshot.mode": "initial_only"}))
    n, secs, after_snapshot = drain(c, ResumeState())
    print(f"snapshot, connector only: {n} rows in {secs:.1f} s = {n / secs:,.0f} rows/s")

    warehouse = None if args.skip_bronze else Path(tempfile.mkdtemp()) / "wh"
    if warehouse is not None:
        n, secs = product(warehouse, p, args.batch_size, **{"snapshot.mode": "initial_only"})
        print(f"snapshot into bronze:     {n} rows in {secs:.1f} s = {n / secs:,.0f} rows/s")

    figures: dict[str, list[float]] = {}   # figure -> its value in each run
    after = after_snapshot
    next_id = args.rows + 1
    for run in range(1, args.runs + 1):
        print(f"run {run} of {args.runs} (load average {' '.join(open('/proc/loadavg').read().split()[:3])})")
        after = streaming(conn, p, after, next_id, args, warehouse, figures)
        next_id += args.stream_rows // 2
        after = single_row_transactions(conn, p, after, next_id, args.single_row_txns, warehouse, args.batch_size,
                                        figures)
        next_id += args.single_row_txns
    conn.close()
    if warehouse is not None:
        shutil.rmtree(warehouse.parent, ignore_errors=True)
    if args.runs > 1:
        print(f"medians of {args.runs} runs:")
        for name, values in figures.items():
            print(f"  {name:<34} {statistics.median(values):>10,.0f}   ({' / '.join(f'{v:,.0f}' for v in values)})")
    print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:,.0f} MB")


def note(figures: dict[str, list[float]], name: str, value: float) -> None:
    figures.setdefault(name, []).append(value)


def streaming(conn, p: dict, start: ResumeState, first_id: int, args: argparse.Namespace, warehouse: Path | None,
              figures: dict[str, list[float]]) -> ResumeState:
    """Section 2 over a new workload after `start`: multi-row INSERTs of new rows from `first_id`, then multi-row
    UPDATEs; returns where the connector alone ended."""
    with conn.cursor() as cur:
        half = args.stream_rows // 2
        for lo in range(0, half, 10_000):
            cur.execute(f"INSERT INTO {DB}.t SELECT seq, seq, 'x', 1.5, NOW(3), 2.5, 1, CURDATE() "
                        f"FROM {DB}.seq_{first_id + lo}_to_{first_id + min(half, lo + 10_000) - 1}")
        for lo in range(1, half + 1, 10_000):
            cur.execute(f"UPDATE {DB}.t SET a = a + 1 WHERE id BETWEEN {lo} AND {min(half, lo + 9_999)}")
    c = MySqlConnector(settings(p, 410_003))
    c.restore_schema_history([])
    with cpu_use() as use:
        n, secs, after = drain(c, start)
    connector_rate = n / secs
    note(figures, "streaming, connector only", connector_rate)
    print(f"streaming, connector only: {n} events in {secs:.1f} s = {connector_rate:,.0f} events/s "
          f"({use.text(secs)}; {use.per_event(n)})")
    from ingest.connectors.mysql.streaming import MySqlStreamingSource

    # the generic row path (mysql-replication's decoding + codec.row), for comparison
    MySqlStreamingSource.fast_rows = False
    c = MySqlConnector(settings(p, 410_006))
    c.restore_schema_history([])
    n, secs, _ = drain(c, start)
    MySqlStreamingSource.fast_rows = True
    note(figures, "streaming, generic rows", n / secs)
    print(f"streaming, generic rows:   {n} events in {secs:.1f} s = {n / secs:,.0f} events/s")
    if warehouse is not None:
        with cpu_use() as use:
            n, secs = product(warehouse, p, args.batch_size)
        note(figures, "streaming into bronze", n / secs)
        print(f"streaming into bronze:     {n} events in {secs:.1f} s = {n / secs:,.0f} events/s (target >= 100,000; "
              f"{use.per_event(n)}, run_source's start included)")
    position = start.position
    rows, secs = bare_loop(p, position["file"], int(position["pos"]), 410_005)
    bare_rate = rows / secs
    note(figures, "bare mysql-replication", bare_rate)
    print(f"bare mysql-replication:    {rows} rows in {secs:.1f} s = {bare_rate:,.0f} rows/s "
          f"(connector/bare = {connector_rate / bare_rate:.2f})")
    tool_secs = binlog_tool(p, position["file"], int(position["pos"]))
    if tool_secs:
        note(figures, "mariadb-binlog (streaming range)", rows / tool_secs)
        print(f"mariadb-binlog -vv >/dev/null: {tool_secs:.1f} s = {rows / tool_secs:,.0f} rows/s "
              f"(connector/tool = {connector_rate / (rows / tool_secs):.2f})")
    return after


def single_row_transactions(conn, p: dict, start: ResumeState, first_id: int, count: int, warehouse: Path | None,
                            batch_size: int, figures: dict[str, list[float]]) -> ResumeState:
    """Section 3: `count` one-row INSERT transactions after `start` (the streaming section's end), streamed by the
    connector alone and into bronze; returns where the connector alone ended."""
    began = time.perf_counter()
    with conn.cursor() as cur:
        for i in range(first_id, first_id + count):
            cur.execute(f"INSERT INTO {DB}.t VALUES (%s, %s, %s, %s, '2024-01-01 00:00:01.500', 1.5, 3, '2020-01-01')",
                        (i, i * 7, f"name-{i}", i / 100))
    print(f"single-row transactions: {count} autocommit INSERTs in {time.perf_counter() - began:.1f} s")
    c = MySqlConnector(settings(p, 410_008))
    c.restore_schema_history([])
    with cpu_use() as use:
        n, secs, after = drain(c, start)
    rate = n / secs
    note(figures, "single-row txns, connector only", rate)
    print(f"single-row txns, connector only: {n} events in {secs:.1f} s = {rate:,.0f} events/s "
          f"({use.text(secs)}; {use.per_event(n)})")
    if warehouse is not None:
        with cpu_use() as use:
            n, secs = product(warehouse, p, batch_size)
        rate = n / secs
        note(figures, "single-row txns into bronze", rate)
        print(f"single-row txns into bronze:     {n} events in {secs:.1f} s = {rate:,.0f} events/s "
              f"(target >= 30,000; {use.per_event(n)}, run_source's start included)")
    tool_secs = binlog_tool(p, start.position["file"], int(start.position["pos"]))
    if tool_secs:
        note(figures, "mariadb-binlog (single-row range)", count / tool_secs)
        print(f"mariadb-binlog -vv >/dev/null over the same range: {tool_secs:.1f} s = {count / tool_secs:,.0f} "
              f"rows/s (lakecdc/tool = {rate / (count / tool_secs):.2f})")
    return after


if __name__ == "__main__":
    main()
