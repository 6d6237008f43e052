"""The embedded engine's records decoded in Java (debezium_engine/EventColumns.java) against the Python decoder
(debezium_json/records.py, which lakecdc's other sources use) on the real connectors' records: every record of a
PostgreSQL run (snapshot, then streaming: pg_setup's tables with every type, updates, deletes and their tombstones,
key changes, TOASTed values, an added column, a truncate, heartbeats, transaction metadata) and of a MySQL-connector
run against MariaDB (schema change events too, which the Python decoder takes) must give the same bronze row,
field by field, seq included. The Java decoder must take every record but the schema change events itself."""

from __future__ import annotations

import queue
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest

from ingest.bronze.contract import BronzeEvent, BronzeReject, BronzeSchemaChange
from ingest.config import SourceSettings
from ingest.connectors.debezium_engine import jvm
from ingest.connectors.debezium_engine.connector import DebeziumEngineConnector
from ingest.connectors.debezium_engine.decoding import DecodedRecords, RecordDecoder
from ingest.connectors.debezium_engine.offsets import EngineOffsets
from ingest.connectors.debezium_json.records import DecodedSchemaChange, Decoder, RecordError
from tests.support.e2e import (
    PG_SCHEMA,
    maria_server_id,
    pg_debezium_properties,
    pg_drop_slot,
    pg_execute,
    pg_setup,
    pg_workload_1,
    pg_workload_2,
)

pytestmark = [pytest.mark.integration, pytest.mark.slow]

FIELDS = ("topic", "table_id", "op", "seq", "key", "value", "key_schema", "value_schema", "ts_ms", "source_ts_ms",
          "txn_id", "snapshot")
CHANGE_FIELDS = ("seq", "ts_ms", "database_name", "schema_name", "ddl", "table_changes", "event")
MYSQL_DB = "dbz_decode"


def _event(values: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "event", **{name: values[name] for name in FIELDS}}


def _java_outputs(decoded: DecodedRecords) -> dict[int, dict[str, Any]]:
    """Record index -> what lakecdc lands of it, from the rows decoded in Java and the records Python took."""
    out: dict[int, dict[str, Any]] = {}
    for row in decoded.rows.to_pylist():
        row["key_schema"] = decoded.schemas[row["key_schema"]]
        row["value_schema"] = decoded.schemas[row["value_schema"]]
        out[row["at"]] = {**_event(row), "decoded_in": "java"}
    for index, item in decoded.others:
        out[index] = {**_python_output(item), "decoded_in": "python"}
    return out


def _python_output(item: Any) -> dict[str, Any]:
    if type(item) is BronzeEvent:
        return _event({name: getattr(item, name) for name in FIELDS})
    if type(item) in (BronzeSchemaChange, DecodedSchemaChange):
        return {"kind": "schema_change", **{name: getattr(item, name) for name in CHANGE_FIELDS}}
    assert type(item) is BronzeReject, item
    return {"kind": "reject", "stage": item.stage, "error": item.error}


def _reference(decoder: Decoder, texts: tuple[Any, ...]) -> dict[str, Any]:
    try:
        return _python_output(decoder.decode_payloads(*texts))
    except RecordError as exc:
        return {"kind": "reject", "stage": exc.stage, "error": str(exc)}


