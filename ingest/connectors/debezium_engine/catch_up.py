"""When a Debezium-engine source is caught up (`lakecdc run --until-caught-up` stops there).

Debezium's metrics (jvm.progress) say whether the connector streams and whether its queue is empty; they do not
say whether the change stream's backlog is read. Where the source can say how far it is, it is asked when streaming
is first seen (the target), and the connector must have read and queued everything up to it; a target reached is
forgotten, so a run that goes on past a catch-up (tests run a workload there) catches up next with what the source
holds when it is asked again:
  - PostgreSQL: the connector's replication connection reports as its write position (pg_stat_replication.
    write_lsn) the last position it read, keepalives included, and it reads the next message only after it
    queued the events of the previous one; so a write position at or past `pg_current_wal_flush_lsn()` means
    everything up to the target is queued (it reports every `status.update.interval.ms`: 1 s here, unless the
    source sets it), and every data change event it counted has reached lakecdc;
  - MySQL/MariaDB: Debezium's streaming metrics give the binlog file and position the connector processed, to
    compare with the server's `SHOW MASTER STATUS`.
For the other connectors (SQL Server, Oracle, MongoDB) several quiet polls in a row stand for it
(connector.QUIET_POLLS). A record Debezium's queue gave up is in no queue until the engine hands it over; the
engine hands records over unconverted (decoding.py converts them in the hand-over), and the runner waits one more
quiet poll after a probe says yes (QuietPolls), so such a record is seen before the source counts as caught up.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from ingest.connectors.debezium_engine.jvm import Progress
from ingest.errors import LakecdcError


class SourceProbe(Protocol):
    ENGINE_DEFAULTS: dict[str, str]   # connector properties the probe relies on (the source's own win)

    def reached(self, progress: Progress, received: int) -> bool:
        """Has the connector read everything the source held when this was first asked? `received`: the data
        change events lakecdc received this run."""


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

    def reached(self, progress: Progress, received: int) -> bool:
        if received < progress.events_seen:
            return False
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
                reached = bool(row and row[0])
                if reached:
                    self.target = None
                return reached
        finally:
            conn.close()


class BinlogProbe:
    ENGINE_DEFAULTS: dict[str, str] = {}

    def __init__(self, properties: dict[str, str]) -> None:
        self.properties = properties
        self.target: tuple[int, int] | None = None

    def _master_position(self) -> tuple[int, int]:
        import pymysql

        p = self.properties
        try:
            conn = pymysql.connect(host=p.get("database.hostname", "localhost"), port=int(p.get("database.port", 3306)),
                                   user=p.get("database.user"), password=p.get("database.password", ""),
                                   connect_timeout=10)
        except pymysql.MySQLError as exc:
            raise LakecdcError(f"cannot ask the server for its binlog position: {exc}") from None
        try:
            with conn.cursor() as cur:
                try:
                    cur.execute("SHOW BINARY LOG STATUS")   # MySQL 8.4 and later
                except pymysql.MySQLError:
                    cur.execute("SHOW MASTER STATUS")
                row = cur.fetchone()
        finally:
            conn.close()
        if not row:
            raise LakecdcError("the server reports no binlog position (is log_bin on?)")
        return _binlog_key(row[0], int(row[1]))

    def reached(self, progress: Progress, received: int) -> bool:
        if progress.binlog is None:
            return False
        if self.target is None:
            self.target = self._master_position()
        reached = _binlog_key(*progress.binlog) >= self.target
        if reached:
            self.target = None
        return reached


class QuietPolls:
    """The runner's side of a catch-up, poll by poll: caught up when the check said so at one quiet poll and the
    next poll is quiet too, with nothing handed over in between. A record taken from Debezium's queue is in a
    hand-over within a poll, unless the engine's thread stalls that long."""

    def __init__(self) -> None:
        self._seen = False   # the check said so at the last quiet poll

    def handed_over(self) -> None:
        """A hand-over arrived: what the check said before it no longer holds."""
        self._seen = False

    def quiet(self, busy: bool, check: Callable[[], bool]) -> bool:
        """A poll without a hand-over; `busy`: something is still on its way (a hand-over under way, records
        held back); `check`: asks the connector and the source (asked only when it can matter). Caught up?"""
        if busy:
            self._seen = False
            return False
        if self._seen:
            self._seen = False   # a run that goes on starts its next catch-up afresh
            return True
        self._seen = check()
        return False


def _binlog_key(file: str, position: int) -> tuple[int, int]:
    """`mysql-bin.000003`, 154 -> (3, 154): positions compare in file order."""
    return int(str(file).rsplit(".", 1)[-1]), position


PROBES: dict[str, type] = {
    "io.debezium.connector.postgresql.PostgresConnector": PostgresProbe,
    "io.debezium.connector.mysql.MySqlConnector": BinlogProbe,
    "io.debezium.connector.mariadb.MariaDbConnector": BinlogProbe,
}


def probe_for(connector_class: str, properties: dict[str, str]) -> SourceProbe | None:
    cls = PROBES.get(connector_class)
    return cls(properties) if cls is not None else None
