"""Debezium's column mappers (io.debezium.relational.mapping): values of chosen columns truncated, masked or
hashed before they leave the connector, with the field-schema parameters Debezium adds.

- `column.truncate.to.N.chars`: strings longer than N characters cut to N; the field gets
  `truncateLength=N` when the column's declared length is unknown or greater than N.
- `column.mask.with.N.chars`: the value of a string column replaced by N `*`, NULL included (Debezium's
  masking converter ignores the value); the field gets `masked=true` whatever its type.
- `column.mask.hash.ALGO.with.salt.SALT` (v1) and `column.mask.hash.v2.ALGO.with.salt.SALT`: the hex digest of
  SALT then the value, cut to the column's declared length; NULL stays NULL; `masked=true`. v1 digests the
  value as Java serializes a String (ObjectOutputStream: the stream header, TC_STRING and modified UTF-8), v2
  its UTF-8 bytes.
- `column.propagate.source.type` (by column name) and `datatype.propagate.source.type` (by
  table.TYPENAME): values unchanged; the field gets `__debezium.source.column.type` (the type name, upper
  case), `.length` and `.scale` when declared, `.comment` when there is one, and `.name`.

Each property's value is a comma-separated list of regular expressions over fully-qualified column names
(schema.table.column for PostgreSQL, database.table.column for MariaDB/MySQL), matched whole and ignoring
case. A column takes the first rule that matches it, in Debezium's order: truncations, masks, propagation by
column, propagation by type, hashes, v2 hashes (in the order the properties are given within each kind). A
mapper changes the value after the type conversion, and only in the value (`before`/`after`), never in the
key."""

from __future__ import annotations

import base64
import hashlib
import re
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ingest.errors import ConfigError, LakecdcError

# Java's MessageDigest names (case-insensitive, with their aliases) -> hashlib's
JAVA_DIGESTS = {
    "md5": "md5", "sha": "sha1", "sha1": "sha1", "sha-1": "sha1", "sha224": "sha224", "sha-224": "sha224",
    "sha256": "sha256", "sha-256": "sha256", "sha384": "sha384", "sha-384": "sha384", "sha512": "sha512",
    "sha-512": "sha512", "sha-512/224": "sha512_224", "sha512/224": "sha512_224", "sha-512/256": "sha512_256",
    "sha512/256": "sha512_256", "sha3-224": "sha3_224", "sha3-256": "sha3_256", "sha3-384": "sha3_384",
    "sha3-512": "sha3_512",
}

Convert = Callable[[Any], Any]
# java.sql.Types of the columns Debezium masks and hashes: CHAR, VARCHAR, LONGVARCHAR, CLOB, NCHAR, NVARCHAR,
# LONGNVARCHAR, NCLOB, DATALINK
JDBC_STRING_TYPES = frozenset((1, 12, -1, 2005, -15, -9, -16, 2011, 70))


@dataclass(frozen=True)
class MappedColumn:
    """What a mapper needs of a column: whether its JDBC type is a character type (CHAR, VARCHAR, LONGVARCHAR,
    CLOB and their N variants: the types Debezium masks and hashes) and its declared length (None: unknown)."""

    is_string: bool
    length: int | None
    base64_bytes: bool = False   # its values are Connect bytes, held as base64 text until written
    # for column.propagate.source.type: Debezium's Column name, typeName, scale and comment
    name: str = ""
    type_name: str = ""
    scale: int | None = None
    comment: str | None = None


@dataclass(frozen=True)
class Truncate:
    max_length: int

    def _applies(self, column: MappedColumn) -> bool:
        return column.length is None or column.length > self.max_length

    def converter(self, column: MappedColumn) -> Convert | None:
        if not self._applies(column):
            return None
        n = self.max_length
        if column.base64_bytes:   # Debezium cuts the ByteBuffer: the first n bytes
            return lambda value: _cut_base64(value, n) if isinstance(value, str) else value
        return lambda value: java_prefix(value, n) if isinstance(value, str) else value

    def schema_parameters(self, column: MappedColumn) -> dict[str, str]:
        return {"truncateLength": str(self.max_length)} if self._applies(column) else {}


@dataclass(frozen=True)
class Mask:
    chars: int

    def converter(self, column: MappedColumn) -> Convert | None:
        if not column.is_string:
            return None
        text = "*" * self.chars
        return lambda value: text

    def schema_parameters(self, column: MappedColumn) -> dict[str, str]:
        return {"masked": "true"}


