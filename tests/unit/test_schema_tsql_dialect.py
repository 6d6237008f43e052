"""Table-driven SQL Server (T-SQL) DDL tests for the schema history interpreter (dialect "tsql").

No SQL Server runs here (none can be started on this machine), so these are NOT oracle checks against a real
catalog: every expected state is written by hand from SQL Server's documented semantics (CREATE TABLE / ALTER
TABLE / sp_rename / DROP TABLE, sys.columns) and Debezium's SQL Server column model: names keep their case and
compare case-insensitively, unqualified names resolve to schema dbo, decimal defaults to (18,0), char/binary to
length 1, float to float(53) and float(n <= 24) is real, time/datetime2/datetimeoffset default to 7 fractional
digits, IDENTITY and PRIMARY KEY columns are NOT NULL (and stay NOT NULL after the key is dropped), ALTER COLUMN
without NULL/NOT NULL makes the column nullable, a DEFAULT constraint added with ADD ... DEFAULT ... FOR col sets
the column default and DROP CONSTRAINT of that name removes it. Defaults are the expression as written without
redundant outer parentheses (literals unquoted); computed columns have the type text "computed".

Each scenario starts from an empty catalog and applies its statements in order; after each statement the table
it names must have exactly the expected columns (name, type text, nullable, default) and primary key, or be
absent (None).
"""

from __future__ import annotations

import pytest

from ingest.schema import SchemaState, TableId

pytestmark = pytest.mark.unit

DB = "testDB"

Step = tuple[str, str, "tuple[list[tuple], list[str]] | None", list[str]]

