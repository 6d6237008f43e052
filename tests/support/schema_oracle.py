"""Helpers for the oracle tests: read a DDL corpus file, normalize catalog values for comparison."""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from pathlib import Path

CORPUS = Path(__file__).resolve().parents[1] / "ddl_corpus"


def read_corpus(name: str) -> list[str]:
    """Statements of a corpus file: blocks separated by a line holding only ';', '--' comment lines dropped."""
    text = (CORPUS / name).read_text()
    lines = [line for line in text.splitlines() if not line.startswith("--")]
    blocks = "\n".join(lines).split("\n;\n")
    return [b.strip() for b in blocks if b.strip()]


_NUMERIC_FAMILIES = ("int", "decimal", "float", "bool")


def _unquote(text: str) -> str:
    if len(text) >= 2 and text[0] == "'" and text[-1] == "'":
        return text[1:-1].replace("''", "'").replace("\\'", "'")
    return text


def norm_default(value: str | None, numeric: bool) -> str | None:
    """Comparable form of a default: None for no default / NULL, numbers numerically, functions lower-cased."""
    if value is None:
        return None
    text = value.strip()
    while text.startswith("(") and text.endswith(")") and text.count("(") == text.count(")"):
        text = text[1:-1].strip()
    text = re.sub(r"::(?:[a-z][a-z0-9_ ]*|\"[^\"]+\")(\(\d+(,\d+)?\))?(\[\])?", "", text)  # PostgreSQL casts
    while text.startswith("(") and text.endswith(")") and text.count("(") == text.count(")"):
        text = text[1:-1].strip()
    if text.upper() == "NULL":
        return None
    quoted = text.startswith("'")
    text = _unquote(text)
    lowered = text.lower()
    if lowered in ("true", "false"):
        text = "1" if lowered == "true" else "0"
        lowered = text
    if lowered in ("now()", "current_timestamp", "current_timestamp()", "localtimestamp", "localtimestamp()"):
        return "current_timestamp()"
    m = re.fullmatch(r"(?:current_timestamp|now|localtimestamp)\((\d)\)", lowered)
    if m:
        return f"current_timestamp({m.group(1)})"
    if numeric:
        try:
            return format(Decimal(text).normalize(), "f")
        except InvalidOperation:
            pass
    if not quoted and re.search(r"[-+*/(]", text):  # an expression: compare without spacing
        return re.sub(r"[\s`\"]", "", text).lower()
    if re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.0+", text):
        text = text.split(".")[0]
    return text


def table_diff(server: dict, parsed: dict) -> str:
    """What differs between the server's tables and the parsed ones: {table: (columns, primary key)}."""
    out = []
    for key in sorted(set(server) | set(parsed)):
        s_t, p_t = server.get(key), parsed.get(key)
        if s_t is None or p_t is None:
            out.append(f"{key}: server={s_t is not None} parsed={p_t is not None}")
        elif s_t != p_t:
            cols = [f"server {a} parsed {b}" for a, b in zip(s_t[0], p_t[0], strict=False) if a != b]
            if len(s_t[0]) != len(p_t[0]) or s_t[1] != p_t[1]:
                cols.append(f"columns {[c[0] for c in s_t[0]]}/{[c[0] for c in p_t[0]]} pk {s_t[1]}/{p_t[1]}")
            out.append(f"{key}: " + "; ".join(cols))
    return "; ".join(out)[:2000]


# ------------------------------------------------------------------------------------------------ MariaDB
_MY_NUMERIC = ("tinyint", "smallint", "mediumint", "int", "bigint", "decimal", "float", "double", "year")


def _cs(charset: str | None) -> str | None:
    return "utf8mb3" if charset == "utf8" else charset


