"""Oracle's prerequisites for Debezium's Oracle connector (the LogMiner adapter), over python-oracledb in thin
mode: ARCHIVELOG mode, minimal supplemental logging, supplemental logging of all columns on every captured table
(or database-wide), and the privileges Debezium's Oracle documentation grants the connector user.

The connection goes where Debezium's goes: `database.url`, else `database.hostname`:`database.port`/
`database.dbname` (a service name); with `database.pdb.name` (a container database, the user a common user) the
privileges are read in the root and the tables in the PDB, and each GRANT gets CONTAINER=ALL. Privileges count
as held when granted directly, through an enabled role (session_privs, session_roles, all_tab_privs) or to
PUBLIC; SELECT ANY DICTIONARY stands for the SELECT grants on the V_$ views.
"""

from __future__ import annotations

import re
from typing import Any

from ingest.connectors.debezium_engine.prerequisites import (
    Probe,
    Properties,
    Results,
    TableFilter,
    connect_timeout,
    integer,
    names,
    one_line,
    plural,
    required,
)
from ingest.errors import LakecdcError

# Column aliases are quoted lower case, so the rows carry the names the queries select (Oracle would upper-case
# unquoted ones).
QUERIES: dict[str, str] = {
    "session": "SELECT USER AS \"username\", SYS_CONTEXT('USERENV', 'CON_NAME') AS \"con_name\" FROM dual",
    "database": "SELECT log_mode AS \"log_mode\", supplemental_log_data_min AS \"supplemental_log_data_min\", "
                "supplemental_log_data_all AS \"supplemental_log_data_all\" FROM v$database",
    "system_privileges": "SELECT privilege AS \"privilege\" FROM session_privs",
    "roles": "SELECT role AS \"role\" FROM session_roles",
    "object_privileges": "SELECT table_name AS \"table_name\", privilege AS \"privilege\" FROM all_tab_privs "
                         "WHERE table_schema = 'SYS' AND (grantee IN (USER, 'PUBLIC') "
                         "OR grantee IN (SELECT role FROM session_roles))",
    # in the PDB when database.pdb.name is set
    "tables": "SELECT t.owner AS \"owner\", t.table_name AS \"table_name\", "
              "(SELECT COUNT(*) FROM all_log_groups g WHERE g.owner = t.owner AND g.table_name = t.table_name "
              "AND g.log_group_type = 'ALL COLUMN LOGGING') AS \"all_column_logging\" "
              "FROM all_tables t JOIN all_users u ON u.username = t.owner "
              "WHERE u.oracle_maintained = 'N' AND t.temporary = 'N' AND t.nested = 'NO' AND t.dropped = 'NO' "
              "ORDER BY t.owner, t.table_name",
}

# Debezium's Oracle documentation, "Creating users for the connector", in its order: (privilege, kind)
PRIVILEGES: list[tuple[str, str]] = [
    ("CREATE SESSION", "system"), ("SET CONTAINER", "system"), ("SELECT ON V_$DATABASE", "object"),
    ("FLASHBACK ANY TABLE", "system"), ("SELECT ANY TABLE", "system"), ("SELECT_CATALOG_ROLE", "role"),
    ("EXECUTE_CATALOG_ROLE", "role"), ("SELECT ANY TRANSACTION", "system"), ("LOGMINING", "system"),
    ("CREATE TABLE", "system"), ("LOCK ANY TABLE", "system"), ("CREATE SEQUENCE", "system"),
    ("EXECUTE ON DBMS_LOGMNR", "object"), ("EXECUTE ON DBMS_LOGMNR_D", "object"),
] + [(f"SELECT ON V_${view}", "object") for view in (
    "LOG", "LOG_HISTORY", "LOGMNR_LOGS", "LOGMNR_CONTENTS", "LOGMNR_PARAMETERS", "LOGFILE", "ARCHIVED_LOG",
    "ARCHIVE_DEST_STATUS", "TRANSACTION", "MYSTAT", "STATNAME")]
# tables Debezium never captures (its own flush table, recycle bin, spatial/text index and IOT overflow tables)
_SKIPPED_PREFIXES = ("BIN$", "LOG_MINING_FLUSH", "SYS_IOT_OVER_", "MDRT_", "MDXT_", "DR$")
_PLAIN = re.compile(r"[A-Z][A-Z0-9_$#]*")


