"""Table-driven Oracle DDL tests for the schema history interpreter (dialect "oracle").

No Oracle server runs here (none can be started on this machine), so these are NOT oracle checks against a real
catalog: every expected state below is written by hand from Oracle's documented semantics (SQL Language
Reference: CREATE TABLE / ALTER TABLE / RENAME / DROP TABLE; ALL_TAB_COLUMNS) and Debezium's Oracle column model:
unquoted names fold to upper case, NUMBER(p) has scale 0, INTEGER is NUMBER(38), FLOAT is FLOAT(126), TIMESTAMP
defaults to 6 fractional digits, CHAR/NCHAR default to length 1, a primary key makes its columns NOT NULL and
dropping the key makes them nullable again unless NOT NULL was declared (identity columns and DEFAULT ON NULL
imply NOT NULL), MODIFY changes only what it names,
SET UNUSED removes a column from the table's visible structure. Physical clauses (storage, LOB storage,
tablespace, logging, supplemental logging, partitioning) never change the structure.

Each scenario starts from an empty catalog and applies its statements in order; after each statement the table
it names must have exactly the expected columns (name, type text, nullable, default) and primary key, or be
absent (None).
"""

from __future__ import annotations

import pytest

from ingest.schema import SchemaState, TableId

pytestmark = pytest.mark.unit

DB, OWNER = "ORCLPDB1", "DEBEZIUM"

# (statement, table name, expected: None (absent) or ([(name, source_type, nullable, default)], primary key), kinds)
Step = tuple[str, str, "tuple[list[tuple], list[str]] | None", list[str]]

