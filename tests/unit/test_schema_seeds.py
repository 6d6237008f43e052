"""Golden cases from the seeds (docs/research/seed-*-inventory.md) and table-driven Oracle / SQL Server DDL.
No Oracle or SQL Server server runs here: the expected states are written by hand from the documented
semantics of each statement."""

from __future__ import annotations

import json

import pytest

from ingest.schema import SchemaState, TableId
from ingest.schema.history import SchemaChangeRecord, UnparseableDdl, build_history

pytestmark = pytest.mark.unit

ORACLE_SEED_DDL = """CREATE TABLE "DEBEZIUM"."CUSTOMERS"
   ( "ID" NUMBER(9,0) NOT NULL ENABLE, "FIRST_NAME" VARCHAR2(255), "LAST_NAME" VARCHAR2(255), "EMAIL" VARCHAR2(255),
     PRIMARY KEY ("ID") ENABLE, SUPPLEMENTAL LOG DATA (ALL) COLUMNS
   ) SEGMENT CREATION IMMEDIATE PCTFREE 10 PCTUSED 40 INITRANS 1 MAXTRANS 255 NOCOMPRESS LOGGING
  STORAGE(INITIAL 65536 NEXT 1048576 MINEXTENTS 1 MAXEXTENTS 2147483645 PCTINCREASE 0 FREELISTS 1 FREELIST GROUPS 1
  BUFFER_POOL DEFAULT FLASH_CACHE DEFAULT CELL_FLASH_CACHE DEFAULT) TABLESPACE "USERS\""""


def _cols(change: dict) -> list[tuple]:
    return [(c["name"], c["jdbcType"], c["typeName"], c["length"], c["scale"], c["position"], c["optional"],
             c["autoIncremented"], c["generated"], c["charsetName"]) for c in change["table"]["columns"]]


def test_mariadb_g10_alter_add_after_renumbers():
    state = SchemaState(server_charset="utf8mb4")
    state.apply("CREATE TABLE customers (id INT AUTO_INCREMENT NOT NULL PRIMARY KEY, first_name VARCHAR(255) NOT "
                "NULL, last_name VARCHAR(255) NOT NULL, email VARCHAR(255) NOT NULL UNIQUE KEY) AUTO_INCREMENT=1001",
                "mariadb", "inventory")
    [change] = state.apply("ALTER TABLE customers ADD middle_name varchar(255) AFTER first_name", "mariadb",
                           "inventory")
    entry = change.to_table_change()
    assert entry["type"] == "ALTER" and entry["id"] == '"inventory"."customers"'
    assert entry["table"]["defaultCharsetName"] == "utf8mb4"
    assert entry["table"]["primaryKeyColumnNames"] == ["id"]
    assert _cols(entry) == [
        ("id", 4, "INT", None, None, 1, False, True, True, None),
        ("first_name", 12, "VARCHAR", 255, None, 2, False, False, False, "utf8mb4"),
        ("middle_name", 12, "VARCHAR", 255, None, 3, True, False, False, "utf8mb4"),
        ("last_name", 12, "VARCHAR", 255, None, 4, False, False, False, "utf8mb4"),
        ("email", 12, "VARCHAR", 255, None, 5, False, False, False, "utf8mb4"),
    ]


def test_oracle_seed_schema_change_with_storage_clauses():
    state = SchemaState()
    [change] = state.apply(ORACLE_SEED_DDL, "oracle", "ORCLPDB1")
    entry = change.to_table_change()
    assert entry["type"] == "CREATE" and entry["id"] == '"ORCLPDB1"."DEBEZIUM"."CUSTOMERS"'
    assert entry["table"]["primaryKeyColumnNames"] == ["ID"]
    # The seed's tableChanges says optional:false for the three VARCHAR2 columns, but its DDL declares them
    # nullable (a documented seed defect); the DDL parse follows the DDL.
    assert _cols(entry) == [
        ("ID", 2, "NUMBER", 9, 0, 1, False, False, False, None),
        ("FIRST_NAME", 12, "VARCHAR2", 255, None, 2, True, False, False, None),
        ("LAST_NAME", 12, "VARCHAR2", 255, None, 3, True, False, False, None),
        ("EMAIL", 12, "VARCHAR2", 255, None, 4, True, False, False, None),
    ]
    assert state.tables[TableId("ORCLPDB1", "DEBEZIUM", "CUSTOMERS")].columns[0].spark_type == "INT"


