"""The MariaDB end-to-end helpers (tests/integration/mysql/test_mysql_e2e.py,
tests/integration/mysql/test_mysql_recovery.py, bench/soak.py): `land()`, the ingest loop of ingest.runner
plus the schema history hand-back the MySQL connector needs on resume (connector.restore_schema_history from
S_schema_changes); bronze read back and replayed in seq order; the schema history against the server's
catalog; a concurrent DML and DDL workload. Run as a script, this file is the ingest process the kill -9
tests kill.
"""

from __future__ import annotations

import json
import os
import random
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pymysql

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from ingest.bronze.contract import BatchLimits  # noqa: E402
from ingest.config import EngineSettings, SourceSettings  # noqa: E402

SOURCE = "maria"


def source_settings(params: dict, db: str, server_id: int, **extra) -> SourceSettings:
    props = {"database.hostname": params["host"], "database.port": params["port"], "database.user": params["user"],
             "database.password": params["password"], "database.server.id": server_id, "topic.prefix": "e2e",
             "database.include.list": db, "snapshot.chunk.size": 50, **extra}
    return SourceSettings(name=SOURCE, connector="mariadb", properties=props)


def land(warehouse: Path, settings: SourceSettings, limits: BatchLimits, until_caught_up: bool = True,
         journal: Path | None = None, snapshot_table_hook: Callable[[str], None] | None = None) -> int:
    """Ingest into bronze; returns the number of events landed. `journal` gets one line per committed batch:
    "snapshot" or "stream" (so the kill test knows where its kills landed). `snapshot_table_hook` is called
    before the snapshot reads each table (SourceConnector.snapshot_table_hook)."""
    from ingest.bronze.writer import BronzeWriter
    from ingest.connectors.mysql import MySqlConnector
    from ingest.engine import start_engine

    engine = start_engine(EngineSettings(profile="local", warehouse=warehouse), reuse=False)
    try:
        writer = BronzeWriter(engine.spark, engine.settings, SOURCE)
        resume = writer.resume_state()
        connector = MySqlConnector(settings)
        connector.snapshot_table_hook = snapshot_table_hook
        connector.validate()
        rows = engine.spark.sql(f"SELECT seq, event FROM bronze.{SOURCE}_schema_changes").collect()
        connector.restore_schema_history([(r["seq"], r["event"]) for r in rows])
        landed = 0
        try:
            for batch in connector.batches(resume, limits):
                writer.write(batch)
                landed += batch.event_count
                if journal is not None and batch.event_count:
                    snapshot = bool(batch.blocks) or bool(batch.events and batch.events[-1].op == "r")
                    with journal.open("a") as out:  # snapshot rows may come as columnar blocks
                        out.write(("snapshot" if snapshot else "stream") + "\n")
                if until_caught_up and batch.caught_up:
                    break
        finally:
            connector.close()
        return landed
    finally:
        engine.stop()


def bronze(warehouse: Path) -> tuple[list[dict], list[dict]]:
    from ingest.engine import start_engine

    engine = start_engine(EngineSettings(profile="local", warehouse=warehouse), reuse=False)
    try:
        events = [r.asDict() for r in engine.spark.sql(
            f"SELECT seq, table_id, op, key, value FROM bronze.{SOURCE}_events").collect()]
        changes = [r.asDict() for r in engine.spark.sql(
            f"SELECT seq, table_changes FROM bronze.{SOURCE}_schema_changes").collect()]
        return events, changes
    finally:
        engine.stop()


def replay(events: list[dict], changes: list[dict]) -> dict[str, dict[str, dict]]:
    """Events and schema changes in seq order: table renames/drops from tableChanges, rows from events."""
    items = [(e["seq"], 1, e) for e in events] + [(c["seq"], 0, c) for c in changes]
    state: dict[str, dict[str, dict]] = {}
    for _, kind, item in sorted(items, key=lambda x: (x[0], x[1])):
        if kind == 0:
            for change in json.loads(item["table_changes"]):
                ids = [p.replace('"', "") for p in change["id"].split('","')]
                if change["type"] == "DROP":
                    state.pop(ids[-1], None)
                elif len(ids) > 1:  # a rename moves the old table's rows into the new one
                    state[ids[-1]] = {**state.get(ids[-1], {}), **state.pop(ids[0], {})}
            continue
        rows = state.setdefault(item["table_id"], {})
        if item["op"] in ("c", "u", "r"):
            rows[item["key"]] = json.loads(item["value"])["after"]
        elif item["op"] == "d":
            rows.pop(item["key"], None)
        elif item["op"] == "t":
            rows.clear()
    return state


