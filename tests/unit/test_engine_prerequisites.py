"""The CDC prerequisite checks of the Debezium-engine sources (SQL Server, Oracle, MongoDB) over recorded result
rows: the rows look exactly as the probes' own queries return them (column names as selected), so the tests and
the live path share the queries. No SQL Server, Oracle or MongoDB server runs here; the live path is exercised up
to the driver (a closed port, a missing ODBC driver) and, with fake connections, the order of its queries."""

from __future__ import annotations

import copy
import socket
from collections.abc import Callable
from datetime import datetime
from typing import Any

import pytest
from bson import Timestamp

from ingest.connectors.debezium_engine.prerequisites import (
    PROBES,
    Results,
    TableFilter,
    check,
    evaluate,
    probe,
    redact,
)
from ingest.connectors.debezium_engine.prerequisites import mongodb as mongo_probe
from ingest.connectors.debezium_engine.prerequisites import oracle as oracle_probe
from ingest.connectors.debezium_engine.prerequisites import sqlserver as mssql_probe
from ingest.errors import LakecdcError

pytestmark = pytest.mark.unit

PASSWORD = "Pa55w0rd;s3cret}"
Change = Callable[[Results, dict[str, str]], None]


def verdict(kind: str, results: Results, properties: dict[str, str]) -> tuple[str, str]:
    """("ok", line) or ("problem", line)."""
    try:
        return "ok", evaluate(kind, results, properties)
    except LakecdcError as exc:
        return "problem", str(exc)


def unused_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# --- SQL Server --------------------------------------------------------------------------------------------------

TABLES = ["customers", "orders", "products", "products_on_hand"]


def mssql_properties(**extra: str) -> dict[str, str]:
    return {"database.hostname": "mssql.example", "database.port": "1433", "database.user": "dbz",
            "database.password": PASSWORD, "database.names": "testDB", **extra}


def mssql_database(name: str, tables: list[str], schema: str = "dbo") -> Results:
    """The rows of one online, CDC-enabled database whose tables each have one readable capture instance."""
    return {
        "databases": [{"name": name, "state_desc": "ONLINE", "is_cdc_enabled": True}],
        "access": [{"database_name": name, "user_name": "dbz", "is_db_owner": 0, "can_read_change_tables": 1}],
        "tables": [{"database_name": name, "schema_name": schema, "table_name": t} for t in tables],
        "capture_instances": [
            {"database_name": name, "schema_name": schema, "table_name": t, "capture_instance": f"{schema}_{t}",
             "create_date": datetime(2024, 5, 1, 12, 0, i), "role_name": None, "can_select_table": 1,
             "in_gating_role": None} for i, t in enumerate(tables)],
    }


def mssql_rows(*databases: Results) -> Results:
    results: Results = {"agent": [{"servicename": "SQL Server Agent (MSSQLSERVER)", "status_desc": "Running"}]}
    for database in databases or (mssql_database("testDB", TABLES),):
        for name, rows in database.items():
            results.setdefault(name, []).extend(rows)
    return results


def _instance(results: Results, table: str) -> dict[str, Any]:
    return next(r for r in results["capture_instances"] if r["table_name"] == table)


def _drop_instance(table: str) -> Change:
    def change(results: Results, properties: dict[str, str]) -> None:
        results["capture_instances"] = [r for r in results["capture_instances"] if r["table_name"] != table]
    return change


def _set(query: str, **values: Any) -> Change:
    def change(results: Results, properties: dict[str, str]) -> None:
        for row in results[query]:
            row.update(values)
    return change


def _props(**values: str) -> Change:
    def change(results: Results, properties: dict[str, str]) -> None:
        properties.update({k.replace("_", "."): v for k, v in values.items()})
    return change


def _gated(results: Results, properties: dict[str, str]) -> None:
    _instance(results, "orders").update(role_name="cdc_reader", in_gating_role=0)


def _no_select(results: Results, properties: dict[str, str]) -> None:
    _instance(results, "orders")["can_select_table"] = 0


def _two_problems(results: Results, properties: dict[str, str]) -> None:
    _drop_instance("orders")(results, properties)
    _drop_instance("products")(results, properties)


