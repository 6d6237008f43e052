"""Batch limits: the runner lands one Delta commit per --batch-size events or --batch-seconds, however often a
connector hands batches over (issue 17's commit storm: the MariaDB stream landed a batch each time its
binlog reader reached the end, ~10 per second).

The coalescing rules are tested with a clock the test moves; the end-to-end tests count the commits of a
known event stream on the real MariaDB and PostgreSQL with a time limit that cannot expire.
"""

from __future__ import annotations

import itertools
import threading
from pathlib import Path

import pytest

from ingest.bronze.contract import Batch, BatchLimits, BronzeEvent
from ingest.runner import BatchCoalescer, coalesced

_seqs = itertools.count()


def handover(n: int, caught_up: bool = False, ack: int | None = None) -> Batch:
    events = [BronzeEvent(topic="t", table_id="db.t", op="c", seq=f"{next(_seqs):012d}", key=None, value=None,
                          key_schema=None, value_schema=None, ts_ms=None, source_ts_ms=None, txn_id=None,
                          snapshot="false") for _ in range(n)]
    return Batch(events=events, caught_up=caught_up, ack=ack)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_handovers_are_merged_up_to_the_size_limit_when_time_cannot_expire():
    coalescer = BatchCoalescer(BatchLimits(max_events=50, max_seconds=5), clock=Clock())
    landed = [b for _ in range(30) for b in coalescer.add(handover(7, caught_up=True))] + coalescer.rest()
    # 7 hand-overs (49 events) fill a batch, the 8th would pass 50: 4 full batches, the rest at the end
    assert [len(b) for b in landed] == [49, 49, 49, 49, 14]
    seqs = [e.seq for b in landed for e in b.events]
    assert seqs == sorted(seqs) and len(set(seqs)) == 210


def test_a_handover_at_the_size_limit_lands_at_once():
    coalescer = BatchCoalescer(BatchLimits(max_events=10, max_seconds=5), clock=Clock())
    assert [len(b) for b in coalescer.add(handover(10))] == [10]
    assert coalescer.add(handover(4)) == []
    assert [len(b) for b in coalescer.add(handover(10))] == [4, 10]


def test_the_time_limit_counts_from_the_first_held_event():
    clock = Clock()
    coalescer = BatchCoalescer(BatchLimits(max_events=1000, max_seconds=5), clock=clock)
    assert [len(b) for b in coalescer.add(Batch(caught_up=True))] == [0]  # idle: passes through
    clock.now += 60  # a long idle time before the first event does not count
    landed = []
    for _ in range(8):
        landed += coalescer.add(handover(1, caught_up=True))
        clock.now += 1
    # events at t=0..7 s: the one handed over at t=5 s makes the batch 5 s old
    assert [len(b) for b in landed] == [6]
    assert [len(b) for b in coalescer.rest()] == [2]


def test_idle_handovers_keep_a_held_batch_and_their_ack_wins():
    clock = Clock()
    coalescer = BatchCoalescer(BatchLimits(max_events=100, max_seconds=5), clock=clock)
    assert coalescer.add(handover(3, ack=10)) == []
    assert coalescer.add(Batch(caught_up=True, ack=12)) == []
    assert coalescer.add(Batch(caught_up=True)) == []
    clock.now += 5
    [batch] = coalescer.add(Batch(caught_up=True))
    assert (len(batch), batch.ack, batch.caught_up) == (3, 12, True)


def test_a_run_until_caught_up_and_a_stop_request_land_what_is_held():
    coalescer = BatchCoalescer(BatchLimits(max_events=100, max_seconds=5), land_when_caught_up=True, clock=Clock())
    assert coalescer.add(handover(3)) == []
    assert [len(b) for b in coalescer.add(handover(2, caught_up=True))] == [5]
    continuous = BatchCoalescer(BatchLimits(max_events=100, max_seconds=5), clock=Clock())
    assert continuous.add(handover(3, caught_up=True)) == []
    assert [len(b) for b in continuous.add(handover(1), stop=True)] == [4]


def test_coalesced_closes_the_connector_generator():
    closed = []

    def connector_batches():
        try:
            while True:
                yield handover(5)
        finally:
            closed.append(True)

    batches = coalesced(connector_batches(), BatchCoalescer(BatchLimits(max_events=20, max_seconds=5), clock=Clock()))
    assert len(next(batches)) == 20
    batches.close()
    assert closed == [True]


# ---------------------------------------------------------------------------------------- end to end

def _run_continuously(config_path: Path, source: str, total: int, limits: BatchLimits) -> threading.Thread:
    from ingest.config import load_config
    from ingest.runner import run_source

    config = load_config(config_path)  # the same engine settings as the `engine` fixture: its engine is used
    thread = threading.Thread(target=run_source, args=(config, source),
                              kwargs={"max_events": total, "limits": limits, "progress": False}, daemon=True)
    thread.start()
    return thread