SCENARIOS: dict[str, list[Step]] = {
    "seed_customers_with_storage": [
        ("""CREATE TABLE "DEBEZIUM"."CUSTOMERS" ("ID" NUMBER(9,0) NOT NULL ENABLE, "FIRST_NAME" VARCHAR2(255),
            PRIMARY KEY ("ID") USING INDEX PCTFREE 10 INITRANS 2 MAXTRANS 255 COMPUTE STATISTICS
            STORAGE(INITIAL 65536 NEXT 1048576) TABLESPACE "USERS" ENABLE, SUPPLEMENTAL LOG DATA (ALL) COLUMNS)
            SEGMENT CREATION IMMEDIATE PCTFREE 10 PCTUSED 40 INITRANS 1 MAXTRANS 255 NOCOMPRESS LOGGING
            STORAGE(INITIAL 65536 NEXT 1048576 MINEXTENTS 1 MAXEXTENTS 2147483645 PCTINCREASE 0 FREELISTS 1
            FREELIST GROUPS 1 BUFFER_POOL DEFAULT FLASH_CACHE DEFAULT CELL_FLASH_CACHE DEFAULT) TABLESPACE "USERS\"""",
         "CUSTOMERS", ([("ID", "NUMBER(9)", False, None), ("FIRST_NAME", "VARCHAR2(255)", True, None)], ["ID"]),
         ["CREATE"]),
        ("ALTER TABLE customers ADD (email VARCHAR2(320) NOT NULL, phone VARCHAR2(32))", "CUSTOMERS",
         ([("ID", "NUMBER(9)", False, None), ("FIRST_NAME", "VARCHAR2(255)", True, None),
           ("EMAIL", "VARCHAR2(320)", False, None), ("PHONE", "VARCHAR2(32)", True, None)], ["ID"]), ["ALTER"]),
        ("ALTER TABLE customers MODIFY (first_name VARCHAR2(400) NOT NULL)", "CUSTOMERS",
         ([("ID", "NUMBER(9)", False, None), ("FIRST_NAME", "VARCHAR2(400)", False, None),
           ("EMAIL", "VARCHAR2(320)", False, None), ("PHONE", "VARCHAR2(32)", True, None)], ["ID"]), ["ALTER"]),
        ("ALTER TABLE customers MODIFY phone DEFAULT 'n/a'", "CUSTOMERS",
         ([("ID", "NUMBER(9)", False, None), ("FIRST_NAME", "VARCHAR2(400)", False, None),
           ("EMAIL", "VARCHAR2(320)", False, None), ("PHONE", "VARCHAR2(32)", True, "n/a")], ["ID"]), ["ALTER"]),
        ("ALTER TABLE customers DROP COLUMN phone", "CUSTOMERS",
         ([("ID", "NUMBER(9)", False, None), ("FIRST_NAME", "VARCHAR2(400)", False, None),
           ("EMAIL", "VARCHAR2(320)", False, None)], ["ID"]), ["ALTER"]),
        ("ALTER TABLE customers RENAME COLUMN email TO email_address", "CUSTOMERS",
         ([("ID", "NUMBER(9)", False, None), ("FIRST_NAME", "VARCHAR2(400)", False, None),
           ("EMAIL_ADDRESS", "VARCHAR2(320)", False, None)], ["ID"]), ["ALTER"]),
    ],
    "number_and_float_types": [
        ("CREATE TABLE nums (a NUMBER, b NUMBER(10), c NUMBER(10,2), d NUMBER(*,3), e INTEGER, f INT, g SMALLINT, "
         "h DECIMAL(8,2), i NUMERIC(5), j FLOAT, k FLOAT(63), l REAL, m DOUBLE PRECISION, n BINARY_FLOAT, "
         "o BINARY_DOUBLE, p NUMBER(38,0), q DEC(4))", "NUMS",
         ([("A", "NUMBER", True, None), ("B", "NUMBER(10)", True, None), ("C", "NUMBER(10,2)", True, None),
           ("D", "NUMBER(*,3)", True, None), ("E", "NUMBER(38)", True, None), ("F", "NUMBER(38)", True, None),
           ("G", "NUMBER(38)", True, None), ("H", "NUMBER(8,2)", True, None), ("I", "NUMBER(5)", True, None),
           ("J", "FLOAT(126)", True, None), ("K", "FLOAT(63)", True, None), ("L", "FLOAT(63)", True, None),
           ("M", "FLOAT(126)", True, None), ("N", "BINARY_FLOAT", True, None), ("O", "BINARY_DOUBLE", True, None),
           ("P", "NUMBER(38)", True, None), ("Q", "NUMBER(4)", True, None)], []), ["CREATE"]),
        ("ALTER TABLE nums MODIFY (b NUMBER(12,4), c DEFAULT 0)", "NUMS",
         ([("A", "NUMBER", True, None), ("B", "NUMBER(12,4)", True, None), ("C", "NUMBER(10,2)", True, "0"),
           ("D", "NUMBER(*,3)", True, None), ("E", "NUMBER(38)", True, None), ("F", "NUMBER(38)", True, None),
           ("G", "NUMBER(38)", True, None), ("H", "NUMBER(8,2)", True, None), ("I", "NUMBER(5)", True, None),
           ("J", "FLOAT(126)", True, None), ("K", "FLOAT(63)", True, None), ("L", "FLOAT(63)", True, None),
           ("M", "FLOAT(126)", True, None), ("N", "BINARY_FLOAT", True, None), ("O", "BINARY_DOUBLE", True, None),
           ("P", "NUMBER(38)", True, None), ("Q", "NUMBER(4)", True, None)], []), ["ALTER"]),
        ("ALTER TABLE nums DROP (d, e, f, g, h, i, j, k, l, m, n, o, p, q)", "NUMS",
         ([("A", "NUMBER", True, None), ("B", "NUMBER(12,4)", True, None), ("C", "NUMBER(10,2)", True, "0")], []),
         ["ALTER"]),
    ],
    "character_and_lob_types": [
        ("CREATE TABLE docs (a VARCHAR2(20), b VARCHAR2(20 CHAR), c VARCHAR2(20 BYTE), d NVARCHAR2(30), e CHAR, "
         "f CHAR(5), g NCHAR(3), h CLOB, i NCLOB, j BLOB, k RAW(16), l LONG, m VARCHAR(10), n XMLTYPE, "
         "o ROWID, p NATIONAL CHARACTER VARYING(12))", "DOCS",
         ([("A", "VARCHAR2(20)", True, None), ("B", "VARCHAR2(20 CHAR)", True, None),
           ("C", "VARCHAR2(20 BYTE)", True, None), ("D", "NVARCHAR2(30)", True, None), ("E", "CHAR(1)", True, None),
           ("F", "CHAR(5)", True, None), ("G", "NCHAR(3)", True, None), ("H", "CLOB", True, None),
           ("I", "NCLOB", True, None), ("J", "BLOB", True, None), ("K", "RAW(16)", True, None),
           ("L", "LONG", True, None), ("M", "VARCHAR2(10)", True, None), ("N", "XMLTYPE", True, None),
           ("O", "ROWID", True, None), ("P", "NVARCHAR2(12)", True, None)], []), ["CREATE"]),
        ("ALTER TABLE docs SET UNUSED (h, i, j, k, l, m, n, o, p)", "DOCS",
         ([("A", "VARCHAR2(20)", True, None), ("B", "VARCHAR2(20 CHAR)", True, None),
           ("C", "VARCHAR2(20 BYTE)", True, None), ("D", "NVARCHAR2(30)", True, None), ("E", "CHAR(1)", True, None),
           ("F", "CHAR(5)", True, None), ("G", "NCHAR(3)", True, None)], []), ["ALTER"]),
        ("ALTER TABLE docs SET UNUSED COLUMN g", "DOCS",
         ([("A", "VARCHAR2(20)", True, None), ("B", "VARCHAR2(20 CHAR)", True, None),
           ("C", "VARCHAR2(20 BYTE)", True, None), ("D", "NVARCHAR2(30)", True, None), ("E", "CHAR(1)", True, None),
           ("F", "CHAR(5)", True, None)], []), ["ALTER"]),
        ("ALTER TABLE docs DROP UNUSED COLUMNS", "DOCS",
         ([("A", "VARCHAR2(20)", True, None), ("B", "VARCHAR2(20 CHAR)", True, None),
           ("C", "VARCHAR2(20 BYTE)", True, None), ("D", "NVARCHAR2(30)", True, None), ("E", "CHAR(1)", True, None),
           ("F", "CHAR(5)", True, None)], []), ["NOOP"]),
    ],
    "temporal_types_and_defaults": [
        ("CREATE TABLE events (id NUMBER(19) GENERATED ALWAYS AS IDENTITY, at DATE DEFAULT SYSDATE NOT NULL, "
         "ts TIMESTAMP, ts3 TIMESTAMP(3), tz TIMESTAMP WITH TIME ZONE, tz9 TIMESTAMP(9) WITH TIME ZONE, "
         "ltz TIMESTAMP WITH LOCAL TIME ZONE, ym INTERVAL YEAR(2) TO MONTH, ds INTERVAL DAY(3) TO SECOND(2), "
         "created TIMESTAMP(6) DEFAULT SYSTIMESTAMP, CONSTRAINT events_pk PRIMARY KEY (id))", "EVENTS",
         ([("ID", "NUMBER(19)", False, None), ("AT", "DATE", False, "SYSDATE"), ("TS", "TIMESTAMP(6)", True, None),
           ("TS3", "TIMESTAMP(3)", True, None), ("TZ", "TIMESTAMP(6) WITH TIME ZONE", True, None),
           ("TZ9", "TIMESTAMP(9) WITH TIME ZONE", True, None),
           ("LTZ", "TIMESTAMP(6) WITH LOCAL TIME ZONE", True, None), ("YM", "INTERVAL YEAR(2) TO MONTH", True, None),
           ("DS", "INTERVAL DAY(3) TO SECOND(2)", True, None), ("CREATED", "TIMESTAMP(6)", True, "SYSTIMESTAMP")],
          ["ID"]), ["CREATE"]),
        ("ALTER TABLE events MODIFY (ts3 TIMESTAMP(6) DEFAULT SYSTIMESTAMP NOT NULL)", "EVENTS",
         ([("ID", "NUMBER(19)", False, None), ("AT", "DATE", False, "SYSDATE"), ("TS", "TIMESTAMP(6)", True, None),
           ("TS3", "TIMESTAMP(6)", False, "SYSTIMESTAMP"), ("TZ", "TIMESTAMP(6) WITH TIME ZONE", True, None),
           ("TZ9", "TIMESTAMP(9) WITH TIME ZONE", True, None),
           ("LTZ", "TIMESTAMP(6) WITH LOCAL TIME ZONE", True, None), ("YM", "INTERVAL YEAR(2) TO MONTH", True, None),
           ("DS", "INTERVAL DAY(3) TO SECOND(2)", True, None), ("CREATED", "TIMESTAMP(6)", True, "SYSTIMESTAMP")],
          ["ID"]), ["ALTER"]),
        ("ALTER TABLE events DROP CONSTRAINT events_pk", "EVENTS",
         ([("ID", "NUMBER(19)", False, None), ("AT", "DATE", False, "SYSDATE"), ("TS", "TIMESTAMP(6)", True, None),
           ("TS3", "TIMESTAMP(6)", False, "SYSTIMESTAMP"), ("TZ", "TIMESTAMP(6) WITH TIME ZONE", True, None),
           ("TZ9", "TIMESTAMP(9) WITH TIME ZONE", True, None),
           ("LTZ", "TIMESTAMP(6) WITH LOCAL TIME ZONE", True, None), ("YM", "INTERVAL YEAR(2) TO MONTH", True, None),
           ("DS", "INTERVAL DAY(3) TO SECOND(2)", True, None), ("CREATED", "TIMESTAMP(6)", True, "SYSTIMESTAMP")],
          []), ["ALTER"]),
        ("DROP TABLE events PURGE", "EVENTS", None, ["DROP"]),
    ],
    "constraints_inline_and_out_of_line": [
        ("CREATE TABLE orders (order_id NUMBER(12) CONSTRAINT orders_pk PRIMARY KEY, customer_id NUMBER(9) "
         "CONSTRAINT orders_cust_fk REFERENCES customers (id) ON DELETE CASCADE, status VARCHAR2(10) DEFAULT 'NEW' "
         "CONSTRAINT orders_status_ck CHECK (status IN ('NEW', 'DONE')) NOT NULL, code VARCHAR2(8) UNIQUE, "
         "qty NUMBER(5) CHECK (qty > 0) DISABLE)", "ORDERS",
         ([("ORDER_ID", "NUMBER(12)", False, None), ("CUSTOMER_ID", "NUMBER(9)", True, None),
           ("STATUS", "VARCHAR2(10)", False, "NEW"), ("CODE", "VARCHAR2(8)", True, None),
           ("QTY", "NUMBER(5)", True, None)], ["ORDER_ID"]), ["CREATE"]),
        ("ALTER TABLE orders DROP PRIMARY KEY", "ORDERS",
         ([("ORDER_ID", "NUMBER(12)", True, None), ("CUSTOMER_ID", "NUMBER(9)", True, None),
           ("STATUS", "VARCHAR2(10)", False, "NEW"), ("CODE", "VARCHAR2(8)", True, None),
           ("QTY", "NUMBER(5)", True, None)], []), ["ALTER"]),
        ("ALTER TABLE orders ADD CONSTRAINT orders_pk2 PRIMARY KEY (order_id, customer_id) USING INDEX TABLESPACE "
         "users", "ORDERS",
         ([("ORDER_ID", "NUMBER(12)", False, None), ("CUSTOMER_ID", "NUMBER(9)", False, None),
           ("STATUS", "VARCHAR2(10)", False, "NEW"), ("CODE", "VARCHAR2(8)", True, None),
           ("QTY", "NUMBER(5)", True, None)], ["ORDER_ID", "CUSTOMER_ID"]), ["ALTER"]),
        ("ALTER TABLE orders ADD CONSTRAINT orders_code_uk UNIQUE (code)", "ORDERS",
         ([("ORDER_ID", "NUMBER(12)", False, None), ("CUSTOMER_ID", "NUMBER(9)", False, None),
           ("STATUS", "VARCHAR2(10)", False, "NEW"), ("CODE", "VARCHAR2(8)", True, None),
           ("QTY", "NUMBER(5)", True, None)], ["ORDER_ID", "CUSTOMER_ID"]), ["NOOP"]),
        ("ALTER TABLE orders DROP CONSTRAINT orders_pk2 CASCADE", "ORDERS",
         ([("ORDER_ID", "NUMBER(12)", True, None), ("CUSTOMER_ID", "NUMBER(9)", True, None),
           ("STATUS", "VARCHAR2(10)", False, "NEW"), ("CODE", "VARCHAR2(8)", True, None),
           ("QTY", "NUMBER(5)", True, None)], []), ["ALTER"]),
        ("ALTER TABLE orders MODIFY (order_id NOT NULL, status NULL)", "ORDERS",
         ([("ORDER_ID", "NUMBER(12)", False, None), ("CUSTOMER_ID", "NUMBER(9)", True, None),
           ("STATUS", "VARCHAR2(10)", True, "NEW"), ("CODE", "VARCHAR2(8)", True, None),
           ("QTY", "NUMBER(5)", True, None)], []), ["ALTER"]),
        ("ALTER TABLE orders ADD PRIMARY KEY (order_id)", "ORDERS",
         ([("ORDER_ID", "NUMBER(12)", False, None), ("CUSTOMER_ID", "NUMBER(9)", True, None),
           ("STATUS", "VARCHAR2(10)", True, "NEW"), ("CODE", "VARCHAR2(8)", True, None),
           ("QTY", "NUMBER(5)", True, None)], ["ORDER_ID"]), ["ALTER"]),
        ("ALTER TABLE orders DROP PRIMARY KEY KEEP INDEX", "ORDERS",  # ORDER_ID was declared NOT NULL: stays
         ([("ORDER_ID", "NUMBER(12)", False, None), ("CUSTOMER_ID", "NUMBER(9)", True, None),
           ("STATUS", "VARCHAR2(10)", True, "NEW"), ("CODE", "VARCHAR2(8)", True, None),
           ("QTY", "NUMBER(5)", True, None)], []), ["ALTER"]),
    ],
    # A virtual column without a type takes the type of its expression, which the parser cannot evaluate: it is
    # recorded with the type "computed" (Spark STRING) rather than a guess.
    "identity_virtual_and_invisible": [
        ("CREATE TABLE items (id NUMBER GENERATED BY DEFAULT ON NULL AS IDENTITY (START WITH 1001 INCREMENT BY 1) "
         "NOT NULL PRIMARY KEY, price NUMBER(8,2) DEFAULT ON NULL 0, qty NUMBER(6) INVISIBLE, "
         "total NUMBER(12,2) GENERATED ALWAYS AS (price * qty) VIRTUAL, "
         "half AS (price / 2), guid RAW(16) DEFAULT SYS_GUID())", "ITEMS",
         ([("ID", "NUMBER", False, None), ("PRICE", "NUMBER(8,2)", False, "0"), ("QTY", "NUMBER(6)", True, None),
           ("TOTAL", "NUMBER(12,2)", True, None), ("HALF", "computed", True, None),
           ("GUID", "RAW(16)", True, "SYS_GUID()")], ["ID"]), ["CREATE"]),
        ("ALTER TABLE items ADD discount NUMBER(4,2) DEFAULT 0 NOT NULL", "ITEMS",
         ([("ID", "NUMBER", False, None), ("PRICE", "NUMBER(8,2)", False, "0"), ("QTY", "NUMBER(6)", True, None),
           ("TOTAL", "NUMBER(12,2)", True, None), ("HALF", "computed", True, None),
           ("GUID", "RAW(16)", True, "SYS_GUID()"), ("DISCOUNT", "NUMBER(4,2)", False, "0")], ["ID"]), ["ALTER"]),
        ("ALTER TABLE items MODIFY (qty VISIBLE)", "ITEMS",
         ([("ID", "NUMBER", False, None), ("PRICE", "NUMBER(8,2)", False, "0"), ("QTY", "NUMBER(6)", True, None),
           ("TOTAL", "NUMBER(12,2)", True, None), ("HALF", "computed", True, None),
           ("GUID", "RAW(16)", True, "SYS_GUID()"), ("DISCOUNT", "NUMBER(4,2)", False, "0")], ["ID"]), ["NOOP"]),
        ("ALTER TABLE items DROP (total, half) CASCADE CONSTRAINTS CHECKPOINT 250", "ITEMS",
         ([("ID", "NUMBER", False, None), ("PRICE", "NUMBER(8,2)", False, "0"), ("QTY", "NUMBER(6)", True, None),
           ("GUID", "RAW(16)", True, "SYS_GUID()"), ("DISCOUNT", "NUMBER(4,2)", False, "0")], ["ID"]), ["ALTER"]),
    ],
    "quoted_identifiers_keep_case": [
        ('CREATE TABLE "MixedCase" ("Id" NUMBER(5) NOT NULL, "lower" VARCHAR2(5), plain NUMBER)', "MixedCase",
         ([("Id", "NUMBER(5)", False, None), ("lower", "VARCHAR2(5)", True, None), ("PLAIN", "NUMBER", True, None)],
          []), ["CREATE"]),
        ('ALTER TABLE "MixedCase" ADD CONSTRAINT "MixedCase_PK" PRIMARY KEY ("Id")', "MixedCase",
         ([("Id", "NUMBER(5)", False, None), ("lower", "VARCHAR2(5)", True, None), ("PLAIN", "NUMBER", True, None)],
          ["Id"]), ["ALTER"]),
        ('ALTER TABLE "MixedCase" RENAME COLUMN "lower" TO "Upper"', "MixedCase",
         ([("Id", "NUMBER(5)", False, None), ("Upper", "VARCHAR2(5)", True, None), ("PLAIN", "NUMBER", True, None)],
          ["Id"]), ["ALTER"]),
        ('ALTER TABLE "MixedCase" DROP CONSTRAINT "MixedCase_PK"', "MixedCase",  # "Id" declared NOT NULL
         ([("Id", "NUMBER(5)", False, None), ("Upper", "VARCHAR2(5)", True, None), ("PLAIN", "NUMBER", True, None)],
          []), ["ALTER"]),
    ],
    "renames_and_drops": [
        ("CREATE TABLE old_name (id NUMBER(10) PRIMARY KEY, v VARCHAR2(10)) TABLESPACE users", "OLD_NAME",
         ([("ID", "NUMBER(10)", False, None), ("V", "VARCHAR2(10)", True, None)], ["ID"]), ["CREATE"]),
        ("RENAME old_name TO mid_name", "MID_NAME",
         ([("ID", "NUMBER(10)", False, None), ("V", "VARCHAR2(10)", True, None)], ["ID"]), ["ALTER"]),
        ("ALTER TABLE mid_name RENAME TO new_name", "NEW_NAME",
         ([("ID", "NUMBER(10)", False, None), ("V", "VARCHAR2(10)", True, None)], ["ID"]), ["ALTER"]),
        ("TRUNCATE TABLE new_name DROP STORAGE", "NEW_NAME",
         ([("ID", "NUMBER(10)", False, None), ("V", "VARCHAR2(10)", True, None)], ["ID"]), ["TRUNCATE"]),
        ("DROP TABLE new_name CASCADE CONSTRAINTS PURGE", "NEW_NAME", None, ["DROP"]),
        ("DROP TABLE mid_name", "MID_NAME", None, ["NOOP"]),
    ],
    "physical_clauses_are_not_structure": [
        ("CREATE TABLE logs (id NUMBER(19) NOT NULL, msg CLOB, at TIMESTAMP(3) NOT NULL, CONSTRAINT logs_pk "
         "PRIMARY KEY (id, at)) LOB (msg) STORE AS SECUREFILE (TABLESPACE users ENABLE STORAGE IN ROW CHUNK 8192 "
         "NOCACHE LOGGING) PARTITION BY RANGE (at) INTERVAL (NUMTODSINTERVAL(1, 'DAY')) (PARTITION p0 VALUES LESS "
         "THAN (TIMESTAMP '2020-01-01 00:00:00')) COMPRESS FOR OLTP PARALLEL 4 ENABLE ROW MOVEMENT", "LOGS",
         ([("ID", "NUMBER(19)", False, None), ("MSG", "CLOB", True, None), ("AT", "TIMESTAMP(3)", False, None)],
          ["ID", "AT"]), ["CREATE"]),
        ("ALTER TABLE logs ADD SUPPLEMENTAL LOG DATA (ALL) COLUMNS", "LOGS",
         ([("ID", "NUMBER(19)", False, None), ("MSG", "CLOB", True, None), ("AT", "TIMESTAMP(3)", False, None)],
          ["ID", "AT"]), ["NOOP"]),
        ("ALTER TABLE logs NOLOGGING", "LOGS",
         ([("ID", "NUMBER(19)", False, None), ("MSG", "CLOB", True, None), ("AT", "TIMESTAMP(3)", False, None)],
          ["ID", "AT"]), ["NOOP"]),
        ("ALTER TABLE logs MOVE TABLESPACE users2", "LOGS",
         ([("ID", "NUMBER(19)", False, None), ("MSG", "CLOB", True, None), ("AT", "TIMESTAMP(3)", False, None)],
          ["ID", "AT"]), ["NOOP"]),
        ("ALTER TABLE logs ENABLE ROW MOVEMENT", "LOGS",
         ([("ID", "NUMBER(19)", False, None), ("MSG", "CLOB", True, None), ("AT", "TIMESTAMP(3)", False, None)],
          ["ID", "AT"]), ["NOOP"]),
        ("ALTER TABLE logs DROP PARTITION p0 UPDATE GLOBAL INDEXES", "LOGS",
         ([("ID", "NUMBER(19)", False, None), ("MSG", "CLOB", True, None), ("AT", "TIMESTAMP(3)", False, None)],
          ["ID", "AT"]), ["NOOP"]),
        ("ALTER TABLE logs MODIFY LOB (msg) (SHRINK SPACE)", "LOGS",
         ([("ID", "NUMBER(19)", False, None), ("MSG", "CLOB", True, None), ("AT", "TIMESTAMP(3)", False, None)],
          ["ID", "AT"]), ["NOOP"]),
    ],
    "non_structural_statements": [
        ("CREATE TABLE t1 (id NUMBER(3) PRIMARY KEY, name VARCHAR2(30))", "T1",
         ([("ID", "NUMBER(3)", False, None), ("NAME", "VARCHAR2(30)", True, None)], ["ID"]), ["CREATE"]),
        ("CREATE INDEX t1_name_ix ON t1 (name) TABLESPACE users", "T1",
         ([("ID", "NUMBER(3)", False, None), ("NAME", "VARCHAR2(30)", True, None)], ["ID"]), ["NOOP"]),
        ("CREATE UNIQUE INDEX t1_uk ON t1 (UPPER(name))", "T1",
         ([("ID", "NUMBER(3)", False, None), ("NAME", "VARCHAR2(30)", True, None)], ["ID"]), ["NOOP"]),
        ("CREATE SEQUENCE t1_seq START WITH 1 INCREMENT BY 1 NOCACHE", "T1",
         ([("ID", "NUMBER(3)", False, None), ("NAME", "VARCHAR2(30)", True, None)], ["ID"]), ["NOOP"]),
        ("CREATE OR REPLACE TRIGGER t1_bi BEFORE INSERT ON t1 FOR EACH ROW BEGIN :NEW.id := t1_seq.NEXTVAL; END;",
         "T1", ([("ID", "NUMBER(3)", False, None), ("NAME", "VARCHAR2(30)", True, None)], ["ID"]), ["NOOP"]),
        ("COMMENT ON COLUMN t1.name IS 'the name'", "T1",
         ([("ID", "NUMBER(3)", False, None), ("NAME", "VARCHAR2(30)", True, None)], ["ID"]), ["NOOP"]),
        ("GRANT SELECT, INSERT ON t1 TO app_user", "T1",
         ([("ID", "NUMBER(3)", False, None), ("NAME", "VARCHAR2(30)", True, None)], ["ID"]), ["NOOP"]),
        ("CREATE OR REPLACE VIEW t1_v AS SELECT id FROM t1", "T1",
         ([("ID", "NUMBER(3)", False, None), ("NAME", "VARCHAR2(30)", True, None)], ["ID"]), ["NOOP"]),
        ("CREATE OR REPLACE SYNONYM t1_syn FOR t1", "T1",
         ([("ID", "NUMBER(3)", False, None), ("NAME", "VARCHAR2(30)", True, None)], ["ID"]), ["NOOP"]),
        ("DROP INDEX t1_name_ix", "T1",
         ([("ID", "NUMBER(3)", False, None), ("NAME", "VARCHAR2(30)", True, None)], ["ID"]), ["NOOP"]),
        ("ALTER INDEX t1_uk REBUILD ONLINE", "T1",
         ([("ID", "NUMBER(3)", False, None), ("NAME", "VARCHAR2(30)", True, None)], ["ID"]), ["NOOP"]),
    ],
    "schema_qualified_and_multi_clause": [
        ("CREATE TABLE inventory.products (id NUMBER(9) NOT NULL, name VARCHAR2(255) NOT NULL, weight FLOAT)",
         "INVENTORY.PRODUCTS", ([("ID", "NUMBER(9)", False, None), ("NAME", "VARCHAR2(255)", False, None),
                                 ("WEIGHT", "FLOAT(126)", True, None)], []), ["CREATE"]),
        ("ALTER TABLE inventory.products ADD (description VARCHAR2(512), CONSTRAINT products_pk PRIMARY KEY (id))",
         "INVENTORY.PRODUCTS", ([("ID", "NUMBER(9)", False, None), ("NAME", "VARCHAR2(255)", False, None),
                                 ("WEIGHT", "FLOAT(126)", True, None), ("DESCRIPTION", "VARCHAR2(512)", True, None)],
                                ["ID"]), ["ALTER"]),
        ("ALTER TABLE inventory.products MODIFY (weight NUMBER(8,3) DEFAULT 0, name VARCHAR2(300))",
         "INVENTORY.PRODUCTS", ([("ID", "NUMBER(9)", False, None), ("NAME", "VARCHAR2(300)", False, None),
                                 ("WEIGHT", "NUMBER(8,3)", True, "0"), ("DESCRIPTION", "VARCHAR2(512)", True, None)],
                                ["ID"]), ["ALTER"]),
        ("ALTER TABLE inventory.products RENAME TO goods", "INVENTORY.GOODS",
         ([("ID", "NUMBER(9)", False, None), ("NAME", "VARCHAR2(300)", False, None),
           ("WEIGHT", "NUMBER(8,3)", True, "0"), ("DESCRIPTION", "VARCHAR2(512)", True, None)], ["ID"]), ["ALTER"]),
        ("DROP TABLE inventory.goods", "INVENTORY.GOODS", None, ["DROP"]),
    ],
    "errors_leave_the_catalog_unchanged": [
        ("CREATE TABLE e1 (id NUMBER(3), v VARCHAR2)", "E1", None, ["ERROR"]),  # VARCHAR2 needs a length
        ("CREATE TABLE e1 (id NUMBER(3))", "E1", ([("ID", "NUMBER(3)", True, None)], []), ["CREATE"]),
        ("ALTER TABLE e1 MODIFY (nope NUMBER(4))", "E1", ([("ID", "NUMBER(3)", True, None)], []), ["ERROR"]),
        ("ALTER TABLE e1 FROBNICATE", "E1", ([("ID", "NUMBER(3)", True, None)], []), ["ERROR"]),
    ],
}