MSSQL_PROBLEMS: list[tuple[str, Change, str]] = [
    ("database missing", lambda r, p: r.update(databases=[]),
     "sqlserver: there is no database testDB on the server: check database.names"),
    ("database offline", _set("databases", state_desc="OFFLINE"),
     "sqlserver: database testDB is OFFLINE, not ONLINE: ALTER DATABASE [testDB] SET ONLINE"),
    ("CDC off on the database", _set("databases", is_cdc_enabled=False),
     "sqlserver: CDC is not enabled on database testDB: USE [testDB]; EXEC sys.sp_cdc_enable_db"),
    ("agent stopped", _set("agent", status_desc="Stopped"),
     "sqlserver: SQL Server Agent is Stopped: its capture job fills the change tables, so Debezium would see no "
     "change; start it (Linux: mssql-conf set sqlagent.enabled true, then restart SQL Server; Windows: net start "
     "SQLSERVERAGENT)"),
    ("agent not installed", lambda r, p: r.update(agent=[]),
     "sqlserver: SQL Server Agent is not installed: its capture job fills the change tables, so Debezium would "
     "see no change; start it (Linux: mssql-conf set sqlagent.enabled true, then restart SQL Server; Windows: "
     "net start SQLSERVERAGENT)"),
    ("table without capture instance", _drop_instance("orders"),
     "sqlserver: CDC is not enabled on table testDB.dbo.orders: USE [testDB]; EXEC sys.sp_cdc_enable_table "
     "@source_schema = N'dbo', @source_name = N'orders', @role_name = NULL"),
    ("two tables without capture instance", _two_problems,
     "sqlserver: CDC is not enabled on table testDB.dbo.orders: USE [testDB]; EXEC sys.sp_cdc_enable_table "
     "@source_schema = N'dbo', @source_name = N'orders', @role_name = NULL (and 1 more problem)"),
    ("cdc.change_tables unreadable", _set("access", can_read_change_tables=0),
     "sqlserver: user dbz cannot read cdc.change_tables in testDB, where Debezium finds the capture instances: "
     "USE [testDB]; GRANT SELECT ON SCHEMA::cdc TO [dbz]"),
    ("no SELECT on a captured table", _no_select,
     "sqlserver: user dbz cannot read capture instance dbo_orders of testDB.dbo.orders: it lacks SELECT on the "
     "table (USE [testDB]; GRANT SELECT ON [dbo].[orders] TO [dbz])"),
    ("not in the gating role", _gated,
     "sqlserver: user dbz cannot read capture instance dbo_orders of testDB.dbo.orders: it is not a member of the "
     "gating role cdc_reader (USE [testDB]; ALTER ROLE [cdc_reader] ADD MEMBER [dbz])"),
    ("include list matches nothing", _props(table_include_list=r"sales\..*"),
     r"sqlserver: no table of testDB is captured (table.include.list 'sales\\..*', matched against schema.table): "
     "check the include lists, and that the user may see the tables"),
    ("included table without capture instance",
     lambda r, p: (_drop_instance("orders")(r, p), p.update({"table.include.list": r"dbo\.customers,DBO\.ORDERS"})),
     "sqlserver: CDC is not enabled on table testDB.dbo.orders: USE [testDB]; EXEC sys.sp_cdc_enable_table "
     "@source_schema = N'dbo', @source_name = N'orders', @role_name = NULL"),
    ("invalid include pattern", _props(table_include_list="dbo.(orders"),
     "sqlserver: table.include.list: 'dbo.(orders' is not a regular expression (missing ), unterminated subpattern "
     "at position 4)"),
    ("database.names missing", lambda r, p: p.pop("database.names"),
     "sqlserver: database.names is not set (the comma-separated databases to capture)"),
]


@pytest.mark.parametrize(("case", "change", "expected"), MSSQL_PROBLEMS, ids=[c[0] for c in MSSQL_PROBLEMS])
def test_sqlserver_problem_lines(case: str, change: Change, expected: str) -> None:
    results, properties = mssql_rows(), mssql_properties()
    change(results, properties)
    assert verdict("sqlserver", results, properties) == ("problem", expected)


MSSQL_OK: list[tuple[str, Change, str]] = [
    ("all good", lambda r, p: None,
     "CDC enabled on testDB and on 4 captured tables, SQL Server Agent running"),
    ("include list", _props(table_include_list=r"dbo\.customers,dbo\.orders"),
     "CDC enabled on testDB and on 2 captured tables, SQL Server Agent running"),
    ("include list names the database too", _props(table_include_list=r"testDB\.dbo\.products.*"),
     "CDC enabled on testDB and on 2 captured tables, SQL Server Agent running"),
    ("tables left out need no capture instance",
     lambda r, p: (_drop_instance("products")(r, p), p.update({"table.exclude.list": r"dbo\.products"})),
     "CDC enabled on testDB and on 3 captured tables, SQL Server Agent running"),
    ("database name in another case", _props(database_names="TESTDB"),
     "CDC enabled on testDB and on 4 captured tables, SQL Server Agent running"),
    ("db_owner needs no grant", lambda r, p: (_no_select(r, p), _gated(r, p), _set("access", is_db_owner=1)(r, p)),
     "CDC enabled on testDB and on 4 captured tables, SQL Server Agent running"),
    ("member of the gating role",
     lambda r, p: _instance(r, "orders").update(role_name="cdc_reader", in_gating_role=1),
     "CDC enabled on testDB and on 4 captured tables, SQL Server Agent running"),
    ("agent not visible without VIEW SERVER STATE", lambda r, p: r.pop("agent"),
     "CDC enabled on testDB and on 4 captured tables, SQL Server Agent not checked (sys.dm_server_services needs "
     "VIEW SERVER STATE: GRANT VIEW SERVER STATE TO [dbz])"),
]


@pytest.mark.parametrize(("case", "change", "expected"), MSSQL_OK, ids=[c[0] for c in MSSQL_OK])
def test_sqlserver_ok_lines(case: str, change: Change, expected: str) -> None:
    results, properties = mssql_rows(), mssql_properties()
    change(results, properties)
    assert verdict("sqlserver", results, properties) == ("ok", expected)


def test_sqlserver_two_capture_instances_warn_in_the_ok_line() -> None:
    results = mssql_rows()
    results["capture_instances"].append(
        {**_instance(results, "orders"), "capture_instance": "dbo_orders_v2", "create_date": datetime(2024, 6, 1)})
    assert verdict("sqlserver", results, mssql_properties()) == ("ok", (
        "CDC enabled on testDB and on 4 captured tables, SQL Server Agent running; warning: testDB.dbo.orders has "
        "2 capture instances (dbo_orders, dbo_orders_v2): Debezium switches to the newest, dbo_orders_v2, from its "
        "start LSN on; once it has, drop the older: USE [testDB]; EXEC sys.sp_cdc_disable_table @source_schema = "
        "N'dbo', @source_name = N'orders', @capture_instance = N'dbo_orders'"))


def test_sqlserver_newest_capture_instance_is_the_one_judged() -> None:
    results = mssql_rows()
    results["capture_instances"].append({**_instance(results, "orders"), "capture_instance": "dbo_orders_v2",
                                         "create_date": datetime(2024, 6, 1), "role_name": "r2",
                                         "in_gating_role": 0})
    kind, line = verdict("sqlserver", results, mssql_properties())
    assert kind == "problem" and "capture instance dbo_orders_v2 of testDB.dbo.orders" in line


