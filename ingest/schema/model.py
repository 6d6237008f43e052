"""The schema model: table ids, columns, tables and the changes the interpreter reports.

A `Table` is the whole structure of one table after a statement; `Table.to_table_change(kind)` renders it
as one Debezium `tableChanges` entry. Tables are treated as immutable values by callers: the interpreter
copies a table before changing it, so a `Change` keeps the state as of its statement.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from ingest.events.envelope import quoted_table_id

# Change kinds. Structural kinds create a new table version in the history.
CREATE, ALTER, DROP = "CREATE", "ALTER", "DROP"
TRUNCATE, NOOP, DATABASE, USE, ERROR = "TRUNCATE", "NOOP", "DATABASE", "USE", "ERROR"
STRUCTURAL_KINDS = frozenset({CREATE, ALTER, DROP})


@dataclass(frozen=True, order=True)
class TableId:
    """database.schema.table; MySQL/MariaDB have no schema level (schema is None)."""

    database: str | None
    schema: str | None
    table: str

    def parts(self) -> list[str]:
        return [p for p in (self.database, self.schema, self.table) if p is not None]

    def __str__(self) -> str:  # the bronze table_id: db.schema.table as the source names it
        return ".".join(self.parts())

    def debezium_id(self) -> str:
        """Debezium's quoted id, e.g. "inventory"."customers"."""
        return quoted_table_id(*self.parts())

    @classmethod
    def parse(cls, text: str, dialect: str = "mysql") -> TableId:
        """Inverse of str(): 'db.table' for MySQL/MariaDB, 'db.schema.table' (or 'schema.table') otherwise."""
        parts = [p.strip('"`[]') for p in text.split(".")]
        if dialect in ("mysql", "mariadb"):
            if len(parts) != 2:
                raise ValueError(f"table id {text!r}: expected database.table")
            return cls(parts[0], None, parts[1])
        if len(parts) == 3:
            return cls(parts[0], parts[1], parts[2])
        if len(parts) == 2:
            return cls(None, parts[0], parts[1])
        raise ValueError(f"table id {text!r}: expected [database.]schema.table")


@dataclass
class Column:
    name: str
    type_name: str                   # Debezium typeName, upper case: VARCHAR, INT UNSIGNED, NUMBER, int identity
    jdbc_type: int                   # java.sql.Types code
    source_type: str = ""            # the full type text as declared, e.g. "decimal(10,2) unsigned"
    type_expression: str | None = None  # Debezium typeExpression (defaults to type_name)
    length: int | None = None        # declared length / precision / fractional-seconds digits
    scale: int | None = None
    nullable: bool = True
    has_default: bool = False
    default: str | None = None       # default value expression text; None with has_default = DEFAULT NULL
    default_is_literal: bool = True  # default is a literal value (string/number), not an expression
    # the value ADD COLUMN gave the rows that existed then, as a SQL string literal ('-1774'), when known
    # (PostgreSQL: pg_attribute.attmissingval; MariaDB: defaults.mysql_added_value); silver fills those rows
    missing_value: str | None = None
    auto_increment: bool = False     # AUTO_INCREMENT / IDENTITY / serial
    generated: bool = False          # Debezium's "generated" (also true for MySQL auto-increment)
    generation_expression: str | None = None  # computed column expression
    position: int = 0                # 1-based, renumbered by the table
    charset: str | None = None
    collation: str | None = None
    enum_values: list[str] | None = None
    comment: str | None = None
    spark_type: str = "STRING"       # Spark SQL type of the decoded value (see ingest.schema.types)

    def to_debezium(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "jdbcType": self.jdbc_type,
            "nativeType": None,
            "typeName": self.type_name,
            "typeExpression": self.type_expression or self.type_name,
            "charsetName": self.charset,
            "length": self.length,
            "scale": self.scale,
            "position": self.position,
            "optional": self.nullable,
            "autoIncremented": self.auto_increment,
            "generated": self.generated,
            "comment": self.comment,
            "hasDefaultValue": self.has_default,
            "defaultValueExpression": self.default,
            "enumValues": list(self.enum_values) if self.enum_values is not None else None,
        }

    def to_history(self, primary_key: list[str]) -> dict[str, Any]:
        """One element of S_schema_history.columns (JSON)."""
        return {
            "name": self.name,
            "position": self.position,
            "source_type": self.source_type,
            "type_name": self.type_name,
            "jdbc_type": self.jdbc_type,
            "length": self.length,
            "scale": self.scale,
            "nullable": self.nullable,
            "has_default": self.has_default,
            "default": self.default,
            "missing_value": self.missing_value,
            "auto_increment": self.auto_increment,
            "generated": self.generated,
            "charset": self.charset,
            "enum_values": self.enum_values,
            "comment": self.comment,
            "key": self.name in primary_key,
            "spark_type": self.spark_type,
        }

    @classmethod
    def from_debezium(cls, item: dict[str, Any], spark_type: str) -> Column:
        return cls(
            name=item["name"], type_name=item.get("typeName") or "", jdbc_type=int(item.get("jdbcType") or 0),
            source_type=_source_type(item),
            type_expression=item.get("typeExpression"), length=item.get("length"), scale=item.get("scale"),
            nullable=bool(item.get("optional", True)), has_default=_has_default(item),
            default=item.get("defaultValueExpression"), missing_value=item.get("missingValue"),
            auto_increment=bool(item.get("autoIncremented", False)),
            generated=bool(item.get("generated", False)), position=int(item.get("position") or 0),
            charset=item.get("charsetName"), enum_values=item.get("enumValues"), comment=item.get("comment"),
            spark_type=spark_type,
        )


