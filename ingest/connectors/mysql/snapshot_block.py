"""Columnar snapshot chunks: no Python object per row.

The server formats every row of a primary-key chunk as one CSV line and the chunk as one GROUP_CONCAT value
(one field for PyMySQL to decode); pyarrow's CSV reader splits it into string columns and Arrow compute
kernels build the JSON of every event (`value`, `key`, `seq`, `position`) as string arrays. Columns whose
type has no vectorized conversion fall back to per-value Python: the field's text (HEX for binary data) is
decoded exactly as PyMySQL decodes it (its own (encoding, converter) pair for the column, read from a
`LIMIT 0` probe), then converted by the codec's converter, as on the row path. The output is byte-identical
to the row path of snapshot.py (tests/integration/mysql/test_mysql_snapshot_fast.py), except that `ts_ms` (when the
connector processed the event) is taken once per chunk instead of once per row.

A chunk whose concatenation does not come back whole (longer than the server's max_allowed_packet, or a
row whose line is) is read again with half the rows; a single row that still does not fit is read by the
row path (`ChunkReader.fetch` returns None). A chunk with a value Arrow refuses to convert is read by the
row path as well (snapshot.py).
"""

from __future__ import annotations

import datetime as dt
import decimal
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
import orjson
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pymysql

from ingest.bronze.contract import EVENT_BLOCK_COLUMNS
from ingest.connectors.mysql.codec import TableCodec
from ingest.connectors.mysql.types import (
    DECIMAL_TYPES,
    INT_TYPES,
    STRING_TYPES,
    TypeOptions,
    base_type,
    zero_date_value,
)
from ingest.events.columnar import decimal_json, java_float_json, join, json_strings, strings_from_matrix
from ingest.events.json_converter import java_double_text, java_float
from ingest.sqlutil import quote_ident

Fragments = Callable[[pa.Array], pa.Array]  # CSV text of a column -> JSON text of each value (no nulls)
_HEX = np.frombuffer(b"0123456789abcdef", np.uint8)
# 8-byte floats: the server's text is the double. A FLOAT column goes through its converter (types.float32_*).
_DOUBLE_TYPES = {"DOUBLE", "DOUBLE PRECISION", "FLOAT8"}


# ---------------------------------------------------------------------------------------------- Arrow helpers
def hex8(values: np.ndarray) -> pa.Array:
    """Each value as 8 lowercase hex digits (the ordinal part of seq)."""
    shifts = np.arange(28, -1, -4, dtype=np.int64)
    chars = _HEX[(values.astype(np.int64)[:, None] >> shifts) & 15]
    return strings_from_matrix(chars, np.full(len(values), 8, np.int64))


def _fill(a: pa.Array, null: str = "null") -> pa.Array:
    return pc.fill_null(a, null)


def _int_text(a: pa.Array, unsigned_bigint: bool = False, wrap: bool = False) -> pa.Array:
    """Canonical integer text (ZEROFILL columns arrive zero-padded); `wrap`: BIGINT UNSIGNED as a Java long."""
    if unsigned_bigint:
        ints = pc.cast(a, pa.uint64())
        if wrap:
            ints = pc.cast(ints, pa.int64(), safe=False)
    else:
        ints = pc.cast(a, pa.int64())
    return pc.cast(ints, pa.string())


def _doubles(a: pa.Array) -> pa.Array:
    """DOUBLE (and DECIMAL in double mode) server text -> Double.toString's text. Arrow parses with correct
    rounding and prints the shortest round-trip digits, which java_float_json lays out as Java does."""
    return _fill(java_float_json(pc.cast(pc.cast(a, pa.float64()), pa.string()), java_double_text))


def _reals(a: pa.Array) -> pa.Array:
    """REAL (a DOUBLE on the server, a FLOAT32 in the schema) -> Float.toString of the value as a float."""
    as_float = pc.cast(pc.cast(a, pa.float64()), pa.float32())
    return _fill(java_float_json(pc.cast(as_float, pa.string()), java_float))


def _decimal_bytes(a: pa.Array) -> pa.Array:
    """DECIMAL(p<=18) text -> Connect Decimal JSON text. The server writes exactly `scale` digits."""
    unscaled = pc.cast(pc.replace_substring(a, ".", ""), pa.int64())
    nulls = pc.is_null(unscaled).to_numpy(zero_copy_only=False)
    return decimal_json(pc.fill_null(unscaled, 0).to_numpy(zero_copy_only=False), nulls)