def test_sqlserver_multiple_databases() -> None:
    properties = mssql_properties(**{"database.names": "testDB, sales"})
    results = mssql_rows(mssql_database("testDB", TABLES), mssql_database("sales", ["invoices", "lines"], "fin"))
    assert verdict("sqlserver", results, properties) == (
        "ok", "CDC enabled on testDB, sales and on 6 captured tables, SQL Server Agent running")

    results["databases"][1]["is_cdc_enabled"] = False
    assert verdict("sqlserver", results, properties) == (
        "problem", "sqlserver: CDC is not enabled on database sales: USE [sales]; EXEC sys.sp_cdc_enable_db")

    results = mssql_rows(mssql_database("testDB", TABLES), mssql_database("sales", ["invoices", "lines"], "fin"))
    results["capture_instances"] = [r for r in results["capture_instances"] if r["table_name"] != "lines"]
    properties["table.include.list"] = r"dbo\.customers,sales\.fin\.lines"
    assert verdict("sqlserver", results, properties) == (
        "problem", "sqlserver: CDC is not enabled on table sales.fin.lines: USE [sales]; EXEC sys.sp_cdc_enable_table "
                   "@source_schema = N'fin', @source_name = N'lines', @role_name = NULL")


def test_sqlserver_identifiers_in_fix_statements_are_quoted() -> None:
    results = mssql_rows(mssql_database("te]st", ["o'brien"], schema="we]ird"))
    results["capture_instances"][0].update(role_name="gate]keeper", in_gating_role=0)
    results["access"][0]["user_name"] = "d]bz"
    properties = mssql_properties(**{"database.names": "te]st"})
    assert verdict("sqlserver", results, properties) == ("problem", (
        "sqlserver: user d]bz cannot read capture instance we]ird_o'brien of te]st.we]ird.o'brien: it is not a member "
        "of the gating role gate]keeper (USE [te]]st]; ALTER ROLE [gate]]keeper] ADD MEMBER [d]]bz])"))
    results["capture_instances"] = []
    assert verdict("sqlserver", results, properties)[1].endswith(
        "USE [te]]st]; EXEC sys.sp_cdc_enable_table @source_schema = N'we]ird', @source_name = N'o''brien', "
        "@role_name = NULL")


@pytest.mark.parametrize(("installed", "requested", "expected"), [
    (["ODBC Driver 17 for SQL Server", "FreeTDS", "ODBC Driver 18 for SQL Server"], None,
     "ODBC Driver 18 for SQL Server"),
    (["PostgreSQL Unicode", "FreeTDS"], None, "FreeTDS"),
    (["ODBC Driver 18 for SQL Server", "FreeTDS"], "FreeTDS", "FreeTDS"),
])
def test_sqlserver_odbc_driver_choice(installed: list[str], requested: str | None, expected: str) -> None:
    assert mssql_probe.odbc_driver(installed, requested) == expected


@pytest.mark.parametrize(("installed", "requested", "expected"), [
    ([], None, "no ODBC driver for SQL Server is installed (pyodbc.drivers(): none): install Microsoft's ODBC "
               "Driver 18 for SQL Server (Debian/Ubuntu package msodbcsql18) or FreeTDS (tdsodbc), or name an "
               "installed one in the driver property"),
    (["PostgreSQL Unicode"], None, "no ODBC driver for SQL Server is installed (pyodbc.drivers(): 'PostgreSQL "
                                   "Unicode'): install Microsoft's ODBC Driver 18 for SQL Server (Debian/Ubuntu "
                                   "package msodbcsql18) or FreeTDS (tdsodbc), or name an installed one in the "
                                   "driver property"),
    (["FreeTDS"], "ODBC Driver 18 for SQL Server",
     "ODBC driver 'ODBC Driver 18 for SQL Server' (the driver property) is not installed; installed: 'FreeTDS'"),
])
def test_sqlserver_missing_odbc_driver(installed: list[str], requested: str | None, expected: str) -> None:
    with pytest.raises(LakecdcError) as raised:
        mssql_probe.odbc_driver(installed, requested)
    assert str(raised.value) == expected


def test_sqlserver_connection_string_escapes_values() -> None:
    dsn = mssql_probe.connection_string(mssql_properties(**{"database.encrypt": "false"}),
                                        "ODBC Driver 18 for SQL Server")
    assert dsn == ("DRIVER={ODBC Driver 18 for SQL Server};SERVER={tcp:mssql.example,1433};UID={dbz};"
                   "PWD={Pa55w0rd;s3cret}}};Encrypt=no;TrustServerCertificate=no;APP={lakecdc}")


def test_sqlserver_check_live_path_up_to_the_driver() -> None:
    pyodbc = pytest.importorskip("pyodbc")
    properties = mssql_properties(**{"database.hostname": "127.0.0.1", "database.port": str(unused_port()),
                                     "lakecdc.connect.timeout.ms": "2000"})
    with pytest.raises(LakecdcError) as raised:
        check("sqlserver", properties)
    line = str(raised.value)
    assert "\n" not in line and PASSWORD not in line and "s3cret" not in line
    if not pyodbc.drivers():   # this machine: no ODBC driver
        assert line.startswith("sqlserver: no ODBC driver for SQL Server is installed (pyodbc.drivers(): none)")
    else:
        assert line.startswith(f"sqlserver: cannot connect to SQL Server at 127.0.0.1:{properties['database.port']} "
                               f"as dbz (")


