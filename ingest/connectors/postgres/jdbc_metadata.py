"""A column's JDBC type, size and decimal digits as the PostgreSQL JDBC driver reports them (DatabaseMetaData.getColumns
COLUMN_SIZE and DECIMAL_DIGITS, pgjdbc 42.7's TypeInfoCache), which Debezium's postgres connector takes as
its Column length and scale: they decide column.truncate.*'s truncateLength, the cut of column.mask.hash.*
and the `__debezium.source.column.length/scale` parameters of column.propagate.source.type.

Debezium reads them from getColumns for the snapshot, but while streaming builds the columns of a Relation
message from its type registry (PostgresType.getDefaultLength/Scale), which differs for numeric without a
modifier only: length 131089 (the display size) instead of 0, scale 0 instead of none (measured)."""

from __future__ import annotations

from ingest.connectors.postgres.types import PgType
from ingest.events.column_mappers import JDBC_STRING_TYPES

# java.sql.Types codes as the PostgreSQL JDBC driver reports them (tableChanges[].columns[].jdbcType).
_JDBC_TYPES = {
    "bool": -7, "bit": -7, "varbit": 1111, "int2": 5, "int4": 4, "int8": -5, "oid": -5, "float4": 7, "float8": 8,
    "numeric": 2, "money": 8, "bpchar": 1, "char": 1, "varchar": 12, "text": 12, "name": 12, "date": 91,
    "time": 92, "timetz": 92, "timestamp": 93, "timestamptz": 93, "bytea": -2,
}
UNKNOWN_LENGTH = 2_147_483_647   # pgjdbc's unknownLength (Integer.MAX_VALUE)
_TEMPORAL = ("date", "time", "timetz", "interval", "timestamp", "timestamptz")


def jdbc_type(t: PgType) -> int:
    return 2003 if t.element is not None else _JDBC_TYPES.get(t.name, 1111)


def is_character_type(t: PgType) -> bool:
    """A character type for the JDBC driver (which reports enums as VARCHAR: Debezium masks them, measured)."""
    return t.element is None and (jdbc_type(t) in JDBC_STRING_TYPES or t.typtype == "e")


def _base(t: PgType) -> PgType:
    return t.element if t.element is not None else t   # arrays report their element's figures


def _display_size(name: str, typmod: int) -> int:
    if name == "date":
        return 13
    if name == "interval":
        return 49
    second = {-1: 7, 0: 0, 1: 3}.get(typmod, typmod + 1)
    return {"time": 8 + second, "timetz": 14 + second, "timestamp": 22 + second,
            "timestamptz": 28 + second}[name]


def column_size(t: PgType) -> int:
    b = _base(t)
    name, typmod = b.name, b.typmod
    fixed = {"int2": 5, "int4": 10, "oid": 10, "int8": 19, "float4": 8, "float8": 17, "char": 1, "bool": 1}
    if name in fixed:
        return fixed[name]
    if name == "numeric":
        return 0 if typmod == -1 else ((typmod - 4) >> 16) & 0xFFFF
    if name in ("bpchar", "varchar"):
        return UNKNOWN_LENGTH if typmod == -1 else typmod - 4
    if name in _TEMPORAL:
        return _display_size(name, typmod)
    if name == "bit":
        return typmod
    if name == "varbit":
        return UNKNOWN_LENGTH if typmod == -1 else typmod
    return UNKNOWN_LENGTH


def decimal_digits(t: PgType) -> int | None:
    """None for numeric without a type modifier (the driver's null)."""
    b = _base(t)
    name, typmod = b.name, b.typmod
    if name == "numeric":
        return None if typmod == -1 else (typmod - 4) & 0xFFFF
    if name == "float4":
        return 8
    if name == "float8":
        return 17
    if name in ("time", "timetz", "timestamp", "timestamptz"):
        return 6 if typmod == -1 else typmod
    if name == "interval":
        return 6 if typmod == -1 else typmod & 0xFFFF
    return 0


def decoder_column_size(t: PgType) -> int:
    """The length Debezium gives a column of a Relation message: the driver's precision, or its display size
    when that is 0 (numeric without a modifier: 131089)."""
    size = column_size(t)
    if size == 0 and _base(t).name == "numeric":
        return 131_089
    return size


def decoder_decimal_digits(t: PgType) -> int:
    return decimal_digits(t) or 0


def type_name(t: PgType) -> str:
    """The driver's TYPE_NAME: the domain's name for a domain, else pg_type.typname (`_int4` for int4[])."""
    return t.domain or t.name
