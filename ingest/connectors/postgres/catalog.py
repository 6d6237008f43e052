"""Table definitions from the PostgreSQL catalog: columns, types (domains, arrays, enums resolved),
primary key, replica identity. Used at snapshot time and when a Relation message arrives."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ingest.connectors.postgres.types import PgType, parse_array

_TYPE_SQL = """
SELECT t.oid, t.typname, t.typtype, t.typelem, t.typbasetype, t.typtypmod, t.typcategory,
       CASE WHEN t.typtype = 'e' THEN ARRAY(SELECT enumlabel::text FROM pg_enum e WHERE e.enumtypid = t.oid
                                           ORDER BY e.enumsortorder) END
FROM pg_type t WHERE t.oid = %s
"""

_TABLES_SQL = """
SELECT n.nspname, c.relname, c.oid
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind IN ('r', 'p') AND NOT c.relispartition
  AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_%%'
ORDER BY n.nspname, c.relname
"""

_COLUMNS_SQL = """
SELECT a.attname, a.atttypid, a.atttypmod, a.attnotnull, a.attnum, pg_get_expr(d.adbin, d.adrelid),
       format_type(a.atttypid, a.atttypmod), CASE WHEN a.atthasmissing THEN a.attmissingval::text END
FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
WHERE a.attrelid = %s AND a.attnum > 0 AND NOT a.attisdropped
ORDER BY a.attnum
"""

_KEY_SQL = """
SELECT c.relreplident,
       (SELECT array_agg(a.attname ORDER BY k.ord) FROM pg_index i
          CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord)
          JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
        WHERE i.indrelid = c.oid AND i.indisprimary),
       (SELECT array_agg(a.attname ORDER BY k.ord) FROM pg_index i
          CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord)
          JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
        WHERE i.indrelid = c.oid AND i.indisreplident)
FROM pg_class c WHERE c.oid = %s
"""


@dataclass(frozen=True)
class CatalogColumn:
    name: str
    type: PgType
    type_expression: str    # format_type(), e.g. numeric(10,2), character varying(20)
    nullable: bool
    position: int
    default: str | None
    # the value of the rows that existed when the column was added with a non-volatile default (text form;
    # pg_attribute.attmissingval), until a table rewrite writes it into them; None otherwise
    missing_value: str | None = None


@dataclass(frozen=True)
class TableDef:
    schema: str
    table: str
    relid: int
    columns: tuple[CatalogColumn, ...]
    primary_key: tuple[str, ...]
    replica_identity: str               # d, n, f, i
    identity_index: tuple[str, ...]     # REPLICA IDENTITY USING INDEX columns

    @property
    def key_columns(self) -> tuple[str, ...]:
        """Message key: the primary key, else the replica identity index, else none (key null)."""
        return self.primary_key or self.identity_index


class Catalog:
    """Catalog reader with a type cache; `conn` is a normal (non-replication) psycopg2 connection."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn
        self._types: dict[tuple[int, int], PgType] = {}

    def pg_type(self, oid: int, typmod: int = -1) -> PgType:
        key = (oid, typmod)
        if key not in self._types:
            self._types[key] = self._load_type(oid, typmod)
        return self._types[key]

    def format_type(self, oid: int, typmod: int = -1) -> str:
        """The server's text of a type, e.g. character varying(20) (format_type)."""
        with self.conn.cursor() as cur:
            cur.execute("SELECT format_type(%s, %s)", (oid, typmod if typmod >= 0 else None))
            return str(cur.fetchone()[0])

    def _load_type(self, oid: int, typmod: int) -> PgType:
        with self.conn.cursor() as cur:
            cur.execute(_TYPE_SQL, (oid,))
            row = cur.fetchone()
        if row is None:
            return PgType(oid, f"unknown_{oid}", "b", typmod)
        _, name, typtype, elem, base, base_mod, category, labels = row
        if typtype == "d":  # domain: the base type, with the domain's modifier when the column has none
            return replace(self.pg_type(base, typmod if typmod >= 0 else base_mod), domain=name)
        if category == "A" and elem:
            return PgType(oid, name, typtype, typmod, element=self.pg_type(elem, typmod))
        return PgType(oid, name, typtype, typmod, enum_labels=tuple(labels or ()))

    def tables(self) -> list[tuple[str, str, int]]:
        with self.conn.cursor() as cur:
            cur.execute(_TABLES_SQL)
            return [(r[0], r[1], r[2]) for r in cur.fetchall()]

    def table_def(self, schema: str, table: str, relid: int) -> TableDef:
        with self.conn.cursor() as cur:
            cur.execute(_COLUMNS_SQL, (relid,))
            rows = cur.fetchall()
            cur.execute(_KEY_SQL, (relid,))
            key_row = cur.fetchone()
        columns = tuple(
            CatalogColumn(name, self.pg_type(typid, typmod), fmt, not notnull, num, default,
                          parse_array(missing)[0] if missing is not None else None)
            for name, typid, typmod, notnull, num, default, fmt, missing in rows
        )
        identity, pk, ident_index = key_row if key_row else ("d", None, None)
        return TableDef(schema, table, relid, columns, tuple(pk or ()), identity or "d", tuple(ident_index or ()))