@pytest.fixture(autouse=True)
def _thread_errors(monkeypatch):
    """An exception in the runner thread fails the test (instead of only being printed)."""
    errors: list[BaseException] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: errors.append(args.exc_value))
    yield
    assert not errors, errors


def _event_batches(warehouse: Path, source: str) -> list[int]:
    """Rows per S_events commit, in commit order, read with delta-rs (one add action per partition file)."""
    from deltalake import DeltaTable

    table = DeltaTable(str(warehouse / "bronze" / f"{source}_events"))
    counts = table.to_pyarrow_table(columns=["batch_id"]).column("batch_id").value_counts().to_pylist()
    return [c["counts"] for c in sorted(counts, key=lambda c: c["values"])]


def _assert_commits_respect_limit(sizes: list[int], total: int, max_events: int) -> None:
    assert sum(sizes) >= total
    assert all(size <= max_events for size in sizes), sizes
    # no two neighbouring commits could have been one: the time limit cannot expire, so the only reason to
    # land a batch is that the next hand-over would pass the size limit
    assert all(a + b > max_events for a, b in itertools.pairwise(sizes)), sizes


def _stream_and_count_commits(config: Path, warehouse: Path, source: str, conn, table: str) -> None:
    """`lakecdc run --max-events 400 --batch-size 60` with a time limit that cannot expire, while one-row
    transactions arrive in rounds with a pause between them, so that the connector reaches the end of the log
    many times (each time it hands a batch over); the rounds go on until the runner has landed its events and
    stopped (the last held batch lands only when the next hand-over fills it)."""
    total, size = 400, 60
    runner = _run_continuously(config, source, total, BatchLimits(max_events=size, max_seconds=3600))
    n = 0
    with conn.cursor() as cur:
        while runner.is_alive() and n < 20_000:
            for _ in range(10):
                n += 1
                cur.execute(f"INSERT INTO {table} VALUES (%s, 'x')", (n,))
            runner.join(0.3)
    assert not runner.is_alive()
    _assert_commits_respect_limit(_event_batches(warehouse, source), total, size)


@pytest.mark.slow
@pytest.mark.integration
def test_mariadb_stream_lands_one_commit_per_batch_size(tmp_path: Path, warehouse: Path, engine, mariadb_params: dict):
    import pymysql

    db = "batch_limits_maria"
    conn = pymysql.connect(**mariadb_params, autocommit=True)
    with conn.cursor() as cur:
        cur.execute(f"DROP DATABASE IF EXISTS {db}")
        cur.execute(f"CREATE DATABASE {db}")
        cur.execute(f"CREATE TABLE {db}.t (id INT PRIMARY KEY, v VARCHAR(20))")
    p = mariadb_params
    config = tmp_path / "lakecdc.yml"
    config.write_text(f"engine:\n  warehouse: {warehouse}\nsources:\n  maria:\n    connector: mariadb\n"
                      f"    database.hostname: {p['host']}\n    database.port: {p['port']}\n"
                      f"    database.user: {p['user']}\n    database.password: '{p['password']}'\n"
                      f"    database.server.id: 6177\n    topic.prefix: bl\n    database.include.list: {db}\n")
    _stream_and_count_commits(config, warehouse, "maria", conn, f"{db}.t")


@pytest.mark.slow
@pytest.mark.integration
def test_postgres_stream_lands_one_commit_per_batch_size(tmp_path: Path, warehouse: Path, engine, pg_dsn: str):
    import psycopg2

    schema = "batch_limits_pg"
    conn = psycopg2.connect(pg_dsn)
    conn.autocommit = True
    dsn = dict(part.split("=", 1) for part in pg_dsn.split())
    with conn.cursor() as cur:
        cur.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        cur.execute(f"CREATE SCHEMA {schema}")
        cur.execute(f"CREATE TABLE {schema}.t (id INT PRIMARY KEY, v TEXT)")
        cur.execute("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = 'bl_slot'")
    config = tmp_path / "lakecdc.yml"
    config.write_text(f"engine:\n  warehouse: {warehouse}\nsources:\n  pgsrc:\n    connector: postgresql\n"
                      f"    database.hostname: {dsn.get('host', '127.0.0.1')}\n    database.port: {dsn['port']}\n"
                      f"    database.user: {dsn.get('user', 'postgres')}\n    database.dbname: {dsn['dbname']}\n"
                      f"    topic.prefix: bl\n    schema.include.list: {schema}\n    slot.name: bl_slot\n"
                      f"    publication.name: bl_pub\n    poll.interval.ms: 50\n")
    try:
        _stream_and_count_commits(config, warehouse, "pgsrc", conn, f"{schema}.t")
    finally:
        with conn.cursor() as cur:
            cur.execute("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots "
                        "WHERE slot_name = 'bl_slot' AND NOT active")
        conn.close()