def _zero_date(a: pa.Array) -> pa.Array:
    """What PyMySQL returns as a string and types._is_zero_date treats as a zero date."""
    return pc.or_(pc.starts_with(a, "0000"), pc.equal(pc.utf8_slice_codeunits(a, 5, 7), "00"))


def _temporal(a: pa.Array, zero_frag: str, convert: Fragments) -> pa.Array:
    """NULL and zero dates -> `zero_frag` (types.zero_date_value: null, the column's default or the epoch)."""
    is_zero = _zero_date(a)
    valid = pc.if_else(is_zero, pa.scalar(None, pa.string()), a)
    return _fill(pc.if_else(is_zero, pa.scalar(zero_frag), convert(valid)), zero_frag)


def _days(a: pa.Array) -> pa.Array:
    return pc.cast(pc.cast(pc.cast(a, pa.date32()), pa.int32()), pa.string())


def _micros(a: pa.Array, divide: bool) -> pa.Array:
    micros = pc.cast(pc.cast(a, pa.timestamp("us")), pa.int64())
    if divide:  # micros // 1000, floored like Python's //
        q = pc.divide(micros, 1000)
        micros = pc.if_else(pc.less(pc.subtract(micros, pc.multiply(q, 1000)), 0), pc.subtract(q, 1), q)
    return pc.cast(micros, pa.string())


def _zoned_text(a: pa.Array) -> pa.Array:
    """Server text 'YYYY-MM-DD hh:mm:ss[.ffffff]' -> ISO-8601 without the fraction's trailing zeros
    (types.snapshot_converter)."""
    a = pc.replace_substring(a, " ", "T", max_replacements=1)
    a = pc.replace_substring_regex(a, r"(\.[0-9]*[1-9])0+$", r"\1")
    return pc.replace_substring_regex(a, r"\.0+$", "")


def _year(a: pa.Array) -> pa.Array:
    y = pc.cast(a, pa.int64())
    y = pc.if_else(pc.and_(pc.greater_equal(y, 0), pc.less(y, 70)), pc.add(y, 2000),
                   pc.if_else(pc.and_(pc.greater_equal(y, 70), pc.less(y, 100)), pc.add(y, 1900), y))
    return pc.cast(y, pa.string())


# ---------------------------------------------------------------------------------------------- per-column plans
@dataclass
class ColumnPlan:
    name: str
    sql: str                                  # CSV field of the column
    decode: Callable[[str | None], Any]       # field text -> the value PyMySQL returns for the column
    value: Fragments | None                   # field text -> payload JSON (captured columns)
    key: Fragments | None                     # field text -> position key JSON (primary key columns)


def _decoder(encoding: str | None, converter: Callable[[Any], Any] | None) -> Callable[[str | None], Any]:
    def run(text: str | None) -> Any:
        if text is None:
            return None
        raw: Any = bytes.fromhex(text) if encoding is None else text
        return converter(raw) if converter is not None else raw

    return run


def _python_fragments(decode: Callable[[str | None], Any], convert: Callable[[Any], Any]) -> Fragments:
    dumps = orjson.dumps

    def run(a: pa.Array) -> pa.Array:
        return pa.array([dumps(convert(decode(t))) for t in a.to_pylist()], pa.string())

    return run


def read_from(relation: tuple[str, str], override: str | None) -> str:
    """The FROM of a snapshot read: the table, or the override SELECT as a derived table of the table's name
    (% doubled: the statement is formatted with the chunk's parameters)."""
    if override is None:
        return f"{quote_ident(relation[0])}.{quote_ident(relation[1])}"
    return f"({override.replace('%', '%%')}) AS {quote_ident(relation[1])}"


def key_json(value: Any) -> Any:
    """A primary key value in the position JSON (and back: key_param)."""
    if isinstance(value, bytes | bytearray):
        return {"hex": bytes(value).hex()}
    if isinstance(value, decimal.Decimal | dt.date | dt.datetime | dt.timedelta):
        return str(value)
    return value


def key_param(value: Any) -> Any:
    return bytes.fromhex(value["hex"]) if isinstance(value, dict) else value