def source_tables(conn, db: str) -> dict[str, dict[str, dict]]:
    out = {}
    with conn.cursor(pymysql.cursors.DictCursor) as cur:
        cur.execute("SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = %s", (db,))
        for (name,) in [(r["TABLE_NAME"],) for r in cur.fetchall()]:
            cur.execute(f"SELECT * FROM `{db}`.`{name}`")
            out[f"{db}.{name}"] = {json.dumps({"id": r["id"]}, separators=(",", ":")): r for r in cur.fetchall()}
    return out


def assert_bronze_equals_source(warehouse: Path, conn, db: str) -> int:
    events, changes = bronze(warehouse)
    seqs = [e["seq"] for e in events]
    assert len(seqs) == len(set(seqs)), f"{len(seqs) - len(set(seqs))} duplicate events in bronze"
    change_seqs = [c["seq"] for c in changes]
    assert len(change_seqs) == len(set(change_seqs)), "duplicate schema change rows in bronze"
    state = replay(events, changes)
    source = source_tables(conn, db)
    assert sorted(k for k in state if k.startswith(db + ".") and state[k] or k in source) == sorted(source)
    for table, rows in source.items():
        got = state.get(table, {})
        assert sorted(got) == sorted(rows), (f"{table}: keys differ; schema changes: "
                                             + str(sorted((c["seq"], c["table_changes"][:90]) for c in changes))
                                             + " events: " + str(sorted((e["seq"], e["table_id"], e["op"])
                                                                        for e in events if e["table_id"] == table)))
        for key, row in rows.items():
            image = got[key]
            # columns renamed or added after a row's last change are absent from its image: compare the rest
            common = {c: row[c] for c in row if c in image}
            assert {c: image[c] for c in common} == common, f"{table} {key}"
    return len(events)


def history_latest(warehouse: Path, db: str) -> dict[str, dict]:
    """The schema history built from bronze with the project's own code (what `lakecdc schema rebuild` runs:
    ingest.schema.store.read_schema_changes + ingest.schema.history.build_history): the latest version of
    each table of `db` still existing (a DROP as latest version removes the table, and so does a later rename
    of it: the new name's row names it as `previous_table_id`)."""
    from ingest.engine import start_engine
    from ingest.schema.history import build_history
    from ingest.schema.store import read_schema_changes

    settings = EngineSettings(profile="local", warehouse=warehouse)
    engine = start_engine(settings, reuse=False)
    try:
        records = read_schema_changes(engine.spark, settings, SOURCE)
    finally:
        engine.stop()
    rows, rejects, _ = build_history(records, "mariadb", source=SOURCE)
    assert not rejects, rejects
    latest: dict[str, dict] = {}
    renamed_away: dict[str, tuple] = {}  # old table id -> when it was renamed
    for row in rows:
        tid = row["table_id"]
        if row["parse_status"] == "error" or not tid or row["database_name"] != db:
            continue
        order = (row["valid_from_seq"], row["statement_index"], row["version"])
        if tid not in latest or order > latest[tid]["_order"]:
            latest[tid] = {**row, "_order": order}
        old = row["previous_table_id"]
        if old and old != tid and order > renamed_away.get(old, ()):
            renamed_away[old] = order
    return {tid: row for tid, row in latest.items()
            if row["change_kind"] != "DROP" and not renamed_away.get(tid, ()) > row["_order"]}


