"""Streamed values equal the snapshot's and the real Debezium 3.6.3 MySQL connector's (measured on MariaDB
10.11, checked by tests/conformance/test_mariadb.py) for the types where the binlog stores a value
differently from the text the snapshot reads: negative TIME with a fraction, BINARY(n) (trailing zero bytes
not stored), an empty SET (stored as a zero bit mask), 4-byte FLOAT, geometry with SRID 0; and a DELETE on
a table without a primary key is followed by a tombstone with a null key. Both binlog decoders are checked: the fast row
decoder and mysql-replication's (the fallback). Databases are named mysqlsv_*."""

from __future__ import annotations

import base64
import itertools
import json
import os

import pymysql
import pytest

from ingest.bronze.contract import BatchLimits, ResumeState
from ingest.config import SourceSettings
from ingest.connectors.mysql import MySqlConnector
from ingest.connectors.mysql.streaming import MySqlStreamingSource

pytestmark = pytest.mark.integration
DB = "mysqlsv_values"
_ids = itertools.count(1)

COLUMNS = ("tm6 TIME(6), tm3 TIME(3), tm1 TIME(1), bn BINARY(4), s SET('x','y'), pt POINT, g GEOMETRY, "
           "f FLOAT, f72 FLOAT(7,2), f7 FLOAT")
ROW = ("'-01:00:00.250000', '-12:34:56.789', '-10:00:00.1', x'01', '', ST_GeomFromText('POINT(1 2)'), "
       "ST_GeomFromText('LINESTRING(0 0,1 1)'), 0.3, 12345.67, -59.106117248535156")
# Debezium 3.6.3, snapshot and streaming alike; but f7, a FLOAT of more than 6 significant digits, which
# Debezium's snapshot reads as the server's 6-digit text (-59.1061, a different float) and its binlog reader
# exactly: lakecdc's snapshot reads it exactly too (issue 17)
EXPECTED = {"tm6": -3_600_250_000, "tm3": -45_296_789_000, "tm1": -36_000_100_000,
            "bn": base64.b64encode(b"\x01\x00\x00\x00").decode(), "s": "", "f": 0.3, "f72": 12345.669921875,
            "f7": -59.106117}


def _connector(mariadb_params, **props) -> MySqlConnector:
    sid = 500_000 + (os.getpid() % 40_000) * 10 + next(_ids) % 10
    properties = {"database.hostname": mariadb_params["host"], "database.port": mariadb_params["port"],
                  "database.user": mariadb_params["user"], "database.password": mariadb_params["password"],
                  "database.server.id": sid, "topic.prefix": "sv", "database.include.list": DB, **props}
    return MySqlConnector(SourceSettings(name="sv", connector="mariadb", properties=properties))


def _drain(conn: MySqlConnector, resume: ResumeState) -> tuple[list, ResumeState]:
    events, last = [], None
    for batch in conn.batches(resume, BatchLimits(max_events=1000, max_seconds=10)):
        for block in batch.blocks:
            events += block.columns.select(["topic", "op", "key", "value", "seq", "position", "snapshot"]).to_pylist()
        events += [{"topic": e.topic, "op": e.op, "key": e.key, "value": e.value, "seq": e.seq,
                    "position": e.position, "snapshot": e.snapshot} for e in batch.events]
        if batch.caught_up:
            break
    conn.close()
    events.sort(key=lambda e: e["seq"])
    if events:
        last = ResumeState(events[-1]["seq"], json.loads(events[-1]["position"]))
    return events, last or resume


def _sql(mariadb_params, *statements: str) -> None:
    conn = pymysql.connect(**mariadb_params, autocommit=True)
    try:
        with conn.cursor() as cur:
            for statement in statements:
                cur.execute(statement)
    finally:
        conn.close()


def _fresh(db: str) -> list[str]:
    return [f"DROP DATABASE IF EXISTS {db}", f"CREATE DATABASE {db}"]


@pytest.fixture(scope="module")
def captured(mariadb_params):
    """Snapshot of one row, then the same row inserted, and a keyless insert + delete, streamed."""
    _sql(mariadb_params, *_fresh(DB), f"CREATE TABLE {DB}.v (id INT NOT NULL, {COLUMNS}, PRIMARY KEY (id))",
         f"CREATE TABLE {DB}.nokey (a INT, b VARCHAR(5))", f"INSERT INTO {DB}.v VALUES (1, {ROW})")
    snapshot, state = _drain(_connector(mariadb_params), ResumeState())
    _sql(mariadb_params, f"INSERT INTO {DB}.v VALUES (2, {ROW})", f"INSERT INTO {DB}.nokey VALUES (1, 'a'), (2, 'b')",
         f"DELETE FROM {DB}.nokey WHERE a = 1")
    return snapshot, state