def quote_name(name: str) -> str:
    """An Oracle identifier as written in a statement: bare when it is a plain upper-case name, else "quoted"."""
    return name if _PLAIN.fullmatch(name) else '"' + name.replace('"', '""') + '"'


def _cdb(properties: Properties) -> bool:
    return bool((properties.get("database.pdb.name") or "").strip())


def needed_privileges(properties: Properties) -> list[tuple[str, str]]:
    return [(p, kind) for p, kind in PRIVILEGES if p != "SET CONTAINER" or _cdb(properties)]


def missing_privileges(results: Results, properties: Properties) -> list[tuple[str, str]]:
    """The privileges of `needed_privileges` the session does not hold."""
    system = {str(r["privilege"]).upper() for r in results.get("system_privileges", [])}
    roles = {str(r["role"]).upper() for r in results.get("roles", [])}
    objects = {f"{str(r['privilege']).upper()} ON {str(r['table_name']).upper()}"
               for r in results.get("object_privileges", [])}
    objects |= {o.replace("READ ON ", "SELECT ON ") for o in objects}   # READ is enough to query a view
    dictionary = "SELECT ANY DICTIONARY" in system
    missing = []
    for privilege, kind in needed_privileges(properties):
        held = (privilege in system if kind == "system" else privilege in roles if kind == "role"
                else privilege in objects or (dictionary and privilege.startswith("SELECT ON V_$")))
        if not held:
            missing.append((privilege, kind))
    return missing


def _user(results: Results, properties: Properties) -> str:
    rows = results.get("session") or [{"username": required(properties, "database.user").upper()}]
    return str(rows[0]["username"])


def captured_tables(results: Results, properties: Properties) -> list[tuple[str, str, int]]:
    """(owner, table, all_column_logging) of the captured tables."""
    table_filter = TableFilter.from_properties(properties)
    database = (properties.get("database.pdb.name") or properties.get("database.dbname") or "").upper() or None
    return [(str(r["owner"]), str(r["table_name"]), int(r["all_column_logging"] or 0))
            for r in results.get("tables", [])
            if not str(r["table_name"]).startswith(_SKIPPED_PREFIXES)
            and table_filter.captures(str(r["owner"]), str(r["table_name"]), database)]


def _database_row(results: Results) -> dict[str, Any]:
    rows = results.get("database") or []
    if not rows:
        raise LakecdcError("v$database returned no row")
    return rows[0]


def problems(results: Results, properties: Properties) -> list[str]:
    found = []
    database = _database_row(results)
    if database["log_mode"] != "ARCHIVELOG":
        found.append(f"the database runs in {database['log_mode']} mode: LogMiner reads the archived redo logs; "
                     f"as SYSDBA: SHUTDOWN IMMEDIATE; STARTUP MOUNT; ALTER DATABASE ARCHIVELOG; ALTER DATABASE OPEN")
    if database["supplemental_log_data_min"] not in ("YES", "IMPLICIT"):
        found.append(f"minimal supplemental logging is off (v$database.supplemental_log_data_min = "
                     f"{database['supplemental_log_data_min']}): ALTER DATABASE ADD SUPPLEMENTAL LOG DATA")
    user = quote_name(_user(results, properties))
    container = " CONTAINER=ALL" if _cdb(properties) else ""
    missing = missing_privileges(results, properties)
    plain = [p for p, kind in missing if kind != "object"]
    if plain:
        found.append(f"user {user} lacks {names(plain)}, which Debezium's LogMiner adapter needs: "
                     f"GRANT {', '.join(plain)} TO {user}{container}")
    objects = [p for p, kind in missing if kind == "object"]
    if objects:
        found.append(f"user {user} lacks {names(objects)}, which Debezium's LogMiner adapter needs: "
                     + "; ".join(f"GRANT {p} TO {user}{container}" for p in objects))
    if "tables" not in results:   # not read: the user cannot enter the PDB (SET CONTAINER, reported above)
        return found
    tables = captured_tables(results, properties)
    if database["supplemental_log_data_all"] != "YES":
        for owner, table, logging in tables:
            if not logging:
                name = f"{quote_name(owner)}.{quote_name(table)}"
                found.append(f"supplemental logging of all columns is off for table {name}: "
                             f"ALTER TABLE {name} ADD SUPPLEMENTAL LOG DATA (ALL) COLUMNS")
    if not tables:
        found.append(f"no table is captured ({TableFilter.from_properties(properties).describe()}, matched against "
                     f"SCHEMA.TABLE): check the include lists, and that the user may see the tables (SELECT ANY "
                     f"TABLE)")
    return found