def test_sqlserver_seed_table_changes_and_hot_schema_change():
    seed = {"type": "CREATE", "id": '"testDB"."dbo"."customers"', "table": {
        "defaultCharsetName": None, "primaryKeyColumnNames": ["id"], "columns": [
            {"name": "id", "jdbcType": 4, "nativeType": None, "typeName": "int identity", "typeExpression":
             "int identity", "charsetName": None, "length": 10, "scale": 0, "position": 1, "optional": False,
             "autoIncremented": False, "generated": False}] + [
            {"name": n, "jdbcType": 12, "nativeType": None, "typeName": "varchar", "typeExpression": "varchar",
             "charsetName": None, "length": 255, "scale": None, "position": p, "optional": False,
             "autoIncremented": False, "generated": False}
            for p, n in ((2, "first_name"), (3, "last_name"), (4, "email"))]}}
    # the same table from DDL must give the same tableChanges columns
    state = SchemaState()
    [created] = state.apply("CREATE TABLE customers (id int IDENTITY(1,1) NOT NULL PRIMARY KEY, first_name "
                            "varchar(255) NOT NULL, last_name varchar(255) NOT NULL, email varchar(255) NOT NULL)",
                            "tsql", "testDB")
    assert _cols(created.to_table_change()) == _cols(seed)
    assert created.to_table_change()["id"] == seed["id"]
    # hot schema update: ALTER TABLE customers ADD phone_number VARCHAR(32) (then a new capture instance)
    [altered] = state.apply("ALTER TABLE customers ADD phone_number VARCHAR(32); EXEC sys.sp_cdc_enable_table "
                            "@source_schema='dbo', @source_name='customers', @role_name=NULL, "
                            "@supports_net_changes=0, @capture_instance='dbo_customers_v2'", "tsql", "testDB")[:1]
    assert _cols(altered.to_table_change())[-1] == ("phone_number", 12, "varchar", 32, None, 5, True, False, False,
                                                     None)
    # SQL Server schema changes carry ddl=null: the history takes tableChanges as the state
    rows, rejects, _ = build_history([SchemaChangeRecord(seq="01", ddl=None, table_changes=json.dumps([seed]))],
                                     "tsql", source="s")
    assert [r["state_source"] for r in rows] == ["table_changes"] and not rejects
    assert json.loads(rows[0]["columns"])[0]["spark_type"] == "INT"


def test_history_records_errors_and_continues_or_fails_on_request():
    records = [SchemaChangeRecord(seq="0001", ddl="CREATE TABLE t (a INT)", database_name="db"),
               SchemaChangeRecord(seq="0002", ddl="ALTER TABLE t FROBNICATE a", database_name="db"),
               SchemaChangeRecord(seq="0003", ddl="ALTER TABLE t ADD b VARCHAR(3)", database_name="db")]
    rows, rejects, state = build_history(records, "mariadb", source="s")
    assert [(r["valid_from_seq"], r["change_kind"], r["version"], r["parse_status"]) for r in rows] == [
        ("0001", "CREATE", 1, "ok"), ("0002", "ERROR", 1, "error"), ("0003", "ALTER", 2, "ok")]
    assert rows[1]["table_id"] == "db.t" and "FROBNICATE" in rows[1]["parse_error"]
    assert len(rejects) == 1 and rejects[0].stage == "schema" and rejects[0].raw == b"ALTER TABLE t FROBNICATE a"
    assert state.tables[TableId("db", None, "t")].column_names() == ["a", "b"]
    with pytest.raises(UnparseableDdl):
        build_history(records, "mariadb", source="s", skip_unparseable=False)


