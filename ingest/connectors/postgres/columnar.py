"""The snapshot's bulk path: each column of a chunk (Arrow strings, see snapshot.read_chunk) becomes the JSON
text of its Debezium value in one vectorized step, so a chunk of rows is one BronzeEventBlock without a
Python object per row.

Types with a vectorized form (integers, booleans, strings, fixed-scale decimals, dates, timestamps, UTC
timestamptz) are converted in Arrow/numpy; every other type goes through the column's own converter
(ingest.connectors.postgres.types) value by value. Either way the text is byte-identical to
`dumps_str(converter(text))`, which tests check type by type. A value its converter rejects sends the
whole row to S_rejects, as the row-by-row path does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ingest.bronze.contract import BronzeEventBlock, BronzeReject
from ingest.connectors.postgres import types as pgt
from ingest.connectors.postgres.offsets import snapshot_position_head, snapshot_position_tail, snapshot_seq_prefix
from ingest.connectors.postgres.tables import CapturedTable
from ingest.events.columnar import decimal_json, json_strings
from ingest.events.json_converter import PLAIN_FRACTION, PLAIN_INTEGER, dumps_str, java_double_text, java_float

# ---------------------------------------------------------------- one column -> JSON texts

@dataclass
class Fragments:
    """JSON texts of one column ('null' for NULL) and the first conversion error of each failed row."""

    texts: pa.Array
    errors: dict[int, str]


def _per_value(values: pa.Array, convert: Callable[[str], Any]) -> Fragments:
    out: list[str | None] = []
    errors: dict[int, str] = {}
    for i, text in enumerate(values.to_pylist()):
        if text is None:
            out.append(None)
            continue
        try:
            out.append(dumps_str(convert(text)))
        except (pgt.ConversionError, ValueError, ArithmeticError) as exc:
            out.append(None)
            errors[i] = str(exc)
    return Fragments(pa.array(out, pa.string()), errors)


def _numbers(values: pa.Array, convert: Callable[[str], Any]) -> Fragments:
    """Converters returning int/float/bool: convert in Python, but serialize the whole column in one orjson
    call (a JSON array of numbers splits on commas)."""
    try:
        converted = [None if v is None else convert(v) for v in values.to_pylist()]
    except (pgt.ConversionError, ValueError, ArithmeticError):
        return _per_value(values, convert)  # find the failing rows one by one
    if not converted:
        return Fragments(pa.array([], pa.string()), {})
    texts = dumps_str(converted)[1:-1].split(",")
    return Fragments(pc.if_else(pc.is_null(values), None, pa.array(texts, pa.string())), {})


def _with_fallback(values: pa.Array, fast: pa.Array | None, ok: pa.Array | None,
                   convert: Callable[[str], Any]) -> Fragments:
    """`fast` where `ok` is true, the per-value converter elsewhere (rows the fast form does not cover)."""
    if fast is None:
        return _per_value(values, convert)
    if ok is None or pc.all(ok).as_py() in (True, None):
        return Fragments(fast, {})
    slow_rows = pc.indices_nonzero(pc.invert(ok))
    slow = _per_value(pc.take(values, slow_rows), convert)
    rows = slow_rows.to_pylist()
    errors = {rows[i]: message for i, message in slow.errors.items()}
    merged = pc.replace_with_mask(fast, pc.invert(ok), slow.texts)
    return Fragments(merged, errors)


def _cast_or_none(values: pa.Array, target: pa.DataType) -> pa.Array | None:
    try:
        return values.cast(target)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None


def _timestamp_fragments(values: pa.Array, divisor: int, convert: Callable[[str], Any]) -> Fragments:
    """'YYYY-MM-DD HH:MM:SS[.ffffff]' (years 1000-9999 AD) -> epoch micros (or millis); others per value."""
    length = pc.utf8_length(values)
    ok = pc.and_(pc.and_(pc.greater_equal(length, 19), pc.less_equal(length, 26)),
                 pc.match_substring_regex(values, r"^[1-9]\d{3}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d+)?$"))
    ok = pc.fill_null(ok, True)
    cast = _cast_or_none(pc.if_else(ok, values, None), pa.timestamp("us"))
    if cast is None:
        return _per_value(values, convert)
    micros = cast.cast(pa.int64())
    if divisor != 1:
        micros = floor_divide(micros, divisor)
    return _with_fallback(values, micros.cast(pa.string()), ok, convert)


def floor_divide(values: pa.Array, divisor: int) -> pa.Array:
    """Python's // for an int64 column (Arrow's integer divide truncates toward zero)."""
    quotient = pc.divide(values, divisor)
    remainder = pc.subtract(values, pc.multiply(quotient, divisor))
    return pc.subtract(quotient, pc.cast(pc.less(remainder, 0), pa.int64()))


def _date_fragments(values: pa.Array, convert: Callable[[str], Any]) -> Fragments:
    ok = pc.fill_null(pc.match_substring_regex(values, r"^[1-9]\d{3}-\d\d-\d\d$"), True)
    cast = _cast_or_none(pc.if_else(ok, values, None), pa.date32())
    if cast is None:
        return _per_value(values, convert)
    return _with_fallback(values, cast.cast(pa.int32()).cast(pa.string()), ok, convert)


def _zoned_timestamp_fragments(values: pa.Array, convert: Callable[[str], Any]) -> Fragments:
    """timestamptz printed in UTC ('... +00', years 1000-9999 AD): '"YYYY-MM-DDTHH:MM:SS.ffffffZ"' (always
    six fraction digits, like Debezium 3.x)."""
    ok = pc.fill_null(pc.match_substring_regex(values, r"^[1-9]\d{3}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d+)?\+00$"), True)
    day = pc.utf8_slice_codeunits(values, 0, 10)
    clock = pc.utf8_slice_codeunits(values, 11, 19)
    fraction = pc.utf8_rpad(pc.utf8_slice_codeunits(pc.utf8_slice_codeunits(values, 0, -3), 20), 6, "0")
    fast = pc.binary_join_element_wise('"', day, "T", clock, ".", fraction, 'Z"', "")
    return _with_fallback(values, fast, ok, convert)


def _fixed_decimal_fragments(values: pa.Array, convert: pgt.FixedDecimal) -> Fragments:
    """numeric(p,s) in precise mode, when every unscaled value fits in 64 bits."""
    if convert.scale < 0 or convert.scale > 18:
        return _per_value(values, convert)
    ok = pc.fill_null(pc.match_substring_regex(values, r"^-?\d+(\.\d+)?$"), True)
    candidates = pc.if_else(ok, values, None)
    cast = _cast_or_none(candidates, pa.decimal128(38, convert.scale))
    if cast is None:
        return _per_value(values, convert)
    words = np.frombuffer(cast.buffers()[1], dtype="<i8")[2 * cast.offset:2 * (cast.offset + len(cast))].reshape(-1, 2)
    low, high = words[:, 0], words[:, 1]
    if not np.array_equal(high, np.where(low < 0, -1, 0)):
        return _per_value(values, convert)  # beyond 64 bits
    fast = decimal_json(low, pc.is_null(cast).to_numpy(zero_copy_only=False))
    return _with_fallback(values, fast, ok, convert)


def _java_float_fragments(values: pa.Array, convert: Callable[[str], Any]) -> Fragments:
    """real/double texts whose Java form is the text itself (0.001 <= |x| < 1e7 with a fraction) or the text
    and ".0" (integers below 1e7); every other value through the converter."""
    fraction = pc.fill_null(pc.match_substring_regex(values, f"^{PLAIN_FRACTION.pattern}$"), False)
    integer = pc.fill_null(pc.match_substring_regex(values, f"^{PLAIN_INTEGER.pattern}$"), False)
    fast = pc.if_else(integer, pc.binary_join_element_wise(values, ".0", ""), values)
    ok = pc.or_(pc.or_(fraction, integer), pc.is_null(values))
    return _with_fallback(values, fast, ok, convert)


def fragments(values: pa.Array, convert: Callable[[str], Any]) -> Fragments:
    """JSON texts of a column of value texts under `convert` (one of the converters of types.py)."""
    if convert is int:
        out = Fragments(values, {})
    elif convert is str:
        out = Fragments(json_strings(values), {})
    elif convert is pgt.numeric_string:
        for text, name in pgt.NUMERIC_SPECIAL_NAMES.items():
            values = pc.if_else(pc.equal(values, text), name, values)
        out = Fragments(json_strings(values), {})
    elif convert is pgt.pg_bool:
        out = Fragments(pc.if_else(pc.equal(values, "t"), "true", "false"), {})
    elif isinstance(convert, pgt.FixedDecimal):
        out = _fixed_decimal_fragments(values, convert)
    elif convert is pgt.zoned_timestamp:
        out = _zoned_timestamp_fragments(values, convert)
    elif convert is pgt.timestamp_micros:
        out = _timestamp_fragments(values, 1, convert)
    elif convert is pgt.timestamp_millis:
        out = _timestamp_fragments(values, 1000, convert)
    elif convert is pgt.date_days:
        out = _date_fragments(values, convert)
    elif convert in (java_float, java_double_text):
        out = _java_float_fragments(values, convert)
    elif convert in (float, pgt.time_micros, pgt.time_millis):
        out = _numbers(values, convert)
    else:
        out = _per_value(values, convert)
    return Fragments(pc.fill_null(out.texts, "null"), out.errors)


# ---------------------------------------------------------------- rows -> JSON objects

def json_objects(n: int, names: Sequence[str], columns: Sequence[pa.Array], prefix: str = "", suffix: str = ""
                 ) -> pa.Array:
    """prefix + '{"name":text,...}' + suffix for each of n rows, from per-column JSON texts."""
    parts: list[Any] = []
    literal = prefix + "{"
    for i, (name, column) in enumerate(zip(names, columns, strict=True)):
        literal += ("," if i else "") + dumps_str(name) + ":"
        parts.extend([literal, column])
        literal = ""
    parts.append(literal + "}" + suffix)
    if len(parts) == 1:
        return pa.repeat(pa.scalar(parts[0], pa.string()), n)
    return pc.binary_join_element_wise(*parts, "")


# ---------------------------------------------------------------- one chunk -> one block

@dataclass
class SnapshotChunk:
    """What a chunk's events share: the ordering/position context of the snapshot."""

    slot_lsn: int
    xmin: int
    ts_ms: int
    value_tail: str        # ',"source":{...},"op":"r","ts_ms":...}' closing each envelope
    first_counter: int     # running row number of the chunk's first row
    last_seq: str | None   # rows with seq <= last_seq were handed out before (a resumed run): skipped