def catalog_tables(conn, db: str) -> dict[str, dict]:
    """information_schema's view of every base table of `db`: columns in order and the primary key."""
    with conn.cursor(pymysql.cursors.DictCursor) as cur:
        cur.execute("SELECT c.TABLE_NAME, COLUMN_NAME, DATA_TYPE, COLUMN_TYPE, IS_NULLABLE, COLUMN_DEFAULT, "
                    "CHARACTER_MAXIMUM_LENGTH, NUMERIC_PRECISION, NUMERIC_SCALE, EXTRA "
                    "FROM information_schema.COLUMNS c JOIN information_schema.TABLES t USING (TABLE_SCHEMA, "
                    "TABLE_NAME) WHERE c.TABLE_SCHEMA = %s AND t.TABLE_TYPE = 'BASE TABLE' "
                    "ORDER BY c.TABLE_NAME, ORDINAL_POSITION", (db,))
        columns = cur.fetchall()
        cur.execute("SELECT TABLE_NAME, COLUMN_NAME FROM information_schema.KEY_COLUMN_USAGE WHERE TABLE_SCHEMA = %s "
                    "AND CONSTRAINT_NAME = 'PRIMARY' ORDER BY TABLE_NAME, ORDINAL_POSITION", (db,))
        keys = cur.fetchall()
    out: dict[str, dict] = {}
    for c in columns:
        out.setdefault(f"{db}.{c['TABLE_NAME']}", {"columns": [], "primary_key": []})["columns"].append(c)
    for k in keys:
        out[f"{db}.{k['TABLE_NAME']}"]["primary_key"].append(k["COLUMN_NAME"])
    return out


def history_vs_catalog(history: dict[str, dict], catalog: dict[str, dict]) -> list[str]:
    """Differences between each table's latest history version and information_schema: table set, column names
    and order, type (DATA_TYPE; length of character types; precision/scale of decimals), nullability, default
    (normalized as in tests/support/schema_oracle.py), auto-increment and primary key."""
    from tests.support.schema_oracle import norm_default

    problems = [f"{t}: in history only" for t in sorted(set(history) - set(catalog))]
    problems += [f"{t}: in information_schema only" for t in sorted(set(catalog) - set(history))]
    for tid in sorted(set(history) & set(catalog)):
        mine, theirs = json.loads(history[tid]["columns"]), catalog[tid]["columns"]
        if [c["name"] for c in mine] != [c["COLUMN_NAME"] for c in theirs]:
            problems.append(f"{tid}: columns {[c['name'] for c in mine]} != {[c['COLUMN_NAME'] for c in theirs]}")
            continue
        if json.loads(history[tid]["primary_key"]) != catalog[tid]["primary_key"]:
            problems.append(f"{tid}: primary key {history[tid]['primary_key']} != {catalog[tid]['primary_key']}")
        for h, s in zip(mine, theirs, strict=True):
            numeric = s["NUMERIC_PRECISION"] is not None
            want = {"type": s["DATA_TYPE"].upper(), "nullable": s["IS_NULLABLE"] == "YES",
                    "default": norm_default(s["COLUMN_DEFAULT"], numeric),
                    "auto_increment": "auto_increment" in s["EXTRA"]}
            got = {"type": h["type_name"].split()[0].upper(), "nullable": h["nullable"],
                   "default": norm_default(h["default"] if h["has_default"] else None, numeric),
                   "auto_increment": h["auto_increment"]}
            if s["DATA_TYPE"] in ("char", "varchar", "binary", "varbinary"):
                want["length"], got["length"] = s["CHARACTER_MAXIMUM_LENGTH"], h["length"]
            if s["DATA_TYPE"] == "decimal":
                want["length"], got["length"] = s["NUMERIC_PRECISION"], h["length"]
                want["scale"], got["scale"] = s["NUMERIC_SCALE"], h["scale"]
            if got != want:
                problems.append(f"{tid}.{h['name']}: history {got} != information_schema {want}")
    return problems


