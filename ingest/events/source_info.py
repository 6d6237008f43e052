"""The `source` block of every change event: its Kafka Connect schema and payload builders, per connector.

Each connector's layout is Debezium 3.6.3's, read from the SourceInfoStructMaker schemas in the 3.6.3
jars (sqlserver, oracle, mysql, postgresql, mongodb): the common head version, connector, name, ts_ms,
snapshot, db, sequence, ts_us, ts_ns, then the connector's own fields. MariaDB (no connector jar in the
3.6.3 wheel) has the MySQL layout: Debezium 3.x's MariaDbSourceInfoStructMaker is the binlog connectors'
shared struct maker (BinlogSourceInfoStructMaker) under the name io.debezium.connector.mariadb.Source.
docs/events.md lists where the older examples of Debezium's documentation (tests/golden) differ.

`VERSION` is source.version of every lakecdc connector (one constant; Debezium writes its own release).

`snapshot` is the io.debezium.data.Enum string (default "false") everywhere: "first",
"first_in_data_collection", "true", "last_in_data_collection", "last" by a snapshot row's position,
"false" while streaming, "incremental". `snapshot_value()` turns True/False into "true"/"false".

The builders take keyword arguments and return a dict in schema order (the JSON key order). Values are
not type-checked on this hot path: connectors pass the Connect type (int for int64, str for string).
"""

from __future__ import annotations

from typing import Any

from ingest import __version__
from ingest.errors import LakecdcError
from ingest.events import connect_schema as cs

VERSION = f"lakecdc-{__version__}"

CONNECTORS = ("sqlserver", "oracle", "mysql", "mariadb", "postgresql", "mongodb")

# Connect schema name of the source struct: note MongoDB's `mongo`, not `mongodb`.
SOURCE_SCHEMA_NAMES = {
    "sqlserver": "io.debezium.connector.sqlserver.Source",
    "oracle": "io.debezium.connector.oracle.Source",
    "mysql": "io.debezium.connector.mysql.Source",
    "mariadb": "io.debezium.connector.mariadb.Source",
    "postgresql": "io.debezium.connector.postgresql.Source",
    "mongodb": "io.debezium.connector.mongo.Source",
}

SNAPSHOT_ENUM = cs.debezium_enum(cs.SNAPSHOT_ALLOWED, optional=True, default="false")

S = cs.string
I64 = cs.int64
I32 = cs.int32

# The 3.x common head of every Debezium source block (read from the 3.6.3 jars' SourceInfoStructMakers).
_COMMON_HEAD = [
    ("version", S()), ("connector", S()), ("name", S()), ("ts_ms", I64()), ("snapshot", SNAPSHOT_ENUM),
    ("db", S()), ("sequence", S(True)), ("ts_us", I64(True)), ("ts_ns", I64(True)),
]

# BinlogSourceInfoStructMaker's own fields (MySQL and MariaDB)
_BINLOG = [
    ("table", S(True)), ("server_id", I64()), ("gtid", S(True)), ("file", S()), ("pos", I64()), ("row", I32()),
    ("thread", I64(True)), ("query", S(True)),
]

_FIELDS: dict[str, list[tuple[str, cs.Schema]]] = {
    "sqlserver": _COMMON_HEAD + [
        ("schema", S()), ("table", S()), ("change_lsn", S(True)), ("commit_lsn", S(True)),
        ("event_serial_no", I64(True)),
    ],
    "oracle": _COMMON_HEAD + [
        ("schema", S()), ("table", S()), ("txId", S(True)), ("scn", S(True)), ("commit_scn", S(True)),
        ("lcr_position", S(True)), ("rs_id", S(True)), ("ssn", I64(True)), ("redo_thread", I32(True)),
        ("user_name", S(True)), ("redo_sql", S(True)), ("row_id", S(True)), ("commit_ts_ms", I64(True)),
        ("start_scn", S(True)), ("start_ts_ms", I64(True)), ("txSeq", I64(True)),
    ],
    "mysql": _COMMON_HEAD + _BINLOG,
    "mariadb": _COMMON_HEAD + _BINLOG,  # the binlog connectors' shared struct maker (3.x)
    "postgresql": _COMMON_HEAD + [
        ("schema", S()), ("table", S()), ("txId", I64(True)), ("lsn", I64(True)), ("xmin", I64(True)),
        ("origin", S(True)), ("origin_lsn", I64(True)),
    ],
    "mongodb": _COMMON_HEAD + [
        ("collection", S()), ("ord", I32()), ("lsid", S(True)), ("txnNumber", I64(True)), ("wallTime", I64(True)),
    ],
}

