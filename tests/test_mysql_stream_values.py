"""Streamed values equal the snapshot's and the real Debezium 3.6.3 MySQL connector's (measured on MariaDB
10.11 with tests/mysql_debezium.py) for the types where the binlog stores a value differently from the
text the snapshot reads: negative TIME with a fraction, BINARY(n) (trailing zero bytes not stored), an empty
SET (stored as a zero bit mask), 4-byte FLOAT, geometry with SRID 0; and a DELETE on a table without a
primary key is followed by a tombstone with a null key. Both binlog decoders are checked: the fast row
decoder and mysql-replication's (the fallback). Databases are named mysqlsv_*."""

from __future__ import annotations

import base64
import itertools
import json
import os

import pymysql
import pytest

from ingest.config import SourceSettings
from ingest.connectors.base import BatchLimits, ResumeState
from ingest.connectors.mysql import MySqlConnector
from ingest.connectors.mysql.streaming import Streamer

pytestmark = pytest.mark.integration
DB = "mysqlsv_values"
_ids = itertools.count(1)

COLUMNS = ("tm6 TIME(6), tm3 TIME(3), tm1 TIME(1), bn BINARY(4), s SET('x','y'), pt POINT, g GEOMETRY, "
           "f FLOAT, f72 FLOAT(7,2)")
ROW = ("'-01:00:00.250000', '-12:34:56.789', '-10:00:00.1', x'01', '', ST_GeomFromText('POINT(1 2)'), "
       "ST_GeomFromText('LINESTRING(0 0,1 1)'), 0.3, 12345.67")
# Debezium 3.6.3, snapshot and streaming alike
EXPECTED = {"tm6": -3_600_250_000, "tm3": -45_296_789_000, "tm1": -36_000_100_000,
            "bn": base64.b64encode(b"\x01\x00\x00\x00").decode(), "s": "", "f": 0.3, "f72": 12345.669921875}


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
            events += block.columns.select(["topic", "op", "key", "value", "seq", "position"]).to_pylist()
        events += [{"topic": e.topic, "op": e.op, "key": e.key, "value": e.value, "seq": e.seq,
                    "position": e.position} for e in batch.events]
        if batch.caught_up:
            break
    conn.close()
    events.sort(key=lambda e: e["seq"])
    if events:
        last = ResumeState(events[-1]["seq"], json.loads(events[-1]["position"]))
    return events, last or resume


@pytest.fixture(scope="module")
def captured(mariadb_params):
    """Snapshot of one row, then the same row inserted, and a keyless insert + delete, streamed."""
    conn = pymysql.connect(**mariadb_params, autocommit=True)
    with conn.cursor() as cur:
        cur.execute(f"DROP DATABASE IF EXISTS {DB}")
        cur.execute(f"CREATE DATABASE {DB}")
        cur.execute(f"CREATE TABLE {DB}.v (id INT NOT NULL, {COLUMNS}, PRIMARY KEY (id))")
        cur.execute(f"CREATE TABLE {DB}.nokey (a INT, b VARCHAR(5))")
        cur.execute(f"INSERT INTO {DB}.v VALUES (1, {ROW})")
    snapshot, state = _drain(_connector(mariadb_params), ResumeState())
    with conn.cursor() as cur:
        cur.execute(f"INSERT INTO {DB}.v VALUES (2, {ROW})")
        cur.execute(f"INSERT INTO {DB}.nokey VALUES (1, 'a'), (2, 'b')")
        cur.execute(f"DELETE FROM {DB}.nokey WHERE a = 1")
    conn.close()
    return snapshot, state


@pytest.mark.parametrize("fast", [True, False], ids=["fast-decoder", "mysql-replication"])
def test_streamed_values_equal_snapshot_and_debezium(mariadb_params, captured, fast, monkeypatch):
    snapshot, state = captured
    monkeypatch.setattr(Streamer, "fast_rows", fast)
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
