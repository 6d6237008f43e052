"""Debezium's column mappers (ingest.events.column_mappers) and their properties: values as Debezium's own
MaskStringsTest expects them, Java's String semantics (UTF-16 lengths, modified UTF-8), the rule order, and
the property families' parsing and errors. The byte-for-byte comparison with the real connector is in
tests/conformance (runs pga and pgd, and Java's ObjectOutputStream itself in test_column_mappers_java.py)."""

from __future__ import annotations

import base64

import pytest

from ingest.connectors.postgres.properties import parse_properties
from ingest.errors import ConfigError
from ingest.events import column_mappers as cm

pytestmark = pytest.mark.unit

VARCHAR = cm.MappedColumn(is_string=True, length=None)
INTEGER = cm.MappedColumn(is_string=False, length=10)


# expected digests from Debezium's MaskStringsTest (salt "salt")
@pytest.mark.parametrize(("algorithm", "version", "value", "digest"), [
    ("SHA-256", 1, "hello", "af5843a0f0e728ab0332c8888b6e1190bfb79e584f0d40538de8f10df6ef29c6"),
    ("SHA-256", 1, "world", "4588e1f2dcdc7fefc1515d3acd5acb9033478eace68286f383c337b9ff4464a3"),
    ("MD5", 1, "hello", "46f48a7a5ea32efba87cbff49d46d35a"),
    ("MD5", 1, "world", "030f632140d9c9591b0d8c21098024b8"),
    ("SHA-256", 2, "hello", "cd31b3b98ece60cb739c0bf770b2de892ae0ad133f645513c3d83f08757a843a"),
    ("SHA-256", 2, "world", "e84ac3142870113ddc6710c06f76421befc8e8ca6de64e98d2993ed8d41f4085"),
    ("MD5", 2, "hello", "06decc8b095724f80103712c235586be"),
    ("md5", 2, "world", "172c8e95398cc72ab5358ead6981e7e5"),   # Java's algorithm names ignore case
])
def test_hash_as_debezium(algorithm: str, version: int, value: str, digest: str) -> None:
    mappers = cm.ColumnMappers.from_properties([], [], [(version, algorithm, "salt", (_regex("db.t.c"),))])
    convert, parameters = cm.map_column(mappers, "db.t.c", VARCHAR)
    assert convert is not None and convert(value) == digest
    assert convert(None) is None and parameters == {"masked": "true"}
    cut, _ = cm.map_column(mappers, "db.t.c", cm.MappedColumn(True, 7))
    assert cut is not None and cut(value) == digest[:7]          # cut to the column's length


def test_mask_replaces_null_too_and_marks_any_type() -> None:
    mappers = cm.ColumnMappers.from_properties([], [(5, (_regex("db.t.c"),))], [])
    convert, parameters = cm.map_column(mappers, "db.t.c", VARCHAR)
    assert convert is not None and [convert(v) for v in ("1234567890", "1", None)] == ["*****"] * 3
    assert parameters == {"masked": "true"}
    assert cm.map_column(mappers, "db.t.c", INTEGER) == (None, {"masked": "true"})   # value kept, schema marked
    assert cm.map_column(mappers, "db.t.other", VARCHAR) == (None, {})


@pytest.mark.parametrize(("length", "value", "expected", "parameters"), [
    (None, "abcdef", "abc", {"truncateLength": "3"}),
    (10, "abcdef", "abc", {"truncateLength": "3"}),
    (3, "abcdef", None, {}),                     # declared length not above N: nothing to do, no parameter
    (None, "ab", "ab", {"truncateLength": "3"}),
    (None, "a😀b", "a😀", {"truncateLength": "3"}),   # 😀 is two UTF-16 units: Java's length 4
    (None, "ab😀", "ab", {"truncateLength": "3"}),    # a cut inside a surrogate pair keeps what is before it
    (None, None, None, {"truncateLength": "3"}),
])
def test_truncate_counts_utf16_units(length: int | None, value: str | None, expected: str | None,
                                     parameters: dict) -> None:
    mappers = cm.ColumnMappers.from_properties([(3, (_regex(".*"),))], [], [])
    convert, got = cm.map_column(mappers, "s.t.c", cm.MappedColumn(True, length))
    assert got == parameters
    assert (convert(value) if convert else None) == expected


def test_truncate_cuts_bytes_not_their_base64() -> None:
    mappers = cm.ColumnMappers.from_properties([(3, (_regex(".*"),))], [], [])
    convert, _ = cm.map_column(mappers, "s.t.bin", cm.MappedColumn(False, None, base64_bytes=True))
    assert convert is not None
    assert convert(base64.b64encode(b"\x01\x02\x03\x04\x05").decode()) == base64.b64encode(b"\x01\x02\x03").decode()
    assert convert(base64.b64encode(b"\x01").decode()) == base64.b64encode(b"\x01").decode()


