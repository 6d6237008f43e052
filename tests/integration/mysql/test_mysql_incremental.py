"""Incremental snapshots of the MariaDB source (signals, DBLog watermarks), against the real server while a workload
updates, deletes, inserts and re-keys the same rows: `lakecdc signal execute-snapshot` starts it, `lakecdc run` is
killed with SIGKILL at least 5 times while chunks land (each run resumes at the chunk after the last one landed),
and bronze replayed in seq order equals the source: no snapshot read rolled a row back, no row is missing."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import threading
import time
from pathlib import Path

import pymysql
import pytest
import yaml

from tests.support.pg import assert_same_rows
from tests.support.pg_e2e import (
    ROOT,
    bronze_events,
    check_notifications,
    check_reads_agree,
    check_snapshot_marks,
    kill_while_chunks_land,
    read_three_ways,
    resume_position,
    snapshot_by_surrogate,
    start_run,
)

pytestmark = [pytest.mark.integration, pytest.mark.slow]

DB, SOURCE = "mysqlconn_inc", "minc"
SIGNALS = f"{DB}.lakecdc_signal"


def prepare(conn, rows: int) -> None:
    with conn.cursor() as cur:
        cur.execute(f"DROP DATABASE IF EXISTS {DB}")
        cur.execute(f"CREATE DATABASE {DB}")
        cur.execute(f"CREATE TABLE {DB}.t1 (id INT NOT NULL PRIMARY KEY, v VARCHAR(40), n INT)")
        cur.execute(f"CREATE TABLE {DB}.t2 (a INT NOT NULL, b VARCHAR(10) NOT NULL, v INT, PRIMARY KEY (a, b))")
        cur.execute(f"CREATE TABLE {DB}.t3 (id INT NOT NULL PRIMARY KEY, v VARCHAR(40))")  # never snapshotted
        cur.execute(f"CREATE TABLE {SIGNALS} (id VARCHAR(64) PRIMARY KEY, type VARCHAR(32) NOT NULL, "
                    "data VARCHAR(2048))")
        for start in range(1, rows + 1, 1000):
            ids = range(start, min(rows + 1, start + 1000))
            cur.execute(f"INSERT INTO {DB}.t1 VALUES " + ",".join(f"({i}, 'v{i}', {i})" for i in ids))
            cur.execute(f"INSERT INTO {DB}.t2 VALUES " + ",".join(f"({i % 50}, 'k{i}', {i})" for i in ids))
        cur.execute(f"INSERT INTO {DB}.t3 VALUES (1, 'x')")


class Workload(threading.Thread):
    """Small random transactions on t1 and t2 (updates, deletes, inserts, primary-key changes) until stopped."""

    def __init__(self, params: dict, rows: int, seed: int) -> None:
        super().__init__(daemon=True)
        self.params, self.rows, self.rng = params, rows, random.Random(seed)
        self.stop_flag = threading.Event()
        self.error: BaseException | None = None
        self.ops = 0

    def run(self) -> None:
        try:
            conn = pymysql.connect(**self.params, autocommit=True)
            next_id = self.rows + 1
            with conn.cursor() as cur:
                while not self.stop_flag.is_set():
                    roll, key = self.rng.random(), self.rng.randrange(1, next_id)
                    if roll < 0.45:
                        cur.execute(f"UPDATE {DB}.t1 SET v = CONCAT('u', n), n = n + 1 WHERE id = {key}")
                    elif roll < 0.6:
                        cur.execute(f"DELETE FROM {DB}.t1 WHERE id = {key}")
                    elif roll < 0.75:
                        next_id += 1
                        cur.execute(f"INSERT INTO {DB}.t1 VALUES ({next_id}, 'new', 0)")
                    elif roll < 0.82:   # a primary-key change: delete + create in the stream
                        next_id += 1
                        cur.execute(f"UPDATE IGNORE {DB}.t1 SET id = {next_id} WHERE id = {key}")
                    elif roll < 0.95:
                        cur.execute(f"UPDATE {DB}.t2 SET v = v + 1 WHERE a = {key % 50} LIMIT 3")
                    else:
                        cur.execute(f"DELETE FROM {DB}.t2 WHERE a = {key % 50} AND b = 'k{key}'")
                    self.ops += 1
                    time.sleep(0.002)
            conn.close()
        except BaseException as exc:  # surfaced by the test
            self.error = exc


def write_config(tmp_path: Path, params: dict, chunk: int) -> Path:
    path = tmp_path / "lakecdc.yml"
    path.write_text(yaml.safe_dump({
        "engine": {"profile": "local", "warehouse": str(tmp_path / "warehouse")},
        "sources": {SOURCE: {
            "connector": "mariadb", "database.hostname": params["host"], "database.port": params["port"],
            "database.user": params["user"], "database.password": params["password"], "database.server.id": 341_001,
            "topic.prefix": SOURCE, "table.include.list": f"{DB}\\.t.*", "snapshot.mode": "no_data",
            "signal.data.collection": SIGNALS, "incremental.snapshot.chunk.size": chunk}}}))
    return path


def lakecdc(config: Path, *args: str) -> subprocess.CompletedProcess[str]:
    result = subprocess.run([sys.executable, "-m", "ingest.cli", "--config", str(config), *args], cwd=ROOT,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    return result


def source_rows(conn, tables: tuple[str, ...] = ("t1", "t2")) -> dict[str, dict[str, dict]]:
    keys_of = {"t2": ("a", "b")}
    out: dict[str, dict[str, dict]] = {}
    with conn.cursor(pymysql.cursors.DictCursor) as cur:
        for table in tables:
            keys = keys_of.get(table, ("id",))
            cur.execute(f"SELECT * FROM {DB}.{table}")
            out[table] = {json.dumps({k: r[k] for k in keys}, separators=(",", ":")): r for r in cur.fetchall()}
    return out


def replay(events: list[dict]) -> dict[str, dict[str, dict]]:
    state: dict[str, dict[str, dict]] = {"t1": {}, "t2": {}, "t3": {}}
    for e in sorted(events, key=lambda e: e["seq"]):
        table = e["table_id"].split(".")[-1]
        if table not in state:
            continue
        if e["op"] in ("c", "u", "r"):
            state[table][e["key"]] = json.loads(e["value"])["after"]
        elif e["op"] == "d":
            state[table].pop(e["key"], None)
    return state


@pytest.mark.parametrize(("kind", "rows", "chunk"), [("incremental", 6_000, 100), ("blocking", 15_000, 50),
                                                     ("read-only", 6_000, 100)])
def test_a_snapshot_while_rows_change_and_runs_are_killed(mariadb_params: dict, tmp_path: Path, kind: str, rows: int,
                                                         chunk: int) -> None:
    """An incremental snapshot (chunks between watermarks while the binlog streams), its read-only variant (no
    watermark rows: each chunk read in a consistent snapshot, emitted when the stream reaches that snapshot's binlog
    position) or a blocking one (the binlog read stops at a transaction boundary while the tables are read, then goes
    on from there) of t1 and t2 (a two-column key); `lakecdc run` is SIGKILLed 5 times while chunks land, each run
    going on at the chunk after the last one landed; bronze replayed equals the source, no seq twice, reads marked as
    the snapshot type marks them."""
    rows = int(os.environ.get("LAKECDC_SNAPSHOT_ROWS", rows))   # make soak-snapshots: 200,000
    conn = pymysql.connect(**mariadb_params, autocommit=True)
    prepare(conn, rows)
    config = write_config(tmp_path, mariadb_params, chunk=chunk)
    if kind == "read-only":
        settings = yaml.safe_load(config.read_text())
        settings["sources"][SOURCE]["read.only"] = True
        config.write_text(yaml.safe_dump(settings))
    signal_type = "blocking" if kind == "blocking" else "incremental"
    warehouse, log = tmp_path / "warehouse", tmp_path / "run.log"

    def state() -> dict | None:
        position = (resume_position(warehouse, SOURCE) or {}).get("incremental")
        return (position or {}).get("blocking") if kind == "blocking" else position

    lakecdc(config, "run", "--source", SOURCE, "--until-caught-up", "--quiet")   # the schema, no rows (no_data)
    workload = Workload(mariadb_params, rows, seed=23)
    workload.start()
    try:
        out = lakecdc(config, "signal", "execute-snapshot", "--type", signal_type, "--source", SOURCE, "--tables",
                      f"{DB}.t1", f"{DB}\\.t2").stdout
        assert "signal execute-snapshot written" in out, out
        kill_while_chunks_land(config, log, warehouse, 5, source=SOURCE, blocking=kind == "blocking")
    finally:
        workload.stop_flag.set()
        workload.join(timeout=30)
    assert workload.error is None, workload.error
    assert workload.ops > 0
    assert state() is not None, "the snapshot ended before the kills: make the chunks smaller"
    if kind != "blocking":
        # the last run in snapshot.mode=recovery (the schema history rebuilt at the stored position): it goes on
        # with the snapshot under way
        settings = yaml.safe_load(config.read_text())
        settings["sources"][SOURCE]["snapshot.mode"] = "recovery"
        config.write_text(yaml.safe_dump(settings))
    # the last run is caught up only once the snapshot is over
    assert start_run(config, log, source=SOURCE).wait(timeout=900) == 0, log.read_text()[-3000:]
    assert state() is None

    events = bronze_events(warehouse, SOURCE)
    seqs = [e["seq"] for e in events]
    assert len(seqs) == len(set(seqs)), "a seq landed twice"
    reads = sorted((e for e in events if e["op"] == "r"), key=lambda e: e["seq"])
    assert {e["table_id"].split(".")[-1] for e in reads} == {"t1", "t2"}
    check_snapshot_marks(signal_type, [json.loads(e["value"])["source"]["snapshot"] for e in reads])
    check_notifications(signal_type, events)
    replayed, source = replay(events), source_rows(conn)
    for table in ("t1", "t2"):   # every row: read by the snapshot or changed since, never rolled back
        assert_same_rows({str(k): v for k, v in replayed[table].items()}, {str(k): v for k, v in source[table].items()})
    assert len(replayed["t1"]) > rows * 0.9
    if kind == "read-only":   # the connector wrote nothing: no watermark rows
        with conn.cursor() as cur:
            cur.execute(f"SELECT count(*) FROM {SIGNALS} WHERE type LIKE 'snapshot-window-%'")
            assert cur.fetchone()[0] == 0
    if kind != "incremental":
        conn.close()
        return
    # a signal that cannot be carried out is a log line, not a crash
    lakecdc(config, "signal", "execute-snapshot", "--source", SOURCE, "--tables", "no_such.table")
    with conn.cursor() as cur:
        cur.execute(f"INSERT INTO {SIGNALS} VALUES ('bad-1', 'execute-snapshot', '{{not json')")
        cur.execute(f"SELECT count(*) FROM {SIGNALS} WHERE type = 'snapshot-window-close'")
        closes = cur.fetchone()[0]
    out = subprocess.run([sys.executable, "-m", "ingest.cli", "--config", str(config), "run", "--source", SOURCE,
                          "--until-caught-up"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "'no_such.table' is not a captured table" in out.stderr, out.stderr[-3000:]
    assert "data is not JSON" in out.stderr, out.stderr[-3000:]
    assert closes >= (rows // 100) + 1
    conn.close()


@pytest.mark.parametrize("kind", ["incremental", "blocking"])
def test_a_table_added_to_the_include_list_at_run_time_gets_its_rows(mariadb_params: dict, tmp_path: Path,
                                                                      kind: str) -> None:
    """Issue 16: a source captures t1 only; t3 is added to table.include.list and the run restarted, then
    `execute-snapshot` reads its existing rows while its changes stream: bronze holds t3 exactly as the source has
    it, and t1 went on streaming. The blocking snapshot reads t3 through a whole SELECT (Debezium's form of its
    additional condition) that leaves out row 50."""
    conn = pymysql.connect(**mariadb_params, autocommit=True)
    prepare(conn, 200)
    config = write_config(tmp_path, mariadb_params, chunk=30)
    settings = yaml.safe_load(config.read_text())
    settings["sources"][SOURCE].update({"snapshot.mode": "initial", "table.include.list": f"{DB}\\.t1"})
    config.write_text(yaml.safe_dump(settings))
    with conn.cursor() as cur:
        cur.execute(f"INSERT INTO {DB}.t3 SELECT seq, CONCAT('x', seq) FROM {DB}.seq_2_to_120")
    lakecdc(config, "run", "--source", SOURCE, "--until-caught-up", "--quiet")
    with conn.cursor() as cur:
        cur.execute(f"UPDATE {DB}.t3 SET v = 'before' WHERE id <= 10")
        cur.execute(f"DELETE FROM {DB}.t3 WHERE id > 100")
    settings["sources"][SOURCE]["table.include.list"] = f"{DB}\\.t1,{DB}\\.t3"
    config.write_text(yaml.safe_dump(settings))
    lakecdc(config, "run", "--source", SOURCE, "--until-caught-up", "--quiet")   # t3 captured from here on
    with conn.cursor() as cur:
        cur.execute(f"UPDATE {DB}.t3 SET v = 'after' WHERE id BETWEEN 5 AND 15")
        cur.execute(f"UPDATE {DB}.t1 SET n = 1")
    condition = [] if kind == "incremental" else [
        "--condition", f"{DB}.t3=SELECT * FROM {DB}.t3 WHERE id <> 50 ORDER BY v DESC"]
    lakecdc(config, "signal", "execute-snapshot", "--type", kind, "--source", SOURCE, "--tables", f"{DB}.t3",
            *condition)
    with conn.cursor() as cur:
        cur.execute(f"INSERT INTO {DB}.t3 VALUES (500, 'new')")
        cur.execute(f"DELETE FROM {DB}.t3 WHERE id = 1")
    lakecdc(config, "run", "--source", SOURCE, "--until-caught-up", "--quiet")
    events = bronze_events(tmp_path / "warehouse", SOURCE)
    state, source = replay(events), source_rows(conn, ("t1", "t3"))
    conn.close()
    assert len(source["t3"]) == 100
    if kind == "blocking":
        source["t3"].pop('{"id":50}')   # left out by the SELECT, never changed
    assert state["t3"] == source["t3"]
    assert state["t1"] == source["t1"]
    marks: dict[str, set[str]] = {"t1": set(), "t3": set()}
    for e in events:
        if e["op"] == "r":
            marks[e["table_id"].split(".")[-1]].add(json.loads(e["value"])["source"]["snapshot"])
    assert marks["t3"] == ({"incremental"} if kind == "incremental" else {"first", "true", "last"}), marks["t3"]
    assert "incremental" not in marks["t1"]


def test_lakecdc_signal_writes_the_signal_file_and_the_run_carries_it_out(mariadb_params: dict,
                                                                          tmp_path: Path) -> None:
    """Issue 16: signal.enabled.channels=file with a relative signal.file: `lakecdc signal` appends to the file in
    the project folder, the run takes it (and empties the file) and snapshots the table incrementally."""
    conn = pymysql.connect(**mariadb_params, autocommit=True)
    prepare(conn, 300)
    config = write_config(tmp_path, mariadb_params, chunk=40)
    settings = yaml.safe_load(config.read_text())
    settings["sources"][SOURCE].update({"signal.enabled.channels": "file", "signal.file": "signals/lakecdc.txt"})
    config.write_text(yaml.safe_dump(settings))
    lakecdc(config, "run", "--source", SOURCE, "--until-caught-up", "--quiet")
    lakecdc(config, "signal", "execute-snapshot", "--source", SOURCE, "--tables", f"{DB}.t1")
    signal_file = tmp_path / "signals" / "lakecdc.txt"
    assert json.loads(signal_file.read_text())["type"] == "execute-snapshot"
    lakecdc(config, "run", "--source", SOURCE, "--until-caught-up", "--quiet")
    assert signal_file.read_text() == ""
    events = bronze_events(tmp_path / "warehouse", SOURCE)
    reads = sorted(json.loads(e["key"])["id"] for e in events if e["op"] == "r")
    assert reads == list(range(1, 301))
    conn.close()


def test_snapshot_reads_carry_the_initial_snapshots_values(mariadb_params: dict, tmp_path: Path) -> None:
    """The rows of a table of many types, read by the initial snapshot (its vectorized path), by an incremental and
    by a blocking snapshot: every read event's `after` is the same, whichever snapshot read it."""
    conn = pymysql.connect(**mariadb_params, autocommit=True)
    prepare(conn, 1)
    with conn.cursor() as cur:
        cur.execute(f"""CREATE TABLE {DB}.typed (
            id INT PRIMARY KEY, b TINYINT(1), bt BIT(5), ti TINYINT UNSIGNED, bi BIGINT UNSIGNED, de DECIMAL(12, 3),
            f FLOAT, d DOUBLE, dt DATE, dtm DATETIME(6), ts TIMESTAMP(3) NULL, tm TIME(3), y YEAR, c CHAR(5),
            vc VARCHAR(20), bn BINARY(4), vb VARBINARY(8), bl BLOB, tx TEXT, e ENUM('a', 'b c'), s SET('x', 'y'),
            j JSON)""")
        cur.execute(f"""INSERT INTO {DB}.typed VALUES
            (1, 1, b'10101', 255, 18446744073709551615, -12345.678, 1.25, -2.5e300, '2024-02-29',
             '2024-01-02 03:04:05.678901', '2024-01-02 03:04:05.678', '-838:59:59.000', 2024, 'ab', 'x y',
             x'00ff', x'0102', x'deadbeef', 'tab\tnew\nline "q" \\\\', 'b c', 'x,y', '{{"a": [1, 2.50]}}'),
            (2, 0, b'0', 0, 0, 0, 0, 0, '1000-01-01', '1000-01-01 00:00:00', '1970-01-01 00:00:01', '00:00:00',
             1901, '', '', x'', x'', x'', '', 'a', '', '[]'),
            (3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
             NULL, NULL, NULL, NULL)""")
    config = write_config(tmp_path, mariadb_params, chunk=2)
    settings = yaml.safe_load(config.read_text())
    settings["sources"][SOURCE].update({"snapshot.mode": "initial", "table.include.list": f"{DB}\\.typed"})
    config.write_text(yaml.safe_dump(settings))
    read_three_ways(config, SOURCE, f"{DB}.typed")
    conn.close()
    check_reads_agree(bronze_events(tmp_path / "warehouse", SOURCE), 3)


def test_a_surrogate_key_reads_a_table_without_primary_key(mariadb_params: dict, tmp_path: Path) -> None:
    """Issue 16: `surrogate-key` orders the chunks of a table without primary key (a NOT NULL column with a unique
    index of its own): an incremental and a blocking snapshot each read every row once; a column without a unique
    index is refused with a log line."""
    conn = pymysql.connect(**mariadb_params, autocommit=True)
    prepare(conn, 1)
    with conn.cursor() as cur:
        cur.execute(f"CREATE TABLE {DB}.tk (v VARCHAR(10), code INT NOT NULL, other INT NOT NULL, UNIQUE KEY (code))")
        cur.execute(f"INSERT INTO {DB}.tk SELECT CONCAT('v', seq), 1000 - seq, seq FROM {DB}.seq_1_to_50")
    config = write_config(tmp_path, mariadb_params, chunk=7)
    conn.close()
    snapshot_by_surrogate(config, SOURCE, f"{DB}.tk", "other", "has no unique index on 'other' alone")