def _null_as(frags: Fragments, value: Any) -> Fragments:
    """NULLs written as `value` (a column mapper's, column.mask.with.N.chars); unchanged when None."""
    if value is None:
        return frags
    return Fragments(pc.if_else(pc.equal(frags.texts, "null"), dumps_str(value), frags.texts), frags.errors)


def build_block(table: CapturedTable, chunk: pa.Table, ctx: SnapshotChunk
                ) -> tuple[BronzeEventBlock | None, list[BronzeReject]]:
    """Snapshot read events (op r) of one chunk, and the rows whose values could not be converted."""
    n = chunk.num_rows
    counters = list(range(ctx.first_counter, ctx.first_counter + n))
    if counters and counters[-1] >> 32:
        raise ValueError(f"snapshot row number {counters[-1]} does not fit in the seq")
    seq_prefix = snapshot_seq_prefix(ctx.slot_lsn)
    seqs = pa.array([f"{seq_prefix}{c:08x}" for c in counters], pa.string())
    if ctx.last_seq is not None:
        fresh = pc.greater(seqs, ctx.last_seq)
        if not pc.all(fresh).as_py():
            chunk, seqs = chunk.filter(fresh), seqs.filter(fresh)
            counters = [c for c, keep in zip(counters, fresh.to_pylist(), strict=True) if keep]
            n = chunk.num_rows
    if n == 0:
        return None, []

    cache: dict[int, Fragments] = {}

    def column(index: int, convert: Callable[[str], Any]) -> Fragments:
        if index not in cache:
            cache[index] = fragments(chunk.column(index).combine_chunks(), convert)
        return cache[index]

    value_frags = [_null_as(column(i, conv.convert), conv.extra.get("null_value")) for i, conv in table.converters]
    key_frags = [column(i, conv.convert) for i, conv in table.key_positions]
    d = table.definition
    after = json_objects(n, [conv.name for _, conv in table.converters], [f.texts for f in value_frags],
                         '{"before":null,"after":', ctx.value_tail)
    keys = (json_objects(n, [conv.name for _, conv in table.key_positions], [f.texts for f in key_frags])
            if table.key_positions else pa.nulls(n, pa.string()))
    key_texts = [chunk.column(table.column_names.index(k)).combine_chunks() for k in d.key_columns]
    head = snapshot_position_head(ctx.slot_lsn, f"{d.schema}.{d.table}")
    counter_texts = pa.array(counters, pa.int64()).cast(pa.string())
    tail = snapshot_position_tail(ctx.xmin)
    if key_texts:
        parts: list[Any] = [head + "["]
        for i, texts in enumerate(key_texts):
            parts.extend([("," if i else ""), pc.fill_null(json_strings(texts), "null")])
        parts.extend(['],"n":', counter_texts, tail])
        positions = pc.binary_join_element_wise(*parts, "")
    else:
        positions = pc.binary_join_element_wise(head + 'null,"n":', counter_texts, tail, "")

    rejects: list[BronzeReject] = []
    failed: dict[int, str] = {}
    for f in value_frags + key_frags:
        for row, message in f.errors.items():
            failed.setdefault(row, message)
    if failed:
        raw_rows = chunk.take(pa.array(sorted(failed))).to_pylist()
        for row, raw in zip(sorted(failed), raw_rows, strict=True):
            text = "\t".join("\\N" if v is None else v for v in raw.values())
            rejects.append(BronzeReject(seqs[row].as_py(), "convert", f"{table.table_id}: {failed[row]}",
                                        text.encode(), positions[row].as_py()))
    schemas = table.schemas
    columns = pa.table({
        "topic": pa.repeat(pa.scalar(schemas.topic, pa.string()), n),
        "table_id": pa.repeat(pa.scalar(schemas.table_id, pa.string()), n),
        "op": pa.repeat(pa.scalar("r", pa.string()), n),
        "seq": seqs, "key": keys, "value": after,
        "ts_ms": pa.repeat(pa.scalar(ctx.ts_ms, pa.int64()), n),
        "source_ts_ms": pa.repeat(pa.scalar(ctx.ts_ms, pa.int64()), n),
        "txn_id": pa.nulls(n, pa.string()),
        "snapshot": pa.repeat(pa.scalar("true", pa.string()), n),
        "position": positions,
    })
    if failed:
        keep = np.ones(n, dtype=bool)
        keep[sorted(failed)] = False
        columns = columns.filter(pa.array(keep))
    block = BronzeEventBlock(columns, schemas.key_schema_json if table.key_positions else None,
                             schemas.envelope_schema_json)
    return (block if len(block) else None), rejects