def test_table_changes_authoritative_with_ddl_cross_check():
    state = SchemaState()
    state.apply("CREATE TABLE t (a INT)", "mariadb", "db")
    entry = state.tables[TableId("db", None, "t")].to_table_change("ALTER")
    entry["table"]["columns"][0]["optional"] = False  # tableChanges says NOT NULL; the DDL below does not
    rows, _, _ = build_history([SchemaChangeRecord("1", "CREATE TABLE t (a INT)", "db"),
                                SchemaChangeRecord("2", "ALTER TABLE t COMMENT 'x'", "db", None,
                                                   json.dumps([entry]))], "mariadb", source="s")
    assert rows[1]["state_source"] == "table_changes" and rows[1]["parse_status"] == "mismatch"
    assert json.loads(rows[1]["columns"])[0]["nullable"] is False


@pytest.mark.parametrize(("dialect", "ddl", "expected"), [
    # (table_id, version, change_kind, previous_table_id) of the rows the rename produces
    ("mariadb", ["RENAME TABLE a TO b"], [("db.a", 2, "DROP", None), ("db.b", 1, "ALTER", "db.a")]),
    ("mariadb", ["ALTER TABLE a RENAME TO b"], [("db.a", 2, "DROP", None), ("db.b", 1, "ALTER", "db.a")]),
    ("mariadb", ["RENAME TABLE a TO b, b TO c"],
     [("db.a", 2, "DROP", None), ("db.b", 1, "ALTER", "db.a"), ("db.b", 2, "DROP", None),
      ("db.c", 1, "ALTER", "db.b")]),
    # a swap: a keeps living (under the table that was a_new), a_new ends
    ("mariadb", ["CREATE TABLE a_new (id int primary key, v int)", "RENAME TABLE a TO a_old, a_new TO a"],
     [("db.a_new", 1, "CREATE", None), ("db.a_old", 1, "ALTER", "db.a"), ("db.a_new", 2, "DROP", None),
      ("db.a", 2, "ALTER", "db.a_new")]),
    ("postgres", ["ALTER TABLE public.a RENAME TO b"],
     [("db.public.a", 2, "DROP", None), ("db.public.b", 1, "ALTER", "db.public.a")]),
])
def test_a_renamed_table_ends_under_its_old_id(dialect: str, ddl: list[str], expected: list[tuple]) -> None:
    """After a rename the old id's last history version is a DROP: `schema show` and the models do not
    read it as a live table; the new id's first version links back to it."""
    create = "CREATE TABLE a (id int primary key, v int)" if dialect == "mariadb" else \
        "CREATE TABLE public.a (id int primary key, v int)"
    records = [SchemaChangeRecord(seq=f"{i:04d}", ddl=stmt, database_name="db",
                                  schema_name="public" if dialect == "postgres" else None)
               for i, stmt in enumerate([create, *ddl])]
    rows, rejects, state = build_history(records, dialect, source="s")
    assert not rejects
    got = [(r["table_id"], r["version"], r["change_kind"], r["previous_table_id"]) for r in rows[1:]]
    assert got == expected
    dropped = {r["table_id"] for r in rows if r["change_kind"] == "DROP"}
    assert not dropped & {str(t) for t in state.tables}


def test_a_rename_from_table_changes_ends_the_old_id_without_a_mismatch() -> None:
    """The same from a Debezium schema change record (tableChanges authoritative, the DDL cross-checked)."""
    columns = [{"name": "id", "jdbcType": 4, "typeName": "INT", "typeExpression": "INT", "position": 1,
                "optional": False, "autoIncremented": False, "generated": False}]
    table = {"defaultCharsetName": None, "primaryKeyColumnNames": ["id"], "columns": columns}
    records = [
        SchemaChangeRecord(seq="0001", ddl="CREATE TABLE a (id INT PRIMARY KEY)", database_name="db",
                           table_changes=json.dumps([{"type": "CREATE", "id": '"db"."a"', "table": table}])),
        SchemaChangeRecord(seq="0002", ddl="RENAME TABLE a TO b", database_name="db",
                           table_changes=json.dumps([{"type": "ALTER", "id": '"db"."a","db"."b"', "table": table}])),
    ]
    rows, _, _ = build_history(records, "mariadb", source="s")
    got = [(r["table_id"], r["version"], r["change_kind"], r["previous_table_id"], r["parse_status"]) for r in rows]
    assert got == [("db.a", 1, "CREATE", None, "ok"), ("db.a", 2, "DROP", None, "ok"),
                   ("db.b", 1, "ALTER", "db.a", "ok")]