class MariaOracle:
    """One MariaDB database compared with a SchemaState: the server's tables (information_schema) and the parsed
    ones in the same comparable form {table: ([(name, COLUMN_TYPE, nullable, default, charset)], pk)}."""

    def __init__(self, params: dict, database: str, others: tuple[str, ...] = ()) -> None:
        import pymysql

        self.error = pymysql.MySQLError
        self.db = database
        self.databases = (database, *others)
        self.conn = pymysql.connect(**params, autocommit=True)
        self.cur = self.conn.cursor()
        self.cur.execute("SELECT @@character_set_server")
        self.server_charset = self.cur.fetchone()[0]
        self.drop()
        self.cur.execute(f"CREATE DATABASE {database}")
        self.cur.execute(f"USE {database}")

    def new_state(self):
        from ingest.schema import SchemaState

        return SchemaState(server_charset=self.server_charset)

    def drop(self) -> None:
        for db in self.databases:
            self.cur.execute(f"DROP DATABASE IF EXISTS {db}")

    def close(self) -> None:
        self.drop()
        self.conn.close()

    def execute(self, stmt: str) -> str | None:
        """Run a statement; the server's error text when it refuses it."""
        try:
            self.cur.execute(stmt)
        except self.error as exc:
            return str(exc)
        return None

    def server_tables(self) -> dict[str, tuple]:
        for attempt in range(3):  # information_schema reads use on-disk temporary tables; retry a lost one
            try:
                return self._server_tables()
            except self.error:
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def _server_tables(self) -> dict[str, tuple]:
        cur = self.cur
        cur.execute("SELECT c.TABLE_NAME, COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE, COLUMN_DEFAULT, CHARACTER_SET_NAME "
                    "FROM information_schema.COLUMNS c JOIN information_schema.TABLES t USING (TABLE_SCHEMA, "
                    "TABLE_NAME) WHERE TABLE_SCHEMA = %s AND t.TABLE_TYPE IN ('BASE TABLE', 'SYSTEM VERSIONED') "
                    "ORDER BY c.TABLE_NAME, ORDINAL_POSITION", (self.db,))
        tables: dict[str, list] = {}
        for table, name, ctype, nullable, default, charset in cur.fetchall():
            numeric = ctype.startswith(_MY_NUMERIC)
            default = None if default in (None, "NULL") else default
            if default and ctype.startswith("binary("):  # the server shows BINARY(n) defaults zero-padded
                default = re.sub(r"(\\0)+'$", "'", default)
            tables.setdefault(table, []).append(
                (name, ctype.lower(), nullable == "YES", norm_default(default, numeric), _cs(charset)))
        cur.execute("SELECT TABLE_NAME, COLUMN_NAME FROM information_schema.KEY_COLUMN_USAGE WHERE TABLE_SCHEMA = "
                    "%s AND CONSTRAINT_NAME = 'PRIMARY' ORDER BY TABLE_NAME, ORDINAL_POSITION", (self.db,))
        pks: dict[str, list] = {}
        for table, name in cur.fetchall():
            pks.setdefault(table, []).append(name)
        return {t: (cols, pks.get(t, [])) for t, cols in tables.items()}

    def parsed_tables(self, state) -> dict[str, tuple]:
        out = {}
        for tid, table in state.tables.items():
            if tid.database != self.db:
                continue
            cols = []
            for c in table.columns:
                numeric = c.source_type.startswith(_MY_NUMERIC)
                default = c.default if c.has_default and not c.auto_increment else None
                if default is not None and c.default_is_literal:
                    if c.source_type.startswith("binary("):  # as the server's side: without the zero padding
                        default = default.rstrip("\x00")
                    default = "'" + default.replace("'", "''") + "'"
                cols.append((c.name, c.source_type.lower(), c.nullable, norm_default(default, numeric),
                             _cs(c.charset)))
            out[tid.table] = (cols, list(table.primary_key))
        return out

    def resync(self, state):
        """After a mismatch, rebuild the parsed state from SHOW CREATE TABLE so later statements start equal."""
        fresh = self.new_state()
        fresh.databases = state.databases
        fresh.current_database = state.current_database
        self.cur.execute(f"SHOW TABLES FROM {self.db}")
        for (name,) in self.cur.fetchall():
            self.cur.execute(f"SHOW CREATE TABLE `{self.db}`.`{name}`")
            fresh.apply(self.cur.fetchone()[1], "mariadb", default_database=self.db)
        for tid, table in fresh.tables.items():  # keep version counters increasing
            table.version = state._versions.get(tid, 0)
        fresh._versions = dict(state._versions)
        # SHOW CREATE TABLE does not always re-create the table it shows (a DATETIME(6) column's default set by
        # ALTER ... SET DEFAULT now() prints as current_timestamp(), which a definition reads as precision 6):
        # take such defaults from the server
        server, parsed = self.server_tables(), self.parsed_tables(fresh)
        self.cur.execute("SELECT TABLE_NAME, COLUMN_NAME, COLUMN_DEFAULT FROM information_schema.COLUMNS "
                         "WHERE TABLE_SCHEMA = %s", (self.db,))
        raw = {(t, c): d for t, c, d in self.cur.fetchall()}
        for tid, table in fresh.tables.items():
            if tid.database != self.db or server.get(tid.table) == parsed.get(tid.table):
                continue
            for col, mine, theirs in zip(table.columns, parsed[tid.table][0], server.get(tid.table, ([],))[0],
                                         strict=False):
                if mine[3] != theirs[3] and raw.get((tid.table, col.name)) not in (None, "NULL"):
                    col.has_default, col.default = True, raw[(tid.table, col.name)]
                    col.default_is_literal = False
        return fresh