def test_sqlserver_live_queries_in_order() -> None:
    """The live path's sequence over a fake executor answering with the recorded rows of each query."""
    recorded = mssql_rows(mssql_database("testDB", TABLES), mssql_database("sales", ["invoices"]))
    recorded["access"][1]["can_read_change_tables"] = 0
    ran: list[tuple[str, tuple[Any, ...]]] = []
    current = {"db": ""}

    def run(what: str, sql: str, params: tuple[Any, ...]) -> list[dict[str, Any]]:
        ran.append((sql, params))
        if sql.startswith("USE "):
            current["db"] = sql.removeprefix("USE [").removesuffix("]")
            return []
        if sql == mssql_probe.QUERIES["agent"]:
            raise LakecdcError("the agent query failed: VIEW SERVER STATE permission was denied")
        name = next(n for n, q in mssql_probe.QUERIES.items() if q == sql)
        if name == "databases":
            return [r for r in recorded["databases"] if r["name"] == params[0]]
        return [r for r in recorded[name] if r["database_name"] == current["db"]]

    results = mssql_probe._run_all(run, mssql_properties(**{"database.names": "testDB,sales,missing"}))
    assert "agent" not in results
    assert [(sql.split()[0] if not sql.startswith("USE") else sql, p) for sql, p in ran] == [
        ("SELECT", ()), ("SELECT", ("testDB",)), ("USE [testDB]", ()), ("SELECT", ()), ("SELECT", ()),
        ("SELECT", ()), ("SELECT", ("sales",)), ("USE [sales]", ()), ("SELECT", ()), ("SELECT", ()),
        ("SELECT", ("missing",))]
    assert len(results["capture_instances"]) == 4   # none read in sales: cdc.change_tables not readable there
    assert verdict("sqlserver", results, mssql_properties(**{"database.names": "testDB,sales,missing"})) == (
        "problem", "sqlserver: there is no database missing on the server: check database.names (and 1 more problem)")


# --- Oracle ------------------------------------------------------------------------------------------------------

ORACLE_SYSTEM = ["CREATE SESSION", "SET CONTAINER", "FLASHBACK ANY TABLE", "SELECT ANY TABLE",
                 "SELECT ANY TRANSACTION", "LOGMINING", "CREATE TABLE", "LOCK ANY TABLE", "CREATE SEQUENCE",
                 "UNLIMITED TABLESPACE"]
ORACLE_OBJECTS = [("DBMS_LOGMNR", "EXECUTE"), ("DBMS_LOGMNR_D", "EXECUTE")] + [
    (f"V_${v}", "SELECT") for v in ("DATABASE", "LOG", "LOG_HISTORY", "LOGMNR_LOGS", "LOGMNR_CONTENTS",
                                     "LOGMNR_PARAMETERS", "LOGFILE", "ARCHIVED_LOG", "ARCHIVE_DEST_STATUS",
                                     "TRANSACTION", "MYSTAT", "STATNAME")]


def oracle_properties(**extra: str) -> dict[str, str]:
    return {"database.hostname": "oracle.example", "database.port": "1521", "database.dbname": "ORCLCDB",
            "database.pdb.name": "ORCLPDB1", "database.user": "c##dbzuser", "database.password": PASSWORD, **extra}


def oracle_rows() -> Results:
    return {
        "session": [{"username": "C##DBZUSER", "con_name": "CDB$ROOT"}],
        "database": [{"log_mode": "ARCHIVELOG", "supplemental_log_data_min": "YES",
                      "supplemental_log_data_all": "NO"}],
        "system_privileges": [{"privilege": p} for p in ORACLE_SYSTEM],
        "roles": [{"role": r} for r in ("SELECT_CATALOG_ROLE", "EXECUTE_CATALOG_ROLE", "HS_ADMIN_SELECT_ROLE")],
        "object_privileges": [{"table_name": t, "privilege": p} for t, p in ORACLE_OBJECTS],
        "tables": [{"owner": "DEBEZIUM", "table_name": t, "all_column_logging": 1}
                   for t in ("CUSTOMERS", "ORDERS", "PRODUCTS")]
                  + [{"owner": "C##DBZUSER", "table_name": "LOG_MINING_FLUSH", "all_column_logging": 0}],
    }


def _without(query: str, column: str, *values: str) -> Change:
    def change(results: Results, properties: dict[str, str]) -> None:
        results[query] = [r for r in results[query] if r[column] not in values]
    return change


def _no_logging(table: str) -> Change:
    def change(results: Results, properties: dict[str, str]) -> None:
        next(r for r in results["tables"] if r["table_name"] == table)["all_column_logging"] = 0
    return change