def _has_default(item: dict[str, Any]) -> bool:
    """The schema history's entries say hasDefaultValue; Debezium's schema change events do not (their layout
    has only defaultValueExpression), so there a default is known by its expression (DEFAULT NULL reads as no
    default, which fills rows the same way)."""
    if "hasDefaultValue" in item:
        return bool(item["hasDefaultValue"])
    return item.get("defaultValueExpression") is not None


# Debezium typeNames whose declared length/scale belong in the type text ("DECIMAL" + 10, 2 -> "DECIMAL(10,2)")
_PARAMETERIZED = {"DECIMAL", "NUMERIC", "VARCHAR", "CHAR", "BINARY", "VARBINARY", "NUMBER", "VARCHAR2", "NVARCHAR2",
                  "NCHAR", "NVARCHAR", "RAW", "BPCHAR"}


def _source_type(item: dict[str, Any]) -> str:
    """The type text of a tableChanges column: its typeExpression, with length/scale for parameterized types."""
    text = item.get("typeExpression") or item.get("typeName") or ""
    if text.upper() in _PARAMETERIZED and item.get("length") is not None:
        params = [str(item["length"])] + ([str(item["scale"])] if item.get("scale") is not None else [])
        text = f"{text}({','.join(params)})"
    return text


@dataclass
class Table:
    id: TableId
    columns: list[Column] = field(default_factory=list)
    primary_key: list[str] = field(default_factory=list)
    default_charset: str | None = None
    comment: str | None = None
    version: int = 0                 # bumped by every structural change (CREATE is version 1)
    primary_key_name: str | None = None  # constraint name of the primary key (PostgreSQL, Oracle, SQL Server)
    partition_of: TableId | None = None  # PostgreSQL: the partitioned table this one is a partition of
    inherits: list[TableId] = field(default_factory=list)  # PostgreSQL INHERITS parents
    pk_implied_not_null: list[str] = field(default_factory=list)  # Oracle: NOT NULL only because of the key
    default_constraints: dict[str, str] = field(default_factory=dict)  # SQL Server: constraint name -> column
    owned_sequences: dict[str, str] = field(default_factory=dict)  # PostgreSQL: serial sequence -> its column

    def same_structure(self, other: Table) -> bool:
        return (self.id, self.columns, self.primary_key, self.default_charset, self.comment) == (
            other.id, other.columns, other.primary_key, other.default_charset, other.comment)

    def column(self, name: str) -> Column | None:
        """Column by name; MySQL, PostgreSQL (after folding), Oracle and SQL Server compare case-insensitively
        here because every dialect's catalog forbids two columns differing only in case in practice."""
        lowered = name.lower()
        for col in self.columns:
            if col.name == name:
                return col
        for col in self.columns:
            if col.name.lower() == lowered:
                return col
        return None

    def index_of(self, name: str) -> int:
        col = self.column(name)
        if col is None:
            raise KeyError(name)
        return self.columns.index(col)

    def renumber(self) -> None:
        for i, col in enumerate(self.columns, start=1):
            col.position = i

    def copy(self) -> Table:
        return copy.deepcopy(self)

    def column_names(self) -> list[str]:
        return [c.name for c in self.columns]

    def to_table_change(self, kind: str, previous_id: TableId | None = None) -> dict[str, Any]:
        """One Debezium tableChanges entry. A rename's id is "<old>,<new>" as Debezium writes it."""
        table_id = self.id.debezium_id()
        if previous_id is not None and previous_id != self.id:
            table_id = previous_id.debezium_id() + "," + table_id
        return {
            "type": kind,
            "id": table_id,
            "table": {
                "defaultCharsetName": self.default_charset,
                "primaryKeyColumnNames": list(self.primary_key),
                "columns": [c.to_debezium() for c in self.columns],
                "comment": self.comment,
            },
        }

    def spark_schema(self) -> str:
        """`name TYPE, ...` in column order, Spark SQL DDL (names backtick-quoted)."""
        return ", ".join("`" + c.name.replace("`", "``") + "` " + c.spark_type for c in self.columns)


@dataclass
class Change:
    """What one statement did. `table` is the state after the change (for DROP: the last state before)."""

    kind: str                        # CREATE ALTER DROP TRUNCATE NOOP DATABASE USE ERROR
    statement: str                   # the statement text this change comes from
    table_id: TableId | None = None
    table: Table | None = None
    previous_id: TableId | None = None  # set by renames
    database: str | None = None      # for DATABASE / USE
    detail: str | None = None        # what a NOOP was (e.g. "CREATE INDEX"), or the error text for ERROR

    @property
    def structural(self) -> bool:
        return self.kind in STRUCTURAL_KINDS

    def to_table_change(self) -> dict[str, Any] | None:
        if not self.structural or self.table is None:
            return None
        return self.table.to_table_change(self.kind, self.previous_id)


@dataclass
class DatabaseInfo:
    name: str
    charset: str | None = None