# Source struct schema version: 1 in every 3.6.3 jar (AbstractSourceInfoStructMaker's common builder).
SOURCE_SCHEMAS: dict[str, cs.Schema] = {
    c: cs.struct(_FIELDS[c], False, name=SOURCE_SCHEMA_NAMES[c], version=1) for c in CONNECTORS
}
SOURCE_FIELDS: dict[str, tuple[str, ...]] = {c: tuple(n for n, _ in _FIELDS[c]) for c in CONNECTORS}


def check_connector(connector: str) -> str:
    if connector not in SOURCE_SCHEMAS:
        raise LakecdcError(f"unknown connector {connector!r}; expected one of {', '.join(CONNECTORS)}")
    return connector


def source_schema(connector: str) -> cs.Schema:
    return SOURCE_SCHEMAS[check_connector(connector)]


def snapshot_value(connector: str, snapshot: bool | str | None) -> str | None:
    """The `snapshot` payload value: True/False -> "true"/"false"; enum strings ("first", "last", ...) as
    they are; None stays None. (`connector` is kept for callers; every 3.x layout has the enum.)"""
    if snapshot is True:
        return "true"
    if snapshot is False:
        return "false"
    return snapshot


def snapshot_text(snapshot: bool | str | None) -> str | None:
    """source.snapshot as the bronze `snapshot` column holds it: "true", "false", "incremental", ..."""
    if snapshot is None:
        return None
    if snapshot is True:
        return "true"
    if snapshot is False:
        return "false"
    return str(snapshot)


def build_source(connector: str, **values: Any) -> dict[str, Any]:
    """Generic builder: every field of the connector's layout in order, missing ones None. Unknown keyword
    names raise (a typo would otherwise silently drop a value)."""
    fields = SOURCE_FIELDS[check_connector(connector)]
    unknown = set(values) - set(fields)
    if unknown:
        raise LakecdcError(f"{connector} source has no field(s) {', '.join(sorted(unknown))}")
    out = {f: values.get(f) for f in fields}
    out["connector"] = values.get("connector") or connector
    if "snapshot" in values:
        out["snapshot"] = snapshot_value(connector, values["snapshot"])
    return out


# Typed builders: one literal dict each (the cheapest way to build the block per event).

def _us_ns(ts_ms: int | None, ts_us: int | None, ts_ns: int | None) -> tuple[int | None, int | None]:
    """ts_us/ts_ns default to ts_ms scaled (a caller with a finer clock passes them)."""
    if ts_us is None and ts_ms is not None:
        ts_us = ts_ms * 1000
    if ts_ns is None and ts_us is not None:
        ts_ns = ts_us * 1000
    return ts_us, ts_ns


def sqlserver_source(
    *, version: str, name: str, ts_ms: int, db: str, schema: str, table: str, snapshot: bool | str | None = False,
    change_lsn: str | None = None, commit_lsn: str | None = None, event_serial_no: int | None = None,
    sequence: str | None = None, ts_us: int | None = None, ts_ns: int | None = None,
) -> dict[str, Any]:
    ts_us, ts_ns = _us_ns(ts_ms, ts_us, ts_ns)
    return {
        "version": version, "connector": "sqlserver", "name": name, "ts_ms": ts_ms,
        "snapshot": snapshot_value("sqlserver", snapshot), "db": db, "sequence": sequence, "ts_us": ts_us,
        "ts_ns": ts_ns, "schema": schema, "table": table,
        "change_lsn": change_lsn, "commit_lsn": commit_lsn, "event_serial_no": event_serial_no,
    }


def oracle_source(
    *, name: str, db: str, schema: str, table: str, version: str | None = None, ts_ms: int | None = None,
    ts_us: int | None = None, ts_ns: int | None = None, snapshot: bool | str | None = False,
    txId: str | None = None, scn: str | None = None, commit_scn: str | None = None,  # noqa: N803
    lcr_position: str | None = None, rs_id: str | None = None, ssn: int | None = None,
    redo_thread: int | None = None, user_name: str | None = None, row_id: str | None = None,
    commit_ts_ms: int | None = None, start_scn: str | None = None, start_ts_ms: int | None = None,
    sequence: str | None = None, redo_sql: str | None = None, txSeq: int | None = None,  # noqa: N803
) -> dict[str, Any]:
    return {
        "version": version, "connector": "oracle", "name": name, "ts_ms": ts_ms,
        "snapshot": snapshot_value("oracle", snapshot), "db": db, "sequence": sequence, "ts_us": ts_us,
        "ts_ns": ts_ns, "schema": schema, "table": table,
        "txId": txId, "scn": scn, "commit_scn": commit_scn, "lcr_position": lcr_position, "rs_id": rs_id,
        "ssn": ssn, "redo_thread": redo_thread, "user_name": user_name, "redo_sql": redo_sql, "row_id": row_id,
        "commit_ts_ms": commit_ts_ms, "start_scn": start_scn, "start_ts_ms": start_ts_ms, "txSeq": txSeq,
    }