@dataclass(frozen=True)
class Hash:
    algorithm: str   # hashlib's name
    salt: bytes
    version: int     # 1 or 2

    def converter(self, column: MappedColumn) -> Convert | None:
        if not column.is_string:
            return None
        length = column.length if column.length and column.length > 0 else None
        to_bytes = java_serialized_string if self.version == 1 else _utf8

        def convert(value: Any) -> Any:
            if value is None:
                return None
            digest = hashlib.new(self.algorithm, self.salt)
            digest.update(to_bytes(str(value)))
            text = digest.hexdigest()
            return java_prefix(text, length) if length is not None else text
        return convert

    def schema_parameters(self, column: MappedColumn) -> dict[str, str]:
        return {"masked": "true"}


@dataclass(frozen=True)
class PropagateSourceType:
    """Debezium's PropagateSourceMetadataToSchemaParameter."""

    def converter(self, column: MappedColumn) -> Convert | None:
        return None

    def schema_parameters(self, column: MappedColumn) -> dict[str, str]:
        out = {"__debezium.source.column.type": column.type_name.upper()}
        if column.length is not None:
            out["__debezium.source.column.length"] = str(column.length)
        if column.scale is not None:
            out["__debezium.source.column.scale"] = str(column.scale)
        if column.comment:
            out["__debezium.source.column.comment"] = column.comment
        out["__debezium.source.column.name"] = column.name
        return out


Mapper = Truncate | Mask | Hash | PropagateSourceType


@dataclass(frozen=True)
class Rule:
    patterns: tuple[re.Pattern[str], ...]
    mapper: Mapper
    by_datatype: bool = False   # matched against table.TYPENAME instead of table.column

    def matches(self, qualified_column: str, qualified_datatype: str | None) -> bool:
        name = qualified_datatype if self.by_datatype else qualified_column
        return name is not None and any(p.fullmatch(name) for p in self.patterns)


class ColumnMappers:
    """The mapping rules of one source, in Debezium's order; `for_column` gives the first that matches."""

    def __init__(self, rules: Sequence[Rule] = ()) -> None:
        self.rules = tuple(rules)

    def __bool__(self) -> bool:
        return bool(self.rules)

    def for_column(self, qualified_column: str, qualified_datatype: str | None = None) -> Mapper | None:
        """The mapper of a column named schema.table.column (or database.table.column), whose type is
        schema.table.TYPENAME (for datatype.propagate.source.type)."""
        for rule in self.rules:
            if rule.matches(qualified_column, qualified_datatype):
                return rule.mapper
        return None

    @classmethod
    def from_properties(cls, truncations: Sequence[tuple[int, tuple[re.Pattern[str], ...]]],
                        masks: Sequence[tuple[int, tuple[re.Pattern[str], ...]]],
                        hashes: Sequence[tuple[int, str, str, tuple[re.Pattern[str], ...]]],
                        propagate_columns: tuple[re.Pattern[str], ...] = (),
                        propagate_datatypes: tuple[re.Pattern[str], ...] = ()) -> ColumnMappers:
        """Rules from the parsed properties: (N, patterns) per truncation and per mask, (version, Java algorithm
        name, salt, patterns) per hash, the patterns of the two propagation properties; a Java algorithm
        without a hashlib equivalent is a ConfigError."""
        rules = [Rule(p, Truncate(n)) for n, p in truncations] + [Rule(p, Mask(n)) for n, p in masks]
        if propagate_columns:
            rules.append(Rule(propagate_columns, PropagateSourceType()))
        if propagate_datatypes:
            rules.append(Rule(propagate_datatypes, PropagateSourceType(), by_datatype=True))
        for version in (1, 2):
            for v, algorithm, salt, patterns in hashes:
                if v != version:
                    continue
                name = JAVA_DIGESTS.get(algorithm.lower())
                if name is None:
                    raise ConfigError(f"column.mask.hash: unknown hash algorithm {algorithm!r} (one of MD5, SHA-1, "
                                      "SHA-224, SHA-256, SHA-384, SHA-512, SHA-512/224, SHA-512/256, SHA3-224, "
                                      "SHA3-256, SHA3-384, SHA3-512)")
                # Java's salt.getBytes(): the JVM's default charset, UTF-8 on Java 18+ and in Debezium's images
                rules.append(Rule(patterns, Hash(name, salt.encode("utf-8"), version)))
        return cls(rules)