def _table_id(name: str) -> TableId:
    schema, _, table = name.rpartition(".")
    return TableId(DB, schema or OWNER, table)


def _state(table) -> tuple[list[tuple], list[str]]:
    return ([(c.name, c.source_type, c.nullable, c.default if c.has_default else None) for c in table.columns],
            list(table.primary_key))


@pytest.mark.parametrize("steps", list(SCENARIOS.values()), ids=list(SCENARIOS))
def test_oracle_ddl(steps: list[Step]):
    state = SchemaState()
    for statement, name, expected, kinds in steps:
        changes = state.apply(statement, "oracle", DB, default_schema=OWNER)
        assert [c.kind for c in changes] == kinds, (statement, [(c.kind, c.detail) for c in changes])
        table = state.tables.get(_table_id(name))
        assert (None if table is None else _state(table)) == expected, statement
        for change in changes:
            if change.structural:
                entry = change.to_table_change()
                assert [c["name"] for c in entry["table"]["columns"]] == [c.name for c in change.table.columns]


def test_oracle_corpus_size():
    assert sum(len(steps) for steps in SCENARIOS.values()) >= 50


def test_oracle_debezium_column_attributes():
    """typeName, jdbcType, length, scale and the Spark type of the decoded value (Debezium's Oracle mapping with
    decimal.handling.mode=precise: NUMBER(p,0) narrows to an integer type by precision)."""
    state = SchemaState()
    state.apply("CREATE TABLE t (a NUMBER(2), b NUMBER(4), c NUMBER(9), d NUMBER(18), e NUMBER(30), f NUMBER(10,2), "
                "g NUMBER, h VARCHAR2(10 CHAR), i TIMESTAMP(3) WITH TIME ZONE, j DATE, k BLOB, l BINARY_DOUBLE, "
                "m RAW(8))", "oracle", DB, default_schema=OWNER)
    cols = {c.name: c for c in state.tables[TableId(DB, OWNER, "T")].columns}
    assert [(n, cols[n].type_name, cols[n].jdbc_type, cols[n].length, cols[n].scale, cols[n].spark_type)
            for n in "ABCDEFGHIJKLM"] == [
        ("A", "NUMBER", 2, 2, 0, "TINYINT"), ("B", "NUMBER", 2, 4, 0, "SMALLINT"), ("C", "NUMBER", 2, 9, 0, "INT"),
        ("D", "NUMBER", 2, 18, 0, "BIGINT"), ("E", "NUMBER", 2, 30, 0, "DECIMAL(30,0)"),
        ("F", "NUMBER", 2, 10, 2, "DECIMAL(10,2)"), ("G", "NUMBER", 2, None, None, "STRING"),
        ("H", "VARCHAR2", 12, 10, None, "STRING"),
        ("I", "TIMESTAMP(3) WITH TIME ZONE", -101, 3, None, "TIMESTAMP"),
        ("J", "DATE", 93, None, None, "TIMESTAMP_NTZ"), ("K", "BLOB", 2004, None, None, "BINARY"),
        ("L", "BINARY_DOUBLE", 101, None, None, "DOUBLE"), ("M", "RAW", -3, 8, None, "BINARY")]