def mysql_source(
    *, version: str, name: str, ts_ms: int, db: str, server_id: int, file: str, pos: int, table: str | None = None,
    row: int = 0, snapshot: bool | str | None = False, gtid: str | None = None, thread: int | None = None,
    query: str | None = None, sequence: str | None = None, ts_us: int | None = None, ts_ns: int | None = None,
    connector: str = "mysql",
) -> dict[str, Any]:
    """The binlog connectors' source block (MySQL; MariaDB through mariadb_source)."""
    ts_us, ts_ns = _us_ns(ts_ms, ts_us, ts_ns)
    return {
        "version": version, "connector": connector, "name": name, "ts_ms": ts_ms,
        "snapshot": snapshot_value(connector, snapshot), "db": db, "sequence": sequence, "ts_us": ts_us,
        "ts_ns": ts_ns, "table": table, "server_id": server_id,
        "gtid": gtid, "file": file, "pos": pos, "row": row, "thread": thread, "query": query,
    }


def mariadb_source(**values: Any) -> dict[str, Any]:
    """MariaDB's source block: the MySQL layout (one binlog struct maker), connector "mariadb"."""
    return mysql_source(connector="mariadb", **values)


def postgresql_sequence(last_commit_lsn: int | None, lsn: int | None) -> str:
    """Upstream's `sequence`: JSON array text of [last commit LSN, event LSN] as decimal strings (or null)."""
    first = "null" if last_commit_lsn is None else f'"{last_commit_lsn}"'
    second = "null" if lsn is None else f'"{lsn}"'
    return f"[{first},{second}]"


def postgresql_source(
    *, version: str, name: str, ts_ms: int, db: str, schema: str, table: str, snapshot: bool | str | None = False,
    sequence: str | None = None, ts_us: int | None = None, ts_ns: int | None = None,
    txId: int | None = None, lsn: int | None = None, xmin: int | None = None,  # noqa: N803
    origin: str | None = None, origin_lsn: int | None = None,
) -> dict[str, Any]:
    ts_us, ts_ns = _us_ns(ts_ms, ts_us, ts_ns)
    return {
        "version": version, "connector": "postgresql", "name": name, "ts_ms": ts_ms,
        "snapshot": snapshot_value("postgresql", snapshot), "db": db, "sequence": sequence, "ts_us": ts_us,
        "ts_ns": ts_ns, "schema": schema, "table": table, "txId": txId, "lsn": lsn, "xmin": xmin,
        "origin": origin, "origin_lsn": origin_lsn,
    }


def mongodb_source(
    *, version: str, name: str, ts_ms: int, db: str, collection: str, ord: int, snapshot: bool | str | None = False,
    sequence: str | None = None, ts_us: int | None = None, ts_ns: int | None = None, lsid: str | None = None,
    txnNumber: int | None = None, wallTime: int | None = None,  # noqa: N803
    rs: str | None = None, h: int | None = None,  # older layouts' fields, not in 3.x: accepted and dropped
) -> dict[str, Any]:
    ts_us, ts_ns = _us_ns(ts_ms, ts_us, ts_ns)
    return {
        "version": version, "connector": "mongodb", "name": name, "ts_ms": ts_ms,
        "snapshot": snapshot_value("mongodb", snapshot), "db": db, "sequence": sequence, "ts_us": ts_us,
        "ts_ns": ts_ns, "collection": collection, "ord": ord, "lsid": lsid, "txnNumber": txnNumber,
        "wallTime": wallTime,
    }


SOURCE_BUILDERS = {
    "sqlserver": sqlserver_source,
    "oracle": oracle_source,
    "mysql": mysql_source,
    "mariadb": mariadb_source,
    "postgresql": postgresql_source,
    "mongodb": mongodb_source,
}