def map_column(mappers: ColumnMappers, qualified_column: str, column: MappedColumn
               ) -> tuple[Convert | None, dict[str, str]]:
    """(the converter to apply after the type conversion or None, the field-schema parameters to add)."""
    datatype = qualified_column.rsplit(".", 1)[0] + "." + column.type_name if column.type_name else None
    mapper = mappers.for_column(qualified_column, datatype)
    if mapper is None:
        return None, {}
    return mapper.converter(column), mapper.schema_parameters(column)


def key_column_error(qualified_column: str) -> LakecdcError:
    """Debezium changes a key column's value in the value but not in the key; lakecdc builds keys from the
    converted values, so it refuses a rule that changes a key column's values rather than change the key.
    (Schema parameters alone are fine: the key schema keeps the column's unmapped schema.)"""
    return LakecdcError(f"{qualified_column}: column.mask.* / column.truncate.* on key columns are not "
                        "supported yet")


@dataclass(frozen=True)
class MappedField:
    """A column's field schema and value converter with its mapper applied; `null_value`: what NULL becomes
    (not None only for masks)."""

    schema: dict[str, Any]
    convert: Convert
    null_value: Any = None


def map_field(mappers: ColumnMappers, qualified_column: str, column: MappedColumn, schema: dict[str, Any],
              convert: Convert) -> MappedField | None:
    """The mapper of `qualified_column` applied to a connector's field schema and converter (the converter's
    output is the JSON value: Connect bytes as base64 text); None when no mapper changes anything."""
    column = replace(column, base64_bytes=schema.get("type") == "bytes" and "name" not in schema)
    mapping, parameters = map_column(mappers, qualified_column, column)
    if mapping is None and not parameters:
        return None
    if parameters:
        schema = {**schema, "parameters": {**schema.get("parameters", {}), **parameters}}
    if mapping is None:
        return MappedField(schema, convert)
    base, then = convert, mapping
    return MappedField(schema, lambda value: then(base(value)), then(None))


def java_prefix(text: str, n: int) -> str:
    """Java's `text.substring(0, n)` when `text.length() > n`: n UTF-16 code units (a character outside the
    Basic Multilingual Plane counts two; a cut inside one keeps the characters before it)."""
    if len(text) <= n // 2 or (text.isascii() and len(text) <= n):
        return text
    units = 0
    for index, char in enumerate(text):
        units += 2 if ord(char) > 0xFFFF else 1
        if units > n:
            return text[:index]
    return text


def _cut_base64(text: str, n: int) -> str:
    data = base64.b64decode(text)
    return text if len(data) <= n else base64.b64encode(data[:n]).decode("ascii")


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def java_serialized_string(text: str) -> bytes:
    """The bytes of `new ObjectOutputStream(out).writeObject(text)`: the stream header (AC ED 00 05), then
    TC_STRING with a 2-byte length, or TC_LONGSTRING with an 8-byte length past 65,535 bytes, and the text in
    Java's modified UTF-8 (NUL as C0 80, characters outside the BMP as two 3-byte surrogates)."""
    data = modified_utf8(text)
    head = b"\xac\xed\x00\x05"
    if len(data) <= 0xFFFF:
        return head + b"\x74" + struct.pack(">H", len(data)) + data
    return head + b"\x7c" + struct.pack(">q", len(data)) + data


def modified_utf8(text: str) -> bytes:
    if text.isascii() and "\x00" not in text:
        return text.encode("ascii")
    out = bytearray()
    for unit in _utf16_units(text):
        if 0 < unit < 0x80:
            out.append(unit)
        elif unit < 0x800:   # NUL included: two bytes
            out += bytes((0xC0 | unit >> 6, 0x80 | unit & 0x3F))
        else:
            out += bytes((0xE0 | unit >> 12, 0x80 | unit >> 6 & 0x3F, 0x80 | unit & 0x3F))
    return bytes(out)


def _utf16_units(text: str) -> list[int]:
    data = text.encode("utf-16-be", "surrogatepass")
    return list(struct.unpack(f">{len(data) // 2}H", data))
