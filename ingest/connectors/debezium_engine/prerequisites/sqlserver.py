"""SQL Server's CDC prerequisites for Debezium's SQL Server connector, over pyodbc: per database of
`database.names`, the database exists, is online and has CDC enabled; the SQL Server Agent runs (its capture job
fills the change tables); every captured table has a capture instance the connector user can read (db_owner, or
SELECT on the table and membership of the instance's gating role, the rule of cdc.fn_cdc_get_all_changes_*).

Catalog visibility applies: sys.tables and OBJECT_NAME only show tables the user holds some permission on, so a
table the user cannot see at all is neither listed nor captured (Debezium sees the same catalog).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from ingest.connectors.debezium_engine.prerequisites import (
    Probe,
    Properties,
    Results,
    Row,
    TableFilter,
    connect_timeout,
    integer,
    listed,
    names,
    one_line,
    plural,
    required,
)
from ingest.errors import LakecdcError

QUERIES: dict[str, str] = {
    # server level (needs VIEW SERVER STATE; left out of the results when the user lacks it)
    "agent": "SELECT servicename, status_desc FROM sys.dm_server_services "
             "WHERE servicename LIKE N'SQL Server Agent%'",
    # once per name of database.names (bind parameter)
    "databases": "SELECT name, state_desc, is_cdc_enabled FROM sys.databases WHERE name = ?",
    # the rest inside each online, CDC-enabled database
    "access": "SELECT DB_NAME() AS database_name, USER_NAME() AS user_name, "
              "IS_ROLEMEMBER(N'db_owner') AS is_db_owner, "
              "HAS_PERMS_BY_NAME(N'cdc.change_tables', N'OBJECT', N'SELECT') AS can_read_change_tables",
    "tables": "SELECT DB_NAME() AS database_name, s.name AS schema_name, t.name AS table_name "
              "FROM sys.tables AS t JOIN sys.schemas AS s ON s.schema_id = t.schema_id "
              "WHERE t.is_ms_shipped = 0 AND s.name NOT IN (N'cdc', N'sys') AND t.name <> N'systranschemas' "
              "ORDER BY s.name, t.name",
    # run only where the user may read cdc.change_tables
    "capture_instances": (
        "SELECT DB_NAME() AS database_name, OBJECT_SCHEMA_NAME(ct.source_object_id) AS schema_name, "
        "OBJECT_NAME(ct.source_object_id) AS table_name, ct.capture_instance, ct.create_date, ct.role_name, "
        "HAS_PERMS_BY_NAME(QUOTENAME(OBJECT_SCHEMA_NAME(ct.source_object_id)) + N'.' "
        "+ QUOTENAME(OBJECT_NAME(ct.source_object_id)), N'OBJECT', N'SELECT') AS can_select_table, "
        "CASE WHEN ct.role_name IS NULL THEN NULL ELSE IS_ROLEMEMBER(ct.role_name) END AS in_gating_role "
        "FROM cdc.change_tables AS ct ORDER BY schema_name, table_name, ct.create_date"),
}
PER_DATABASE = ("access", "tables", "capture_instances")
_AGENT_START = ("start it (Linux: mssql-conf set sqlagent.enabled true, then restart SQL Server; "
                "Windows: net start SQLSERVERAGENT)")


def quote_name(name: str) -> str:
    """A T-SQL identifier: [name]."""
    return "[" + name.replace("]", "]]") + "]"


def quote_text(value: str) -> str:
    """A T-SQL Unicode literal: N'value'."""
    return "N'" + value.replace("'", "''") + "'"


def _yes(value: Any) -> bool:
    return value is True or value == 1


def databases(properties: Properties) -> list[str]:
    found = listed(properties, "database.names")
    if not found:
        raise LakecdcError("database.names is not set (the comma-separated databases to capture)")
    return found


# --- the verdict -------------------------------------------------------------------------------------------------

def _rows_of(results: Results, query: str, database: str) -> list[Row]:
    return [r for r in results.get(query, []) if str(r["database_name"]).lower() == database.lower()]


def _online_cdc_databases(results: Results, properties: Properties, found: list[str]) -> list[str]:
    """The databases of database.names that exist, are online and have CDC enabled (their real names); a problem
    line for each other one."""
    rows = {str(r["name"]).lower(): r for r in results.get("databases", [])}
    enabled = []
    for wanted in databases(properties):
        row = rows.get(wanted.lower())
        if row is None:
            found.append(f"there is no database {wanted} on the server: check database.names")
            continue
        name = str(row["name"])
        if row["state_desc"] != "ONLINE":
            found.append(f"database {name} is {row['state_desc']}, not ONLINE: ALTER DATABASE {quote_name(name)} "
                         f"SET ONLINE")
        elif not _yes(row["is_cdc_enabled"]):
            found.append(f"CDC is not enabled on database {name}: USE {quote_name(name)}; EXEC sys.sp_cdc_enable_db")
        else:
            enabled.append(name)
    return enabled


def captured_tables(results: Results, properties: Properties, database: str) -> list[tuple[str, str]]:
    table_filter = TableFilter.from_properties(properties)
    return [(str(r["schema_name"]), str(r["table_name"])) for r in _rows_of(results, "tables", database)
            if table_filter.captures(str(r["schema_name"]), str(r["table_name"]), database)]


def capture_instances(results: Results, database: str) -> dict[tuple[str, str], list[Row]]:
    """(schema, table) -> its capture instances, oldest first."""
    out: dict[tuple[str, str], list[Row]] = {}
    for row in _rows_of(results, "capture_instances", database):
        if row["schema_name"] is not None and row["table_name"] is not None:
            out.setdefault((str(row["schema_name"]), str(row["table_name"])), []).append(row)
    return {key: sorted(rows, key=lambda r: r["create_date"]) for key, rows in out.items()}


def _table_problems(results: Results, properties: Properties, database: str) -> list[str]:
    use = f"USE {quote_name(database)};"
    access = next(iter(_rows_of(results, "access", database)), None)
    owner = access is None or _yes(access["is_db_owner"])   # no access row recorded: permissions not judged
    user = str(access["user_name"]) if access else ""
    if not owner and not _yes(access["can_read_change_tables"]):
        return [f"user {user} cannot read cdc.change_tables in {database}, where Debezium finds the capture "
                f"instances: {use} GRANT SELECT ON SCHEMA::cdc TO {quote_name(user)}"]
    found = []
    instances = capture_instances(results, database)
    for schema, table in captured_tables(results, properties, database):
        name = f"{database}.{schema}.{table}"
        if (schema, table) not in instances:
            found.append(f"CDC is not enabled on table {name}: {use} EXEC sys.sp_cdc_enable_table @source_schema = "
                         f"{quote_text(schema)}, @source_name = {quote_text(table)}, @role_name = NULL")
            continue
        newest = instances[(schema, table)][-1]
        reading = f"user {user} cannot read capture instance {newest['capture_instance']} of {name}"
        if not owner and not _yes(newest["can_select_table"]):
            found.append(f"{reading}: it lacks SELECT on the table ({use} GRANT SELECT ON {quote_name(schema)}."
                         f"{quote_name(table)} TO {quote_name(user)})")
        if not owner and newest["role_name"] and not _yes(newest["in_gating_role"]):
            role = str(newest["role_name"])
            found.append(f"{reading}: it is not a member of the gating role {role} ({use} ALTER ROLE "
                         f"{quote_name(role)} ADD MEMBER {quote_name(user)})")
    return found


def problems(results: Results, properties: Properties) -> list[str]:
    found: list[str] = []
    enabled = _online_cdc_databases(results, properties, found)
    agent = results.get("agent")
    if agent is not None and not any(r["status_desc"] == "Running" for r in agent):
        state = names(sorted({str(r["status_desc"]) for r in agent})) or "not installed"
        found.append(f"SQL Server Agent is {state}: its capture job fills the change tables, so Debezium would "
                     f"see no change; {_AGENT_START}")
    for database in enabled:
        found += _table_problems(results, properties, database)
    if enabled and not any(captured_tables(results, properties, database) for database in enabled):
        found.append(f"no table of {names(enabled)} is captured ({TableFilter.from_properties(properties).describe()}"
                     f", matched against schema.table): check the include lists, and that the user may see the "
                     f"tables")
    return found


def _warnings(results: Results, properties: Properties, database: str) -> list[str]:
    out = []
    instances = capture_instances(results, database)
    for schema, table in captured_tables(results, properties, database):
        rows = instances.get((schema, table), [])
        if len(rows) > 1:
            newest, older = rows[-1]["capture_instance"], rows[0]["capture_instance"]
            out.append(f"{database}.{schema}.{table} has {len(rows)} capture instances "
                       f"({', '.join(str(r['capture_instance']) for r in rows)}): Debezium switches to the newest, "
                       f"{newest}, from its start LSN on; once it has, drop the older: USE {quote_name(database)}; "
                       f"EXEC sys.sp_cdc_disable_table @source_schema = {quote_text(schema)}, @source_name = "
                       f"{quote_text(table)}, @capture_instance = {quote_text(str(older))}")
    return out


def summary(results: Results, properties: Properties) -> str:
    enabled = _online_cdc_databases(results, properties, [])
    count = sum(len(captured_tables(results, properties, database)) for database in enabled)
    if "agent" in results:
        agent = "SQL Server Agent running"
    else:
        user = quote_name(properties.get("database.user") or "<login>")
        agent = (f"SQL Server Agent not checked (sys.dm_server_services needs VIEW SERVER STATE: GRANT VIEW SERVER "
                 f"STATE TO {user})")
    warnings = [w for database in enabled for w in _warnings(results, properties, database)]
    return (f"CDC enabled on {', '.join(enabled)} and on {plural(count, 'captured table')}, {agent}"
            + "".join(f"; warning: {w}" for w in warnings))


# --- the live path -----------------------------------------------------------------------------------------------

_MICROSOFT = re.compile(r"ODBC Driver (\d+) for SQL Server", re.IGNORECASE)


def _rank(driver: str) -> tuple[int, int] | None:
    match = _MICROSOFT.fullmatch(driver)
    if match:
        return (3, int(match.group(1)))
    if "sql server native client" in driver.lower() or driver.lower() == "sql server":
        return (2, 0)
    if "freetds" in driver.lower():
        return (1, 0)
    return None


def odbc_driver(installed: list[str], requested: str | None = None) -> str:
    """The ODBC driver to use: the `driver` property when set (it must be installed), else the newest
    Microsoft ODBC Driver for SQL Server, else SQL Server Native Client, else FreeTDS."""
    shown = ", ".join(repr(d) for d in installed) or "none"
    if requested:
        if requested not in installed:
            raise LakecdcError(f"ODBC driver {requested!r} (the driver property) is not installed; installed: {shown}")
        return requested
    usable = [d for d in installed if _rank(d) is not None]
    if not usable:
        raise LakecdcError(f"no ODBC driver for SQL Server is installed (pyodbc.drivers(): {shown}): install "
                           f"Microsoft's ODBC Driver 18 for SQL Server (Debian/Ubuntu package msodbcsql18) or "
                           f"FreeTDS (tdsodbc), or name an installed one in the driver property")
    return max(usable, key=lambda d: _rank(d) or (0, 0))


def _odbc_value(value: str) -> str:
    return "{" + value.replace("}", "}}") + "}"


def _flag(properties: Properties, name: str, default: bool) -> str:
    text = (properties.get(name) or "").strip().lower()
    return "yes" if (text in ("true", "yes", "1") if text else default) else "no"


def connection_string(properties: Properties, driver: str) -> str:
    port = integer(properties, "database.port", 1433)
    parts = {
        "DRIVER": _odbc_value(driver),
        "SERVER": _odbc_value(f"tcp:{required(properties, 'database.hostname')},{port}"),
        "UID": _odbc_value(required(properties, "database.user")),
        "PWD": _odbc_value(properties.get("database.password") or ""),
        "Encrypt": _flag(properties, "database.encrypt", True),
        "TrustServerCertificate": _flag(properties, "database.trustServerCertificate", False),
        "APP": _odbc_value("lakecdc"),
    }
    return ";".join(f"{key}={value}" for key, value in parts.items())


def collect(properties: Properties) -> Results:
    import pyodbc

    driver = odbc_driver(list(pyodbc.drivers()), (properties.get("driver") or "").strip() or None)
    where = (f"{properties.get('database.hostname')}:{integer(properties, 'database.port', 1433)} as "
             f"{properties.get('database.user')}")
    try:
        connection = pyodbc.connect(connection_string(properties, driver), autocommit=True,
                                    timeout=max(1, round(connect_timeout(properties))))
    except pyodbc.Error as exc:
        raise LakecdcError(f"cannot connect to SQL Server at {where} ({driver}): {one_line(exc)}") from None
    try:
        return _run_all(_executor(connection, pyodbc.Error), properties)
    finally:
        connection.close()


Execute = Callable[[str, str, tuple[Any, ...]], list[Row]]


def _executor(connection: Any, error: type[Exception]) -> Execute:
    def run(what: str, sql: str, params: tuple[Any, ...] = ()) -> list[Row]:
        cursor = connection.cursor()
        try:
            cursor.execute(sql, *params)
            if cursor.description is None:
                return []
            columns = [d[0] for d in cursor.description]
            return [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]
        except error as exc:
            raise LakecdcError(f"{what} failed: {one_line(exc)}") from None
        finally:
            cursor.close()

    return run


def _run_all(run: Execute, properties: Properties) -> Results:
    results: Results = {"databases": []} | {name: [] for name in PER_DATABASE}
    try:
        results["agent"] = run("the agent query", QUERIES["agent"], ())
    except LakecdcError:
        pass   # no VIEW SERVER STATE: the summary reports the agent as not checked
    for wanted in databases(properties):
        rows = run(f"the databases query for {wanted}", QUERIES["databases"], (wanted,))
        results["databases"] += rows
        if not rows or rows[0]["state_desc"] != "ONLINE" or not _yes(rows[0]["is_cdc_enabled"]):
            continue
        name = str(rows[0]["name"])
        run(f"USE {name}", f"USE {quote_name(name)}", ())
        access = run(f"the access query in {name}", QUERIES["access"], ())
        results["access"] += access
        results["tables"] += run(f"the tables query in {name}", QUERIES["tables"], ())
        if access and (_yes(access[0]["is_db_owner"]) or _yes(access[0]["can_read_change_tables"])):
            results["capture_instances"] += run(f"the capture_instances query in {name}",
                                                QUERIES["capture_instances"], ())
    return results


PROBE = Probe(kind="sqlserver", queries=QUERIES, collect=collect, problems=problems, summary=summary)