# ------------------------------------------------------------------------------------------------ PostgreSQL
_PG_CATALOG = """
SELECT n.nspname, c.relname, a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull,
       pg_get_expr(d.adbin, d.adrelid), a.attgenerated <> '', a.attidentity <> '',
       (SELECT array_agg(k.attname ORDER BY u.o) FROM pg_constraint p, unnest(p.conkey) WITH ORDINALITY u(n, o),
               pg_attribute k WHERE p.conrelid = c.oid AND p.contype = 'p' AND k.attrelid = c.oid AND k.attnum = u.n)
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum
WHERE c.relkind IN ('r', 'p') AND n.nspname NOT IN ('pg_catalog', 'information_schema')
  AND n.nspname NOT LIKE 'pg\\_toast%%' AND n.nspname NOT LIKE 'pg\\_temp%%'
ORDER BY n.nspname, c.relname, a.attnum
"""
_PG_NUMERIC = ("smallint", "integer", "bigint", "numeric", "real", "double precision", "money", "boolean")


def _pg_default(value: str | None, type_text: str, literal: bool) -> str | None:
    if value is not None and literal:
        value = "'" + value.replace("'", "''") + "'"
    norm = norm_default(value, type_text.startswith(_PG_NUMERIC) and not type_text.endswith("]"))
    if norm is not None and value is not None and not value.lstrip("(").startswith("'"):
        norm = norm.lower()  # keywords such as CURRENT_DATE
    return norm


def _pg_quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