@pytest.mark.parametrize("fast", [True, False], ids=["fast-decoder", "mysql-replication"])
def test_streamed_values_equal_snapshot_and_debezium(mariadb_params, captured, fast, monkeypatch):
    snapshot, state = captured
    monkeypatch.setattr(MySqlStreamingSource, "fast_rows", fast)
    streamed, _ = _drain(_connector(mariadb_params), state)
    snap = json.loads(next(e["value"] for e in snapshot if e["topic"] == "sv.mysqlsv_values.v"))["after"]
    row = json.loads(next(e["value"] for e in streamed if e["topic"] == "sv.mysqlsv_values.v"))["after"]
    for name, value in EXPECTED.items():
        assert snap[name] == value, name
        assert row[name] == value, name
    for name in ("pt", "g"):  # SRID 0 (none given) is null
        assert snap[name]["srid"] is None and row[name]["srid"] is None
        assert row[name] == snap[name]


@pytest.mark.parametrize("tombstones", ["true", "false"])
def test_keyless_delete_is_followed_by_a_tombstone(mariadb_params, captured, tombstones):
    _, state = captured
    streamed, _ = _drain(_connector(mariadb_params, **{"tombstones.on.delete": tombstones}), state)
    keyless = [(e["op"], e["key"], e["value"] is None) for e in streamed if e["topic"] == "sv.mysqlsv_values.nokey"]
    expected = [("c", None, False), ("c", None, False), ("d", None, False)]
    if tombstones == "true":
        expected.append((None, None, True))
    assert keyless == expected


# SHOW CREATE TABLE text of the `defs` table (tests/conformance/mariadb_workload.py) on MariaDB 10.11, and
# the field schema defaults the real Debezium 3.6.3 MySQL connector wrote for it (default modes)
DEFAULTS_DDL = """CREATE TABLE `defs` (
  `id` int(11) NOT NULL, `a` int(11) NOT NULL DEFAULT 7, `b` varchar(5) DEFAULT 'x''y',
  `c` decimal(5,2) DEFAULT 1.50, `d` date DEFAULT '2020-01-02', `e` datetime(3) DEFAULT current_timestamp(3),
  `f` timestamp NOT NULL DEFAULT current_timestamp() ON UPDATE current_timestamp(),
  `g` enum('p','q') NOT NULL DEFAULT 'q', `h` set('x','y') DEFAULT 'x,y', `i` bit(8) DEFAULT b'101',
  `j` time DEFAULT '01:02:03', `l` varchar(3) DEFAULT NULL, `m` tinyint(1) DEFAULT 1,
  `n` bigint(20) unsigned DEFAULT 18446744073709551615, `o` binary(2) DEFAULT 'a\\0', `p` int(11) DEFAULT (1 + 1),
  `q` timestamp NULL DEFAULT '2020-01-01 00:00:00', `r` year(4) DEFAULT 2020,
  `s` datetime DEFAULT '2020-01-01 10:00:00',
  `u` bit(1) DEFAULT b'1', `v` datetime NOT NULL DEFAULT current_timestamp(),
  `w` timestamp(3) NULL DEFAULT current_timestamp(3), `x` varbinary(4) DEFAULT 'ab', `y` time(6) DEFAULT '-01:00:00.5',
  `z` decimal(30,2) DEFAULT 0.00, PRIMARY KEY (`id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4"""
DEBEZIUM_DEFAULTS = {"a": 7, "b": "x''y", "c": "AJY=", "d": 18263, "e": 0, "f": "1970-01-01T00:00:00Z", "g": "q",
                     "h": "x,y", "i": "BQ==", "j": 3723000000, "m": 1, "n": 9223372036854775807, "o": "YVww",
                     "q": "2020-01-01T00:00:00Z", "r": 2020, "s": 1577872800000, "u": True, "v": 0, "x": "YWI=",
                     "y": -3600500000, "z": "AA=="}


def test_field_schemas_carry_column_defaults_as_debezium_writes_them():
    from ingest.connectors.mysql.codec import build_codec
    from ingest.connectors.mysql.filters import Filters
    from ingest.connectors.mysql.schema_track import SchemaTracker
    from ingest.connectors.mysql.types import TypeOptions

    tracker = SchemaTracker("mariadb")
    tracker.apply(DEFAULTS_DDL, "db")
    codec = build_codec("mariadb", "d", tracker.table("db", "defs"), Filters(), TypeOptions())
    row = next(f for f in codec.schemas.envelope_schema["fields"] if f["field"] == "after")
    defaults = {f["field"]: f["default"] for f in row["fields"] if "default" in f}
    assert defaults == DEBEZIUM_DEFAULTS  # no default for id, DEFAULT NULL (l), expressions (p), nullable w


