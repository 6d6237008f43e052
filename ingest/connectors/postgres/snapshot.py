"""Snapshot reading: the slot's exported snapshot imported into a REPEATABLE READ transaction, every
captured table read in primary-key chunks with COPY (text format, so values have the same text form as
pgoutput sends), resumable after the last committed key."""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from typing import Any

from psycopg2 import sql

from ingest.connectors.postgres.tables import CapturedTable

_COPY_ESCAPE = re.compile(r"\\(?:([0-7]{1,3})|x([0-9a-fA-F]{1,2})|(.))")
_SIMPLE = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}


def _unescape_one(match: re.Match[str]) -> str:
    octal, hexa, char = match.groups()
    if octal:
        return chr(int(octal, 8))
    if hexa:
        return chr(int(hexa, 16))
    return _SIMPLE.get(char, char)


def parse_copy_line(line: str) -> list[str | None]:
    """One line of COPY ... TO STDOUT (text format) -> field texts, None for \\N."""
    out: list[str | None] = []
    for f in line.split("\t"):
        if f == "\\N":
            out.append(None)
        elif "\\" in f:
            out.append(_COPY_ESCAPE.sub(_unescape_one, f))
        else:
            out.append(f)
    return out


def copy_chunk(conn: Any, table: CapturedTable, after_key: list[str | None] | None, limit: int,
               key_columns: tuple[str, ...]) -> list[list[str | None]]:
    """Rows of `table` with key > after_key in key order (all columns in tuple order), at most `limit`.
    Tables without a key are read whole in one chunk (limit ignored)."""
    d = table.definition
    cols = sql.SQL(", ").join(sql.Identifier(c) for c in table.column_names)
    query = sql.SQL("SELECT {} FROM {}").format(cols, sql.Identifier(d.schema, d.table))
    params: list[Any] = []
    if key_columns:
        types = {c.name: c.type_expression for c in d.columns}
        keys = sql.SQL(", ").join(sql.Identifier(k) for k in key_columns)
        if after_key is not None:
            casts = sql.SQL(", ").join(sql.SQL("%s::") + sql.SQL(types[k]) for k in key_columns)
            query += sql.SQL(" WHERE ({}) > ({})").format(keys, casts)
            params.extend(after_key)
        query += sql.SQL(" ORDER BY {} LIMIT {}").format(keys, sql.Literal(limit))
    with conn.cursor() as cur:
        statement = cur.mogrify(query, params).decode("utf-8")
        buf = io.StringIO()
        cur.copy_expert(f"COPY ({statement}) TO STDOUT", buf)
    text = buf.getvalue()
    if not text:
        return []
    return [parse_copy_line(line) for line in text[:-1].split("\n")]


def iter_table(conn: Any, table: CapturedTable, after_key: list[str | None] | None, fetch_size: int
               ) -> Iterator[tuple[list[str | None], list[str | None] | None]]:
    """(row texts, key texts) for every row after `after_key`, chunk by chunk."""
    key_columns = table.definition.key_columns
    index = {name: i for i, name in enumerate(table.column_names)}
    key_idx = [index[k] for k in key_columns]
    while True:
        rows = copy_chunk(conn, table, after_key, fetch_size, key_columns)
        for row in rows:
            yield row, ([row[i] for i in key_idx] if key_idx else None)
        if not key_columns or len(rows) < fetch_size:
            return
        after_key = [rows[-1][i] for i in key_idx]
