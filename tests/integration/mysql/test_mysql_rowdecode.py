"""Parity of the fast binlog reading (the hot path of ingest.connectors.mysql.binlog_reader and the row decoder
ingest.connectors.mysql.rowdecode) with the generic path (every event read by mysql-replication, its row decoding +
codec.row) on real binlog events from the running MariaDB.

Every MariaDB type row of tests/unit/test_mysql_types.py and tests/integration/mysql/test_mysql_live.py is written,
updated (including a primary-key change and a MINIMAL row image) and deleted, a table is altered between rows; the
same binlog range is streamed twice, with `MySqlStreamingSource.fast_rows` and `hot_path` off and on, and the bronze
events must be identical (envelope JSON, keys, seq, positions) apart from the processing timestamps. Databases are
named mysqlfast_*."""

from __future__ import annotations

import base64
import itertools
import json
import os

import pymysql
import pytest

from ingest.bronze.contract import BatchLimits, ResumeState
from ingest.config import SourceSettings
from ingest.connectors.mysql import MySqlConnector, binlog_reader, streaming
from ingest.connectors.mysql.streaming import MySqlStreamingSource

pytestmark = pytest.mark.integration
DB = "mysqlfast_types"
_ids = itertools.count(1)

# table -> (column definitions after `id INT NOT NULL`, rows of SQL literals for the other columns)
TABLES: dict[str, tuple[str, list[str]]] = {
    "ints": ("ti TINYINT, tiu TINYINT UNSIGNED, t1 TINYINT(1), si SMALLINT, siu SMALLINT UNSIGNED, mi MEDIUMINT, "
             "miu MEDIUMINT UNSIGNED, i INT, iu INT UNSIGNED, bi BIGINT, biu BIGINT UNSIGNED, bo BOOLEAN, "
             "nn INT NOT NULL",
             ["-128, 255, 1, -32768, 65535, -8388608, 16777215, -2147483648, 4294967295, -9223372036854775808, "
              "18446744073709551615, TRUE, -1",
              "127, 0, 0, 32767, 0, 8388607, 0, 2147483647, 0, 9223372036854775807, 9223372036854775808, FALSE, 0",
              "NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 7",
              "-1, 1, 1, -1, 1, -1, 1, -1, 1, -1, 1, TRUE, 42"]),
    "floats": ("f FLOAT, f10 FLOAT(10), f30 FLOAT(30), f72 FLOAT(7,2), d DOUBLE, r REAL, y YEAR, b1 BIT(1), "
               "b10 BIT(10), b64 BIT(64), b8 BIT(8)",
               ["1.5, -3.25, 1e300, 12345.67, -2.2250738585072014e-308, 0.1, 2024, b'1', b'1000000101', "
                "b'1111111111111111111111111111111111111111111111111111111111111111', b'10000000'",
                "-0.0, 3.4e38, -1e-300, -0.01, 1.7976931348623157e308, -0.5, 1901, b'0', b'0', b'0', b'0'",
                "NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL",
                "0, 0, 0, 0, 0, 0, 0000, b'1', b'1', b'1', b'11111111'"]),
    "decimals": ("d102 DECIMAL(10,2), d50 DECIMAL(5,0), d3010 DECIMAL(30,10), d6530 DECIMAL(65,30), "
                 "d44 DECIMAL(4,4), n189 NUMERIC(18,9), d1814 DECIMAL(18,14), d2 DECIMAL(2,1)",
                 ["12.34, 99999, 12345678901234567890.0123456789, "
                  "12345678901234567890123456789012345.123456789012345678901234567890, 0.9999, "
                  "123456789.123456789, 1234.56789012345678, 9.9",
                  "-0.01, -99999, -12345678901234567890.0123456789, "
                  "-12345678901234567890123456789012345.123456789012345678901234567890, -0.9999, "
                  "-123456789.123456789, -1234.56789012345678, -9.9",
                  "0, 0, 0, 0, 0, 0, 0, 0",
                  "NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL",
                  "-123456.7, 1, 0.0000000001, -0.000000000000000000000000000001, 0.0001, -0.000000001, "
                  "-0.00000000000001, -0.1"]),
    "times": ("da DATE, dann DATE NOT NULL, dt DATETIME, dt1 DATETIME(1), dt3 DATETIME(3), dt5 DATETIME(5), "
              "dt6 DATETIME(6), dtnn DATETIME NOT NULL, ts TIMESTAMP NULL, ts2 TIMESTAMP(2) NULL, "
              "ts6 TIMESTAMP(6) NULL, tm TIME, tm3 TIME(3), tm6 TIME(6), tm1 TIME(1)",
              ["'2018-06-20', '1969-12-31', '2018-06-20 06:37:03', '2018-06-20 06:37:03.5', "
               "'2018-06-20 06:37:03.123', '1960-01-01 00:00:00.12345', '2018-06-20 06:37:03.000005', "
               "'9999-12-31 23:59:59', '2018-06-20 13:37:03', '2018-06-20 13:37:03.12', "
               "'2038-01-19 03:14:07.999999', '10:15:30', '10:15:30.123', '838:59:59.000000', '-00:00:01.5'",
               "'0000-00-00', '0000-00-00', '0000-00-00 00:00:00', '0000-00-00 00:00:00.0', "
               "'2020-00-10 00:00:00.000', '2020-01-00 00:00:00', '1000-01-01 00:00:00.000001', "
               "'0000-00-00 00:00:00', '0000-00-00 00:00:00', '1970-01-01 00:00:01.5', '0000-00-00 00:00:00', "
               "'-838:59:59', '-10:15:30.123', '-00:00:00.000001', '00:00:00'",
               "NULL, '1000-01-01', NULL, NULL, NULL, NULL, NULL, '1000-01-01 00:00:00', NULL, NULL, NULL, NULL, "
               "NULL, NULL, NULL",
               "'2020-02-29', '2020-00-00', '1970-01-01 00:00:00', '1999-12-31 23:59:59.9', "
               "'2000-01-01 00:00:00.001', '2000-01-01 00:00:00.99999', '1899-12-31 23:59:59.999999', "
               "'2020-02-29 12:00:00', '1970-01-01 00:00:01', '2000-01-01 00:00:00.01', "
               "'2000-01-01 00:00:00.000001', '00:00:00', '-00:00:00.500', '12:00:00.999999', '-01:00:00.1'"]),
    "strings": ("c3 CHAR(3), vc VARCHAR(300) CHARACTER SET utf8mb4, v20 VARCHAR(20) CHARACTER SET latin1, "
                "va VARCHAR(10) CHARACTER SET ascii, tt TINYTEXT, tx TEXT CHARACTER SET utf8mb4, mt MEDIUMTEXT, "
                "lt LONGTEXT, bn BINARY(4), vb VARBINARY(8), bl BLOB, tb TINYBLOB, lb LONGBLOB, js JSON, "
                "e ENUM('a','b','c d'), s SET('x','y','z'), u UUID, i6 INET6, i4 INET4, c255 CHAR(255) "
                "CHARACTER SET utf8mb4",
                ["'abc', 'héllo wörld 🎉', 'café', 'plain', 'tiny', '日本語テキスト', 'medium', 'long', x'00010203', "
                 "x'fbff', x'000102fffe', x'ff', x'deadbeef', '{\"a\": [1, 2.5, \"x\"], \"b\": null}', 'c d', "
                 "'z,x', '123e4567-e89b-12d3-a456-426614174000', '2001:db8::1', '192.168.0.1', 'pad'",
                 "'', '', '', '', '', '', '', '', x'', x'', x'', x'', x'', '[]', 'a', '', "
                 "'00000000-0000-0000-0000-000000000000', '::', '0.0.0.0', ''",
                 "NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, "
                 "NULL, NULL, NULL, NULL",
                 "'a''b', REPEAT('é', 300), 'x', 'y', 'z', REPEAT('long text ', 100), 'm', REPEAT('L', 70000), "
                 "x'ffffffff', x'0000000000000000', REPEAT(x'ab', 1000), x'', REPEAT(x'cd', 70000), "
                 "'{\"k\": \"v\"}', 'b', 'x,y,z', NULL, NULL, NULL, REPEAT('ü', 255)"]),
    "geo": ("pt POINT, g GEOMETRY, pg POLYGON, ls LINESTRING",
            ["ST_GeomFromText('POINT(1.5 -2)'), ST_GeomFromText('POINT(3 4)'), "
             "ST_GeomFromText('POLYGON((0 0,1 0,1 1,0 1,0 0))'), ST_GeomFromText('LINESTRING(0 0,1 1,2 3)')",
             "ST_GeomFromText('POINT(0 0)', 4326), ST_GeomFromText('LINESTRING(0 0,5 5)'), NULL, NULL",
             "NULL, NULL, NULL, NULL"]),
}
NOPK = ("nopk", "v VARCHAR(10), n INT", ["'a', 1", "'b', NULL"])


