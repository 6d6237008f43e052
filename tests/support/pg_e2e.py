"""The PostgreSQL end-to-end helpers (tests/integration/postgres/test_pg_e2e.py, bench/soak.py): the project's
configuration, the source database, `lakecdc run` as a process to kill, a concurrent workload, bronze read back
and replayed in seq order, the source's rows."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import psycopg2
import yaml

from tests.support.pg import DB, drop_slot_and_publication, dsn_params, ensure_database, execute, query

ROOT = Path(__file__).resolve().parents[2]


SCHEMA = "pgconn_e2e"


SOURCE = "pgconn_e2e"


PLACEHOLDER = "__debezium_unavailable_value"


def write_config(tmp_path: Path, pg_dsn: str) -> Path:
    params = dsn_params(pg_dsn)
    config = {
        "engine": {"profile": "local", "warehouse": str(tmp_path / "warehouse")},
        "sources": {SOURCE: {
            "connector": "postgresql", "database.hostname": params["host"], "database.port": params["port"],
            "database.user": params["user"], "database.password": params["password"], "database.dbname": DB,
            "topic.prefix": "e2e", "slot.name": "pgconn_e2e", "publication.name": "pgconn_e2e",
            "table.include.list": f"{SCHEMA}\\..*", "skipped.operations": "none", "snapshot.fetch.size": 500,
            "poll.interval.ms": 100, "slot.retry.delay.ms": 200,
        }},
    }
    path = tmp_path / "lakecdc.yml"
    path.write_text(yaml.safe_dump(config))
    return path


def prepare_source(pg_dsn: str, rows: int) -> str:
    """A fresh schema SCHEMA (t1 with `rows` rows, t2 with TOASTed values, t3) and no slot or publication;
    returns the DSN of the test database."""
    dsn = ensure_database(pg_dsn)
    drop_slot_and_publication(dsn, "pgconn_e2e", "pgconn_e2e")
    execute(dsn, f"DROP SCHEMA IF EXISTS {SCHEMA} CASCADE", f"CREATE SCHEMA {SCHEMA}",
            f"CREATE TABLE {SCHEMA}.t1 (id int PRIMARY KEY, v text, n int)",
            f"INSERT INTO {SCHEMA}.t1 SELECT g, 'v' || g, 0 FROM generate_series(1, {rows}) g",
            f"CREATE TABLE {SCHEMA}.t2 (id int PRIMARY KEY, small text, big text)",
            f"INSERT INTO {SCHEMA}.t2 SELECT g, 's', repeat(md5(g::text), 400) FROM generate_series(1, 300) g",
            f"CREATE TABLE {SCHEMA}.t3 (id int PRIMARY KEY, v text)",
            f"INSERT INTO {SCHEMA}.t3 SELECT g, 'x' FROM generate_series(1, 100) g")
    return dsn


def start_run(config: Path, log: Path, until_caught_up: bool = True, source: str = SOURCE) -> subprocess.Popen:
    """`lakecdc run`; with until_caught_up=False it streams until killed (so a kill always finds it running)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    stop = ["--until-caught-up"] if until_caught_up else []
    with open(log, "ab") as out:
        return subprocess.Popen([sys.executable, "-m", "ingest.cli", "--config", str(config), "run", "--source",
                                 source, *stop, "--batch-size", "400", "--quiet"],
                                cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)