def test_time_of_day_and_zoned_timestamp_forms(mariadb_params):
    """time.precision.mode=connect: TIME outside 00:00..24:00 is null (Kafka Connect's Time is a time of
    day). TIMESTAMP(3): a snapshot value in ISO-8601's shortest form, a streamed one with 3 digits."""
    db = "mysqlsv_forms"
    _sql(mariadb_params, *_fresh(db), f"CREATE TABLE {db}.t (id INT PRIMARY KEY, tm TIME(3), ts TIMESTAMP(3) NULL)",
         f"INSERT INTO {db}.t VALUES (1, '-00:00:01', '2020-01-01 00:00:00.100'), (2, '25:00:00', "
         "'2020-01-01 00:00:00'), (3, '01:00:00.5', NULL)")
    props = {"time.precision.mode": "connect", "database.include.list": db}
    snapshot, state = _drain(_connector(mariadb_params, **props), ResumeState())
    _sql(mariadb_params, f"INSERT INTO {db}.t SELECT id + 10, tm, ts FROM {db}.t")
    streamed, _ = _drain(_connector(mariadb_params, **props), state)
    snap = [json.loads(e["value"])["after"] for e in snapshot if e["op"] == "r"]
    rows = [json.loads(e["value"])["after"] for e in streamed if e["op"] == "c"]
    assert [(r["tm"], r["ts"]) for r in snap] == [
        (None, "2020-01-01T00:00:00.1Z"), (None, "2020-01-01T00:00:00Z"), (3_600_500, None)]
    assert [(r["tm"], r["ts"]) for r in rows] == [
        (None, "2020-01-01T00:00:00.100Z"), (None, "2020-01-01T00:00:00.000Z"), (3_600_500, None)]


@pytest.mark.parametrize("chunk", ["1", "2", "1000"])
def test_snapshot_rows_are_marked_as_debezium_marks_them(mariadb_params, chunk):
    """source.snapshot: first / first_in_data_collection / true / last_in_data_collection / last (Debezium
    3.6.3, measured), on the columnar path (keyed tables, in chunks) and the row path (keyless table)."""
    db = "mysqlsv_marks"
    _sql(mariadb_params, *_fresh(db), *[f"CREATE TABLE {db}.{t} (id INT PRIMARY KEY)" for t in "ab"],
         *[f"CREATE TABLE {db}.{t} (v INT)" for t in "cd"], f"INSERT INTO {db}.a VALUES (1), (2), (3)",
         f"INSERT INTO {db}.b VALUES (1)", f"INSERT INTO {db}.c VALUES (1), (2)", f"INSERT INTO {db}.d VALUES (1), (2)")
    events, _ = _drain(_connector(mariadb_params, **{"database.include.list": db, "snapshot.chunk.size": chunk,
                                                     "snapshot.mode": "initial_only"}), ResumeState())
    marks = [(e["topic"].rsplit(".", 1)[1], json.loads(e["value"])["source"]["snapshot"], e["snapshot"])
             for e in events if e["op"] == "r"]
    assert [(t, m) for t, m, _ in marks] == [
        ("a", "first"), ("a", "true"), ("a", "last_in_data_collection"), ("b", "last_in_data_collection"),
        ("c", "first_in_data_collection"), ("c", "last_in_data_collection"), ("d", "first_in_data_collection"),
        ("d", "last")]
    assert all(m == text for _, m, text in marks)  # the bronze column says the same


@pytest.mark.parametrize("chunk", ["1", "1000"])
def test_snapshot_marks_of_a_one_row_first_table_and_an_empty_last_table(mariadb_params, chunk):
    """A first table with one row: "first" (it wins over last_in_data_collection); an empty last table: the
    last row of the table before it is "last" (Debezium 3.6.3, measured by tests/conformance)."""
    db = "mysqlsv_marks1"
    _sql(mariadb_params, *_fresh(db), *[f"CREATE TABLE {db}.{t} (id INT PRIMARY KEY)" for t in "abc"],
         f"INSERT INTO {db}.a VALUES (1)", f"INSERT INTO {db}.b VALUES (1), (2)")
    events, _ = _drain(_connector(mariadb_params, **{"database.include.list": db, "snapshot.chunk.size": chunk,
                                                     "snapshot.mode": "initial_only"}), ResumeState())
    marks = [(e["topic"].rsplit(".", 1)[1], json.loads(e["value"])["source"]["snapshot"], e["snapshot"])
             for e in events if e["op"] == "r"]
    assert [(t, m) for t, m, _ in marks] == [("a", "first"), ("b", "first_in_data_collection"), ("b", "last")]
    assert all(m == text for _, m, text in marks)