class PgOracle:
    """A fresh PostgreSQL database compared with a SchemaState: {(schema, table): ([(name, format_type, nullable,
    default, generated, identity)], pk)} from pg_catalog and from the parsed state."""

    def __init__(self, dsn: str, database: str) -> None:
        import psycopg2

        self.error = psycopg2.Error
        self.db = database
        self.admin = psycopg2.connect(dsn)
        self.admin.autocommit = True
        with self.admin.cursor() as cur:
            cur.execute(f"DROP DATABASE IF EXISTS {database} WITH (FORCE)")
            cur.execute(f"CREATE DATABASE {database}")
        own = re.sub(r"dbname=\S+", f"dbname={database}", dsn) if "dbname=" in dsn else f"{dsn} dbname={database}"
        self.conn = psycopg2.connect(own)
        self.conn.autocommit = True
        self.cur = self.conn.cursor()

    def new_state(self):
        from ingest.schema import SchemaState

        return SchemaState()

    def close(self) -> None:
        self.cur.close()
        self.conn.close()
        with self.admin.cursor() as cur:
            cur.execute(f"DROP DATABASE IF EXISTS {self.db} WITH (FORCE)")
        self.admin.close()

    def execute(self, stmt: str) -> str | None:
        try:
            self.cur.execute(stmt)
        except self.error as exc:
            return str(exc).strip()
        return None

    def server_tables(self) -> dict[tuple[str, str], tuple]:
        self.cur.execute(_PG_CATALOG)
        tables: dict[tuple[str, str], tuple] = {}
        for schema, table, name, type_text, notnull, default, generated, identity, pk in self.cur.fetchall():
            cols, _ = tables.setdefault((schema, table), ([], list(pk or [])))
            cols.append((name, type_text, not notnull, None if generated else _pg_default(default, type_text, False),
                         generated, identity))
        return tables

    def parsed_tables(self, state) -> dict[tuple[str, str], tuple]:
        out = {}
        for tid, table in state.tables.items():
            if not table.columns:  # PostgreSQL keeps a table whose columns were all dropped: no catalog row
                continue
            cols = []
            for c in table.columns:
                default = None
                if c.has_default and not c.generation_expression:
                    default = _pg_default(c.default, c.source_type, c.default_is_literal)
                serial = c.has_default and (c.default or "").startswith("nextval(")
                cols.append((c.name, c.source_type, c.nullable, default, bool(c.generation_expression),
                             c.auto_increment and not serial))
            out[(tid.schema or "", tid.table)] = (cols, list(table.primary_key))
        return out

    def resync(self, state, keys: set[tuple[str, str]]):
        """After a mismatch, re-create the differing tables from the catalog so later statements start equal."""
        from ingest.schema import Column, Table, TableId

        server = self.server_tables()
        cur = self.cur
        for schema, table in keys:
            tid = TableId(self.db, schema, table)
            state.tables.pop(tid, None)
            if (schema, table) not in server:
                continue
            cur.execute("SELECT a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull, pg_get_expr(d.adbin, "
                        "d.adrelid), a.attgenerated, a.attidentity <> '' FROM pg_attribute a JOIN pg_class c "
                        "ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace "
                        "LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum "
                        "WHERE n.nspname = %s AND c.relname = %s AND a.attnum > 0 AND NOT a.attisdropped "
                        "ORDER BY a.attnum", (schema, table))
            elements = []
            rows = [(n, t, nn, d, g == "s", i) for n, t, nn, d, g, i in cur.fetchall()]
            for name, type_text, notnull, default, generated, _identity in rows:
                text = f"{_pg_quote(name)} {type_text}" + (" NOT NULL" if notnull else "")
                if default is not None:
                    text += f" GENERATED ALWAYS AS ({default}) STORED" if generated else f" DEFAULT {default}"
                elements.append(text)
            pk = server[(schema, table)][1]
            if pk:
                elements.append("PRIMARY KEY (" + ", ".join(_pg_quote(k) for k in pk) + ")")
            version = state._versions.get(tid, 0)
            state.apply(f"CREATE TABLE {_pg_quote(schema)}.{_pg_quote(table)} ({', '.join(elements)})", "postgres",
                        self.db)
            state._versions[tid] = version
            # the re-parse may repeat the parser's mistake (or fail): take the compared attributes from the server
            if tid not in state.tables:
                state.tables[tid] = Table(tid, [Column(name, type_text, 1111) for name, type_text, *_ in rows],
                                          list(pk))
            for col, (_name, type_text, notnull, default, generated, identity) in zip(
                    state.tables[tid].columns, rows, strict=True):
                col.source_type, col.nullable, col.auto_increment = type_text, not notnull, identity
                col.has_default, col.default, col.default_is_literal = default is not None, default, False
                col.generation_expression = default if generated else None
            state.tables[tid].primary_key = list(pk)
            state.tables[tid].renumber()
            cur.execute("SELECT s.relname, a.attname FROM pg_depend d JOIN pg_class s ON s.oid = d.objid "
                        "AND s.relkind = 'S' JOIN pg_class t ON t.oid = d.refobjid JOIN pg_namespace n "
                        "ON n.oid = t.relnamespace JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = "
                        "d.refobjsubid WHERE d.deptype = 'a' AND n.nspname = %s AND t.relname = %s", (schema, table))
            state.tables[tid].owned_sequences = dict(cur.fetchall())  # serial sequence -> column
            for col in state.tables[tid].columns:
                col.auto_increment = col.auto_increment or any(f"{_pg_quote(seq)}'" in (col.default or "") or
                                                               f"{seq}'" in (col.default or "")
                                                               for seq in state.tables[tid].owned_sequences)
        return state


def mariadb_params_from_url(url: str) -> dict:
    """pymysql connect() keyword arguments from a mysql://user:pw@host:port/ URL."""
    from urllib.parse import urlparse

    parsed = urlparse(url)
    return {"host": parsed.hostname or "127.0.0.1", "port": parsed.port or 3306, "user": parsed.username or "root",
            "password": parsed.password or ""}