def compare_run(tmp_path: Path, properties: dict[str, Any], workload: Callable[[], None],
                done: Callable[[dict[str, Any]], bool]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Runs the connector in the embedded engine: each batch decoded by lakecdc (Java, and Python for what Java
    leaves) and, record by record, by a second Python decoder. The workload runs once the connector streams; the
    run ends after the record `done` accepts. Returns (lakecdc's output, the reference's) per record."""
    prefix = properties["topic.prefix"]
    connector = DebeziumEngineConnector(SourceSettings("decode", "debezium", properties))
    engine_properties = connector.properties(tmp_path)
    jvm.start_jvm()
    converter = {key[len("converter."):]: value for key, value in engine_properties.items()
                 if key.startswith("converter.")}
    lakecdc = RecordDecoder(Decoder(prefix, event_type=BronzeEvent), prefix, prefix, converter, EngineOffsets())
    reference = Decoder(prefix, event_type=BronzeEvent)
    pairs: list[tuple[dict[str, Any], dict[str, Any]]] = []

    def decode(records: Any, cut: int, offsets: dict[str, str]) -> DecodedRecords:
        for index in range(records.size()):   # unconverted: their conversion is part of the hand-over (jvm.py)
            assert records.get(index).value().equals(records.get(index).sourceRecord()), index
        decoded = lakecdc.decode(records, cut, offsets)
        outputs = _java_outputs(decoded)
        for index in range(records.size()):
            expected = _reference(reference, lakecdc.texts(records, index))
            pairs.append((outputs.get(index, {"kind": "missing"}), expected))
        return decoded

    engine = jvm.EmbeddedEngine(engine_properties, schema_topic=prefix, decode=decode)
    engine.start()
    try:
        deadline, worked, checked, finished = time.monotonic() + 300, False, 0, False
        while time.monotonic() < deadline:
            assert engine.failure is None, engine.failure
            try:
                engine.queue.get(timeout=0.2).commit()
            except queue.Empty:
                pass
            if not worked and jvm.progress(prefix).connected:
                workload()
                worked = True
            if worked:   # every record since the last look: heartbeats keep coming after the last one awaited
                seen = len(pairs)
                finished = finished or any(done(ours) for ours, _ in pairs[checked:seen])
                checked = seen
            if finished:
                break
        else:
            raise AssertionError(f"the run did not end within 300 s ({len(pairs)} records)")
    finally:
        engine.close()
    return pairs


def assert_same(pairs: list[tuple[dict[str, Any], dict[str, Any]]], expected_kinds: set[str]) -> None:
    for index, (ours, theirs) in enumerate(pairs):
        decoded_in = ours.pop("decoded_in", None)
        differ = {name: (str(ours.get(name))[:300], str(theirs.get(name))[:300])
                  for name in sorted(set(ours) | set(theirs)) if ours.get(name) != theirs.get(name)}
        assert not differ, f"record {index} ({ours.get('topic')}): (lakecdc, the Python decoder) differ in {differ}"
        # the Java decoder takes everything but schema change events (and records it could not decode)
        assert decoded_in == ("python" if ours["kind"] != "event" else "java"), (index, decoded_in, ours)
    kinds = Counter(_kind(ours) for ours, _ in pairs)
    print(f"compared {len(pairs)} records: {dict(kinds)}")
    assert expected_kinds <= set(kinds), f"not every kind of record was compared: {kinds}"


def _kind(output: dict[str, Any]) -> str:
    if output["kind"] != "event":
        return output["kind"]
    if output["op"]:
        return output["op"]
    if output["value"] is None:
        return "tombstone"
    return "transaction" if output["txn_id"] else "heartbeat"


def test_postgres_records_decode_in_java_as_in_python(pg_dsn: str, tmp_path: Path) -> None:
    dsn = pg_setup(pg_dsn)
    pg_execute(dsn, f"CREATE TABLE {PG_SCHEMA}.marker (id int PRIMARY KEY)")
    properties = {**pg_debezium_properties(pg_dsn), "heartbeat.interval.ms": 200, "skipped.operations": "none",
                  "provide.transaction.metadata": "true"}

    def workload() -> None:
        pg_workload_1(dsn)
        pg_workload_2(dsn)
        pg_execute(dsn, f"TRUNCATE {PG_SCHEMA}.notes", f"INSERT INTO {PG_SCHEMA}.marker VALUES (1)")

    try:
        pairs = compare_run(tmp_path, properties, workload,
                            lambda ours: ours.get("op") == "c" and str(ours.get("table_id")).endswith("marker"))
    finally:
        pg_drop_slot(pg_dsn)
    assert_same(pairs, {"r", "c", "u", "d", "t", "tombstone", "heartbeat", "transaction"})


def test_mysql_records_decode_in_java_as_in_python(mariadb_dbz_url: str, tmp_path: Path) -> None:
    import pymysql

    u = urlparse(mariadb_dbz_url)
    connection = pymysql.connect(host=u.hostname or "127.0.0.1", port=u.port or 3306, user=u.username or "root",
                                 password=u.password or "", autocommit=True)

    def execute(*statements: str) -> None:
        with connection.cursor() as cursor:
            for statement in statements:
                cursor.execute(statement)

    execute(f"DROP DATABASE IF EXISTS {MYSQL_DB}", f"CREATE DATABASE {MYSQL_DB}",
            f"CREATE TABLE {MYSQL_DB}.t (id int PRIMARY KEY, v varchar(20), d decimal(8, 2), at datetime(3), "
            "b blob, f double, j json)",
            f"CREATE TABLE {MYSQL_DB}.marker (id int PRIMARY KEY)",
            f"INSERT INTO {MYSQL_DB}.t VALUES (1, 'a ü', 1.50, '2024-02-29 01:02:03.456', x'00ff', 0.1, "
            "'{\"k\": 1}'), (2, NULL, NULL, NULL, NULL, NULL, NULL)")
    properties = {"connector.class": "io.debezium.connector.mysql.MySqlConnector", "database.hostname": u.hostname,
                  "database.port": u.port, "database.user": u.username or "root", "database.password": u.password or "",
                  "database.server.id": maria_server_id(), "topic.prefix": "decode", "database.include.list": MYSQL_DB,
                  "poll.interval.ms": 100, "heartbeat.interval.ms": 200, "provide.transaction.metadata": "true"}

    def workload() -> None:
        execute(f"INSERT INTO {MYSQL_DB}.t VALUES (3, 'c', 3.50, NOW(3), NULL, 1e300, '[1, null]')",
                f"UPDATE {MYSQL_DB}.t SET v = 'bb', f = -0.0 WHERE id = 2",
                f"UPDATE {MYSQL_DB}.t SET id = 30 WHERE id = 3",
                f"DELETE FROM {MYSQL_DB}.t WHERE id = 1",
                f"ALTER TABLE {MYSQL_DB}.t ADD COLUMN w int DEFAULT 7",
                f"INSERT INTO {MYSQL_DB}.t (id, v) VALUES (4, 'd')",
                f"TRUNCATE TABLE {MYSQL_DB}.t",
                f"INSERT INTO {MYSQL_DB}.marker VALUES (1)")

    try:
        pairs = compare_run(tmp_path, properties, workload,
                            lambda ours: ours.get("op") == "c" and str(ours.get("table_id")).endswith("marker"))
    finally:
        execute(f"DROP DATABASE IF EXISTS {MYSQL_DB}")
        connection.close()
    # no transaction metadata: the MySQL connector does not read MariaDB's transaction boundaries (GTID events)
    assert_same(pairs, {"r", "c", "u", "d", "tombstone", "heartbeat", "schema_change"})


# -- records of every connector's source block, built here: what the real connectors above do not send ---------------
def _schema(jpype: Any, kind: str) -> Any:
    builder = jpype.JClass("org.apache.kafka.connect.data.SchemaBuilder")
    return {"string": builder.string, "int64": builder.int64, "int32": builder.int32}[kind]().optional().build()


def _struct(jpype: Any, name: str, fields: dict[str, tuple[str, Any]]) -> tuple[Any, Any]:
    """A Kafka Connect struct of the given (type, value) fields, and its schema."""
    builder = jpype.JClass("org.apache.kafka.connect.data.SchemaBuilder").struct().name(name).optional()
    for field, (kind, _) in fields.items():
        builder.field(field, kind if not isinstance(kind, str) else _schema(jpype, kind))
    schema = builder.build()
    struct = jpype.JClass("org.apache.kafka.connect.data.Struct")(schema)
    for field, (kind, value) in fields.items():
        if value is not None:
            java = {"int64": jpype.JLong, "int32": jpype.JInt}.get(kind) if isinstance(kind, str) else None
            struct.put(field, java(value) if java else value)
    return struct, schema


def _record(jpype: Any, topic: str, key: dict[str, Any] | None, value: Any) -> Any:
    """An engine record as the engine hands it over (jvm.py: Debezium's Connect format, the source record alone)."""
    key_struct = key_schema = None
    if key is not None:
        key_struct, key_schema = _struct(jpype, "Key", {k: ("int32", v) for k, v in key.items()})
    value_struct, value_schema = value if value is not None else (None, None)
    source = jpype.JClass("org.apache.kafka.connect.source.SourceRecord")(
        jpype.JClass("java.util.HashMap")(), jpype.JClass("java.util.HashMap")(), topic, None, key_schema, key_struct,
        value_schema, value_struct)
    event_class = jpype.JClass("io.debezium.embedded.EmbeddedEngineChangeEvent")
    constructor = event_class.class_.getDeclaredConstructor(jpype.JClass("java.lang.Object"),
                                                            jpype.JClass("java.lang.Object"),
                                                            jpype.JClass("java.util.List"), source.getClass())
    constructor.setAccessible(True)
    return constructor.newInstance(None, source, jpype.JClass("java.util.ArrayList")(), source)


SOURCE_TYPES = {"connector": "string", "db": "string", "schema": "string", "table": "string", "collection": "string",
                "ts_ms": "int64", "snapshot": "string", "txId": "int64", "sequence": "string", "lsn": "int64",
                "file": "string", "pos": "int64", "row": "int32", "gtid": "string", "commit_lsn": "string",
                "change_lsn": "string", "event_serial_no": "int64", "scn": "string", "commit_scn": "string",
                "ssn": "int64", "ord": "int32", "txnNumber": "int64"}
PG = {"connector": "postgresql", "db": "d", "schema": "s", "table": "t", "ts_ms": 5, "txId": 7}
# (what the case tests, source block fields) of a `c` event each; "type:" in a value overrides the field's type
SOURCE_CASES = [
    ("pg sequence", {**PG, "sequence": '["100","200"]', "lsn": 200}),
    ("pg sequence null first", {**PG, "sequence": '[null,"201"]', "lsn": 201}),
    ("pg sequence empty texts", {**PG, "sequence": '["",""]'}),
    ("pg sequence numbers", {**PG, "sequence": "[1,2]"}),
    ("pg sequence with spaces (Python's)", {**PG, "sequence": '[ "1", "2"]'}),
    ("pg sequence of one, lsn instead (Python's)", {**PG, "sequence": '["1"]', "lsn": 9}),
    ("pg sequence empty (lsn instead)", {**PG, "sequence": "", "lsn": 10}),
    ("pg sequence not JSON (reject)", {**PG, "sequence": "[1,2"}),
    ("pg lsn alone", {**PG, "lsn": 11}),
    ("pg negative lsn (reject)", {**PG, "lsn": -1}),
    ("pg nothing (source ts_ms)", {**PG}),
    ("pg huge sequence (Python's)", {**PG, "sequence": '["18446744073709551615","1"]'}),
    ("pg too big sequence (reject)", {**PG, "sequence": '["18446744073709551616","1"]'}),
    ("mysql", {"connector": "mysql", "db": "d", "table": "t", "file": "mysql-bin.000003", "pos": 154, "row": 2,
               "gtid": "0-1-5", "ts_ms": 1}),
    ("mariadb row null", {"connector": "mariadb", "db": "d", "table": "t", "file": "b.000010", "pos": 4,
                          "ts_ms": 1}),
    ("mysql file without number (reject)", {"connector": "mysql", "db": "d", "table": "t", "file": "binlog",
                                            "pos": 4}),
    ("mysql file empty", {"connector": "mysql", "db": "d", "table": "t", "file": "", "pos": 4}),
    ("mysql no pos (source ts_ms)", {"connector": "mysql", "db": "d", "table": "t", "file": "b.1", "ts_ms": 3}),
    ("sqlserver", {"connector": "sqlserver", "db": "d", "schema": "dbo", "table": "t", "ts_ms": 2,
                   "commit_lsn": "00000027:00000758:0005", "change_lsn": "00000027:00000758:0003",
                   "event_serial_no": 1}),
    ("sqlserver no commit lsn", {"connector": "sqlserver", "db": "d", "schema": "dbo", "table": "t",
                                 "change_lsn": "0000002A:00000758:0003", "event_serial_no": 2}),
    ("sqlserver no lsn (source ts_ms)", {"connector": "sqlserver", "db": "d", "schema": "dbo", "table": "t",
                                         "ts_ms": 44}),
    ("sqlserver bad lsn (reject)", {"connector": "sqlserver", "db": "d", "schema": "dbo", "table": "t",
                                    "commit_lsn": "zz:01"}),
    ("sqlserver lsn too long (reject)", {"connector": "sqlserver", "db": "d", "schema": "dbo", "table": "t",
                                         "commit_lsn": "1" + "0" * 20}),
    ("sqlserver serial too big (reject)", {"connector": "sqlserver", "db": "d", "schema": "dbo", "table": "t",
                                           "commit_lsn": "00000027:00000758:0005", "event_serial_no": 2**33}),
    ("oracle", {"connector": "oracle", "db": "ORCL", "schema": "APP", "table": "T", "scn": "123456789",
                "commit_scn": "123456790", "ssn": 0, "ts_ms": 1}),
    ("oracle commit scn empty", {"connector": "oracle", "db": "ORCL", "schema": "APP", "table": "T",
                                 "scn": "500", "commit_scn": ""}),
    ("oracle commit scn zero text", {"connector": "oracle", "db": "ORCL", "schema": "APP", "table": "T",
                                     "scn": "500", "commit_scn": "0"}),
    ("oracle scn with a space (Python's)", {"connector": "oracle", "db": "ORCL", "schema": "APP", "table": "T",
                                            "scn": " 12"}),
    ("mongodb", {"connector": "mongodb", "db": "inventory", "collection": "customers", "ts_ms": 1700000000000,
                 "ord": 3, "txnNumber": 12}),
    ("mongodb no ord (source ts_ms)", {"connector": "mongodb", "db": "inventory", "collection": "c",
                                       "ts_ms": 1700000000001}),
    ("another connector (source ts_ms)", {"connector": "db2", "db": "d", "schema": "s", "table": "t", "ts_ms": 8}),
    ("no table (topic's)", {**PG, "table": "", "lsn": 12}),
    ("names beyond ASCII", {**PG, "schema": "sché", "table": "täble", "lsn": 13}),
    ("snapshot marker", {**PG, "lsn": 14, "snapshot": "last"}),
]


def test_every_connectors_source_block_decodes_in_java_as_in_python() -> None:
    """Records built here with each connector's source block (SQL Server, Oracle, MongoDB, MySQL, PostgreSQL and
    the fallback), unusual values included (which Python decodes, or rejects), tombstones, a heartbeat, transaction
    markers, a schema change, a key long enough for several hash blocks: decoded by lakecdc as by the Python
    decoder, in one batch (the state they share crosses at the records Python takes)."""
    import jpype

    jvm.start_jvm()

    def envelope(op: str, source: dict[str, Any] | None, **extra: tuple[str, Any]) -> tuple[Any, Any]:
        fields: dict[str, tuple[Any, Any]] = {}
        if source is not None:
            source_struct, source_schema = _struct(jpype, "Source", {
                name: (SOURCE_TYPES[name], value) for name, value in source.items()})
            fields["source"] = (source_schema, source_struct)
        fields.update({"op": ("string", op), "ts_ms": ("int64", 99), **extra})
        return _struct(jpype, "Envelope", fields)

    records = []
    for index, (_, source) in enumerate(SOURCE_CASES):
        records.append(_record(jpype, "p.s.t", {"id": index}, envelope("c", source)))
    transaction, transaction_schema = _struct(jpype, "Transaction", {"id": ("string", "571:1234"),
                                                                    "total_order": ("int64", 1)})
    records += [
        _record(jpype, "p.s.t", {"id": 1}, None),                              # a tombstone
        _record(jpype, "p.s.other", {"id": 1}, None),                          # one of a topic not seen
        _record(jpype, "p.s.t", {"id": 2}, envelope("u", PG | {"lsn": 20},
                                                               transaction=(transaction_schema, transaction))),
        _record(jpype, "p.s.t", {"id": 3}, envelope("x", PG | {"lsn": 21})),   # unknown op (reject)
        _record(jpype, "p.s.t", {"id": 4}, envelope("d", None)),               # no source block
        _record(jpype, "p.s.t", {"id": 5}, envelope("c", PG | {"lsn": 22}, ts_ms=("string", "123"))),
        _record(jpype, "p.s.t", {"id": 6}, envelope("t", PG | {"lsn": 23})),
        _record(jpype, "__debezium-heartbeat.p", {"id": 0},
                _struct(jpype, "Heartbeat", {"ts_ms": ("int64", 1234)})),
        _record(jpype, "__debezium-heartbeat.p", {"id": 0},   # hashed over several blocks
                _struct(jpype, "Heartbeat", {"ts_ms": ("int64", 1235), "note": ("string", "ü" * 300)})),
        _record(jpype, "p.transaction", {"id": 0},
                _struct(jpype, "Tx", {"status": ("string", "BEGIN"), "id": ("string", "571:1234"),
                                      "ts_ms": ("int64", 5)})),
        _record(jpype, "p.transaction", {"id": 0},
                _struct(jpype, "Tx", {"status": ("string", "END"), "id": ("string", "571:1234"),
                                      "event_count": ("int64", 2), "ts_ms": ("int64", 6)})),
        _record(jpype, "p", None, _struct(jpype, "SchemaChange", {
            "source": _struct(jpype, "Source", {"connector": ("string", "mysql"), "file": ("string", "b.000001"),
                                                "pos": ("int64", 7), "ts_ms": ("int64", 1)})[::-1],
            "ddl": ("string", "CREATE TABLE t (id int)"), "databaseName": ("string", "d"),
            "ts_ms": ("int64", 8)})),
        _record(jpype, "p.s.t", {"id": 7}, None),                              # after the schema change
        _record(jpype, "p.s.t", {"id": 10**9}, envelope("c", PG | {"lsn": 24, "table": "t" * 300})),
    ]
    batch = jpype.JClass("java.util.ArrayList")()
    for record in records:
        batch.add(record)
    lakecdc = RecordDecoder(Decoder("p", event_type=BronzeEvent), "p", "p",
                            {"schemas.enable": "false", "replace.null.with.default": "false"},
                            EngineOffsets())
    reference = Decoder("p", event_type=BronzeEvent)
    decoded = lakecdc.decode(batch, batch.size(), {})
    ours = _java_outputs(decoded)
    pairs = [(ours[index], _reference(reference, lakecdc.texts(batch, index))) for index in range(batch.size())]
    for index, (mine, theirs) in enumerate(pairs):
        what = SOURCE_CASES[index][0] if index < len(SOURCE_CASES) else f"record {index}"
        decoded_in = mine.pop("decoded_in")
        assert mine == theirs, f"{what}: lakecdc {mine} != the Python decoder {theirs}"
        python_cases = ("(reject)", "(Python's)")
        if index < len(SOURCE_CASES) and not what.endswith(python_cases):
            assert decoded_in == "java", what
    kinds = Counter(_kind(mine) for mine, _ in pairs)
    assert {"c", "u", "d", "t", "tombstone", "heartbeat", "transaction", "schema_change", "reject"} <= set(kinds), kinds
    assert kinds["reject"] >= 7, kinds


def test_blake2b_in_java_is_hashlibs() -> None:
    """The Java BLAKE2b (8-byte digest) gives hashlib's digest for every length around the 128-byte blocks."""
    import hashlib
    import random

    import jpype

    from ingest.connectors.debezium_engine.decoding import event_columns_class

    jvm.start_jvm()
    blake = event_columns_class().Blake2b64
    rng = random.Random(7)
    for length in [*range(0, 300), 511, 512, 513, 4096]:
        data = bytes(rng.randrange(256) for _ in range(length))
        digest = int(blake.hash(jpype.JArray(jpype.JByte)(data))) & (2**64 - 1)
        assert digest.to_bytes(8, "little") == hashlib.blake2b(data, digest_size=8).digest(), length
