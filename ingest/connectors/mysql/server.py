"""What the connector asks the server outside the binlog stream: settings validation, the current binlog
position and GTID set, the list of binlog files. Flavour differences live here:

- MySQL 8.4 removed SHOW MASTER STATUS in favour of SHOW BINARY LOG STATUS; older MySQL only has the
  former. The GTID set is the status row's Executed_Gtid_Set (uuid:1-5).
- MariaDB has SHOW MASTER STATUS (and SHOW BINLOG STATUS from 10.5.2); its GTID position is
  @@gtid_binlog_pos (domain-server-sequence).

Every function takes a `Query` callable (sql -> list of row dicts) so recorded server responses can
stand in for servers that cannot run here (Oracle's MySQL).
"""

from __future__ import annotations

import functools
import re
import ssl
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pymysql

from ingest.errors import LakecdcError

Query = Callable[[str], list[dict[str, Any]]]
ER_PARSE_ERROR = 1064
_FILE_NUMBER = re.compile(r"\.(\d+)$")


class MySqlConnection(pymysql.connections.Connection):
    """pymysql's connection, with `database.ssl.mode=preferred` taking its TLS context from tls_context() too:
    pymysql builds a new default context (loading the system's CA certificates, which preferred mode does not
    use) for every connection, 50-80 ms each here, and the binlog reader connects twice per poll."""

    def _create_ssl_ctx(self, sslp: Any) -> ssl.SSLContext:
        if sslp == {}:   # pymysql's PREFERRED mode: TLS if the server offers it, no verification
            return tls_context("preferred")
        return super()._create_ssl_ctx(sslp)


@functools.cache
def tls_context(mode: str) -> ssl.SSLContext:
    """The TLS context of a `database.ssl.mode` (one per mode, shared by every connection): `preferred` and
    `required` encrypt without verifying the server; `verify_ca` checks its certificate against the system's CA
    certificates, `verify_identity` its host name too."""
    if mode in ("preferred", "required"):
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    elif mode in ("verify_ca", "verify_identity"):
        context = ssl.create_default_context()
        context.check_hostname = mode == "verify_identity"
        # the certificates MySQL generates for itself are not strict X.509 (pymysql clears the flag too)
        context.verify_flags &= ~ssl.VERIFY_X509_STRICT
    else:
        raise ValueError(f"no TLS context for database.ssl.mode {mode!r}")
    return context


@dataclass(frozen=True)
class BinlogPosition:
    file: str
    pos: int
    gtids: str

    @property
    def file_number(self) -> int:
        return binlog_file_number(self.file)


@functools.lru_cache(maxsize=64)  # asked for every event, of a few names
def binlog_file_number(name: str) -> int:
    match = _FILE_NUMBER.search(name)
    if not match:
        raise LakecdcError(f"unexpected binlog file name {name!r} (expected <base>.<number>)")
    return int(match.group(1))


def cursor_query(connection: pymysql.connections.Connection) -> Query:
    def run(sql: str) -> list[dict[str, Any]]:
        with connection.cursor(pymysql.cursors.DictCursor) as cur:
            cur.execute(sql)
            return list(cur.fetchall())

    return run


def variables(query: Query, names: list[str]) -> dict[str, str]:
    quoted = ", ".join("'" + n + "'" for n in names)
    rows = query(f"SHOW GLOBAL VARIABLES WHERE Variable_name IN ({quoted})")
    return {str(r["Variable_name"]).lower(): str(r["Value"]) for r in rows}


def binlog_status(query: Query, flavor: str) -> BinlogPosition:
    """Current binlog file, position and executed GTID set."""
    if flavor == "mysql":
        try:
            rows = query("SHOW BINARY LOG STATUS")
        except pymysql.err.ProgrammingError as exc:  # MySQL before 8.2 does not know the statement
            if not exc.args or exc.args[0] != ER_PARSE_ERROR:
                raise
            rows = query("SHOW MASTER STATUS")
    else:
        rows = query("SHOW MASTER STATUS")
    if not rows:
        raise LakecdcError("the server's binary log is not enabled (SHOW MASTER STATUS returned no row)")
    row = rows[0]
    if flavor == "mysql":
        gtids = str(row.get("Executed_Gtid_Set") or "").replace("\n", "")
    else:
        gtid_rows = query("SELECT @@GLOBAL.gtid_binlog_pos AS gtids")
        gtids = str(gtid_rows[0]["gtids"] or "") if gtid_rows else ""
    return BinlogPosition(file=str(row["File"]), pos=int(row["Position"]), gtids=gtids)