@pytest.fixture(scope="module")
def binlog_range(mariadb_params):
    """Creates the tables, captures the schema (no data), then writes, updates and deletes every row.
    Returns (schema history, resume state right after the DDL)."""
    conn = pymysql.connect(**mariadb_params, autocommit=True)
    with conn.cursor() as cur:
        cur.execute(f"DROP DATABASE IF EXISTS {DB}")
        cur.execute(f"CREATE DATABASE {DB} CHARACTER SET utf8mb4")
        for table, (columns, _) in TABLES.items():
            cur.execute(f"CREATE TABLE {DB}.{table} (id INT NOT NULL, {columns}, PRIMARY KEY (id))")
        cur.execute(f"CREATE TABLE {DB}.{NOPK[0]} ({NOPK[1]})")
    first = _drain(_connector(mariadb_params, {"snapshot.mode": "no_data"}), ResumeState())
    ddl = [c for b in first for c in b.schema_changes]
    history = [(c.seq, c.event) for c in ddl]
    last = ddl[-1]
    start = ResumeState(last.seq, json.loads(last.position))
    with conn.cursor() as cur:
        cur.execute("SET SESSION sql_mode = ''")  # zero dates and zero-in-date values
        cur.execute("SET time_zone = '+00:00'")
        for table, (_, rows) in TABLES.items():
            cur.execute(f"INSERT INTO {DB}.{table} VALUES " + ",".join(f"({i}, {r})" for i, r in enumerate(rows, 1)))
            cur.execute(f"UPDATE {DB}.{table} SET id = id + 100 WHERE id = 1")        # primary-key change
            cur.execute(f"UPDATE {DB}.{table} t1 JOIN {DB}.{table} t2 ON t1.id = t2.id + 1 "
                        f"SET t1.{_second_column(table)} = t2.{_second_column(table)}")  # values move between rows
            cur.execute(f"DELETE FROM {DB}.{table} WHERE id = 2")
        cur.execute(f"INSERT INTO {DB}.{NOPK[0]} VALUES " + ",".join(f"({r})" for r in NOPK[2]))
        cur.execute(f"UPDATE {DB}.{NOPK[0]} SET n = 5")
        cur.execute(f"DELETE FROM {DB}.{NOPK[0]} WHERE v = 'a'")
        cur.execute("BEGIN")
        cur.execute("SET SESSION binlog_row_image = 'MINIMAL'")  # partial row images: the generic path
        cur.execute(f"UPDATE {DB}.ints SET i = 5 WHERE id = 3")
        cur.execute(f"DELETE FROM {DB}.ints WHERE id = 3")
        cur.execute("COMMIT")
        cur.execute("SET SESSION binlog_row_image = 'FULL'")
        cur.execute(f"INSERT INTO {DB}.ints (id, nn) VALUES (500, 1)")
        # a changed table map for the same table id's table, then a transaction of several statements
        cur.execute(f"ALTER TABLE {DB}.ints ADD COLUMN extra VARCHAR(5) DEFAULT 'd'")
        cur.execute(f"INSERT INTO {DB}.ints (id, nn, extra) VALUES (501, 2, 'e'), (502, 3, NULL)")
        cur.execute("BEGIN")
        cur.execute(f"UPDATE {DB}.ints SET extra = 'f' WHERE id = 501")
        cur.execute(f"INSERT INTO {DB}.{NOPK[0]} VALUES ('c', 3)")
        cur.execute(f"DELETE FROM {DB}.ints WHERE id = 502")
        cur.execute("COMMIT")
    conn.close()
    return history, start