@pytest.mark.parametrize(("text", "serialized"), [
    ("hello", b"\xac\xed\x00\x05\x74\x00\x05hello"),
    ("", b"\xac\xed\x00\x05\x74\x00\x00"),
    ("a\x00b", b"\xac\xed\x00\x05\x74\x00\x04a\xc0\x80b"),               # NUL as C0 80
    ("é", b"\xac\xed\x00\x05\x74\x00\x02\xc3\xa9"),
    ("😀", b"\xac\xed\x00\x05\x74\x00\x06\xed\xa0\xbd\xed\xb8\x80"),     # surrogates, 3 bytes each
])
def test_java_serialized_string(text: str, serialized: bytes) -> None:
    assert cm.java_serialized_string(text) == serialized


def test_long_strings_serialize_as_long_strings() -> None:
    data = cm.java_serialized_string("x" * 70_000)
    assert data[:5] == b"\xac\xed\x00\x05\x7c" and int.from_bytes(data[5:13], "big") == 70_000


def test_first_matching_rule_wins_in_debeziums_order() -> None:
    """Truncations come before masks, masks before hashes, v1 hashes before v2, whatever the given order."""
    p = parse_properties({**_PG, "column.mask.hash.v2.MD5.with.salt.s": "inv.t.c",
                          "column.mask.hash.SHA-256.with.salt.s": "inv.t.c,inv.t.d",
                          "column.mask.with.2.chars": "inv.t.d, inv.t.e", "column.truncate.to.1.chars": "inv.t.e"})
    rules = p.column_mappers
    assert rules.for_column("inv.t.c") == cm.Hash("sha256", b"s", 1)
    assert rules.for_column("INV.T.D") == cm.Mask(2)        # names match ignoring case
    assert rules.for_column("inv.t.e") == cm.Truncate(1)
    assert rules.for_column("inv.t.f") is None and rules.for_column("xinv.t.c") is None   # matched whole


def test_salt_may_hold_dots_and_names_are_shown_by_doctor() -> None:
    p = parse_properties({**_PG, "column.mask.hash.SHA-256.with.salt.a.b.c": "inv.t.c"})
    assert p.column_mappers.for_column("inv.t.c") == cm.Hash("sha256", b"a.b.c", 1)


@pytest.mark.parametrize(("key", "value", "words"), [
    ("column.mask.hash.SHA-999.with.salt.x", "inv.t.c", "unknown hash algorithm 'SHA-999'"),
    ("column.mask.with.5.chars", "inv.t.(c", "column.mask.with.5.chars: 'inv.t.(c' is not a valid regular"),
    ("column.mask.with.x.chars", "inv.t.c", "unknown property 'column.mask.with.x.chars'"),
    ("column.truncate.to.3", "inv.t.c", "unknown property 'column.truncate.to.3'"),
])
def test_bad_mapper_properties_are_one_line_errors(key: str, value: str, words: str) -> None:
    with pytest.raises(ConfigError) as exc:
        parse_properties({**_PG, key: value})
    assert words in str(exc.value) and "\n" not in str(exc.value)


_PG = {"database.hostname": "h", "database.user": "u", "database.dbname": "d", "topic.prefix": "p"}


def _regex(text: str):
    import re

    return re.compile(text, re.IGNORECASE)


def test_mysql_codecs_map_values_and_refuse_mapped_key_columns() -> None:
    """MariaDB/MySQL take the key from the converted value, so a mapper on a key column is refused (Debezium
    maps the value only) rather than masking the key."""
    from ingest.connectors.mysql.codec import build_codec
    from ingest.connectors.mysql.filters import Filters
    from ingest.connectors.mysql.schema_track import SchemaTracker
    from ingest.connectors.mysql.types import TypeOptions
    from ingest.errors import LakecdcError

    tracker = SchemaTracker("mariadb")
    tracker.apply("CREATE TABLE t (email VARCHAR(40) PRIMARY KEY, note TEXT, n INT)", "db")
    table = tracker.table("db", "t")
    mappers = cm.ColumnMappers.from_properties([], [(3, (_regex(r"db\.t\.(note|n)"),))], [])
    codec = build_codec("mariadb", "p", table, Filters(), TypeOptions(), mappers=mappers)
    assert codec.mapped_columns == {"note"}           # INT is not a character type: marked, not changed
    assert codec.row({"email": "a@b", "note": None, "n": 5}) == {"email": "a@b", "note": "***", "n": 5}
    after = next(f for f in codec.schemas.envelope_schema["fields"] if f["field"] == "after")
    assert {f["field"]: f.get("parameters") for f in after["fields"]} == {
        "email": None, "note": {"masked": "true"}, "n": {"masked": "true"}}
    with pytest.raises(LakecdcError, match=r"db\.t\.email: column.mask.* / column.truncate.* on key columns are not"):
        build_codec("mariadb", "p", table, Filters(), TypeOptions(),
                    mappers=cm.ColumnMappers.from_properties([(3, (_regex(r"db\.t\.email"),))], [], []))


def test_doctor_lists_each_mapper_property() -> None:
    from ingest.connectors.postgres.properties import FIELDS

    p = FIELDS.parse({**_PG, "column.mask.with.5.chars": "inv.t.c", "column.truncate.to.9.chars": "inv.t.d"}, "pg")
    shown = dict(p.non_defaults())
    assert shown["column.mask.with.5.chars"] == "inv.t.c" and shown["column.truncate.to.9.chars"] == "inv.t.d"