ORACLE_PROBLEMS: list[tuple[str, Change, str]] = [
    ("NOARCHIVELOG", _set("database", log_mode="NOARCHIVELOG"),
     "oracle: the database runs in NOARCHIVELOG mode: LogMiner reads the archived redo logs; as SYSDBA: SHUTDOWN "
     "IMMEDIATE; STARTUP MOUNT; ALTER DATABASE ARCHIVELOG; ALTER DATABASE OPEN"),
    ("minimal supplemental logging off", _set("database", supplemental_log_data_min="NO"),
     "oracle: minimal supplemental logging is off (v$database.supplemental_log_data_min = NO): ALTER DATABASE ADD "
     "SUPPLEMENTAL LOG DATA"),
    ("system privilege and role missing",
     lambda r, p: (_without("system_privileges", "privilege", "LOGMINING")(r, p),
                   _without("roles", "role", "SELECT_CATALOG_ROLE")(r, p)),
     "oracle: user C##DBZUSER lacks SELECT_CATALOG_ROLE and LOGMINING, which Debezium's LogMiner adapter needs: "
     "GRANT SELECT_CATALOG_ROLE, LOGMINING TO C##DBZUSER CONTAINER=ALL"),
    ("object privileges missing", _without("object_privileges", "table_name", "V_$LOG", "DBMS_LOGMNR"),
     "oracle: user C##DBZUSER lacks EXECUTE ON DBMS_LOGMNR and SELECT ON V_$LOG, which Debezium's LogMiner adapter "
     "needs: GRANT EXECUTE ON DBMS_LOGMNR TO C##DBZUSER CONTAINER=ALL; GRANT SELECT ON V_$LOG TO C##DBZUSER "
     "CONTAINER=ALL"),
    ("SET CONTAINER missing in a CDB, tables not read",
     lambda r, p: (_without("system_privileges", "privilege", "SET CONTAINER")(r, p), r.pop("tables")),
     "oracle: user C##DBZUSER lacks SET CONTAINER, which Debezium's LogMiner adapter needs: GRANT SET CONTAINER TO "
     "C##DBZUSER CONTAINER=ALL"),
    ("SELECT ANY DICTIONARY does not cover DBMS_LOGMNR",
     lambda r, p: (r.update(object_privileges=[]),
                   r["system_privileges"].append({"privilege": "SELECT ANY DICTIONARY"})),
     "oracle: user C##DBZUSER lacks EXECUTE ON DBMS_LOGMNR and EXECUTE ON DBMS_LOGMNR_D, which Debezium's LogMiner "
     "adapter needs: GRANT EXECUTE ON DBMS_LOGMNR TO C##DBZUSER CONTAINER=ALL; GRANT EXECUTE ON DBMS_LOGMNR_D TO "
     "C##DBZUSER CONTAINER=ALL"),
    ("table without all-column logging", _no_logging("ORDERS"),
     "oracle: supplemental logging of all columns is off for table DEBEZIUM.ORDERS: ALTER TABLE DEBEZIUM.ORDERS ADD "
     "SUPPLEMENTAL LOG DATA (ALL) COLUMNS"),
    ("mixed-case names are quoted",
     lambda r, p: r["tables"].append({"owner": "Sales", "table_name": "Order Lines", "all_column_logging": 0}),
     "oracle: supplemental logging of all columns is off for table \"Sales\".\"Order Lines\": ALTER TABLE "
     "\"Sales\".\"Order Lines\" ADD SUPPLEMENTAL LOG DATA (ALL) COLUMNS"),
    ("included table without logging",
     lambda r, p: (_no_logging("ORDERS")(r, p), p.update({"table.include.list": r"debezium\.orders"})),
     "oracle: supplemental logging of all columns is off for table DEBEZIUM.ORDERS: ALTER TABLE DEBEZIUM.ORDERS ADD "
     "SUPPLEMENTAL LOG DATA (ALL) COLUMNS"),
    ("include list matches nothing", _props(table_include_list=r"INVENTORY\..*"),
     r"oracle: no table is captured (table.include.list 'INVENTORY\\..*', matched against SCHEMA.TABLE): check the "
     "include lists, and that the user may see the tables (SELECT ANY TABLE)"),
    ("several problems", lambda r, p: (_set("database", log_mode="NOARCHIVELOG")(r, p), _no_logging("ORDERS")(r, p)),
     "oracle: the database runs in NOARCHIVELOG mode: LogMiner reads the archived redo logs; as SYSDBA: SHUTDOWN "
     "IMMEDIATE; STARTUP MOUNT; ALTER DATABASE ARCHIVELOG; ALTER DATABASE OPEN (and 1 more problem)"),
]


@pytest.mark.parametrize(("case", "change", "expected"), ORACLE_PROBLEMS, ids=[c[0] for c in ORACLE_PROBLEMS])
def test_oracle_problem_lines(case: str, change: Change, expected: str) -> None:
    results, properties = oracle_rows(), oracle_properties()
    change(results, properties)
    assert verdict("oracle", results, properties) == ("problem", expected)


def _non_cdb(results: Results, properties: dict[str, str]) -> None:
    properties.pop("database.pdb.name")
    _without("system_privileges", "privilege", "SET CONTAINER")(results, properties)


ORACLE_OK: list[tuple[str, Change, str]] = [
    ("all good", lambda r, p: None,
     "ARCHIVELOG mode, minimal supplemental logging, all-column supplemental logging on 3 captured tables, "
     "C##DBZUSER holds the 25 LogMiner privileges"),
    ("minimal logging implied", _set("database", supplemental_log_data_min="IMPLICIT"),
     "ARCHIVELOG mode, minimal supplemental logging, all-column supplemental logging on 3 captured tables, "
     "C##DBZUSER holds the 25 LogMiner privileges"),
    ("all columns database-wide", lambda r, p: (_set("database", supplemental_log_data_all="YES")(r, p),
                                                _set("tables", all_column_logging=0)(r, p)),
     "ARCHIVELOG mode, minimal supplemental logging, all-column supplemental logging database-wide (3 captured "
     "tables), C##DBZUSER holds the 25 LogMiner privileges"),
    ("a table left out needs no logging",
     lambda r, p: (_no_logging("PRODUCTS")(r, p), p.update({"table.exclude.list": r"DEBEZIUM\.PRODUCTS"})),
     "ARCHIVELOG mode, minimal supplemental logging, all-column supplemental logging on 2 captured tables, "
     "C##DBZUSER holds the 25 LogMiner privileges"),
    ("include list qualified with the PDB", _props(table_include_list=r"ORCLPDB1\.DEBEZIUM\.CUSTOMERS"),
     "ARCHIVELOG mode, minimal supplemental logging, all-column supplemental logging on 1 captured table, "
     "C##DBZUSER holds the 25 LogMiner privileges"),
    ("not a CDB: no SET CONTAINER", _non_cdb,
     "ARCHIVELOG mode, minimal supplemental logging, all-column supplemental logging on 3 captured tables, "
     "C##DBZUSER holds the 24 LogMiner privileges"),
    ("V_$ views through SELECT ANY DICTIONARY, READ counts",
     lambda r, p: (r.update(object_privileges=[{"table_name": "DBMS_LOGMNR", "privilege": "EXECUTE"},
                                               {"table_name": "DBMS_LOGMNR_D", "privilege": "EXECUTE"},
                                               {"table_name": "V_$LOG", "privilege": "READ"}]),
                   r["system_privileges"].append({"privilege": "SELECT ANY DICTIONARY"})),
     "ARCHIVELOG mode, minimal supplemental logging, all-column supplemental logging on 3 captured tables, "
     "C##DBZUSER holds the 25 LogMiner privileges"),
]


@pytest.mark.parametrize(("case", "change", "expected"), ORACLE_OK, ids=[c[0] for c in ORACLE_OK])
def test_oracle_ok_lines(case: str, change: Change, expected: str) -> None:
    results, properties = oracle_rows(), oracle_properties()
    change(results, properties)
    assert verdict("oracle", results, properties) == ("ok", expected)


