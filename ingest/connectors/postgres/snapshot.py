"""Snapshot reading: the slot's exported snapshot imported into a REPEATABLE READ transaction, every
captured table read in primary-key chunks with COPY, resumable after the last committed key. Each table is locked
(claim_table) when its turn comes, so a table dropped or renamed mid-snapshot is skipped or read under its
new name instead of failing the snapshot. COPY's CSV
form carries the same value texts as pgoutput sends, and Arrow's CSV reader parses it natively into one
string column per table column (ingest.connectors.postgres.columnar converts those)."""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

import psycopg2
import psycopg2.errors
import pyarrow as pa
import pyarrow.csv as pacsv
from psycopg2 import sql

from ingest.connectors.postgres.tables import CapturedTable


def claim_table(conn: Any, relid: int, schema: str, table: str) -> tuple[str, bool] | None:
    """Lock the table with OID `relid` in ACCESS SHARE mode in the snapshot's transaction, so that a DROP or
    RENAME of it waits until the snapshot ends (reading a table takes that lock too, but only when its turn
    comes: a table not read yet can be dropped or renamed under the snapshot). Returns the server's quoted,
    schema-qualified name of the table to read and whether it differs from `schema`.`table` (its name in the
    snapshot), or None when the table was dropped. The name comes from the live catalog, not from the
    snapshot: a table renamed since the snapshot began is read under its new name, and its rows are those of
    the snapshot, as if the RENAME had come after it."""
    with conn.cursor() as cur:
        for _ in range(3):  # renamed again between the look-up and the lock: look again
            cur.execute("SELECT (pg_identify_object('pg_class'::regclass, %s, 0)).identity, "
                        "quote_ident(%s) || '.' || quote_ident(%s)", (relid, schema, table))
            name, snapshot_name = cur.fetchone()
            if name is None:
                return None  # no such relation any more
            cur.execute("SAVEPOINT lakecdc_claim")  # a failed LOCK must not abort the snapshot's transaction
            try:
                cur.execute(f"LOCK TABLE {name} IN ACCESS SHARE MODE")  # the server's quoted name
            except (psycopg2.errors.UndefinedTable, psycopg2.errors.InvalidSchemaName):
                cur.execute("ROLLBACK TO SAVEPOINT lakecdc_claim")
                continue
            cur.execute("RELEASE SAVEPOINT lakecdc_claim")
            return name, name != snapshot_name
    return None


def row_estimates(conn: Any, relids: list[int]) -> list[int | None]:
    """The planner's row count estimate of each table (pg_class.reltuples; None for a table never vacuumed or
    analyzed), for the snapshot's progress display."""
    with conn.cursor() as cur:
        cur.execute("SELECT oid, reltuples FROM pg_class WHERE oid = ANY(%s)", (relids,))
        known = {oid: int(rows) for oid, rows in cur.fetchall() if rows is not None and rows >= 0}
    return [known.get(relid) for relid in relids]


def read_chunk(conn: Any, table: CapturedTable, after_key: Sequence[str | None] | None, limit: int,
               key_columns: tuple[str, ...], relation: str | None = None) -> pa.Table:
    """Rows of `table` with key > after_key in key order, at most `limit` (tables without a key: all rows),
    as one string column per table column (tuple order), NULL as null. `relation`: the server's quoted name
    to read from, when it is no longer the table's (claim_table)."""
    d = table.definition
    cols = sql.SQL(", ").join(sql.Identifier(c) for c in table.column_names)
    source = sql.SQL(relation) if relation else sql.Identifier(d.schema, d.table)
    query = sql.SQL("SELECT {} FROM {}").format(cols, source)
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
