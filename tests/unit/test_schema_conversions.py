"""Type changes that convert stored values without change events (ingest.schema.conversions), table-driven."""

from __future__ import annotations

import json

import pytest

from ingest.schema.conversions import TypeChange, is_lossless, type_changes

pytestmark = pytest.mark.unit

LOSSLESS = [
    ("int", "bigint"), ("int(11)", "bigint(20)"), ("integer", "bigint"), ("smallint", "integer"), ("int4", "int8"),
    ("tinyint(3) unsigned", "smallint"), ("int unsigned", "bigint"), ("int unsigned", "int(10) unsigned"),
    ("float", "double"), ("real", "double precision"),
    ("numeric(10,2)", "numeric(12,2)"), ("decimal(10,2)", "decimal(12,3)"), ("numeric(10,2)", "numeric"),
    ("varchar(10)", "varchar(20)"), ("character varying(10)", "character varying(255)"),
    ("character varying(10)", "text"), ("varchar(255)", "longtext"), ("text", "mediumtext"),
    ("character varying(10)", "character varying"), ("VARCHAR(255)", "varchar(255)"),
    ("timestamp(3) without time zone", "timestamp(6) without time zone"), ("datetime(3)", "datetime(6)"),
    ("varbinary(8)", "varbinary(16)"), ("time(0)", "time(3)"),
]
CONVERTING = [
    ("bigint", "int"), ("text", "integer"), ("character varying(20)", "integer"), ("int", "varchar(20)"),
    ("int", "int unsigned"), ("int unsigned", "int"), ("double", "float"), ("double precision", "numeric(10,2)"),
    ("numeric(10,2)", "numeric(10,0)"), ("numeric(10,2)", "numeric(10,3)"), ("numeric", "numeric(10,2)"),
    ("varchar(20)", "varchar(5)"), ("char(5)", "char(10)"), ("character varying", "character varying(10)"),
    ("longtext", "text"), ("text", "varchar(100)"), ("datetime(6)", "datetime(3)"), ("date", "timestamp"),
    ("timestamp without time zone", "timestamp with time zone"), ("binary(4)", "binary(8)"), ("int", "float"),
]


@pytest.mark.parametrize(("old", "new"), LOSSLESS)
def test_lossless_widening(old: str, new: str) -> None:
    assert is_lossless(old, new)


@pytest.mark.parametrize(("old", "new"), CONVERTING)
def test_change_that_converts_values(old: str, new: str) -> None:
    assert not is_lossless(old, new)


def _version(table: str, version: int, kind: str, seq: str, **types: str) -> dict:
    columns = [{"name": n, "source_type": t} for n, t in types.items()] if kind != "DROP" else None
    return {"table_id": table, "version": version, "change_kind": kind, "valid_from_seq": seq,
            "columns": json.dumps(columns) if columns else None}


def test_type_changes_of_a_history() -> None:
    rows = [
        _version("db.t", 3, "ALTER", "0003", id="bigint", name="integer", added="text"),  # USING length(name)
        _version("db.t", 1, "CREATE", "0001", id="integer", name="character varying(20)"),
        _version("db.t", 2, "ALTER", "0002", id="bigint", name="character varying(20)"),  # widening: fine
        _version("db.u", 1, "CREATE", "0001", v="integer"),
        _version("db.u", 2, "DROP", "0005"),
        _version("db.u", 3, "CREATE", "0006", v="text"),  # a new table under the old name: no conversion
    ]
    assert type_changes(rows) == [TypeChange("db.t", 3, "0003", "name", "character varying(20)", "integer")]