SCENARIOS: dict[str, list[Step]] = {
    "seed_customers_hot_schema_change": [
        ("CREATE TABLE customers (id int IDENTITY(1001,1) NOT NULL PRIMARY KEY, first_name varchar(255) NOT NULL, "
         "last_name varchar(255) NOT NULL, email varchar(255) NOT NULL UNIQUE)", "customers",
         ([("id", "int", False, None), ("first_name", "varchar(255)", False, None),
           ("last_name", "varchar(255)", False, None), ("email", "varchar(255)", False, None)], ["id"]), ["CREATE"]),
        ("EXEC sys.sp_cdc_enable_table @source_schema = N'dbo', @source_name = N'customers', @role_name = NULL, "
         "@supports_net_changes = 0", "customers",
         ([("id", "int", False, None), ("first_name", "varchar(255)", False, None),
           ("last_name", "varchar(255)", False, None), ("email", "varchar(255)", False, None)], ["id"]), ["NOOP"]),
        ("ALTER TABLE customers ADD phone_number VARCHAR(32)", "customers",
         ([("id", "int", False, None), ("first_name", "varchar(255)", False, None),
           ("last_name", "varchar(255)", False, None), ("email", "varchar(255)", False, None),
           ("phone_number", "varchar(32)", True, None)], ["id"]), ["ALTER"]),
        ("EXEC sys.sp_cdc_enable_table @source_schema = 'dbo', @source_name = 'customers', @role_name = NULL, "
         "@supports_net_changes = 0, @capture_instance = 'dbo_customers_v2'", "customers",
         ([("id", "int", False, None), ("first_name", "varchar(255)", False, None),
           ("last_name", "varchar(255)", False, None), ("email", "varchar(255)", False, None),
           ("phone_number", "varchar(32)", True, None)], ["id"]), ["NOOP"]),
        ("EXEC sys.sp_cdc_disable_table @source_schema = 'dbo', @source_name = 'customers', "
         "@capture_instance = 'dbo_customers'", "customers",
         ([("id", "int", False, None), ("first_name", "varchar(255)", False, None),
           ("last_name", "varchar(255)", False, None), ("email", "varchar(255)", False, None),
           ("phone_number", "varchar(32)", True, None)], ["id"]), ["NOOP"]),
    ],
    "numeric_types": [
        ("CREATE TABLE [dbo].[nums] ([a] tinyint, [b] smallint, [c] int, [d] bigint, [e] bit NOT NULL, "
         "[f] decimal, [g] decimal(10,2), [h] numeric(5), [i] money, [j] smallmoney, [k] float, [l] float(24), "
         "[m] float(53), [n] real, [o] dec(6,3), [p] integer, [q] double precision)", "nums",
         ([("a", "tinyint", True, None), ("b", "smallint", True, None), ("c", "int", True, None),
           ("d", "bigint", True, None), ("e", "bit", False, None), ("f", "decimal(18,0)", True, None),
           ("g", "decimal(10,2)", True, None), ("h", "numeric(5,0)", True, None), ("i", "money", True, None),
           ("j", "smallmoney", True, None), ("k", "float", True, None), ("l", "real", True, None),
           ("m", "float", True, None), ("n", "real", True, None), ("o", "decimal(6,3)", True, None),
           ("p", "int", True, None), ("q", "float", True, None)], []), ["CREATE"]),
        ("ALTER TABLE nums ALTER COLUMN g decimal(12,4) NOT NULL", "nums",
         ([("a", "tinyint", True, None), ("b", "smallint", True, None), ("c", "int", True, None),
           ("d", "bigint", True, None), ("e", "bit", False, None), ("f", "decimal(18,0)", True, None),
           ("g", "decimal(12,4)", False, None), ("h", "numeric(5,0)", True, None), ("i", "money", True, None),
           ("j", "smallmoney", True, None), ("k", "float", True, None), ("l", "real", True, None),
           ("m", "float", True, None), ("n", "real", True, None), ("o", "decimal(6,3)", True, None),
           ("p", "int", True, None), ("q", "float", True, None)], []), ["ALTER"]),
        ("ALTER TABLE nums ALTER COLUMN e bit", "nums",  # no NULL / NOT NULL: nullable
         ([("a", "tinyint", True, None), ("b", "smallint", True, None), ("c", "int", True, None),
           ("d", "bigint", True, None), ("e", "bit", True, None), ("f", "decimal(18,0)", True, None),
           ("g", "decimal(12,4)", False, None), ("h", "numeric(5,0)", True, None), ("i", "money", True, None),
           ("j", "smallmoney", True, None), ("k", "float", True, None), ("l", "real", True, None),
           ("m", "float", True, None), ("n", "real", True, None), ("o", "decimal(6,3)", True, None),
           ("p", "int", True, None), ("q", "float", True, None)], []), ["ALTER"]),
        ("ALTER TABLE nums DROP COLUMN h, i, j, k, l, m, n, o, p, q", "nums",
         ([("a", "tinyint", True, None), ("b", "smallint", True, None), ("c", "int", True, None),
           ("d", "bigint", True, None), ("e", "bit", True, None), ("f", "decimal(18,0)", True, None),
           ("g", "decimal(12,4)", False, None)], []), ["ALTER"]),
    ],
    "string_binary_and_temporal_types": [
        ("CREATE TABLE misc (a char, b char(10), c varchar(50), d varchar(max), e nchar(4), f nvarchar(100), "
         "g nvarchar(max), h text, i ntext, j binary(16), k varbinary(max), l image, m uniqueidentifier, n xml, "
         "o date, p time, q time(3), r datetime, s datetime2, t datetime2(0), u datetimeoffset(2), "
         "v smalldatetime, w rowversion, x sql_variant, y sysname, z geography)", "misc",
         ([("a", "char(1)", True, None), ("b", "char(10)", True, None), ("c", "varchar(50)", True, None),
           ("d", "varchar(max)", True, None), ("e", "nchar(4)", True, None), ("f", "nvarchar(100)", True, None),
           ("g", "nvarchar(max)", True, None), ("h", "text", True, None), ("i", "ntext", True, None),
           ("j", "binary(16)", True, None), ("k", "varbinary(max)", True, None), ("l", "image", True, None),
           ("m", "uniqueidentifier", True, None), ("n", "xml", True, None), ("o", "date", True, None),
           ("p", "time(7)", True, None), ("q", "time(3)", True, None), ("r", "datetime", True, None),
           ("s", "datetime2(7)", True, None), ("t", "datetime2(0)", True, None),
           ("u", "datetimeoffset(2)", True, None), ("v", "smalldatetime", True, None),
           ("w", "rowversion", True, None), ("x", "sql_variant", True, None), ("y", "sysname", True, None),
           ("z", "geography", True, None)], []), ["CREATE"]),
        ("ALTER TABLE misc ALTER COLUMN c nvarchar(200) NOT NULL", "misc",
         ([("a", "char(1)", True, None), ("b", "char(10)", True, None), ("c", "nvarchar(200)", False, None),
           ("d", "varchar(max)", True, None), ("e", "nchar(4)", True, None), ("f", "nvarchar(100)", True, None),
           ("g", "nvarchar(max)", True, None), ("h", "text", True, None), ("i", "ntext", True, None),
           ("j", "binary(16)", True, None), ("k", "varbinary(max)", True, None), ("l", "image", True, None),
           ("m", "uniqueidentifier", True, None), ("n", "xml", True, None), ("o", "date", True, None),
           ("p", "time(7)", True, None), ("q", "time(3)", True, None), ("r", "datetime", True, None),
           ("s", "datetime2(7)", True, None), ("t", "datetime2(0)", True, None),
           ("u", "datetimeoffset(2)", True, None), ("v", "smalldatetime", True, None),
           ("w", "rowversion", True, None), ("x", "sql_variant", True, None), ("y", "sysname", True, None),
           ("z", "geography", True, None)], []), ["ALTER"]),
        ("ALTER TABLE misc DROP COLUMN IF EXISTS d, e, f, g, h, i, j, k, l, m, n, nope", "misc",
         ([("a", "char(1)", True, None), ("b", "char(10)", True, None), ("c", "nvarchar(200)", False, None),
           ("o", "date", True, None), ("p", "time(7)", True, None), ("q", "time(3)", True, None),
           ("r", "datetime", True, None), ("s", "datetime2(7)", True, None), ("t", "datetime2(0)", True, None),
           ("u", "datetimeoffset(2)", True, None), ("v", "smalldatetime", True, None),
           ("w", "rowversion", True, None), ("x", "sql_variant", True, None), ("y", "sysname", True, None),
           ("z", "geography", True, None)], []), ["ALTER"]),
    ],
    "constraints_defaults_and_options": [
        ("CREATE TABLE [dbo].[Orders] ([OrderID] [int] IDENTITY(1,1) NOT NULL, [CustomerID] [nchar](5) NULL, "
         "[OrderDate] [datetime] NOT NULL CONSTRAINT [DF_Orders_OrderDate] DEFAULT (getdate()), "
         "[Freight] [money] NULL CONSTRAINT [DF_Orders_Freight] DEFAULT ((0)), "
         "[ShipName] [nvarchar](40) COLLATE SQL_Latin1_General_CP1_CI_AS NULL DEFAULT ('n/a'), "
         "CONSTRAINT [PK_Orders] PRIMARY KEY CLUSTERED ([OrderID] ASC) WITH (PAD_INDEX = OFF, "
         "STATISTICS_NORECOMPUTE = OFF, IGNORE_DUP_KEY = OFF) ON [PRIMARY], "
         "CONSTRAINT [CK_Freight] CHECK ([Freight] >= (0)), "
         "CONSTRAINT [FK_Orders_Customers] FOREIGN KEY ([CustomerID]) REFERENCES [dbo].[Customers] ([CustomerID])"
         ") ON [PRIMARY] TEXTIMAGE_ON [PRIMARY]", "Orders",
         ([("OrderID", "int", False, None), ("CustomerID", "nchar(5)", True, None),
           ("OrderDate", "datetime", False, "getdate()"), ("Freight", "money", True, "0"),
           ("ShipName", "nvarchar(40)", True, "n/a")], ["OrderID"]), ["CREATE"]),
        ("ALTER TABLE [dbo].[Orders] DROP CONSTRAINT [DF_Orders_Freight]", "Orders",
         ([("OrderID", "int", False, None), ("CustomerID", "nchar(5)", True, None),
           ("OrderDate", "datetime", False, "getdate()"), ("Freight", "money", True, None),
           ("ShipName", "nvarchar(40)", True, "n/a")], ["OrderID"]), ["ALTER"]),
        ("ALTER TABLE [dbo].[Orders] ADD CONSTRAINT [DF_Orders_Freight2] DEFAULT ((1.5)) FOR [Freight]", "Orders",
         ([("OrderID", "int", False, None), ("CustomerID", "nchar(5)", True, None),
           ("OrderDate", "datetime", False, "getdate()"), ("Freight", "money", True, "1.5"),
           ("ShipName", "nvarchar(40)", True, "n/a")], ["OrderID"]), ["ALTER"]),
        ("ALTER TABLE Orders DROP CONSTRAINT PK_Orders", "Orders",  # OrderID stays NOT NULL
         ([("OrderID", "int", False, None), ("CustomerID", "nchar(5)", True, None),
           ("OrderDate", "datetime", False, "getdate()"), ("Freight", "money", True, "1.5"),
           ("ShipName", "nvarchar(40)", True, "n/a")], []), ["ALTER"]),
        ("ALTER TABLE Orders ADD CONSTRAINT PK_Orders2 PRIMARY KEY NONCLUSTERED (OrderID, OrderDate)", "Orders",
         ([("OrderID", "int", False, None), ("CustomerID", "nchar(5)", True, None),
           ("OrderDate", "datetime", False, "getdate()"), ("Freight", "money", True, "1.5"),
           ("ShipName", "nvarchar(40)", True, "n/a")], ["OrderID", "OrderDate"]), ["ALTER"]),
        ("ALTER TABLE Orders WITH CHECK ADD CONSTRAINT CK_Ship CHECK (ShipName <> '')", "Orders",
         ([("OrderID", "int", False, None), ("CustomerID", "nchar(5)", True, None),
           ("OrderDate", "datetime", False, "getdate()"), ("Freight", "money", True, "1.5"),
           ("ShipName", "nvarchar(40)", True, "n/a")], ["OrderID", "OrderDate"]), ["NOOP"]),
        ("ALTER TABLE Orders NOCHECK CONSTRAINT CK_Ship", "Orders",
         ([("OrderID", "int", False, None), ("CustomerID", "nchar(5)", True, None),
           ("OrderDate", "datetime", False, "getdate()"), ("Freight", "money", True, "1.5"),
           ("ShipName", "nvarchar(40)", True, "n/a")], ["OrderID", "OrderDate"]), ["NOOP"]),
        ("ALTER TABLE Orders DROP CONSTRAINT IF EXISTS CK_Ship, FK_Orders_Customers", "Orders",
         ([("OrderID", "int", False, None), ("CustomerID", "nchar(5)", True, None),
           ("OrderDate", "datetime", False, "getdate()"), ("Freight", "money", True, "1.5"),
           ("ShipName", "nvarchar(40)", True, "n/a")], ["OrderID", "OrderDate"]), ["NOOP"]),
    ],
    "identity_and_computed_columns": [
        ("CREATE TABLE sales.lines (line_id bigint IDENTITY NOT NULL, qty int NOT NULL, price decimal(10,2) NOT "
         "NULL, total AS (qty * price) PERSISTED, label AS UPPER(CAST(line_id AS varchar(20))), "
         "row_guid uniqueidentifier ROWGUIDCOL NOT NULL DEFAULT NEWSEQUENTIALID(), "
         "CONSTRAINT pk_lines PRIMARY KEY (line_id))", "sales.lines",
         ([("line_id", "bigint", False, None), ("qty", "int", False, None), ("price", "decimal(10,2)", False, None),
           ("total", "computed", True, None), ("label", "computed", True, None),
           ("row_guid", "uniqueidentifier", False, "NEWSEQUENTIALID()")], ["line_id"]), ["CREATE"]),
        ("ALTER TABLE sales.lines ADD discount decimal(4,2) NOT NULL CONSTRAINT df_discount DEFAULT 0, "
         "note nvarchar(200) NULL, net AS (qty * price - discount)", "sales.lines",
         ([("line_id", "bigint", False, None), ("qty", "int", False, None), ("price", "decimal(10,2)", False, None),
           ("total", "computed", True, None), ("label", "computed", True, None),
           ("row_guid", "uniqueidentifier", False, "NEWSEQUENTIALID()"),
           ("discount", "decimal(4,2)", False, "0"), ("note", "nvarchar(200)", True, None),
           ("net", "computed", True, None)], ["line_id"]), ["ALTER"]),
        ("ALTER TABLE sales.lines DROP COLUMN total, label", "sales.lines",
         ([("line_id", "bigint", False, None), ("qty", "int", False, None), ("price", "decimal(10,2)", False, None),
           ("row_guid", "uniqueidentifier", False, "NEWSEQUENTIALID()"),
           ("discount", "decimal(4,2)", False, "0"), ("note", "nvarchar(200)", True, None),
           ("net", "computed", True, None)], ["line_id"]), ["ALTER"]),
        ("ALTER TABLE sales.lines DROP CONSTRAINT df_discount", "sales.lines",
         ([("line_id", "bigint", False, None), ("qty", "int", False, None), ("price", "decimal(10,2)", False, None),
           ("row_guid", "uniqueidentifier", False, "NEWSEQUENTIALID()"),
           ("discount", "decimal(4,2)", False, None), ("note", "nvarchar(200)", True, None),
           ("net", "computed", True, None)], ["line_id"]), ["ALTER"]),
    ],
    "system_versioned_temporal_table": [
        ("CREATE TABLE dbo.Employee (EmployeeID int NOT NULL PRIMARY KEY CLUSTERED, Name nvarchar(100) NOT NULL, "
         "ValidFrom datetime2 GENERATED ALWAYS AS ROW START HIDDEN NOT NULL, ValidTo datetime2 GENERATED ALWAYS AS "
         "ROW END HIDDEN NOT NULL, PERIOD FOR SYSTEM_TIME (ValidFrom, ValidTo)) WITH (SYSTEM_VERSIONING = ON "
         "(HISTORY_TABLE = dbo.EmployeeHistory))", "Employee",
         ([("EmployeeID", "int", False, None), ("Name", "nvarchar(100)", False, None),
           ("ValidFrom", "datetime2(7)", False, None), ("ValidTo", "datetime2(7)", False, None)], ["EmployeeID"]),
         ["CREATE"]),
        ("ALTER TABLE dbo.Employee SET (SYSTEM_VERSIONING = OFF)", "Employee",
         ([("EmployeeID", "int", False, None), ("Name", "nvarchar(100)", False, None),
           ("ValidFrom", "datetime2(7)", False, None), ("ValidTo", "datetime2(7)", False, None)], ["EmployeeID"]),
         ["NOOP"]),
        ("ALTER TABLE dbo.Employee DROP PERIOD FOR SYSTEM_TIME", "Employee",
         ([("EmployeeID", "int", False, None), ("Name", "nvarchar(100)", False, None),
           ("ValidFrom", "datetime2(7)", False, None), ("ValidTo", "datetime2(7)", False, None)], ["EmployeeID"]),
         ["NOOP"]),
    ],
    "renames": [
        ("CREATE TABLE [inventory].[Products] (Id int NOT NULL, Name varchar(100), CONSTRAINT PK_Products PRIMARY "
         "KEY (Id))", "inventory.Products",
         ([("Id", "int", False, None), ("Name", "varchar(100)", True, None)], ["Id"]), ["CREATE"]),
        ("EXEC sp_rename 'inventory.Products.Name', 'Title', 'COLUMN'", "inventory.Products",
         ([("Id", "int", False, None), ("Title", "varchar(100)", True, None)], ["Id"]), ["ALTER"]),
        ("EXEC sp_rename N'inventory.Products', N'Goods'", "inventory.Goods",
         ([("Id", "int", False, None), ("Title", "varchar(100)", True, None)], ["Id"]), ["ALTER"]),
        ("EXEC sp_rename 'inventory.Goods.IX_Title', 'IX_Title2', 'INDEX'", "inventory.Goods",
         ([("Id", "int", False, None), ("Title", "varchar(100)", True, None)], ["Id"]), ["NOOP"]),
        ("ALTER TABLE inventory.goods ALTER COLUMN title varchar(150) NOT NULL", "inventory.Goods",
         ([("Id", "int", False, None), ("Title", "varchar(150)", False, None)], ["Id"]), ["ALTER"]),
        ("ALTER TABLE inventory.Goods ADD CONSTRAINT DF_Title DEFAULT 'untitled' FOR Title", "inventory.Goods",
         ([("Id", "int", False, None), ("Title", "varchar(150)", False, "untitled")], ["Id"]), ["ALTER"]),
        ("ALTER TABLE inventory.Goods ADD Stock int NULL, CONSTRAINT UQ_Title UNIQUE (Title), Price money NOT NULL "
         "CONSTRAINT DF_Price DEFAULT ((0.0))", "inventory.Goods",
         ([("Id", "int", False, None), ("Title", "varchar(150)", False, "untitled"), ("Stock", "int", True, None),
           ("Price", "money", False, "0.0")], ["Id"]), ["ALTER"]),
        ("ALTER TABLE inventory.Goods DROP CONSTRAINT DF_Title, DF_Price", "inventory.Goods",
         ([("Id", "int", False, None), ("Title", "varchar(150)", False, None), ("Stock", "int", True, None),
           ("Price", "money", False, None)], ["Id"]), ["ALTER"]),
        ("DROP TABLE [inventory].[Goods]", "inventory.Goods", None, ["DROP"]),
    ],
    "drops_truncate_and_noops": [
        ("CREATE TABLE t1 (id int PRIMARY KEY, v varchar(10))", "t1",
         ([("id", "int", False, None), ("v", "varchar(10)", True, None)], ["id"]), ["CREATE"]),
        ("CREATE TABLE t2 (id int NOT NULL)", "t2", ([("id", "int", False, None)], []), ["CREATE"]),
        ("CREATE NONCLUSTERED INDEX ix_t1_v ON dbo.t1 (v) INCLUDE (id) WITH (ONLINE = ON)", "t1",
         ([("id", "int", False, None), ("v", "varchar(10)", True, None)], ["id"]), ["NOOP"]),
        ("CREATE STATISTICS st_v ON t1 (v)", "t1",
         ([("id", "int", False, None), ("v", "varchar(10)", True, None)], ["id"]), ["NOOP"]),
        ("SET ANSI_NULLS ON", "t1", ([("id", "int", False, None), ("v", "varchar(10)", True, None)], ["id"]),
         ["NOOP"]),
        ("GRANT SELECT ON dbo.t1 TO reporting", "t1",
         ([("id", "int", False, None), ("v", "varchar(10)", True, None)], ["id"]), ["NOOP"]),
        ("CREATE PROCEDURE dbo.p1 AS BEGIN SELECT 1; SELECT 2; END", "t1",
         ([("id", "int", False, None), ("v", "varchar(10)", True, None)], ["id"]), ["NOOP"]),
        ("TRUNCATE TABLE dbo.t1", "t1",
         ([("id", "int", False, None), ("v", "varchar(10)", True, None)], ["id"]), ["TRUNCATE"]),
        ("ALTER TABLE t1 REBUILD WITH (DATA_COMPRESSION = PAGE)", "t1",
         ([("id", "int", False, None), ("v", "varchar(10)", True, None)], ["id"]), ["NOOP"]),
        ("DROP INDEX ix_t1_v ON dbo.t1", "t1",
         ([("id", "int", False, None), ("v", "varchar(10)", True, None)], ["id"]), ["NOOP"]),
        ("DROP TABLE IF EXISTS dbo.t1, t2, nope", "t1", None, ["DROP", "DROP"]),
        ("DROP TABLE IF EXISTS dbo.t1", "t2", None, ["NOOP"]),
    ],
    "case_insensitive_names_and_errors": [
        ("CREATE TABLE Mixed (ID int NOT NULL, Val varchar(5))", "Mixed",
         ([("ID", "int", False, None), ("Val", "varchar(5)", True, None)], []), ["CREATE"]),
        ("ALTER TABLE MIXED ALTER COLUMN val varchar(10)", "Mixed",
         ([("ID", "int", False, None), ("Val", "varchar(10)", True, None)], []), ["ALTER"]),
        ("ALTER TABLE mixed ADD CONSTRAINT pk_mixed PRIMARY KEY (id)", "Mixed",
         ([("ID", "int", False, None), ("Val", "varchar(10)", True, None)], ["ID"]), ["ALTER"]),
        ("ALTER TABLE mixed ALTER COLUMN nope int", "Mixed",
         ([("ID", "int", False, None), ("Val", "varchar(10)", True, None)], ["ID"]), ["ERROR"]),
        ("ALTER TABLE mixed ADD bad notatype(3)", "Mixed",
         ([("ID", "int", False, None), ("Val", "varchar(10)", True, None)], ["ID"]), ["ERROR"]),
    ],
}