def _second_column(table: str) -> str:
    return TABLES[table][0].split()[0]


def _connector(mariadb_params, props: dict) -> MySqlConnector:
    sid = 300_000 + (os.getpid() % 40_000) * 10 + next(_ids) % 10
    properties = {"database.hostname": mariadb_params["host"], "database.port": mariadb_params["port"],
                  "database.user": mariadb_params["user"], "database.password": mariadb_params["password"],
                  "database.server.id": sid, "topic.prefix": "fast", "database.include.list": DB, **props}
    return MySqlConnector(SourceSettings(name="src", connector="mariadb", properties=properties))


def _drain(conn: MySqlConnector, resume: ResumeState, max_events: int = 7) -> list:
    out = []
    for batch in conn.batches(resume, BatchLimits(max_events=max_events, max_seconds=10)):
        out.append(batch)
        if batch.caught_up:
            break
    conn.close()
    return out


def _comparable(event) -> dict:
    """Every field of a bronze event; the value text without the processing timestamps (they differ between
    two runs), which orjson writes last: the prefix before them must be byte-identical."""
    value = event.value
    if value is not None:
        cut = value.index(',"ts_ms":')
        assert json.loads(value)["ts_ms"] > 0
        value = value[:cut]
    return {"seq": event.seq, "topic": event.topic, "table_id": event.table_id, "op": event.op, "key": event.key,
            "value": value, "key_schema": event.key_schema, "value_schema": event.value_schema,
            "source_ts_ms": event.source_ts_ms, "txn_id": event.txn_id, "snapshot": event.snapshot,
            "position": event.position}