def summary(results: Results, properties: Properties) -> str:
    database = _database_row(results)
    count = plural(len(captured_tables(results, properties)), "captured table")
    logging = (f"all-column supplemental logging database-wide ({count})"
               if database["supplemental_log_data_all"] == "YES"
               else f"all-column supplemental logging on {count}")
    return (f"ARCHIVELOG mode, minimal supplemental logging, {logging}, {quote_name(_user(results, properties))} "
            f"holds the {len(needed_privileges(properties))} LogMiner privileges")


# --- the live path -----------------------------------------------------------------------------------------------

_JDBC = re.compile(r"jdbc:oracle:thin:[^@]*@(.+)", re.IGNORECASE)
_HOST_PORT_SID = re.compile(r"([^:/()\s]+):(\d+):([A-Za-z0-9_$#]+)")


def connect_arguments(properties: Properties) -> dict[str, Any]:
    """python-oracledb's connect() arguments (without the password) from Debezium's properties."""
    args: dict[str, Any] = {"user": required(properties, "database.user"),
                            "tcp_connect_timeout": connect_timeout(properties), "retry_count": 0}
    url = (properties.get("database.url") or "").strip()
    if url:
        match = _JDBC.fullmatch(url)
        dsn = (match.group(1) if match else url).removeprefix("//")
        sid = _HOST_PORT_SID.fullmatch(dsn)
        if sid:
            args.update(host=sid.group(1), port=int(sid.group(2)), sid=sid.group(3))
        else:
            args["dsn"] = dsn
    else:
        args.update(host=required(properties, "database.hostname"), port=integer(properties, "database.port", 1521),
                    service_name=required(properties, "database.dbname"))
    return args


def _where(args: dict[str, Any]) -> str:
    target = args.get("dsn") or f"{args['host']}:{args['port']}/{args.get('service_name') or args.get('sid')}"
    return f"{target} as {args['user']}"


def _pdb(properties: Properties) -> str:
    pdb = (properties.get("database.pdb.name") or "").strip()
    if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_$#]*", pdb):
        raise LakecdcError(f"database.pdb.name {pdb!r} is not a container name")
    return '"' + pdb.upper() + '"'


def collect(properties: Properties) -> Results:
    import oracledb

    args = connect_arguments(properties)
    try:
        connection = oracledb.connect(password=properties.get("database.password") or "", **args)
    except oracledb.Error as exc:
        reason = re.sub(r" ?\(CONNECTION_ID=[^)]*\)", "", one_line(exc))
        raise LakecdcError(f"cannot connect to Oracle at {_where(args)}: {reason}") from None
    try:
        def run(name: str, sql: str) -> list[dict[str, Any]]:
            try:
                with connection.cursor() as cursor:
                    cursor.execute(sql)
                    if cursor.description is None:
                        return []
                    columns = [d[0] for d in cursor.description]
                    return [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]
            except oracledb.Error as exc:
                raise LakecdcError(f"the {name} query failed: {one_line(exc)}") from None

        results = {name: run(name, QUERIES[name]) for name in QUERIES if name != "tables"}
        if _cdb(properties):
            if "SET CONTAINER" not in {r["privilege"] for r in results["system_privileges"]}:
                return results   # problems() names the missing privilege
            run(f"ALTER SESSION SET CONTAINER ({properties['database.pdb.name']})",
                f"ALTER SESSION SET CONTAINER = {_pdb(properties)}")
        results["tables"] = run("tables", QUERIES["tables"])
        return results
    finally:
        connection.close()


PROBE = Probe(kind="oracle", queries=QUERIES, collect=collect, problems=problems, summary=summary)