def test_oracle_outside_a_cdb_grants_have_no_container_clause() -> None:
    results, properties = oracle_rows(), oracle_properties()
    _non_cdb(results, properties)
    _without("system_privileges", "privilege", "LOGMINING")(results, properties)
    assert verdict("oracle", results, properties) == (
        "problem", "oracle: user C##DBZUSER lacks LOGMINING, which Debezium's LogMiner adapter needs: "
                   "GRANT LOGMINING TO C##DBZUSER")


@pytest.mark.parametrize(("extra", "expected"), [
    ({}, {"host": "oracle.example", "port": 1521, "service_name": "ORCLCDB"}),
    ({"database.url": "jdbc:oracle:thin:@//db.example:1522/ORCLPDB1"}, {"dsn": "db.example:1522/ORCLPDB1"}),
    ({"database.url": "jdbc:oracle:thin:@db.example:1522:ORCL"}, {"host": "db.example", "port": 1522, "sid": "ORCL"}),
    ({"database.url": "jdbc:oracle:thin:dbz/secret@(DESCRIPTION=(ADDRESS=(HOST=h)(PORT=1)))"},
     {"dsn": "(DESCRIPTION=(ADDRESS=(HOST=h)(PORT=1)))"}),
])
def test_oracle_connect_arguments(extra: dict[str, str], expected: dict[str, Any]) -> None:
    args = oracle_probe.connect_arguments(oracle_properties(**extra))
    assert args == {"user": "c##dbzuser", "tcp_connect_timeout": 10.0, "retry_count": 0, **expected}
    assert PASSWORD not in str(args)


def test_oracle_check_closed_port_is_one_line() -> None:
    pytest.importorskip("oracledb")
    port = unused_port()
    properties = oracle_properties(**{"database.hostname": "127.0.0.1", "database.port": str(port),
                                      "lakecdc.connect.timeout.ms": "2000"})
    with pytest.raises(LakecdcError) as raised:
        check("oracle", properties)
    line = str(raised.value)
    assert line.startswith(f"oracle: cannot connect to Oracle at 127.0.0.1:{port}/ORCLCDB as c##dbzuser: DPY-")
    assert "\n" not in line and "s3cret" not in line and raised.value.__cause__ is None


class _FakeOracle:
    """A python-oracledb connection answering the probe's queries from recorded rows."""

    def __init__(self, results: Results) -> None:
        self.results, self.executed = results, []

    def cursor(self) -> Any:
        fake = self

        class Cursor:
            description: list[tuple[str]] | None = None
            rows: list[tuple[Any, ...]] = []

            def __enter__(self) -> Any:
                return self

            def __exit__(self, *exc: object) -> None:
                return None

            def execute(self, sql: str) -> None:
                fake.executed.append(sql)
                name = next((n for n, q in oracle_probe.QUERIES.items() if q == sql), None)
                if name is None:
                    self.description = None
                    return
                rows = fake.results[name]
                self.description = [(c,) for c in rows[0]] if rows else []
                self.rows = [tuple(r.values()) for r in rows]

            def fetchall(self) -> list[tuple[Any, ...]]:
                return self.rows

        return Cursor()

    def close(self) -> None:
        return None


def test_oracle_live_path_switches_to_the_pdb(monkeypatch: pytest.MonkeyPatch) -> None:
    oracledb = pytest.importorskip("oracledb")
    fake = _FakeOracle(oracle_rows())
    seen: dict[str, Any] = {}
    monkeypatch.setattr(oracledb, "connect", lambda **kwargs: seen.update(kwargs) or fake)
    assert check("oracle", oracle_properties(**{"database.pdb.name": "orclpdb1"})).startswith("ARCHIVELOG mode")
    assert 'ALTER SESSION SET CONTAINER = "ORCLPDB1"' in fake.executed
    assert fake.executed.index('ALTER SESSION SET CONTAINER = "ORCLPDB1"') == len(fake.executed) - 2
    assert seen["password"] == PASSWORD and seen["service_name"] == "ORCLCDB"

    with pytest.raises(LakecdcError) as raised:
        check("oracle", oracle_properties(**{"database.pdb.name": 'PDB"; DROP'}))
    assert str(raised.value) == "oracle: database.pdb.name 'PDB\"; DROP' is not a container name"


# --- MongoDB -----------------------------------------------------------------------------------------------------

T0 = 1_717_000_000


def mongo_properties(**extra: str) -> dict[str, str]:
    return {"mongodb.connection.string": f"mongodb://dbz:{PASSWORD.replace(';', '%3B').replace('}', '%7D')}"
                                         f"@mongo1.example:27017,mongo2.example:27017/?replicaSet=rs0", **extra}


def privilege(db: str | None, collection: str | None, *actions: str, **resource: Any) -> dict[str, Any]:
    found = resource or {"db": db, "collection": collection}
    return {"resource": found, "actions": list(actions)}


READ_ANY_DATABASE = [privilege(None, None, "listDatabases", cluster=True),
                     privilege("", "", "changeStream", "collStats", "dbHash", "dbStats", "find", "killCursors",
                               "listCollections", "listIndexes", "listSearchIndexes")]


def mongo_rows(privileges: list[dict[str, Any]] | None = None, window: int = 36 * 3600) -> Results:
    return {
        "hello": [{"topologyVersion": {"counter": 6}, "hosts": ["mongo1.example:27017", "mongo2.example:27017"],
                   "setName": "rs0", "setVersion": 1, "isWritablePrimary": True, "secondary": False,
                   "primary": "mongo1.example:27017", "maxWireVersion": 21, "ok": 1.0}],
        "connection_status": [{"authInfo": {
            "authenticatedUsers": [{"user": "dbz", "db": "admin"}],
            "authenticatedUserRoles": [{"role": "readAnyDatabase", "db": "admin"}],
            "authenticatedUserPrivileges": READ_ANY_DATABASE if privileges is None else privileges}, "ok": 1.0}],
        "oplog_first": [{"ts": Timestamp(T0, 1)}],
        "oplog_last": [{"ts": Timestamp(T0 + window, 7)}],
    }