def _stream(mariadb_params, binlog_range, props, fast: bool, monkeypatch) -> tuple[list, int]:
    """Events of the DML range and how many rows events took the generic path."""
    history, start = binlog_range
    generic_calls = []
    real = streaming._generic_pairs

    def counting(event, codec):
        generic_calls.append(event)
        return real(event, codec)

    monkeypatch.setattr(MySqlStreamingSource, "fast_rows", fast)
    monkeypatch.setattr(MySqlStreamingSource, "hot_path", fast)
    monkeypatch.setattr(streaming, "_generic_pairs", counting)
    conn = _connector(mariadb_params, props)
    conn.restore_schema_history(history)
    batches = _drain(conn, start)
    return [e for b in batches for e in b.events], len(generic_calls)


OPTIONS = {
    "defaults": {},
    "alternative-modes": {"decimal.handling.mode": "string", "bigint.unsigned.handling.mode": "precise",
                          "time.precision.mode": "connect", "binary.handling.mode": "hex",
                          "provide.transaction.metadata": "true", "include.query": "true"},
    "adaptive-double-base64": {"decimal.handling.mode": "double", "time.precision.mode": "adaptive",
                               "binary.handling.mode": "base64-url-safe", "tombstones.on.delete": "false"},
    "column-filter": {"column.exclude.list": f"{DB}.strings.vc,{DB}.times.dt3,{DB}.decimals.d6530"},
}


@pytest.mark.parametrize("props", list(OPTIONS.values()), ids=list(OPTIONS))
def test_fast_decoder_matches_the_generic_path(mariadb_params, binlog_range, props, monkeypatch):
    slow, slow_generic = _stream(mariadb_params, binlog_range, props, False, monkeypatch)
    fast, fast_generic = _stream(mariadb_params, binlog_range, props, True, monkeypatch)
    tables = {e.table_id for e in slow} - {"fast.transaction"}  # BEGIN/END markers with transaction metadata
    assert tables == {f"{DB}.{t}" for t in [*TABLES, NOPK[0]]}
    assert len(slow) >= 60 and slow_generic > 0
    # Only the two MINIMAL-image events (partial row images) take the generic path when fast_rows is on.
    assert fast_generic == 2
    assert len(fast) == len(slow)
    for fast_event, slow_event in zip(fast, slow, strict=True):
        assert _comparable(fast_event) == _comparable(slow_event)


def test_fast_decoder_values(mariadb_params, binlog_range, monkeypatch):
    """A few absolute values, so that the parity above cannot hide a shared mistake."""
    fast, _ = _stream(mariadb_params, binlog_range, {}, True, monkeypatch)
    created = {(e.table_id, json.loads(e.key)["id"]): json.loads(e.value)["after"]
               for e in fast if e.op == "c" and e.key}
    ints = created[(f"{DB}.ints", 1)]
    assert (ints["ti"], ints["tiu"], ints["biu"], ints["bi"], ints["bo"]) == (-128, 255, -1, -(2**63), 1)
    dec = created[(f"{DB}.decimals", 2)]
    assert dec["d102"] == base64.b64encode(b"\xff").decode()  # -0.01 at scale 2: unscaled -1
    assert base64.b64decode(dec["d50"]) == (-99999).to_bytes(3, "big", signed=True)
    wide = created[(f"{DB}.decimals", 1)]  # more than 28 digits: exact (no rounding by a decimal context)
    assert int.from_bytes(base64.b64decode(wide["d6530"]), "big", signed=True) == int(
        "12345678901234567890123456789012345123456789012345678901234567890")
    assert int.from_bytes(base64.b64decode(wide["d3010"]), "big", signed=True) == 123456789012345678900123456789
    times = created[(f"{DB}.times", 1)]
    assert (times["da"], times["dann"], times["dt"], times["dt3"], times["dt6"]) == (
        17702, -1, 1529476623000, 1529476623123, 1529476623000005)
    assert (times["ts"], times["ts2"], times["tm3"]) == ("2018-06-20T13:37:03Z", "2018-06-20T13:37:03.12Z",
                                                         36930123000)
    zero = created[(f"{DB}.times", 2)]
    assert (zero["da"], zero["dann"], zero["dt"], zero["dtnn"]) == (None, 0, None, 0)
    strings = created[(f"{DB}.strings", 1)]
    assert (strings["vc"], strings["v20"], strings["e"], strings["s"]) == ("héllo wörld 🎉", "café", "c d", "x,z")
    assert strings["bn"] == base64.b64encode(b"\x00\x01\x02\x03").decode()
    assert json.loads(strings["js"]) == {"a": [1, 2.5, "x"], "b": None}
    point = created[(f"{DB}.geo", 1)]["pt"]
    assert (point["x"], point["y"], point["srid"]) == (1.5, -2.0, None)  # SRID 0 is null, as in Debezium