def test_postgres_tables_map_values_nulls_and_refuse_mapped_key_columns() -> None:
    from ingest.connectors.postgres.catalog import CatalogColumn, TableDef
    from ingest.connectors.postgres.tables import build_table
    from ingest.connectors.postgres.types import PgType
    from ingest.errors import LakecdcError

    text, varchar8 = PgType(25, "text"), PgType(1043, "varchar", typmod=12)
    table = TableDef("inv", "t", 1, (CatalogColumn("id", text, "text", False, 1, None),
                                      CatalogColumn("note", text, "text", True, 2, None),
                                      CatalogColumn("code", varchar8, "character varying(8)", True, 3, None)),
                     ("id",), "d", ())
    props = parse_properties({**_PG, "column.mask.with.3.chars": r"inv\.t\.note",
                              "column.mask.hash.v2.MD5.with.salt.s": r"inv\.t\.code"})
    captured = build_table(table, props)
    row = captured.row(["k1", None, "abc"], "__debezium_unavailable_value")
    assert row == {"id": "k1", "note": "***", "code": cm.Hash("md5", b"s", 2).converter(
        cm.MappedColumn(True, 8))("abc")} and len(row["code"]) == 8
    assert captured.key_from(row, ["k1", None, "abc"]) == {"id": "k1"}
    with pytest.raises(LakecdcError, match=r"inv\.t\.id: column.mask"):
        build_table(table, parse_properties({**_PG, "column.truncate.to.1.chars": r"inv\.t\.id"}))


def test_a_salt_can_come_from_the_environment_and_is_never_shown(tmp_path, monkeypatch) -> None:
    from ingest.config import load_config
    from ingest.connectors.postgres.properties import FIELDS

    monkeypatch.setenv("PII_SALT", "s3cr3t")
    (tmp_path / "lakecdc.yml").write_text(
        "sources:\n  shop:\n    connector: postgresql\n    database.hostname: h\n    database.user: u\n"
        "    database.dbname: d\n    topic.prefix: p\n"
        "    column.mask.hash.v2.SHA-256.with.salt.${PII_SALT}: 'inv\\.t\\.email'\n")
    raw = load_config(tmp_path / "lakecdc.yml").sources["shop"].properties
    assert "column.mask.hash.v2.SHA-256.with.salt.s3cr3t" in raw
    p = FIELDS.parse(raw, "pg")
    shown = dict(p.non_defaults())
    assert shown["column.mask.hash.v2.SHA-256.with.salt.(hidden)"] == r"inv\.t\.email"
    assert not any("s3cr3t" in name for name in shown)
    with pytest.raises(ConfigError) as exc:
        FIELDS.parse({**raw, "column.mask.hash.v2.SHA-256.with.salt.s3cr3t": "inv.(t"}, "pg")
    assert "s3cr3t" not in str(exc.value) and "salt.(hidden): 'inv.(t' is not a valid" in str(exc.value)


def test_source_types_propagate_to_value_schemas_not_keys() -> None:
    """column.propagate.source.type / datatype.propagate.source.type on MariaDB: the parameters of Debezium's
    PropagateSourceMetadataToSchemaParameter in the value's field schema; the key schema stays plain (Debezium
    builds keys without mappers), so key columns may be matched."""
    from ingest.connectors.mysql.codec import build_codec
    from ingest.connectors.mysql.filters import Filters
    from ingest.connectors.mysql.properties import parse_properties as parse_mysql
    from ingest.connectors.mysql.schema_track import SchemaTracker
    from ingest.connectors.mysql.types import TypeOptions

    tracker = SchemaTracker("mariadb")
    tracker.apply("CREATE TABLE t (id INT UNSIGNED PRIMARY KEY, price DECIMAL(10,2) COMMENT 'in euro', "
                  "y YEAR, note VARCHAR(20))", "db")
    props = parse_mysql("mariadb", {"database.hostname": "h", "database.user": "u", "database.server.id": "1",
                                    "topic.prefix": "p", "column.propagate.source.type": r"db\.t\.(id|price)",
                                    "datatype.propagate.source.type": r".+\.YEAR"})
    codec = build_codec("mariadb", "p", tracker.table("db", "t"), Filters(), TypeOptions(),
                        mappers=props.column_mappers)
    after = next(f for f in codec.schemas.envelope_schema["fields"] if f["field"] == "after")
    params = {f["field"]: f.get("parameters") for f in after["fields"]}
    assert params["id"] == {"__debezium.source.column.type": "INT UNSIGNED", "__debezium.source.column.name": "id"}
    assert params["price"] == {"scale": "2", "connect.decimal.precision": "10",
                               "__debezium.source.column.type": "DECIMAL", "__debezium.source.column.length": "10",
                               "__debezium.source.column.scale": "2", "__debezium.source.column.comment": "in euro",
                               "__debezium.source.column.name": "price"}
    assert params["y"]["__debezium.source.column.type"] == "YEAR" and params["note"] is None
    assert "parameters" not in codec.schemas.key_schema["fields"][0]
    assert codec.mapped_columns == frozenset()   # values unchanged: the fast paths stay