def _table_id(name: str) -> TableId:
    schema, _, table = name.rpartition(".")
    return TableId(DB, schema or "dbo", table)


def _state(table) -> tuple[list[tuple], list[str]]:
    return ([(c.name, c.source_type, c.nullable, c.default if c.has_default else None) for c in table.columns],
            list(table.primary_key))


@pytest.mark.parametrize("steps", list(SCENARIOS.values()), ids=list(SCENARIOS))
def test_tsql_ddl(steps: list[Step]):
    state = SchemaState()
    for statement, name, expected, kinds in steps:
        changes = state.apply(statement, "tsql", DB)
        assert [c.kind for c in changes] == kinds, (statement, [(c.kind, c.detail) for c in changes])
        table = state.tables.get(_table_id(name))
        assert (None if table is None else _state(table)) == expected, statement


def test_tsql_corpus_size():
    assert sum(len(steps) for steps in SCENARIOS.values()) >= 50


def test_tsql_debezium_column_attributes():
    """Debezium SQL Server: IDENTITY shows in typeName ("int identity") with autoIncremented false; length and
    scale are the catalog precision/scale (int 10,0; datetime2(3) 23,3); Spark types of the decoded values."""
    state = SchemaState()
    [change] = state.apply("CREATE TABLE t (a int IDENTITY(1,1) PRIMARY KEY, b decimal(10,2), c datetime2(3), "
                           "d bit, e nvarchar(max), f varbinary(16), g datetimeoffset, h tinyint, i time(0))",
                           "tsql", DB)
    cols = change.to_table_change()["table"]["columns"]
    assert [(c["name"], c["typeName"], c["jdbcType"], c["length"], c["scale"], c["optional"], c["autoIncremented"])
            for c in cols] == [
        ("a", "int identity", 4, 10, 0, False, False), ("b", "decimal", 3, 10, 2, True, False),
        ("c", "datetime2", 93, 23, 3, True, False), ("d", "bit", -7, 1, None, True, False),
        ("e", "nvarchar", -9, 1073741823, None, True, False), ("f", "varbinary", -3, 16, None, True, False),
        ("g", "datetimeoffset", -155, 34, 7, True, False), ("h", "tinyint", -6, 3, 0, True, False),
        ("i", "time", 92, 8, 0, True, False)]
    assert [c.spark_type for c in state.tables[TableId(DB, "dbo", "t")].columns] == [
        "INT", "DECIMAL(10,2)", "TIMESTAMP_NTZ", "BOOLEAN", "STRING", "BINARY", "TIMESTAMP", "SMALLINT", "BIGINT"]