READ_INVENTORY = [privilege("inventory", "", "changeStream", "find", "listCollections")]
GRANT_ANY = 'db.getSiblingDB("admin").grantRolesToUser("dbz", [{role: "readAnyDatabase", db: "admin"}])'

MONGO_PROBLEMS: list[tuple[str, Results, dict[str, str], str]] = [
    ("standalone", {**mongo_rows(), "hello": [{"isWritablePrimary": True, "maxWireVersion": 21, "ok": 1.0}]}, {},
     "mongodb: the server is a standalone mongod: change streams need a replica set or a sharded cluster; restart "
     "it with --replSet rs0 and run rs.initiate() (a one-member replica set will do)"),
    ("deployment scope with database privileges only", mongo_rows(READ_INVENTORY), {},
     "mongodb: user dbz lacks find and changeStream on all non-system collections of every database, which "
     f"Debezium's change stream and snapshot need: {GRANT_ANY}"),
    ("find without changeStream", mongo_rows([privilege("", "", "find")]), {},
     "mongodb: user dbz lacks changeStream on all non-system collections of every database, which Debezium's "
     f"change stream and snapshot need: {GRANT_ANY}"),
    ("database scope on another database", mongo_rows(READ_INVENTORY),
     {"capture.scope": "database", "capture.target": "sales"},
     "mongodb: user dbz lacks find and changeStream on database sales, which Debezium's change stream and snapshot "
     'need: db.getSiblingDB("admin").grantRolesToUser("dbz", [{role: "read", db: "sales"}])'),
    ("included collection not readable", mongo_rows([privilege("inventory", "orders", "find", "changeStream")]),
     {"capture.scope": "collection", "capture.target": "inventory.orders",
      "collection.include.list": r"inventory\.orders,inventory\.customers"},
     "mongodb: user dbz lacks find on collection inventory.customers, which Debezium's change stream and snapshot "
     'need: db.getSiblingDB("admin").grantRolesToUser("dbz", [{role: "read", db: "inventory"}])'),
    ("included database not readable", mongo_rows(READ_INVENTORY),
     {"capture.scope": "database", "capture.target": "inventory", "database.include.list": "inventory,sales"},
     "mongodb: user dbz lacks find on database sales, which Debezium's change stream and snapshot need: "
     'db.getSiblingDB("admin").grantRolesToUser("dbz", [{role: "read", db: "sales"}])'),
    ("oplog window below the default hour", mongo_rows(window=20 * 60), {},
     "mongodb: the oplog window is 20 minutes, below lakecdc.oplog.min.window.hours=1: a connector stopped for "
     "longer loses its resume position and must snapshot again; on each replica set member: "
     "db.adminCommand({replSetResizeOplog: 1, minRetentionHours: 1}) (or a larger size)"),
    ("oplog window below a configured minimum", mongo_rows(), {"lakecdc.oplog.min.window.hours": "48"},
     "mongodb: the oplog window is 36.0 hours, below lakecdc.oplog.min.window.hours=48: a connector stopped for "
     "longer loses its resume position and must snapshot again; on each replica set member: "
     "db.adminCommand({replSetResizeOplog: 1, minRetentionHours: 48}) (or a larger size)"),
    ("privileges and oplog", mongo_rows(READ_INVENTORY, window=60), {},
     "mongodb: user dbz lacks find and changeStream on all non-system collections of every database, which "
     f"Debezium's change stream and snapshot need: {GRANT_ANY} (and 1 more problem)"),
    ("unknown capture scope", mongo_rows(), {"capture.scope": "cluster"},
     "mongodb: capture.scope is 'cluster': expected deployment, database or collection"),
]


@pytest.mark.parametrize(("case", "results", "extra", "expected"), MONGO_PROBLEMS, ids=[c[0] for c in MONGO_PROBLEMS])
def test_mongodb_problem_lines(case: str, results: Results, extra: dict[str, str], expected: str) -> None:
    assert verdict("mongodb", results, mongo_properties(**extra)) == ("problem", expected)


def _sharded() -> Results:
    rows = mongo_rows()
    rows["hello"] = [{"isWritablePrimary": True, "msg": "isdbgrid", "maxWireVersion": 21, "ok": 1.0}]
    del rows["oplog_first"], rows["oplog_last"]
    return rows


def _anonymous() -> Results:
    rows = mongo_rows()
    rows["connection_status"] = [{"authInfo": {"authenticatedUsers": [], "authenticatedUserRoles": []}, "ok": 1.0}]
    return rows


def _no_oplog() -> Results:
    rows = mongo_rows()
    del rows["oplog_first"], rows["oplog_last"]
    return rows


MONGO_OK: list[tuple[str, Results, dict[str, str], str]] = [
    ("all good", mongo_rows(), {},
     "replica set rs0, user dbz may open the change stream on every database (capture.scope=deployment), oplog "
     "window 36.0 hours"),
    ("root", mongo_rows([privilege(None, None, "anyAction", anyResource=True)]), {},
     "replica set rs0, user dbz may open the change stream on every database (capture.scope=deployment), oplog "
     "window 36.0 hours"),
    ("database scope and include lists within it", mongo_rows(READ_INVENTORY),
     {"capture.scope": "database", "capture.target": "inventory", "database.include.list": "inventory",
      "collection.include.list": r"inventory\.orders,inventory\.cust.*"},
     "replica set rs0, user dbz may open the change stream on database inventory (capture.scope=database), oplog "
     "window 36.0 hours"),
    ("regex include entries name nothing to check", mongo_rows(), {"database.include.list": "inv.*,sales[0-9]+"},
     "replica set rs0, user dbz may open the change stream on every database (capture.scope=deployment), oplog "
     "window 36.0 hours"),
    ("sharded cluster", _sharded(), {},
     "sharded cluster, user dbz may open the change stream on every database (capture.scope=deployment), oplog "
     "window not measured through mongos (check each shard's)"),
    ("oplog not readable", _no_oplog(), {},
     "replica set rs0, user dbz may open the change stream on every database (capture.scope=deployment), oplog "
     "window not measured (reading local.oplog.rs needs read on the local database)"),
    ("no access control", _anonymous(), {},
     "replica set rs0, no user authenticated, privileges not checked (change stream on every database "
     "(capture.scope=deployment)), oplog window 36.0 hours"),
    ("window above a lowered minimum", mongo_rows(window=20 * 60), {"lakecdc.oplog.min.window.hours": "0"},
     "replica set rs0, user dbz may open the change stream on every database (capture.scope=deployment), oplog "
     "window 20 minutes"),
]


