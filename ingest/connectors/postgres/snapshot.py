"""Snapshot reading: the slot's exported snapshot imported into a REPEATABLE READ transaction, every
captured table read in primary-key chunks with COPY, resumable after the last committed key. COPY's CSV
form carries the same value texts as pgoutput sends, and Arrow's CSV reader parses it natively into one
string column per table column (ingest.connectors.postgres.columnar converts those)."""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

import pyarrow as pa
import pyarrow.csv as pacsv
from psycopg2 import sql

from ingest.connectors.postgres.tables import CapturedTable


def read_chunk(conn: Any, table: CapturedTable, after_key: Sequence[str | None] | None, limit: int,
               key_columns: tuple[str, ...]) -> pa.Table:
    """Rows of `table` with key > after_key in key order, at most `limit` (tables without a key: all rows),
    as one string column per table column (tuple order), NULL as null."""
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
    names = [f"c{i}" for i in range(len(table.column_names))]
    with conn.cursor() as cur:
        statement = cur.mogrify(query, params).decode("utf-8")
        buf = io.BytesIO()
        cur.copy_expert(f"COPY ({statement}) TO STDOUT WITH (FORMAT csv)", buf)
    data = buf.getvalue()
    if not data:
        return pa.table({n: pa.array([], pa.string()) for n in names})
    return pacsv.read_csv(
        pa.py_buffer(data),
        read_options=pacsv.ReadOptions(column_names=names, block_size=max(1 << 20, len(data) + 1)),
        parse_options=pacsv.ParseOptions(newlines_in_values=True),
        # CSV NULL is an unquoted empty field; an empty string is quoted ("")
        convert_options=pacsv.ConvertOptions(column_types={n: pa.string() for n in names}, strings_can_be_null=True,
                                             quoted_strings_can_be_null=False, null_values=[""]))
