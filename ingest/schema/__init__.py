"""Schema history: captured DDL (and Debezium tableChanges) -> versioned table schemas.

API (stable; used by the connectors and the dbt helper)
--------------------------------------------------------
Dialects (exact names): "mysql", "mariadb" (same grammar), "postgres", "oracle", "tsql".

    from ingest.schema import SchemaState, TableId

    state = SchemaState(server_charset="utf8mb4")          # MySQL/MariaDB: the server default charset
    changes = state.apply(ddl, "mariadb", default_database="inventory")   # -> list[Change]
    # PostgreSQL / Oracle / SQL Server: default_database is the catalog (database) part of table ids and
    # default_schema the schema unqualified names resolve to (postgres: public, tsql: dbo, oracle: none):
    state.apply(ddl, "oracle", default_database="ORCLPDB1", default_schema="DEBEZIUM")

    for change in changes:
        change.kind          # CREATE ALTER DROP (structural: a new table version) | TRUNCATE NOOP DATABASE USE ERROR
        change.table_id      # TableId(database, schema, table); str() gives db.table (MySQL) / db.schema.table
        change.previous_id   # the old id when a table was renamed
        change.table         # Table after the change (DROP: the last state); TRUNCATE: the current table
        change.detail        # NOOP: what it was ("CREATE INDEX", ...); ERROR: the parse/apply error
        change.statement     # the statement text
        change.to_table_change()   # Debezium tableChanges entry (dict) for structural changes, else None

    state.tables[TableId("inventory", None, "customers")]       # current Table
    state.apply_table_changes(entries, "mariadb")               # apply Debezium tableChanges (authoritative)

Model (ingest.schema.model): `Table(id, columns, primary_key, default_charset, comment, version)` (plus
interpreter bookkeeping that is not part of the structure: primary_key_name, partition_of, inherits,
pk_implied_not_null, default_constraints),
`Table.to_table_change(kind, previous_id=None)` -> {"type", "id", "table": {"defaultCharsetName",
"primaryKeyColumnNames", "columns": [{name, jdbcType, nativeType, typeName, typeExpression, charsetName,
length, scale, position, optional, autoIncremented, generated, comment, hasDefaultValue,
defaultValueExpression, enumValues}], "comment"}}; `Table.spark_schema()` -> "`id` INT, `name` STRING".
`Column` fields: name, type_name, jdbc_type, source_type (server-canonical type text, e.g. MariaDB
COLUMN_TYPE "int(10) unsigned", PostgreSQL format_type "character varying(20)"), length, scale, nullable,
has_default, default, auto_increment, generated, generation_expression, position (1-based), charset,
collation, enum_values, comment, spark_type. Type rules per dialect: ingest.schema.types.

A statement that cannot be parsed or applied yields a Change(kind="ERROR") and leaves the catalog unchanged;
the other statements of the same DDL text still apply.

Persistence (ingest.schema.history / ingest.schema.store): bronze `S_schema_history`, one row per table
version, rebuilt from `S_schema_changes` by `lakecdc schema rebuild`; see docs/schema-history.md.
"""

from ingest.schema.interpreter import SchemaState, parse_debezium_ids, table_from_debezium
from ingest.schema.model import (
    ALTER,
    CREATE,
    DATABASE,
    DROP,
    ERROR,
    NOOP,
    STRUCTURAL_KINDS,
    TRUNCATE,
    USE,
    Change,
    Column,
    Table,
    TableId,
)
from ingest.schema.types import DIALECTS, resolve_type

__all__ = [
    "ALTER", "CREATE", "DATABASE", "DIALECTS", "DROP", "ERROR", "NOOP", "STRUCTURAL_KINDS", "TRUNCATE", "USE",
    "Change", "Column", "SchemaState", "Table", "TableId", "parse_debezium_ids", "resolve_type",
    "table_from_debezium",
]
