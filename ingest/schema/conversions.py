"""Column type changes that convert stored values without change events.

When a column changes type (PostgreSQL `ALTER COLUMN ... TYPE ... USING expr`, MySQL/MariaDB `MODIFY`), the
server rewrites the stored values and writes no row change for them: neither Debezium nor lakecdc sees the new
values of rows that are not changed afterwards. Silver converts its own copy with a Spark cast, which gives the
server's values only for lossless widenings (int -> bigint, varchar(10) -> varchar(20), numeric(10,2) ->
numeric(12,2), float -> double, a larger fractional-seconds precision). Every other change is reported here so
that quality can flag the table (to be re-snapshotted) instead of silver silently keeping other values.

Types are compared by their server text (`source_type` of a schema-history column: MariaDB COLUMN_TYPE such as
"int(10) unsigned", PostgreSQL format_type such as "character varying(20)")."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

# integer types by width in bytes (MySQL display widths such as int(11) are not part of the value domain)
_INTEGER_BYTES = {"tinyint": 1, "smallint": 2, "int2": 2, "mediumint": 3, "int": 4, "integer": 4, "int4": 4,
                  "bigint": 8, "int8": 8, "serial": 4, "bigserial": 8, "smallserial": 2}
_FLOATS = {"float": 1, "real": 1, "float4": 1, "double": 2, "double precision": 2, "float8": 2}
_DECIMALS = {"decimal", "numeric", "dec", "fixed"}
# text types without a length limit: any shorter text type widens into them
_UNBOUNDED_TEXT = {"text", "tinytext", "mediumtext", "longtext"}
_BOUNDED_TEXT = {"varchar", "character varying", "char", "character", "nvarchar", "nchar", "bpchar"}
_TEXT_SIZE = {"tinytext": 1, "text": 2, "mediumtext": 3, "longtext": 4}


@dataclass(frozen=True)
class TypeChange:
    table_id: str
    version: int
    valid_from_seq: str
    column: str
    old_type: str
    new_type: str


def _split(source_type: str) -> tuple[str, list[int], bool]:
    """("varchar", [20], unsigned?) from "varchar(20)"; "timestamp(3) without time zone" -> ("timestamp without
    time zone", [3], False)."""
    text = source_type.strip().lower()
    args = [int(a) for a in re.findall(r"\d+", " ".join(re.findall(r"\(([^)]*)\)", text)))]
    unsigned = " unsigned" in text
    base = re.sub(r"\([^)]*\)", "", text).replace(" unsigned", "").replace(" zerofill", "")
    return " ".join(base.split()), args, unsigned


def is_lossless(old_type: str, new_type: str) -> bool:
    """True when every value of `old_type` is the same value in `new_type` (a Spark cast of silver's copy
    then equals what the server stored)."""
    if old_type.strip().lower() == new_type.strip().lower():
        return True
    old, old_args, old_unsigned = _split(old_type)
    new, new_args, new_unsigned = _split(new_type)
    if old in _INTEGER_BYTES and new in _INTEGER_BYTES:
        if old_unsigned and not new_unsigned:  # unsigned n bytes fit a signed type of more bytes
            return _INTEGER_BYTES[new] > _INTEGER_BYTES[old]
        if new_unsigned and not old_unsigned:
            return False  # negative values do not fit
        return _INTEGER_BYTES[new] >= _INTEGER_BYTES[old]
    if old in _FLOATS and new in _FLOATS:
        return _FLOATS[new] >= _FLOATS[old] and not (old_args or new_args)
    if old in _DECIMALS and new in _DECIMALS:
        (old_p, old_s), (new_p, new_s) = (old_args + [10, 0])[:2], (new_args + [10, 0])[:2]
        if not old_args or not new_args:  # PostgreSQL numeric without precision holds any value
            return not new_args
        return new_s >= old_s and new_p - new_s >= old_p - old_s
    if old in _BOUNDED_TEXT and new in _UNBOUNDED_TEXT:
        return True
    if old in _UNBOUNDED_TEXT and new in _UNBOUNDED_TEXT:
        return _TEXT_SIZE.get(new, 4) >= _TEXT_SIZE.get(old, 4)
    if old == new and old in _BOUNDED_TEXT - {"char", "character", "nchar", "bpchar"}:
        return not new_args or (bool(old_args) and new_args[0] >= old_args[0])
    if old == new and old_unsigned == new_unsigned and len(old_args) == len(new_args) == 1:
        # one size argument grown: varbinary(n), bit(n), time/timestamp/datetime(n) fractional digits
        return new_args[0] >= old_args[0] and old not in {"char", "character", "nchar", "bpchar", "binary"}
    return False


def type_changes(history_rows: list[dict[str, Any]]) -> list[TypeChange]:
    """The type changes of S_schema_history rows (any tables, any order) that are not lossless: each table's
    versions in order, a column kept (same name) from one CREATE/ALTER version to the next with another type."""
    by_table: dict[str, list[dict[str, Any]]] = {}
    for row in history_rows:
        by_table.setdefault(row["table_id"], []).append(row)
    found = []
    for table_id, rows in sorted(by_table.items()):
        previous: dict[str, str] | None = None
        for row in sorted(rows, key=lambda r: int(r["version"])):
            kind = str(row.get("change_kind") or "").upper()
            if kind not in ("CREATE", "ALTER") or not row.get("columns"):
                previous = None if kind == "DROP" else previous
                continue
            types = {c["name"]: str(c.get("source_type") or c.get("type_name") or "")
                     for c in json.loads(row["columns"])}
            if previous is not None and kind == "ALTER":
                for name, new_type in types.items():
                    old_type = previous.get(name)
                    if old_type is not None and not is_lossless(old_type, new_type):
                        found.append(TypeChange(table_id, int(row["version"]), str(row["valid_from_seq"]), name,
                                                old_type, new_type))
            previous = types
    return found
