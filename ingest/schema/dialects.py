"""Per-dialect hooks of the DDL interpreter: the small ways the five dialects differ in naming tables, folding
identifiers and keeping keys. The statement handlers (create_table.py, alter_table.py, drop_rename.py, session.py)
ask `statement.hooks` instead of testing the dialect's name; clauses only one dialect writes are in that dialect's
ALTER handler (alter_table.py, mysql_alter.py).

The column grammar (columns.py), the type rules (types.py) and the default conversions (defaults.py) take the
dialect's name, as sqlglot's dialects do.
"""

from __future__ import annotations

from ingest.schema.model import TableId
from ingest.schema.tokens import DdlSyntaxError


class DialectHooks:
    """The shared behaviour (PostgreSQL, Oracle and SQL Server name tables database.schema.table)."""

    name: str = ""
    mysql = False                     # MySQL/MariaDB: databases are the namespace and carry character sets
    default_schema: str | None = None  # the schema unqualified names resolve to
    one_primary_key = False           # a second PRIMARY KEY in CREATE TABLE is an error (not just replaced)
    names_case_insensitive = False    # a table is found whatever the case of its written name
    marks_key_implied_not_null = False  # dropping the key makes its implied NOT NULL columns nullable again
    partitions_follow_alter = False   # ALTER TABLE (without ONLY) also changes partitions / inheriting tables
    rename_keeps_schema = True        # ALTER TABLE ... RENAME TO name: an unqualified name stays in the schema

    def __init__(self, name: str) -> None:
        self.name = name

    def fold(self, name: str, quoted: bool) -> str:
        """An identifier as the catalog stores it."""
        return name

    def table_id(self, names: list[str], database: str | None, default_schema: str | None) -> TableId:
        """A written (folded) table name -> its id; `database` is the current or default database."""
        schema_default = default_schema or self.default_schema
        if len(names) >= 3:
            return TableId(self.catalog_part(names, database), names[-2], names[-1])
        if len(names) == 2:
            return TableId(database, names[0], names[1])
        return TableId(database, schema_default, names[0])

    def catalog_part(self, names: list[str], database: str | None) -> str | None:
        """The database of a three-part name: the connector's database (its catalog) unless written names win."""
        return database

    def primary_key_name(self, table_name: str) -> str | None:
        """The name an unnamed primary key constraint gets."""
        return None



class MysqlHooks(DialectHooks):
    mysql = True
    one_primary_key = True
    rename_keeps_schema = False

    def table_id(self, names: list[str], database: str | None, default_schema: str | None) -> TableId:
        names = names[-2:]
        database = names[0] if len(names) == 2 else database
        if database is None:
            raise DdlSyntaxError(f"no database selected for table {names[-1]}")
        return TableId(database, None, names[-1])


class PostgresHooks(DialectHooks):
    default_schema = "public"
    one_primary_key = True
    partitions_follow_alter = True

    def fold(self, name: str, quoted: bool) -> str:
        return name if quoted else name.lower()

    def primary_key_name(self, table_name: str) -> str | None:
        return f"{table_name}_pkey"


class OracleHooks(DialectHooks):
    marks_key_implied_not_null = True

    def fold(self, name: str, quoted: bool) -> str:
        return name if quoted else name.upper()


class TsqlHooks(DialectHooks):
    default_schema = "dbo"
    names_case_insensitive = True
    rename_keeps_schema = False

    def catalog_part(self, names: list[str], database: str | None) -> str | None:
        return names[-3]


HOOKS: dict[str, DialectHooks] = {
    "mysql": MysqlHooks("mysql"),
    "mariadb": MysqlHooks("mariadb"),
    "postgres": PostgresHooks("postgres"),
    "oracle": OracleHooks("oracle"),
    "tsql": TsqlHooks("tsql"),
}