class Workload(threading.Thread):
    """Random changes in small transactions until stopped."""

    def __init__(self, dsn: str, seed: int) -> None:
        super().__init__(daemon=True)
        self.dsn = dsn
        self.rng = random.Random(seed)
        self.stop_flag = threading.Event()
        self.ops = 0
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            conn = psycopg2.connect(self.dsn)
            conn.autocommit = True
            cur = conn.cursor()
            new_tables = 0
            while not self.stop_flag.is_set():
                self.step(cur, new_tables)
                self.ops += 1
                if self.ops % 400 == 0 and new_tables < 3:
                    new_tables += 1
                    cur.execute(f"CREATE TABLE {SCHEMA}.new_{new_tables} (id int PRIMARY KEY, v text)")
                    cur.execute(f"INSERT INTO {SCHEMA}.new_{new_tables} "
                                "SELECT g, 'n' || g FROM generate_series(1, 50) g")
                time.sleep(0.002)
            conn.close()
        except BaseException as exc:  # surfaced by the test
            self.error = exc

    def step(self, cur, new_tables: int) -> None:
        r = self.rng.random()
        i = self.rng.randint(1, 6000)
        big = "".join(self.rng.choice("abcdefghij") for _ in range(3000)) * 4  # > 8 kB: TOASTed
        if r < 0.25:
            cur.execute(f"INSERT INTO {SCHEMA}.t1 VALUES (%s, %s, %s) ON CONFLICT (id) DO NOTHING",
                        (i + 200_000 * self.rng.randint(1, 5), f"i{self.ops}", self.rng.randint(0, 99)))
        elif r < 0.55:
            cur.execute(f"UPDATE {SCHEMA}.t1 SET v = %s, n = n + 1 WHERE id BETWEEN %s AND %s",
                        (f"u{self.ops}", i, i + 3))
        elif r < 0.65:
            cur.execute(f"DELETE FROM {SCHEMA}.t1 WHERE id BETWEEN %s AND %s", (i, i + 2))
        elif r < 0.72:  # primary-key change
            cur.execute(f"UPDATE {SCHEMA}.t1 SET id = id + 5000000 WHERE id = %s "
                        f"AND NOT EXISTS (SELECT 1 FROM {SCHEMA}.t1 WHERE id = %s)", (i, i + 5000000))
        elif r < 0.80:  # small column only: the TOASTed column is unchanged (placeholder)
            cur.execute(f"UPDATE {SCHEMA}.t2 SET small = %s WHERE id = %s", (f"s{self.ops}", i % 300))
        elif r < 0.86:
            cur.execute(f"UPDATE {SCHEMA}.t2 SET big = %s WHERE id = %s", (big, i % 300))
        elif r < 0.90:
            cur.execute(f"INSERT INTO {SCHEMA}.t2 VALUES (%s, %s, %s) ON CONFLICT (id) DO UPDATE SET big = "
                        f"EXCLUDED.big", (i % 600, "ins", big))
        elif r < 0.905:
            cur.execute(f"TRUNCATE {SCHEMA}.t3")
            cur.execute(f"INSERT INTO {SCHEMA}.t3 SELECT g, 'after truncate' FROM generate_series(1, 20) g")
        elif r < 0.95:
            cur.execute(f"INSERT INTO {SCHEMA}.t3 VALUES (%s, %s) ON CONFLICT (id) DO UPDATE SET v = EXCLUDED.v",
                        (i % 100, f"t{self.ops}"))
        elif new_tables:
            n = self.rng.randint(1, new_tables)
            cur.execute(f"UPDATE {SCHEMA}.new_{n} SET v = %s WHERE id = %s", (f"x{self.ops}", i % 60))
        else:
            cur.execute(f"BEGIN; UPDATE {SCHEMA}.t1 SET n = n + 1 WHERE id = %s; "
                        f"DELETE FROM {SCHEMA}.t3 WHERE id = %s; COMMIT", (i, i % 100))


def bronze_events(warehouse: Path, source: str = SOURCE) -> list[dict]:
    from deltalake import DeltaTable

    path = warehouse / "bronze" / f"{source}_events"
    if not (path / "_delta_log").exists():
        return []
    columns = ["batch_id", "seq", "table_id", "op", "key", "value", "position"]
    table = DeltaTable(str(path)).to_pyarrow_table(columns=columns)
    return table.to_pylist()