def _codec_and_columns(binlog_type: int, **meta):
    """A codec for `db.t (id INT NOT NULL, c INT)` and a matching mysql-replication table map whose second
    column has the given binlog type and metadata."""
    from pymysqlreplication.column import Column as BinlogColumn
    from pymysqlreplication.constants import FIELD_TYPE

    from ingest.connectors.mysql.codec import build_codec
    from ingest.connectors.mysql.filters import Filters
    from ingest.connectors.mysql.types import TypeOptions
    from ingest.schema.model import Column, Table, TableId

    table = Table(TableId("db", None, "t"), [Column("id", "INT", 4, nullable=False), Column("c", "INT", 4)], ["id"])
    codec = build_codec("mariadb", "x", table, Filters(), TypeOptions())
    columns = [BinlogColumn(type=FIELD_TYPE.LONG, name="id", unsigned=False),
               BinlogColumn(type=binlog_type, name="c", unsigned=False, **meta)]
    return codec, columns


def test_plan_falls_back_on_unknown_binlog_types_and_missing_names():
    from pymysqlreplication.constants import FIELD_TYPE

    from ingest.connectors.mysql.rowdecode import _Unsupported, compile_plan
    from ingest.connectors.mysql.types import TypeOptions

    codec, columns = _codec_and_columns(FIELD_TYPE.LONG)
    plan = compile_plan(columns, codec, TypeOptions())
    row = b"\x02" + (7).to_bytes(4, "little", signed=True)  # c is NULL: no bytes
    row2 = b"\x00" + (8).to_bytes(4, "little", signed=True) + (-5).to_bytes(4, "little", signed=True)
    assert plan.read(row + row2, 0) == ({"id": 7, "c": None}, len(row))
    assert plan.read(row + row2, len(row)) == ({"id": 8, "c": -5}, len(row) + len(row2))
    for binlog_type, meta in ((FIELD_TYPE.JSON, {"length_size": 4}), (FIELD_TYPE.DATETIME, {}),
                              (FIELD_TYPE.TIMESTAMP, {}), (FIELD_TYPE.VAR_STRING, {})):
        codec, columns = _codec_and_columns(binlog_type, **meta)
        with pytest.raises(_Unsupported):
            compile_plan(columns, codec, TypeOptions())
    codec, columns = _codec_and_columns(FIELD_TYPE.LONG)
    columns[1].name = None  # binlog_row_metadata != FULL: mysql-replication names it UNKNOWN_COL1
    with pytest.raises(_Unsupported):
        compile_plan(columns, codec, TypeOptions())


def test_hot_path_reads_the_transactions(mariadb_params, binlog_range, monkeypatch):
    """The hot path really reads the range's GTID, XID and rows events and reuses parsed table maps (one before
    every statement); with it off, mysql-replication reads every event."""
    before = dict(binlog_reader.stats)
    _stream(mariadb_params, binlog_range, OPTIONS["alternative-modes"], False, monkeypatch)
    assert binlog_reader.stats == before
    events, _ = _stream(mariadb_params, binlog_range, OPTIONS["alternative-modes"], True, monkeypatch)
    hot = binlog_reader.stats["hot_events"] - before["hot_events"]
    reused = binlog_reader.stats["table_maps_reused"] - before["table_maps_reused"]
    parsed = binlog_reader.stats["table_maps_parsed"] - before["table_maps_parsed"]
    transactions = len({e.txn_id for e in events if e.txn_id})
    assert transactions >= 20
    # a GTID, an XID and at least one rows event per transaction
    assert hot >= 3 * transactions
    # every table's map parsed once, and once more after the ALTER; reused before every later statement
    assert len(TABLES) + 1 < parsed <= len(TABLES) + 3 and reused > parsed