def _value_fragments(column: Any, options: TypeOptions, text: bool) -> Fragments | None:
    """The vectorized conversion of types._column_type for this column, or None (per-value Python)."""
    name, unsigned = base_type(column)
    if not text:
        return None
    tpm = options.time_precision_mode
    if name in ("BOOLEAN", "BOOL"):
        return lambda a: _fill(pc.if_else(pc.not_equal(pc.cast(a, pa.int64()), 0), "true", "false"))
    if name in INT_TYPES:
        big = name in ("BIGINT", "INT8") and unsigned
        if big and options.bigint_unsigned_mode == "precise":
            return None
        return lambda a: _fill(_int_text(a, big, wrap=True))
    if name == "REAL":
        return _reals
    if name in _DOUBLE_TYPES or (name in DECIMAL_TYPES and options.decimal_mode == "double"):
        return _doubles
    if name in DECIMAL_TYPES:
        if options.decimal_mode == "string":
            return lambda a: _fill(join(len(a), '"', a, '"'))
        if (column.length if column.length is not None else 10) <= 18:
            return _decimal_bytes
        return None
    if name in STRING_TYPES or name in ("ENUM", "JSON"):
        return lambda a: _fill(json_strings(a))
    if name == "YEAR":
        return lambda a: _fill(_year(a))
    zero = orjson.dumps(zero_date_value(column, options, snapshot=True)).decode()
    if name == "DATE":
        return lambda a: _temporal(a, zero, _days)
    if name == "DATETIME":
        fsp = column.length or 0
        divide = tpm == "connect" or fsp <= 3
        return lambda a: _temporal(a, zero, lambda v: _micros(v, divide))
    if name == "TIMESTAMP":
        return lambda a: _temporal(a, zero, lambda v: join(len(v), '"', _zoned_text(v), 'Z"'))
    return None


def _key_fragments(column: Any, text: bool) -> Fragments | None:
    """Vectorized key_json(PyMySQL value) for the position, or None (per-value Python)."""
    name, unsigned = base_type(column)
    if not text:
        return None
    if name in INT_TYPES or name == "YEAR":
        return lambda a: _fill(_int_text(a, unsigned and name in ("BIGINT", "INT8")))
    if name in STRING_TYPES or name in ("ENUM", "JSON"):
        return lambda a: _fill(json_strings(a))
    if name in DECIMAL_TYPES or name == "DATE":  # str(Decimal) and str(date) are the server's text
        return lambda a: _fill(join(len(a), '"', a, '"'))
    return None


def select_sql(column: Any) -> str:
    """A column as the snapshot selects it. The text protocol prints a FLOAT with 6 significant digits
    (-59.1061 for the stored -59.106117...): `* 1e0` widens it to a double first, which prints exactly
    (Debezium's JDBC snapshot reads the 6 digits and changes the value; its binlog reader does not)."""
    name = quote_ident(column.name)
    return f"({name} * 1e0)" if base_type(column)[0] in ("FLOAT", "FLOAT4") else name


