"""Debezium value texts a column at a time (Arrow/numpy), for the connectors' bulk paths (snapshots): JSON
string literals, Connect Decimal bytes in base64, row-wise concatenation. Each gives exactly the text
`ingest.events.json_converter` writes for one value (tests/test_pg_columnar.py, test_mysql_snapshot_fast.py)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

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