@pytest.mark.parametrize(("case", "results", "extra", "expected"), MONGO_OK, ids=[c[0] for c in MONGO_OK])
def test_mongodb_ok_lines(case: str, results: Results, extra: dict[str, str], expected: str) -> None:
    assert verdict("mongodb", results, mongo_properties(**extra)) == ("ok", expected)


def test_mongodb_check_closed_port_is_one_line() -> None:
    pytest.importorskip("pymongo")
    port = unused_port()
    properties = {"mongodb.connection.string": f"mongodb://dbz:s3cret%21@127.0.0.1:{port}/?directConnection=true",
                  "lakecdc.connect.timeout.ms": "2000"}
    with pytest.raises(LakecdcError) as raised:
        check("mongodb", properties)
    line = str(raised.value)
    assert line.startswith(f"mongodb: cannot reach MongoDB at 127.0.0.1:{port} within 2 s: ")
    assert "\n" not in line and "s3cret" not in line and "dbz:" not in line


def test_mongodb_live_path_skips_an_unreadable_oplog(monkeypatch: pytest.MonkeyPatch) -> None:
    pymongo = pytest.importorskip("pymongo")
    recorded = mongo_rows()
    commands: list[str] = []

    class Database:
        def __init__(self, name: str) -> None:
            self.name = name

        def command(self, command: dict[str, Any]) -> dict[str, Any]:
            name = next(n for n, (db, c) in mongo_probe.QUERIES.items() if db == self.name and c == command)
            commands.append(name)
            if name.startswith("oplog"):
                raise pymongo.errors.OperationFailure("not authorized on local to execute command", 13)
            return recorded[name][0]

    class Client:
        def __init__(self, uri: str, **options: Any) -> None:
            self.options = options

        def __getitem__(self, name: str) -> Database:
            return Database(name)

        def close(self) -> None:
            return None

    monkeypatch.setattr(pymongo, "MongoClient", Client)
    assert check("mongodb", mongo_properties()).endswith(
        "oplog window not measured (reading local.oplog.rs needs read on the local database)")
    assert commands == ["hello", "connection_status", "oplog_first", "oplog_last"]


# --- shared ------------------------------------------------------------------------------------------------------

GOOD = {"sqlserver": (mssql_rows, mssql_properties), "oracle": (oracle_rows, oracle_properties),
        "mongodb": (mongo_rows, mongo_properties)}


@pytest.mark.parametrize("kind", sorted(GOOD))
def test_credentials_never_in_messages(kind: str) -> None:
    rows, properties = GOOD[kind]
    results = rows()
    kind_line = verdict(kind, copy.deepcopy(results), properties())
    assert kind_line[0] == "ok"
    # a problem whose line would carry the password if it were not redacted: the password as a user/table name
    hostile = properties(**({"database.user": PASSWORD} if kind != "mongodb" else {}))
    if kind == "sqlserver":
        results["access"][0]["user_name"] = PASSWORD
        results["capture_instances"] = []
        results["access"][0]["can_read_change_tables"] = 0
    elif kind == "oracle":
        results["session"][0]["username"] = PASSWORD
        results["roles"] = []
    else:
        results["connection_status"][0]["authInfo"]["authenticatedUsers"] = [{"user": PASSWORD, "db": "admin"}]
        results["connection_status"][0]["authInfo"]["authenticatedUserPrivileges"] = []
    verdict_kind, line = verdict(kind, results, hostile)
    assert verdict_kind == "problem" and "***" in line
    for shown in (kind_line[1], line):
        assert PASSWORD not in shown and "s3cret" not in shown


def test_redact() -> None:
    properties = {"database.password": "pw1", "mongodb.connection.string": "mongodb+srv://u:p%40ss@c.example/db",
                  "database.url": "jdbc:oracle:thin:scott/tiger@db:1521/ORCL"}
    text = "pw1 mongodb+srv://u:p%40ss@c.example p@ss tiger"
    assert redact(text, properties) == "*** mongodb+srv://***@c.example *** ***"


def test_table_filter() -> None:
    table_filter = TableFilter.from_properties({"table.include.list": r"dbo\.cust.*, sales\.fin\..*",
                                                "schema.exclude.list": "fin"})
    assert table_filter.captures("dbo", "Customers", "testDB")
    assert not table_filter.captures("dbo", "orders", "testDB")
    assert not table_filter.captures("fin", "invoices", "sales")   # schema excluded
    assert TableFilter.from_properties({}).captures("any", "thing")


def test_every_probe_declares_its_queries_once() -> None:
    for kind in PROBES:
        found = probe(kind)
        assert found.kind == kind and found.queries
        module = {"sqlserver": mssql_probe, "oracle": oracle_probe, "mongodb": mongo_probe}[kind]
        assert found.queries is module.QUERIES


def test_unknown_kind() -> None:
    with pytest.raises(LakecdcError, match="no prerequisite checks for 'db2' \\(known: mongodb, oracle, sqlserver\\)"):
        check("db2", {})