def _field_sql(column_sql: str, encoding: str | None, type_code: int, column: Any) -> str:
    """CSV field: quoted text for character data, quoted HEX for binary data, bare text for numbers and
    temporal values (no comma, quote or newline); NULL is an empty unquoted field. A value too long for
    max_allowed_packet makes CONCAT return NULL, and with it the whole line (the chunk is then split)."""
    if encoding == "ascii":
        return f"IFNULL({column_sql}, '')"
    if encoding is None:
        if type_code == pymysql.constants.FIELD_TYPE.BIT:  # HEX of a BIT column is the number's hex
            width = 2 * (((column.length or 1) + 7) // 8)
            expr = f"LPAD(HEX({column_sql}), {width}, '0')"
        else:
            expr = f"HEX({column_sql})"
    else:
        expr = f"REPLACE(CONVERT({column_sql} USING utf8mb4), '\"', '\"\"')"
    return f"IF({column_sql} IS NULL, '', CONCAT('\"', {expr}, '\"'))"


def probe(conn: pymysql.connections.Connection, db: str, table: str, names: list[str]) -> list[tuple[Any, int]]:
    """(PyMySQL's (encoding, converter), type code) of each column, from a result with no rows."""
    with conn.cursor() as cur:
        cur.execute(f"SELECT {', '.join(quote_ident(n) for n in names)} FROM {quote_ident(db)}.{quote_ident(table)}"
                    " LIMIT 0")
        result = cur._result  # PyMySQL's own decoding decision per column (private, stable since 0.7)
        return [(conv, field.type_code) for conv, field in zip(result.converters, result.fields, strict=True)]


# ---------------------------------------------------------------------------------------------- table plan
@dataclass
class Envelope:
    """Constant JSON pieces of one chunk's events."""

    value_head: str       # envelope text before the row JSON (events.envelope_texts)
    value_tail: str       # and after it
    source_ts_ms: int
    ts_ns: int            # processing time of the chunk's events (in value_head/value_tail)
    position_head: str    # position JSON before the key values, between them and the ordinal, after it
    position_middle: str  # (offsets.MySqlOffset.row_texts)
    position_tail: str


class ChunkReader:
    """Reads a table's primary-key chunks and turns them into the EVENT_BLOCK_COLUMNS of its events."""

    def __init__(self, conn: pymysql.connections.Connection, codec: TableCodec, table: Any, options: TypeOptions,
                 relation: tuple[str, str] | None = None, override: str | None = None):
        """`relation`: the (database, table) to read when it is not the codec's (a table renamed while the
        snapshot ran, read under its new name). `override`: the SELECT to read instead of the table
        (snapshot.select.statement.overrides)."""
        self.conn = conn
        self.codec = codec
        self.pool: ThreadPoolExecutor | None = None
        columns = {col.name: col for col in table.columns}
        self.pk = list(table.primary_key)
        names = [n for n in (c.name for c in table.columns) if n in codec.columns or n in self.pk]
        rel_db, rel_table = relation or (codec.db, codec.table)
        probed = probe(conn, rel_db, rel_table, names)
        with conn.cursor() as cur:  # a chunk's text is then limited by max_allowed_packet only
            cur.execute("SET SESSION group_concat_max_len = 4294967295")
        self.plans: list[ColumnPlan] = []
        for name, ((encoding, converter), type_code) in zip(names, probed, strict=True):
            column = columns[name]
            decode = _decoder(encoding, converter)
            text = encoding is not None
            value = key = None
            if name in codec.columns:
                convert = codec.snapshot_converters[codec.columns.index(name)]
                vectorized = None if name in codec.mapped_columns else _value_fragments(column, options, text)
                value = vectorized or _python_fragments(decode, convert)
            if name in self.pk:
                key = _key_fragments(column, text) or _python_fragments(decode, key_json)
            self.plans.append(ColumnPlan(name, _field_sql(select_sql(column), encoding, type_code, column),
                                         decode, value, key))
        self.by_name = {p.name: i for i, p in enumerate(self.plans)}
        kind, unsigned = base_type(columns[self.pk[0]]) if len(self.pk) == 1 else ("", False)
        self.int_key = kind in INT_TYPES and not (unsigned and kind in ("BIGINT", "INT8"))
        line = "CONCAT(" + ", ',', ".join(p.sql for p in self.plans) + ")"
        keys = ", ".join(f"{quote_ident(k)} AS k{i}" for i, k in enumerate(self.pk))
        self.inner = f"SELECT {keys}, {line} AS l FROM {read_from((rel_db, rel_table), override)}"
        self.order = ", ".join(quote_ident(k) for k in self.pk)
        self.csv_parse = pacsv.ParseOptions(delimiter=",", quote_char='"', double_quote=True, escape_char=False,
                                            newlines_in_values=True, ignore_empty_lines=False)
        names_csv = [f"c{i}" for i in range(len(self.plans))]
        self.csv_names = names_csv
        self.csv_convert = pacsv.ConvertOptions(column_types={n: pa.string() for n in names_csv},
                                                strings_can_be_null=True, quoted_strings_can_be_null=False,
                                                null_values=[""])

    def submit(self, after_key: list[Any] | None, limit: int) -> Future[pa.Table | None]:
        """fetch() on the reader's thread (the socket wait releases the GIL)."""
        if self.pool is None:
            self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="lakecdc-snapshot")
        return self.pool.submit(self.fetch, after_key, limit)

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True)
            self.pool = None

    def fetch(self, after_key: list[Any] | None, limit: int) -> pa.Table | None:
        """The next chunk (at most `limit` rows after `after_key`) as string columns c0..cN, or None when it
        does not come back whole (the caller halves `limit`, and reads a single row by the row path)."""
        sql, params = self.inner, []
        if after_key is not None:
            sql += f" WHERE ({self.order}) > ({', '.join(['%s'] * len(after_key))})"
            params = list(after_key)
        sql += f" ORDER BY {self.order} LIMIT {int(limit)}"
        # Without ORDER BY, GROUP_CONCAT takes the derived table's rows in its (sorted) order; that order is
        # checked below for an integer key, and requested explicitly (slower) for any other key.
        order = "" if self.int_key else " ORDER BY " + ", ".join(f"k{i}" for i in range(len(self.pk)))
        outer = (f"SELECT COUNT(*), COUNT(l), SUM(LENGTH(l)), CAST(GROUP_CONCAT(l{order} SEPARATOR '\\n') AS BINARY)"
                 f" FROM ({sql}) s")
        with self.conn.cursor() as cur:
            cur.execute(outer, params)
            count, complete, size, blob = cur.fetchone()
        if count == 0:
            return pa.table({n: pa.array([], pa.string()) for n in self.csv_names})
        if complete != count or blob is None or len(blob) != int(size) + count - 1:
            return None
        try:
            table = pacsv.read_csv(pa.py_buffer(bytes(blob) + b"\n"),
                                   read_options=pacsv.ReadOptions(column_names=self.csv_names, use_threads=False,
                                                                  block_size=len(blob) + 2),
                                   parse_options=self.csv_parse, convert_options=self.csv_convert)
        except pa.ArrowInvalid:  # not expected (e.g. text that is not UTF-8): smaller chunks, then the row path
            return None
        if table.num_rows != count:
            return None
        if self.int_key:
            ids = pc.cast(table.column(self.by_name[self.pk[0]]), pa.int64()).to_numpy()
            if len(ids) > 1 and not bool(np.all(ids[1:] > ids[:-1])):
                self.int_key = False  # the server did not keep the order: ask for it from now on
                return self.fetch(after_key, limit)
        return table

    def last_key(self, chunk: pa.Table) -> list[Any]:
        """The last row's primary key as PyMySQL values (the next chunk's WHERE parameters)."""
        row = chunk.num_rows - 1
        return [self.plans[self.by_name[k]].decode(chunk.column(self.by_name[k])[row].as_py()) for k in self.pk]

    def events(self, chunk: pa.Table, envelope: Envelope, seq_prefix: str, first_ordinal: int) -> pa.Table:
        """EVENT_BLOCK_COLUMNS of the chunk's `r` events (ordinals first_ordinal, first_ordinal + 1, ...)."""
        codec = self.codec
        n = chunk.num_rows
        frags = {p.name: p.value(chunk.column(i).combine_chunks()) for i, p in enumerate(self.plans)
                 if p.value is not None}
        ts_ms = envelope.ts_ns // 1_000_000
        parts: list[Any] = [envelope.value_head + "{"]
        for i, name in enumerate(codec.columns):
            parts += [("," if i else "") + orjson.dumps(name).decode() + ":", frags[name]]
        parts.append("}" + envelope.value_tail)
        value = join(n, *parts)
        key: pa.Array
        if codec.key_columns and n:
            kparts: list[Any] = ["{"]
            for i, name in enumerate(codec.key_columns):
                kparts += [("," if i else "") + orjson.dumps(name).decode() + ":", frags[name]]
            kparts.append("}")
            key = join(n, *kparts)
        else:
            key = pa.nulls(n, pa.string())
        ordinals = np.arange(first_ordinal, first_ordinal + n, dtype=np.int64)
        seq = join(n, seq_prefix, hex8(ordinals))
        pparts: list[Any] = [envelope.position_head]
        for i, name in enumerate(self.pk):
            j = self.by_name[name]
            pparts += ["," if i else "", self.plans[j].key(chunk.column(j).combine_chunks())]  # type: ignore[misc]
        pparts += [envelope.position_middle, pc.cast(pa.array(ordinals), pa.string()), envelope.position_tail]
        position = join(n, *pparts)
        constant = {"topic": codec.topic, "table_id": codec.table_id, "op": "r", "snapshot": "true"}
        columns = {"seq": seq, "key": key, "value": value, "position": position,
                   "ts_ms": pa.repeat(pa.scalar(ts_ms, pa.int64()), n),
                   "source_ts_ms": pa.repeat(pa.scalar(envelope.source_ts_ms, pa.int64()), n),
                   "txn_id": pa.nulls(n, pa.string())}
        for name, text in constant.items():
            columns[name] = pa.repeat(pa.scalar(text, pa.string()), n)
        return pa.table({name: columns[name] for name, _ in EVENT_BLOCK_COLUMNS})