def events_commits(warehouse: Path) -> int:
    """How many commits S_events has (read from its log's file names: cheap enough to poll)."""
    log = warehouse / "bronze" / f"{SOURCE}_events" / "_delta_log"
    return len(list(log.glob("*.json"))) if log.exists() else 0


def resume_position(warehouse: Path, source: str = SOURCE) -> dict | None:
    """Where a run resumes (the writer's rule: the newest batch's highest seq), reading only the newest batch's
    files (their batch_id statistics pick them): polling the whole table would compete with the ingest."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from deltalake import DeltaTable

    path = warehouse / "bronze" / f"{source}_events"
    if not (path / "_delta_log").exists():
        return None
    files = pa.table(DeltaTable(str(path)).get_add_actions(flatten=True)).select(["path", "max.batch_id"]).to_pylist()
    if not files:
        return None
    newest = max(f["max.batch_id"] for f in files)
    rows = [row for f in files if f["max.batch_id"] == newest
            for row in pq.read_table(path / f["path"], columns=["batch_id", "seq", "position"]).to_pylist()
            if row["batch_id"] == newest]
    return json.loads(max(rows, key=lambda r: r["seq"])["position"]) if rows else None


def last_phase(warehouse: Path) -> str:
    """The phase of the resume position: nothing, snapshot or streaming."""
    position = resume_position(warehouse)
    return "nothing" if position is None else position["phase"]


def replay(events: list[dict]) -> dict[str, dict[str, dict]]:
    state: dict[str, dict[str, dict]] = {}
    for e in sorted(events, key=lambda e: e["seq"]):
        table = e["table_id"].split(".")[-1]
        rows = state.setdefault(table, {})
        if e["op"] in ("r", "c", "u"):
            after = json.loads(e["value"])["after"]
            key = json.loads(e["key"])["id"]
            previous = rows.get(key, {})
            rows[key] = {k: (previous.get(k) if v == PLACEHOLDER else v) for k, v in after.items()}
        elif e["op"] == "d":
            rows.pop(json.loads(e["key"])["id"], None)
        elif e["op"] == "t":
            rows.clear()
    return state


def source_rows(dsn: str) -> dict[str, dict[int, dict]]:
    out: dict[str, dict[int, dict]] = {}
    for (table,) in query(dsn, f"SELECT tablename FROM pg_tables WHERE schemaname = '{SCHEMA}'"):
        conn = psycopg2.connect(dsn)
        cur = conn.cursor()
        cur.execute(f"SELECT * FROM {SCHEMA}.{table}")
        names = [d.name for d in cur.description]
        out[table] = {row[0]: dict(zip(names, row, strict=True)) for row in cur.fetchall()}
        conn.close()
    return out


def kill_while_chunks_land(config: Path, log: Path, warehouse: Path, kills: int, source: str = SOURCE,
                           blocking: bool = False) -> None:
    """Start `lakecdc run` (streaming until killed) and SIGKILL it as soon as bronze holds an incremental (or
    `blocking`) snapshot chunk it did not hold before (a new `last_key` in the resume position), `kills` times."""
    keys_seen: set[str] = set()
    for _ in range(kills):
        proc = start_run(config, log, until_caught_up=False, source=source)
        deadline = time.monotonic() + 180
        while proc.poll() is None and time.monotonic() < deadline:   # strike after a new chunk landed
            state = (resume_position(warehouse, source) or {}).get("incremental")
            if blocking:
                state = (state or {}).get("blocking")
            where = json.dumps([(state or {}).get("tables"), (state or {}).get("last_key")])
            if state and state.get("last_key") and where not in keys_seen:
                keys_seen.add(where)
                break
            time.sleep(0.05)
        assert proc.poll() is None, log.read_text()[-3000:]
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)


INITIAL_MARKS = {"first", "first_in_data_collection", "true", "last_in_data_collection", "last"}


def check_snapshot_marks(kind: str, marks: list[str]) -> None:
    """source.snapshot of an ad-hoc snapshot's reads in seq order: "incremental" on each of an incremental one's;
    a blocking one's marked as an initial snapshot's, from "first" to "last"."""
    assert marks, "no read event"
    if kind == "incremental":
        assert set(marks) == {"incremental"}, set(marks)
    else:
        assert set(marks) <= INITIAL_MARKS and marks[0] == "first" and marks[-1] == "last", (marks[:3], marks[-3:])
        assert marks.count("first") == 1 and marks.count("last") == 1


def check_notifications(kind: str, events: list[dict]) -> None:
    """The snapshot's notifications (aggregate type "Incremental Snapshot" / "Initial Snapshot") start with STARTED
    and end with COMPLETED."""
    aggregate = "Incremental Snapshot" if kind == "incremental" else "Initial Snapshot"
    types = [value["type"] for value in (json.loads(e["value"]) for e in sorted(events, key=lambda e: e["seq"])
                                         if e["table_id"].startswith("__debezium-notification"))
             if value["aggregate_type"] == aggregate]
    assert types and types[0] == "STARTED" and types[-1] == "COMPLETED", types[:3] + types[-3:]



def cli(config: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """One `lakecdc` command with `config`, which must succeed."""
    result = subprocess.run([sys.executable, "-m", "ingest.cli", "--config", str(config), *args], cwd=ROOT,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    return result


def read_three_ways(config: Path, source: str, table: str) -> None:
    """An initial snapshot of `table`, then an incremental and a blocking snapshot of it (each signal, then a run
    until caught up)."""
    cli(config, "run", "--source", source, "--until-caught-up", "--quiet")
    for kind in ("incremental", "blocking"):
        cli(config, "signal", "execute-snapshot", "--type", kind, "--source", source, "--tables", table)
        cli(config, "run", "--source", source, "--until-caught-up", "--quiet")


def check_reads_agree(events: list[dict], rows: int) -> None:
    """Each of `rows` keys was read three times, by the initial snapshot, an incremental and a blocking one (in seq
    order), with the same `after` each time."""
    reads: dict[str, list[tuple[str, str]]] = {}
    for e in sorted(events, key=lambda e: e["seq"]):
        if e["op"] == "r":
            value = json.loads(e["value"])
            reads.setdefault(e["key"], []).append((value["source"]["snapshot"], json.dumps(value["after"])))
    assert len(reads) == rows
    for key, seen in reads.items():
        assert len(seen) == 3 and seen[1][0] == "incremental", (key, seen)
        assert seen[1][1] == seen[0][1] and seen[2][1] == seen[0][1], (key, seen)


def snapshot_by_surrogate(config: Path, source: str, table: str, refused: str, problem: str) -> None:
    """`table` (50 rows, codes 950..999 in column `code`, no primary key) snapshotted incrementally, then blocking,
    by the surrogate key `code`; a first signal naming the `refused` column is refused with `problem` in the log;
    each snapshot reads every row once."""
    cli(config, "run", "--source", source, "--until-caught-up", "--quiet")
    cli(config, "signal", "execute-snapshot", "--source", source, "--tables", table, "--surrogate-key", refused)
    for kind in ("incremental", "blocking"):
        cli(config, "signal", "execute-snapshot", "--type", kind, "--source", source, "--tables", table,
            "--surrogate-key", "code")
    run = cli(config, "run", "--source", source, "--until-caught-up")
    assert problem in run.stderr, run.stderr[-3000:]
    reads: dict[str, list[int]] = {"incremental": [], "blocking": []}
    for e in bronze_events(Path(yaml.safe_load(config.read_text())["engine"]["warehouse"]), source):
        if e["op"] == "r":
            value = json.loads(e["value"])
            reads["incremental" if value["source"]["snapshot"] == "incremental" else "blocking"].append(
                value["after"]["code"])
    assert sorted(reads["incremental"]) == sorted(reads["blocking"]) == list(range(950, 1000))
