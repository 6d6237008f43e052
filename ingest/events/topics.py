"""Debezium topic and schema naming, per connector.

Data topics (the defaults of Debezium's connector documentation; `topic.delimiter` is ".")::

    sqlserver   <prefix>.<schema>.<table>   (Debezium 1.x; include_database=True gives the 2.x
                                             multi-database form <prefix>.<db>.<schema>.<table>)
    oracle      <prefix>.<schema>.<table>
    postgresql  <prefix>.<schema>.<table>
    mysql       <prefix>.<db>.<table>
    mariadb     <prefix>.<db>.<table>
    mongodb     <prefix>.<db>.<collection>

Schema change topic `<prefix>`; transaction topic `<prefix>.transaction` (`topic.transaction`);
heartbeat topic `__debezium-heartbeat.<prefix>` (`topic.heartbeat.prefix`). Key/value/envelope schema
names are `<data topic>.Key`, `.Value`, `.Envelope`.
"""

from __future__ import annotations

import re

from ingest.errors import LakecdcError
from ingest.events.source_info import check_connector

DEFAULT_HEARTBEAT_PREFIX = "__debezium-heartbeat"
DEFAULT_TRANSACTION_SUFFIX = "transaction"

# Which name parts make up the data topic after the prefix.
_TOPIC_PARTS = {
    "sqlserver": ("schema", "table"),
    "oracle": ("schema", "table"),
    "postgresql": ("schema", "table"),
    "mysql": ("db", "table"),
    "mariadb": ("db", "table"),
    "mongodb": ("db", "table"),
}

_PREFIX_RE = re.compile(r"^[A-Za-z0-9._-]+$")


def check_prefix(prefix: str) -> str:
    """`topic.prefix`: alphanumerics, '-', '.' and '_' only (Debezium's rule)."""
    if not prefix or not _PREFIX_RE.match(prefix):
        raise LakecdcError(f"topic.prefix {prefix!r} may contain only letters, digits, '-', '.' and '_'")
    return prefix


def data_topic(
    connector: str,
    prefix: str,
    *,
    db: str | None = None,
    schema: str | None = None,
    table: str,
    delimiter: str = ".",
    include_database: bool = False,
) -> str:
    """The data topic of one table (MongoDB: collection as `table`)."""
    parts_spec = _TOPIC_PARTS[check_connector(connector)]
    if connector == "sqlserver" and include_database:
        parts_spec = ("db", "schema", "table")
    values = {"db": db, "schema": schema, "table": table}
    parts = [prefix]
    for p in parts_spec:
        v = values[p]
        if not v:
            raise LakecdcError(f"{connector} topic for table {table!r} needs a {p} name")
        parts.append(v)
    return delimiter.join(parts)


def table_id(connector: str, *, db: str | None = None, schema: str | None = None, table: str) -> str:
    """bronze `table_id`: db.schema.table as the source names it (MySQL/MariaDB db.table, MongoDB db.collection;
    Oracle: PDB.schema.table, or schema.table without a PDB)."""
    check_connector(connector)
    if connector in ("mysql", "mariadb", "mongodb"):
        return f"{db}.{table}"
    return f"{db}.{schema}.{table}" if db else f"{schema}.{table}"


def schema_change_topic(prefix: str) -> str:
    return prefix


def transaction_topic(prefix: str, suffix: str = DEFAULT_TRANSACTION_SUFFIX, delimiter: str = ".") -> str:
    return f"{prefix}{delimiter}{suffix}"


def heartbeat_topic(prefix: str, heartbeat_prefix: str = DEFAULT_HEARTBEAT_PREFIX, delimiter: str = ".") -> str:
    return f"{heartbeat_prefix}{delimiter}{prefix}"


_AVRO_FIRST = re.compile(r"[A-Za-z_]")
_AVRO_REST = re.compile(r"[A-Za-z0-9_.]")


def adjust_schema_name(name: str, mode: str = "none") -> str:
    """`schema.name.adjustment.mode`: none (default, Debezium 2.x) | avro (invalid characters -> '_')
    | avro_unicode (invalid characters -> _uXXXX)."""
    if mode == "none":
        return name
    if mode not in ("avro", "avro_unicode"):
        raise LakecdcError(f"schema.name.adjustment.mode must be none, avro or avro_unicode, not {mode!r}")
    out = []
    for i, ch in enumerate(name):
        # Debezium's rule: the first character must start an Avro name, every later one (dots included)
        # must continue it; each other character is replaced.
        if (_AVRO_FIRST if i == 0 else _AVRO_REST).match(ch):
            out.append(ch)
        else:
            out.append("_" if mode == "avro" else f"_u{ord(ch):04x}")
    return "".join(out)


def key_schema_name(topic: str, mode: str = "none") -> str:
    return adjust_schema_name(f"{topic}.Key", mode)


def value_schema_name(topic: str, mode: str = "none") -> str:
    return adjust_schema_name(f"{topic}.Value", mode)


def envelope_schema_name(topic: str, mode: str = "none") -> str:
    return adjust_schema_name(f"{topic}.Envelope", mode)
