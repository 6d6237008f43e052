"""Incremental snapshots of the PostgreSQL source (signals, DBLog watermarks), against the real server while a
workload updates, deletes and re-keys the same rows: `lakecdc signal execute-snapshot` starts it, `lakecdc run` is
killed with SIGKILL at least 5 times while chunks land (each run resumes at the chunk after the last one landed),
and bronze replayed in seq order equals the source: no snapshot read rolled a row back, no row is missing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
import yaml

from tests.support.pg import assert_same_rows, execute, query
from tests.support.pg_e2e import (
    ROOT,
    SCHEMA,
    SOURCE,
    Workload,
    bronze_events,
    check_notifications,
    check_reads_agree,
    check_snapshot_marks,
    kill_while_chunks_land,
    prepare_source,
    read_three_ways,
    replay,
    resume_position,
    snapshot_by_surrogate,
    source_rows,
    start_run,
    write_config,
)

pytestmark = [pytest.mark.integration, pytest.mark.slow]

SIGNALS = "public.lakecdc_test_signal"


def incremental_config(tmp_path: Path, pg_dsn: str, chunk: int) -> Path:
    """The e2e source without an initial snapshot (so every read event comes from the incremental snapshot),
    with a signalling table and small chunks."""
    path = write_config(tmp_path, pg_dsn)
    config = yaml.safe_load(path.read_text())
    config["sources"][SOURCE].update({"snapshot.mode": "no_data", "signal.data.collection": SIGNALS,
                                      "incremental.snapshot.chunk.size": chunk})
    path.write_text(yaml.safe_dump(config))
    return path


def lakecdc(config: Path, *args: str) -> str:
    result = subprocess.run([sys.executable, "-m", "ingest.cli", "--config", str(config), *args], cwd=ROOT,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def incremental_state(warehouse: Path) -> dict | None:
    return (resume_position(warehouse) or {}).get("incremental")


@pytest.mark.parametrize(("kind", "rows", "chunk"), [("incremental", 10_000, 100), ("blocking", 20_000, 50)])
def test_a_snapshot_while_rows_change_and_runs_are_killed(pg_dsn: str, tmp_path: Path, kind: str, rows: int,
                                                         chunk: int) -> None:
    """An incremental snapshot (chunks between watermarks while the stream goes on) or a blocking one (the stream
    waits at a transaction boundary while the tables are read, then goes on from there) of t1 and t3; `lakecdc run`
    is SIGKILLed 5 times while chunks land, each run going on at the chunk after the last one landed; bronze
    replayed equals the source, no seq twice, reads marked as the snapshot type marks them."""
    rows = int(os.environ.get("LAKECDC_SNAPSHOT_ROWS", rows))   # make soak-snapshots: 200,000
    dsn = prepare_source(pg_dsn, rows)
    execute(dsn, f"DROP TABLE IF EXISTS {SIGNALS}",
            f"CREATE TABLE {SIGNALS} (id varchar(64) PRIMARY KEY, type varchar(32) NOT NULL, data varchar(2048))")
    config = incremental_config(tmp_path, pg_dsn, chunk=chunk)
    warehouse, log = tmp_path / "warehouse", tmp_path / "run.log"

    def state() -> dict | None:
        position = incremental_state(warehouse)
        return (position or {}).get("blocking") if kind == "blocking" else position

    workload = Workload(dsn, seed=17)
    workload.start()
    while not workload.ops:
        time.sleep(0.05)
    lakecdc(config, "run", "--source", SOURCE, "--until-caught-up", "--quiet")   # the slot, the first changes
    try:
        out = lakecdc(config, "signal", "execute-snapshot", "--type", kind, "--source", SOURCE, "--tables",
                      f"{SCHEMA}.t1", f"{SCHEMA}\\.t3")
        assert "signal execute-snapshot written" in out, out
        kill_while_chunks_land(config, log, warehouse, 5, blocking=kind == "blocking")
    finally:
        workload.stop_flag.set()
        workload.join(timeout=30)
    assert workload.error is None, workload.error
    assert state() is not None, "the snapshot ended before the kills: make the chunks smaller"
    # the last run: it is caught up only once the snapshot is over
    assert start_run(config, log).wait(timeout=900) == 0, log.read_text()[-3000:]
    assert incremental_state(warehouse) is None

    events = bronze_events(warehouse)
    seqs = [e["seq"] for e in events]
    assert len(seqs) == len(set(seqs)), "a seq landed twice"
    reads = sorted((e for e in events if e["op"] == "r"), key=lambda e: e["seq"])
    assert {e["table_id"].split(".")[-1] for e in reads} == {"t1", "t3"}
    check_snapshot_marks(kind, [json.loads(e["value"])["source"]["snapshot"] for e in reads])
    check_notifications(kind, events)
    replayed, source = replay(events), source_rows(dsn)
    for table in ("t1", "t3"):   # every row: read by the snapshot or changed since, never rolled back
        assert_same_rows({str(k): v for k, v in replayed[table].items()}, {str(k): v for k, v in source[table].items()})
    assert len(replayed["t1"]) > rows * 0.9
    if kind == "blocking":
        # as Debezium's (measured, docs/signals.md): lsn and txId of the last change streamed before the pause,
        # sequence [null, lsn]
        sources = [json.loads(e["value"])["source"] for e in reads]
        assert all(s["txId"] is not None and s["sequence"] == json.dumps([None, str(s["lsn"])], separators=(",", ":"))
                   for s in sources), sources[0]
        return
    # a signal that cannot be carried out is a log line, not a crash
    lakecdc(config, "signal", "execute-snapshot", "--source", SOURCE, "--tables", "no_such.table")
    execute(dsn, f"INSERT INTO {SIGNALS} VALUES ('bad-1', 'execute-snapshot', '{{not json')")
    out = subprocess.run([sys.executable, "-m", "ingest.cli", "--config", str(config), "run", "--source", SOURCE,
                          "--until-caught-up"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "'no_such.table' is not a captured table" in out.stderr, out.stderr[-3000:]
    assert "data is not JSON" in out.stderr, out.stderr[-3000:]
    assert query(dsn, f"SELECT count(*) FROM {SIGNALS} WHERE type = 'snapshot-window-close'")[0][0] >= 100


@pytest.mark.parametrize("kind", ["incremental", "blocking"])
def test_a_table_added_to_the_include_list_at_run_time_gets_its_rows(pg_dsn: str, tmp_path: Path,
                                                                      kind: str) -> None:
    """Issue 16: a source captures t1 only; t3 is added to table.include.list and the run restarted (the filtered
    publication gains it), then `execute-snapshot` reads its existing rows while its changes stream: bronze holds
    t3 exactly as the source has it, and t1 went on streaming. The blocking snapshot reads t3 through a whole
    SELECT (Debezium's form of its additional condition) that leaves out row 50."""
    dsn = prepare_source(pg_dsn, 200)
    execute(dsn, f"DROP TABLE IF EXISTS {SIGNALS}",
            f"CREATE TABLE {SIGNALS} (id varchar(64) PRIMARY KEY, type varchar(32) NOT NULL, data varchar(2048))")
    config = incremental_config(tmp_path, pg_dsn, chunk=30)
    settings = yaml.safe_load(config.read_text())
    settings["sources"][SOURCE].update({"snapshot.mode": "initial", "table.include.list": f"{SCHEMA}\\.t1"})
    config.write_text(yaml.safe_dump(settings))
    warehouse = tmp_path / "warehouse"
    lakecdc(config, "run", "--source", SOURCE, "--until-caught-up", "--quiet")
    execute(dsn, f"UPDATE {SCHEMA}.t3 SET v = 'before' WHERE id <= 10", f"DELETE FROM {SCHEMA}.t3 WHERE id > 90")
    settings["sources"][SOURCE]["table.include.list"] = f"{SCHEMA}\\.t1,{SCHEMA}\\.t3"
    config.write_text(yaml.safe_dump(settings))
    lakecdc(config, "run", "--source", SOURCE, "--until-caught-up", "--quiet")   # t3 captured from here on
    execute(dsn, f"UPDATE {SCHEMA}.t3 SET v = 'after' WHERE id BETWEEN 5 AND 15", f"UPDATE {SCHEMA}.t1 SET n = 1")
    condition = [] if kind == "incremental" else [
        "--condition", f"{SCHEMA}.t3=SELECT * FROM {SCHEMA}.t3 WHERE id <> 50 ORDER BY v DESC"]
    lakecdc(config, "signal", "execute-snapshot", "--type", kind, "--source", SOURCE, "--tables", f"{SCHEMA}.t3",
            *condition)
    execute(dsn, f"INSERT INTO {SCHEMA}.t3 VALUES (500, 'new')", f"DELETE FROM {SCHEMA}.t3 WHERE id = 1")
    lakecdc(config, "run", "--source", SOURCE, "--until-caught-up", "--quiet")
    events = bronze_events(warehouse)
    state, source = replay(events), source_rows(dsn)
    if kind == "blocking":
        source["t3"].pop(50)   # left out by the SELECT, never changed
    assert state["t3"] == source["t3"] and len(state["t3"]) == (90 if kind == "incremental" else 89)
    assert state["t1"] == source["t1"]
    marks = {e["table_id"].split(".")[-1]: set() for e in events}
    for e in events:
        if e["op"] == "r":
            marks[e["table_id"].split(".")[-1]].add(json.loads(e["value"])["source"]["snapshot"])
    assert marks["t3"] == ({"incremental"} if kind == "incremental" else {"first", "true", "last"}), marks["t3"]
    assert "incremental" not in marks["t1"]


def test_signals_from_the_kafka_channel(pg_dsn: str, kafka_bootstrap: str, tmp_path: Path) -> None:
    """Issue 16: signal.enabled.channels=kafka: `lakecdc signal` publishes to the signal topic (partition 0, keyed by
    topic.prefix); the run reads the topic and carries out a blocking snapshot of t3; another connector's record and
    a broken one are skipped with a log line; a later run does not carry the signal out again (the offset read to is
    in bronze)."""
    from confluent_kafka import Producer

    prepare_source(pg_dsn, 50)
    topic = f"lakecdc-signal-{uuid.uuid4().hex[:8]}"   # the broker lives as long as the test services
    config = incremental_config(tmp_path, pg_dsn, chunk=30)
    settings = yaml.safe_load(config.read_text())
    del settings["sources"][SOURCE]["signal.data.collection"]   # a blocking snapshot needs no signalling table
    settings["sources"][SOURCE].update({"signal.enabled.channels": "kafka", "signal.kafka.topic": topic,
                                        "signal.kafka.bootstrap.servers": kafka_bootstrap})
    config.write_text(yaml.safe_dump(settings))
    warehouse = tmp_path / "warehouse"
    lakecdc(config, "run", "--source", SOURCE, "--until-caught-up", "--quiet")
    producer = Producer({"bootstrap.servers": kafka_bootstrap})
    producer.produce(topic, key=b"other-connector", partition=0, value=json.dumps(
        {"id": "x", "type": "execute-snapshot", "data": {"data-collections": [f"{SCHEMA}.t1"], "type": "blocking"}}))
    producer.produce(topic, key=b"e2e", partition=0, value=b"{not json")   # keyed by the topic.prefix
    assert producer.flush(30) == 0
    out = lakecdc(config, "signal", "execute-snapshot", "--type", "blocking", "--source", SOURCE, "--tables",
                  f"{SCHEMA}.t3")
    assert "signal execute-snapshot written" in out, out
    run = subprocess.run([sys.executable, "-m", "ingest.cli", "--config", str(config), "run", "--source", SOURCE,
                          "--until-caught-up"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "kafka signal at offset 1: not JSON" in run.stderr, run.stderr[-3000:]

    def reads() -> dict[str, int]:
        counts: dict[str, int] = {}
        for e in bronze_events(warehouse):
            if e["op"] == "r":
                counts[e["table_id"].split(".")[-1]] = counts.get(e["table_id"].split(".")[-1], 0) + 1
        return counts

    assert reads() == {"t3": 100}   # not t1: that record was another connector's
    assert (incremental_state(warehouse) or {}).get("signal_offset") == 2
    lakecdc(config, "run", "--source", SOURCE, "--until-caught-up", "--quiet")
    assert reads() == {"t3": 100}   # read past: not carried out twice


TYPES_TABLE = """CREATE TABLE {schema}.typed (
    id int PRIMARY KEY, b boolean, i2 smallint, i8 bigint, n numeric(12, 3), nn numeric, r real, d double precision,
    m money, c5 char(5), vc varchar(10), t text, ba bytea, dt date, tm time, tmz timetz, ts timestamp(3),
    tsz timestamptz, iv interval, u uuid, j json, jb jsonb, x xml, ip inet, nw cidr, mac macaddr, bt bit(4),
    vb varbit(8), ia int[], ta text[], pt point)"""

TYPES_ROWS = """INSERT INTO {schema}.typed VALUES
    (1, true, -3, 9007199254740993, 12345.678, 1.5e-7, 1.25, -2.5e300, 12.34, 'ab', 'x y', 'tab\tnew
line "q" \\\\', '\\x00ff10', '2024-02-29', '23:59:59.999999', '01:02:03+05:30', '2024-01-02 03:04:05.678',
     '2024-01-02 03:04:05.678901+02', '1 year 2 mons 3 days 04:05:06.7', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',
     '{{"a": [1, 2.50]}}', '{{"b": null, "a": 1}}', '<r a="1">t</r>', '192.168.0.1', '10.0.0.0/8',
     '08:00:2b:01:02:03', B'1010', B'101', '{{1,NULL,3}}', '{{"a,b",NULL,"c\\"d"}}', '(1.5,-2)'),
    (2, false, NULL, NULL, NULL, 'NaN', 'Infinity', '-Infinity', NULL, '', '', '', '', '0001-01-01', '00:00', NULL,
     '1970-01-01 00:00:00', '1970-01-01 00:00:00+00', '-1 days', NULL, 'null', '[]', NULL, '::1', '::/0', NULL,
     B'0000', B'', '{{}}', '{{}}', NULL),
    (3, NULL, 32767, -9223372036854775808, -0.001, 0, 0, 0, -0.01, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
     NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)"""


def test_snapshot_reads_carry_the_initial_snapshots_values(pg_dsn: str, tmp_path: Path) -> None:
    """The rows of a table of many types, read by the initial snapshot (COPY), by an incremental and by a blocking
    snapshot: every read event's `after` and key are the same text, whichever snapshot read it (a read that
    converted a value differently, e.g. a boolean from `::text`'s 'true', would change silver)."""
    dsn = prepare_source(pg_dsn, 1)
    execute(dsn, TYPES_TABLE.format(schema=SCHEMA), TYPES_ROWS.format(schema=SCHEMA),
            f"DROP TABLE IF EXISTS {SIGNALS}",
            f"CREATE TABLE {SIGNALS} (id varchar(64) PRIMARY KEY, type varchar(32) NOT NULL, data varchar(2048))")
    config = incremental_config(tmp_path, pg_dsn, chunk=2)
    settings = yaml.safe_load(config.read_text())
    settings["sources"][SOURCE].update({"snapshot.mode": "initial", "table.include.list": f"{SCHEMA}\\.typed"})
    config.write_text(yaml.safe_dump(settings))
    read_three_ways(config, SOURCE, f"{SCHEMA}.typed")
    check_reads_agree(bronze_events(tmp_path / "warehouse"), 3)


def test_a_surrogate_key_reads_a_table_without_primary_key(pg_dsn: str, tmp_path: Path) -> None:
    """Issue 16: `surrogate-key` orders the chunks of a table without primary key (a NOT NULL column with a unique
    index of its own): an incremental and a blocking snapshot each read every row once; a nullable column is refused
    with a log line."""
    dsn = prepare_source(pg_dsn, 1)
    execute(dsn, f"CREATE TABLE {SCHEMA}.k (v text, code int NOT NULL UNIQUE, maybe int UNIQUE)",
            f"INSERT INTO {SCHEMA}.k SELECT 'v' || g, 1000 - g, g FROM generate_series(1, 50) g",
            f"DROP TABLE IF EXISTS {SIGNALS}",
            f"CREATE TABLE {SIGNALS} (id varchar(64) PRIMARY KEY, type varchar(32) NOT NULL, data varchar(2048))")
    config = incremental_config(tmp_path, pg_dsn, chunk=7)
    settings = yaml.safe_load(config.read_text())
    settings["sources"][SOURCE]["table.include.list"] = f"{SCHEMA}\\.k"
    config.write_text(yaml.safe_dump(settings))
    snapshot_by_surrogate(config, SOURCE, f"{SCHEMA}.k", "maybe", "may hold NULL in 'maybe'")