class Workload(threading.Thread):
    """Concurrent DML plus DDL (ADD/DROP/MODIFY/CHANGE/RENAME COLUMN, SET DEFAULT, RENAME TABLE, CREATE/DROP
    TABLE)."""

    def __init__(self, params: dict, db: str, steps: int, seed: int = 7, pause: float = 0.0) -> None:
        super().__init__(daemon=True)
        self.params, self.db, self.steps, self.rng = params, db, steps, random.Random(seed)
        self.pause = pause  # seconds between statements (bench/soak.py spreads the workload over its run)
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            conn = pymysql.connect(**self.params, autocommit=True)
            ddl = [
                "ALTER TABLE {db}.a ADD COLUMN extra INT DEFAULT 5",
                "ALTER TABLE {db}.a MODIFY COLUMN v VARCHAR(40)",
                "ALTER TABLE {db}.a CHANGE COLUMN extra extra2 BIGINT",
                "ALTER TABLE {db}.a RENAME COLUMN extra2 TO extra3",
                "ALTER TABLE {db}.a DROP COLUMN extra3",
                "CREATE TABLE {db}.c (id INT NOT NULL, v VARCHAR(20), PRIMARY KEY (id))",
                "INSERT INTO {db}.c VALUES (1, 'one'), (2, 'two')",
                "RENAME TABLE {db}.b TO {db}.b2",
                "CREATE TABLE {db}.d (id INT NOT NULL, PRIMARY KEY (id))",
                "DROP TABLE {db}.d",
                # left in place at the end: defaults, NOT NULL, ENUM, unsigned, column order in the history check
                "ALTER TABLE {db}.a ALTER COLUMN n SET DEFAULT 7",
                "ALTER TABLE {db}.c ADD COLUMN tag ENUM('x','y') NOT NULL DEFAULT 'y' AFTER id",
                "ALTER TABLE {db}.c MODIFY COLUMN v VARCHAR(30) NOT NULL DEFAULT 'z'",
                "ALTER TABLE {db}.b2 ADD COLUMN cnt BIGINT UNSIGNED NOT NULL DEFAULT 3, "
                "ADD COLUMN note CHAR(4) DEFAULT 'ab' FIRST",
            ]
            next_id = 100_000
            with conn.cursor() as cur:
                for step in range(self.steps):
                    table = "a"
                    roll = self.rng.random()
                    if step % max(1, self.steps // len(ddl)) == 0 and ddl:
                        cur.execute(ddl.pop(0).format(db=self.db))
                    elif roll < 0.5:
                        next_id += 1
                        cur.execute(f"INSERT INTO {self.db}.{table} (id, v) VALUES ({next_id}, 'w{next_id}')")
                    elif roll < 0.8:
                        cur.execute(f"UPDATE {self.db}.{table} SET v = CONCAT('u', id) "
                                    f"WHERE id = {self.rng.randrange(1, next_id)}")
                    elif roll < 0.95:
                        cur.execute(f"DELETE FROM {self.db}.{table} WHERE id = {self.rng.randrange(1, next_id)}")
                    else:
                        cur.execute("BEGIN")
                        for _ in range(5):
                            next_id += 1
                            cur.execute(f"INSERT INTO {self.db}.{table} (id, v) VALUES ({next_id}, 'txn')")
                        cur.execute("COMMIT")
                    if self.pause:
                        time.sleep(self.pause)
                for statement in ddl:
                    cur.execute(statement.format(db=self.db))
            conn.close()
        except BaseException as exc:  # surfaced by the test
            self.error = exc


def prepare(conn, db: str, rows: int) -> None:
    with conn.cursor() as cur:
        cur.execute(f"DROP DATABASE IF EXISTS {db}")
        cur.execute(f"CREATE DATABASE {db}")
        cur.execute(f"CREATE TABLE {db}.a (id INT NOT NULL, v VARCHAR(20), n INT DEFAULT 0, PRIMARY KEY (id))")
        cur.execute(f"CREATE TABLE {db}.b (id INT NOT NULL, w TEXT, PRIMARY KEY (id))")
        for start in range(1, rows + 1, 1000):
            values = ",".join(f"({i}, 'v{i}', {i})" for i in range(start, min(rows + 1, start + 1000)))
            cur.execute(f"INSERT INTO {db}.a VALUES {values}")
        cur.execute(f"INSERT INTO {db}.b VALUES (1, 'x'), (2, 'y')")


if __name__ == "__main__":  # the process the kill -9 test starts (and kills)
    warehouse_arg, params_arg, db_arg = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
    once = "--until-caught-up" in sys.argv
    land(Path(warehouse_arg), source_settings(params_arg, db_arg, 320_000 + os.getpid() % 1000),
         BatchLimits(max_events=400, max_seconds=0.5), until_caught_up=once, journal=Path(sys.argv[4]))
