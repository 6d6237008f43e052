"""When a Debezium-engine source is caught up (`lakecdc run --until-caught-up` stops there).

Debezium's metrics say whether the connector streams, whether its queue is empty and how many data change
events it produced; they do not say whether the change stream's backlog is read. Where the source can say how
far it is, it is asked: the position of the source when streaming was first seen (the target) must have been
read by the connector. PostgreSQL: the connector's replication connection reports as its write position
(pg_stat_replication.write_lsn) the last position it read, keepalives included; it reads the next message
only after it queued the events of the previous one, so a write position at or past the target means
everything up to the target is queued (the connector reports every `status.update.interval.ms`, 1 s here);
MySQL/MariaDB: the binlog dump threads have sent everything. For the other
connectors (SQL Server, Oracle, MongoDB) several quiet polls in a row stand for it (connector.QUIET_POLLS).
"""

from __future__ import annotations

from typing import Any, Protocol

from ingest.errors import LakecdcError


class SourceProbe(Protocol):
    ENGINE_DEFAULTS: dict[str, str]   # connector properties the probe relies on (the source's own win)

    def reached(self) -> bool:
        """Has the connector been sent everything the source held when this was first asked?"""


class PostgresProbe:
    ENGINE_DEFAULTS = {"status.update.interval.ms": "1000"}

    def __init__(self, properties: dict[str, str]) -> None:
        self.properties = properties
        self.slot = properties.get("slot.name", "debezium")
        self.target: str | None = None

    def _connect(self) -> Any:
        import psycopg2

        p = self.properties
        try:
            return psycopg2.connect(host=p.get("database.hostname", "localhost"), port=p.get("database.port", "5432"),
                                    user=p.get("database.user"), password=p.get("database.password", ""),
                                    dbname=p.get("database.dbname", "postgres"), connect_timeout=10)
        except psycopg2.Error as exc:
            raise LakecdcError(f"cannot ask PostgreSQL how far the slot is: {str(exc).strip()}") from None

    def reached(self) -> bool:
        conn = self._connect()
        try:
            conn.autocommit = True
            with conn.cursor() as cur:
                if self.target is None:
                    cur.execute("SELECT pg_current_wal_flush_lsn()::text")
                    self.target = cur.fetchone()[0]
                cur.execute("SELECT r.write_lsn >= %s::pg_lsn FROM pg_replication_slots s "
                            "JOIN pg_stat_replication r ON r.pid = s.active_pid WHERE s.slot_name = %s",
                            (self.target, self.slot))
                row = cur.fetchone()
                return bool(row and row[0])
        finally:
            conn.close()


class BinlogProbe:
    """MySQL/MariaDB: every binlog dump thread (the connector's among them) sent the whole binlog."""

    ENGINE_DEFAULTS: dict[str, str] = {}
    SENT_ALL = ("has sent all binlog", "master has sent all binlog", "source has sent all binlog")

    def __init__(self, properties: dict[str, str]) -> None:
        self.properties = properties

    def reached(self) -> bool:
        import pymysql

        p = self.properties
        try:
            conn = pymysql.connect(host=p.get("database.hostname", "localhost"), port=int(p.get("database.port", 3306)),
                                   user=p.get("database.user"), password=p.get("database.password", ""),
                                   connect_timeout=10)
        except pymysql.MySQLError as exc:
            raise LakecdcError(f"cannot ask the server how far the binlog reader is: {exc}") from None
        try:
            with conn.cursor() as cur:
                cur.execute("SHOW PROCESSLIST")
                states = [str(row[6] or "").lower() for row in cur.fetchall() if str(row[4]).startswith("Binlog Dump")]
            return bool(states) and all(any(text in state for text in self.SENT_ALL) for state in states)
        finally:
            conn.close()


PROBES: dict[str, type] = {
    "io.debezium.connector.postgresql.PostgresConnector": PostgresProbe,
    "io.debezium.connector.mysql.MySqlConnector": BinlogProbe,
    "io.debezium.connector.mariadb.MariaDbConnector": BinlogProbe,
}


def probe_for(connector_class: str, properties: dict[str, str]) -> SourceProbe | None:
    cls = PROBES.get(connector_class)
    return cls(properties) if cls is not None else None
