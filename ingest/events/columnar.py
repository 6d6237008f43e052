"""Debezium value texts a column at a time (Arrow/numpy), for the connectors' bulk paths (snapshots): JSON
string literals, Connect Decimal bytes in base64, row-wise concatenation. Each gives exactly the text
`ingest.events.json_converter` writes for one value (tests/integration/postgres/test_pg_columnar.py,
test_mysql_snapshot_fast.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ingest.events.json_converter import PLAIN_FRACTION, PLAIN_INTEGER, dumps_str

_B64 = np.frombuffer(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", np.uint8)
_SHORT_ESCAPES = {"\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def strings_from_matrix(chars: np.ndarray, lengths: np.ndarray) -> pa.Array:
    """A string array whose row i is the first lengths[i] bytes of chars[i] (ASCII)."""
    n = len(lengths)
    data = chars[np.arange(chars.shape[1]) < lengths[:, None]]
    offsets = np.zeros(n + 1, np.int32)
    np.cumsum(lengths, out=offsets[1:])
    return pa.StringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(data.tobytes()))


def join(n: int, *parts: Any) -> pa.Array:
    """Row-wise concatenation of string arrays and str constants (n rows; a null part gives null)."""
    if all(isinstance(p, str) for p in parts):
        return pa.repeat(pa.scalar("".join(parts), pa.string()), n)
    return pc.binary_join_element_wise(*[pa.scalar(p) if isinstance(p, str) else p for p in parts], "")


def json_strings(a: pa.Array) -> pa.Array:
    """Text -> JSON string literal, escaped as orjson escapes (\\, ", control characters); null stays null."""
    a = pc.replace_substring(pc.replace_substring(a, "\\", "\\\\"), '"', '\\"')
    if pc.any(pc.match_substring_regex(a, "[\\x00-\\x1f]")).as_py():
        for code in range(32):
            a = pc.replace_substring(a, chr(code), _SHORT_ESCAPES.get(chr(code), f"\\u{code:04x}"))
    return join(len(a), '"', a, '"')


def base64_rows(rows: np.ndarray) -> np.ndarray:
    """Standard base64 of each row of a (k, m) uint8 matrix -> (k, 4*ceil(m/3)) uint8."""
    k, m = rows.shape
    pad = (-m) % 3
    if pad:
        rows = np.concatenate([rows, np.zeros((k, pad), np.uint8)], axis=1)
    x = rows.reshape(k, -1, 3).astype(np.uint32)
    v = (x[..., 0] << 16) | (x[..., 1] << 8) | x[..., 2]
    out = _B64[np.stack([(v >> 18) & 63, (v >> 12) & 63, (v >> 6) & 63, v & 63], axis=-1).reshape(k, -1)]
    if pad:
        out[:, -pad:] = ord("=")
    return out


def decimal_json(unscaled: np.ndarray, nulls: np.ndarray | None = None) -> pa.Array:
    """int64 unscaled values -> JSON text of the Connect Decimal (json_converter.decimal_base64 quoted), or
    'null' where `nulls` is set."""
    n = len(unscaled)
    u = unscaled.astype(np.int64)
    # minimal two's complement length (BigInteger.toByteArray): 1 + the k in 1..7 with u outside [-2^(8k-1), 2^(8k-1))
    magnitude = np.where(u < 0, ~u, u)
    size = np.ones(n, np.int64)
    for k in range(1, 8):
        size += magnitude >= (1 << (8 * k - 1))
    big_endian = u.astype(">i8").view(np.uint8).reshape(n, 8)
    chars = np.zeros((n, 14), np.uint8)
    lengths = np.zeros(n, np.int64)
    for width in np.unique(size):
        rows = size == width
        encoded = base64_rows(big_endian[rows][:, 8 - width:])
        w = encoded.shape[1]
        block = np.full((encoded.shape[0], 14), ord('"'), np.uint8)
        block[:, 1:w + 1] = encoded
        chars[rows] = block
        lengths[rows] = w + 2
    if nulls is not None:
        chars[nulls, :4] = np.frombuffer(b"null", np.uint8)
        lengths[nulls] = 4
    return strings_from_matrix(chars, lengths)


def java_float_json(texts: pa.Array, convert: Callable[[str], Any]) -> pa.Array:
    """Shortest-digits float texts (Arrow's or Python's: '2.5', '1e+300', '1.234e-7') -> the JSON text Jackson
    writes for them (`convert`: json_converter's java_float or java_double_text), nulls kept. In Arrow: texts
    Java prints as they are (0.001 <= |x| < 1e7 with a fraction), with ".0" appended (integers below 1e7), or
    exponent forms re-spelt ('1e+300' -> '1.0E300'), except integral values below 2^63, which JDK 17 prints
    from their long value (json_converter._java_integral_text); the rest through `convert`."""
    integer = pc.fill_null(pc.match_substring_regex(texts, f"^{PLAIN_INTEGER.pattern}$"), False)
    plain = pc.or_(pc.fill_null(pc.match_substring_regex(texts, f"^{PLAIN_FRACTION.pattern}$"), True), integer)
    fast = pc.if_else(integer, pc.binary_join_element_wise(texts, ".0", ""), texts)
    if pc.all(plain).as_py() is not False:  # the common case: every value in Java's plain range
        return fast
    exponent = pc.fill_null(pc.match_substring_regex(texts, r"^-?\d(\.\d+)?e[+-]?\d+$"), False)
    if pc.any(exponent).as_py():
        values = pc.abs(pc.cast(pc.if_else(exponent, texts, "0.5"), pa.float64()))
        long_valued = pc.and_(pc.equal(pc.floor(values), values), pc.less(values, 2.0 ** 63))
        exponent = pc.and_(exponent, pc.invert(long_valued))
        spelt = pc.replace_substring_regex(texts, r"^(-?\d)e", r"\1.0e")
        spelt = pc.replace_substring(pc.replace_substring(spelt, "e+", "E"), "e", "E")
        fast = pc.if_else(exponent, spelt, fast)
    slow = pc.invert(pc.or_(plain, exponent))
    if not pc.any(slow).as_py():
        return fast
    rows = pc.indices_nonzero(slow)
    converted = [dumps_str(convert(t)) for t in pc.take(texts, rows).to_pylist()]
    return pc.replace_with_mask(fast, slow, pa.array(converted, pa.string()))