def binlog_files(query: Query) -> list[str]:
    return [str(r["Log_name"]) for r in query("SHOW BINARY LOGS")]


def detect_flavor(query: Query) -> str:
    version = str(query("SELECT VERSION() AS v")[0]["v"])
    return "mariadb" if "mariadb" in version.lower() else "mysql"


def settings_problems(query: Query, flavor: str) -> list[str]:
    """One line per server setting that prevents capture (Debezium's MariaDB and MySQL set-up: binlog settings)."""
    wanted = ["log_bin", "binlog_format", "binlog_row_image", "binlog_row_metadata", "log_bin_compress",
              "binlog_row_value_options", "gtid_mode", "gtid_strict_mode", "binlog_annotate_row_events"]
    values = variables(query, wanted)
    problems = []
    if values.get("log_bin", "OFF").upper() not in ("ON", "1"):
        problems.append("log_bin is OFF: start the server with --log-bin so the binary log exists")
    if values.get("binlog_format", "").upper() != "ROW":
        problems.append(f"binlog_format is {values.get('binlog_format')!r}: set binlog_format=ROW")
    if values.get("binlog_row_image", "").upper() != "FULL":
        problems.append(f"binlog_row_image is {values.get('binlog_row_image')!r}: set binlog_row_image=FULL")
    metadata = values.get("binlog_row_metadata")
    if metadata is None:
        problems.append("binlog_row_metadata is not supported by this server (needs MariaDB 10.5+ or MySQL 8.0.14+)")
    elif metadata.upper() != "FULL":
        problems.append(f"binlog_row_metadata is {metadata!r}: set binlog_row_metadata=FULL "
                        "(column names in the binlog)")
    if values.get("log_bin_compress", "OFF").upper() in ("ON", "1"):
        problems.append("log_bin_compress is ON: compressed binlog events are not supported, "
                        "set log_bin_compress=OFF")
    if "PARTIAL_JSON" in values.get("binlog_row_value_options", "").upper():
        problems.append("binlog_row_value_options is PARTIAL_JSON: updates cannot be decoded, set it to ''")
    if flavor == "mysql" and values.get("gtid_mode", "ON").upper() not in ("ON", "OFF"):
        problems.append(f"gtid_mode is {values.get('gtid_mode')!r}: use ON (or OFF), not a transitional mode")
    return problems


# The global privileges the connector cannot work without, each as alternatives: reading the binary log
# (COM_BINLOG_DUMP) and asking for its position (SHOW MASTER STATUS). MariaDB 10.5 renamed REPLICATION CLIENT
# to BINLOG MONITOR (SHOW GRANTS prints the new name) and accepts REPLICATION REPLICA for REPLICATION SLAVE.
_NEEDED_PRIVILEGES = {
    "mariadb": [("REPLICATION SLAVE", "REPLICATION REPLICA"), ("BINLOG MONITOR", "REPLICATION CLIENT", "SUPER")],
    "mysql": [("REPLICATION SLAVE", "REPLICATION REPLICA"), ("REPLICATION CLIENT", "SUPER")],
}
_GLOBAL_GRANT = re.compile(r"GRANT (.+?) ON \*\.\* TO ", re.IGNORECASE)


def missing_privileges(query: Query, flavor: str) -> list[str]:
    """The global privileges from _NEEDED_PRIVILEGES that SHOW GRANTS FOR CURRENT_USER() does not list (the
    first name of each). Empty when the user holds a role: a role's privileges are not listed there, so the
    server is left to refuse at the first statement that needs them."""
    held: set[str] = set()
    for row in query("SHOW GRANTS FOR CURRENT_USER()"):
        grant = str(next(iter(row.values())))
        if " ON " not in grant.upper():
            return []  # a role granted to the user
        match = _GLOBAL_GRANT.match(grant)
        if match:
            held |= {p.strip().upper() for p in match.group(1).split(",")}
    if "ALL PRIVILEGES" in held:
        return []
    return [names[0] for names in _NEEDED_PRIVILEGES[flavor] if not held.intersection(names)]


def validate_privileges(query: Query, flavor: str, user: str) -> None:
    missing = missing_privileges(query, flavor)
    if missing:
        grants = ", ".join(missing)
        raise LakecdcError(f"{flavor} user {user!r} cannot read the binary log: it lacks {grants} "
                           f"(GRANT {grants} ON *.* TO '{user}'@'%')")


def validate_settings(query: Query, flavor: str) -> None:
    problems = settings_problems(query, flavor)
    if problems:
        raise LakecdcError(f"{flavor} server settings prevent change capture: " + "; ".join(problems))
