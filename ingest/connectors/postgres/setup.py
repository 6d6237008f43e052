"""Connections and server prerequisites: one clear error line per missing prerequisite; publication and
replication slot management."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg2
import psycopg2.extras
from psycopg2 import sql

from ingest.connectors.postgres.properties import PostgresProperties
from ingest.errors import LakecdcError

log = logging.getLogger(__name__)


class PrerequisiteError(LakecdcError):
    """A server-side prerequisite of the PostgreSQL connector is missing."""


def _first_line(exc: Exception) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def connect(props: PostgresProperties, autocommit: bool = True) -> Any:
    try:
        conn = psycopg2.connect(**props.dsn_params())
    except psycopg2.OperationalError as exc:
        raise LakecdcError(f"cannot connect to PostgreSQL at {props.hostname}:{props.port}/{props.dbname} as "
                           f"{props.user}: {_first_line(exc)}") from None
    conn.autocommit = autocommit
    return conn


def connect_replication(props: PostgresProperties) -> Any:
    try:
        return psycopg2.connect(connection_factory=psycopg2.extras.LogicalReplicationConnection,
                                **props.dsn_params())
    except psycopg2.OperationalError as exc:
        raise PrerequisiteError(
            f"cannot open a replication connection as {props.user} to {props.hostname}:{props.port}/"
            f"{props.dbname} (check the REPLICATION attribute and a 'replication' line in pg_hba.conf): "
            f"{_first_line(exc)}") from None


def slot_info(conn: Any, slot: str) -> dict[str, Any] | None:
    """The slot's row of pg_replication_slots (None: no such slot). `wal_status` is None before PostgreSQL 13;
    "lost" means the server invalidated the slot (it removed WAL the slot still needed)."""
    with conn.cursor() as cur:
        cur.execute("SELECT plugin, slot_type, database, active, active_pid, confirmed_flush_lsn::text, "
                    "restart_lsn::text, to_jsonb(s) ->> 'wal_status' FROM pg_replication_slots s "
                    "WHERE slot_name = %s", (slot,))
        row = cur.fetchone()
    if row is None:
        return None
    keys = ("plugin", "slot_type", "database", "active", "active_pid", "confirmed_flush_lsn", "restart_lsn",
            "wal_status")
    return dict(zip(keys, row, strict=True))


def publication_exists(conn: Any, name: str) -> bool:
    with conn.cursor() as cur:
        cur.execute("SELECT 1 FROM pg_publication WHERE pubname = %s", (name,))
        return cur.fetchone() is not None


def check_prerequisites(conn: Any, props: PostgresProperties) -> None:
    """Server checks that need only a normal connection (slot and publication are handled by ensure_*)."""
    with conn.cursor() as cur:
        cur.execute("SELECT current_setting('server_version_num')::int, current_setting('wal_level'), "
                    "current_setting('max_replication_slots')::int, current_setting('max_wal_senders')::int, "
                    "pg_encoding_to_char(encoding), r.rolsuper, r.rolreplication "
                    "FROM pg_database d, pg_roles r WHERE d.datname = current_database() AND r.rolname = current_user")
        version, wal_level, max_slots, max_senders, encoding, is_super, can_replicate = cur.fetchone()
        if version < 100000:
            raise PrerequisiteError(f"PostgreSQL {version} is too old: pgoutput needs PostgreSQL 10 or later")
        if wal_level != "logical":
            raise PrerequisiteError(f"wal_level is '{wal_level}': logical decoding needs wal_level=logical "
                                    "(set it in postgresql.conf and restart the server)")
        if encoding != "UTF8":
            raise PrerequisiteError(f"database {props.dbname} has encoding {encoding}: only UTF8 is supported")
        if not (is_super or can_replicate):
            raise PrerequisiteError(f"role {props.user} has no REPLICATION attribute "
                                    f"(ALTER ROLE {props.user} WITH REPLICATION)")
        if max_senders < 1:
            raise PrerequisiteError("max_wal_senders is 0: set it to at least 1 and restart the server")
        if slot_info(conn, props.slot_name) is None:
            cur.execute("SELECT count(*) FROM pg_replication_slots")
            if cur.fetchone()[0] >= max_slots:
                raise PrerequisiteError(f"all {max_slots} replication slots are in use (max_replication_slots): "
                                        f"cannot create slot {props.slot_name}")
        else:
            info = slot_info(conn, props.slot_name)
            assert info is not None
            if info["plugin"] != "pgoutput" or info["database"] != props.dbname:
                raise PrerequisiteError(f"replication slot {props.slot_name} exists for plugin {info['plugin']} "
                                        f"in database {info['database']}; it must be pgoutput in {props.dbname}: "
                                        f"choose another slot.name, or drop it (`lakecdc source drop-slot` when "
                                        f"it is in {props.dbname}; else SELECT pg_drop_replication_slot("
                                        f"'{props.slot_name}') in {info['database']})")


def check_select(conn: Any, props: PostgresProperties, tables: list[tuple[str, str]]) -> None:
    with conn.cursor() as cur:
        for schema, table in tables:
            cur.execute("SELECT has_table_privilege(%s, 'SELECT')",
                        (sql.Identifier(schema, table).as_string(conn),))
            if not cur.fetchone()[0]:
                raise PrerequisiteError(f"role {props.user} has no SELECT privilege on {schema}.{table} "
                                        f"(GRANT SELECT ON {schema}.{table} TO {props.user})")


def check_signal_table(conn: Any, props: PostgresProperties) -> None:
    """signal.data.collection names a table with at least the three columns id, type, data (in that order), which
    the connector's user can insert into (watermarks)."""
    if not props.signal_data_collection:
        return
    schema, _, table = props.signal_data_collection.partition(".")
    with conn.cursor() as cur:
        cur.execute("SELECT count(*), bool_and(has_table_privilege(format('%%I.%%I', %s, %s), 'INSERT')) "
                    "FROM information_schema.columns WHERE table_schema = %s AND table_name = %s",
                    (schema, table, schema, table))
        columns, can_insert = cur.fetchone()
    if columns < 3:
        raise PrerequisiteError(f"signal.data.collection {props.signal_data_collection}: the table does not exist or "
                                "has fewer than 3 columns; create it: CREATE TABLE "
                                f"{props.signal_data_collection} (id varchar(42) PRIMARY KEY, type varchar(32) NOT "
                                "NULL, data varchar(2048))")
    if not can_insert:
        raise PrerequisiteError(f"signal.data.collection {props.signal_data_collection}: {props.user} may not insert "
                                "into it (the incremental snapshot writes its watermarks there): GRANT INSERT")


def check_publication(conn: Any, props: PostgresProperties, tables: list[tuple[str, str]]) -> str:
    """What ensure_publication will find or do, without doing it: raises where it would fail. What it would
    create or change is followed by a warning when the application's writes would suffer from it."""
    name = props.publication_name
    exists = publication_exists(conn, name)
    mode = props.publication_autocreate_mode
    if mode == "disabled" and not exists:
        raise PrerequisiteError(f"publication {name} does not exist and publication.autocreate.mode is "
                                f"disabled (CREATE PUBLICATION {name} FOR ALL TABLES)")
    if mode == "filtered" and not tables:
        raise PrerequisiteError(f"publication.autocreate.mode=filtered but no table matches the filters "
                                f"in database {props.dbname}")
    if mode == "filtered":
        text = f"publication {name} will be {'set to' if exists else 'created for'} the {len(tables)} table(s)"
        return text + identity_warning(conn, tables)
    if exists:
        return f"publication {name} exists"
    return f"publication {name} will be created FOR ALL TABLES" + identity_warning(conn, None)


def identity_warning(conn: Any, tables: list[tuple[str, str]] | None) -> str:
    """"; WARNING: ..." naming the tables (of `tables`, or every table of the database) whose UPDATE and DELETE
    the server refuses once a publication publishes them: no replica identity (REPLICA IDENTITY NOTHING, or
    DEFAULT without a primary key); "" when there are none."""
    with conn.cursor() as cur:
        cur.execute("SELECT n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                    "WHERE c.relkind IN ('r', 'p') AND n.nspname NOT IN ('pg_catalog', 'information_schema') "
                    "AND n.nspname NOT LIKE 'pg_toast%' AND (c.relreplident = 'n' OR (c.relreplident = 'd' AND "
                    "NOT EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = c.oid AND i.indisprimary))) "
                    "ORDER BY 1, 2")
        found = [(s, t) for s, t in cur.fetchall() if tables is None or (s, t) in tables]
    if not found:
        return ""
    names = ", ".join(f"{s}.{t}" for s, t in found[:5]) + (f" and {len(found) - 5} more" if len(found) > 5 else "")
    return (f"; WARNING: UPDATE and DELETE on {len(found)} table(s) without a replica identity ({names}) will fail "
            f"in the application once the publication includes them: give them a primary key or REPLICA IDENTITY "
            f"FULL, or leave them out (publication.autocreate.mode=filtered and table.include.list)")


def ensure_publication(conn: Any, props: PostgresProperties, tables: list[tuple[str, str]]) -> None:
    """publication.autocreate.mode: all_tables (FOR ALL TABLES), filtered (the captured tables, kept in
    sync on every start), disabled (must exist)."""
    checked = check_publication(conn, props, tables)
    if "; WARNING: " in checked:
        log.warning("%s", checked.split("; WARNING: ", 1)[1])
    name = props.publication_name
    exists = publication_exists(conn, name)
    mode = props.publication_autocreate_mode
    if mode == "disabled":
        return
    try:
        with conn.cursor() as cur:
            if mode == "all_tables" and not exists:
                cur.execute(sql.SQL("CREATE PUBLICATION {} FOR ALL TABLES").format(sql.Identifier(name)))
            elif mode == "filtered":
                listed = sql.SQL(", ").join(sql.Identifier(s, t) for s, t in tables)
                verb = "ALTER PUBLICATION {} SET TABLE " if exists else "CREATE PUBLICATION {} FOR TABLE "
                cur.execute(sql.SQL(verb).format(sql.Identifier(name)) + listed)
    except psycopg2.errors.InsufficientPrivilege as exc:
        raise PrerequisiteError(f"cannot create publication {name} as {props.user} ({_first_line(exc)}); "
                                f"create it as a superuser or owner of the tables") from None


def drop_slot(conn: Any, slot: str) -> None:
    with conn.cursor() as cur:
        cur.execute("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = %s "
                    "AND NOT active", (slot,))


# Seconds before a slot creation that has not returned says what it waits for, and between its later reminders.
SLOT_WAIT_NOTICE_AFTER_S = 10.0
SLOT_WAIT_NOTICE_EVERY_S = 60.0


def transactions_holding_xids(conn: Any) -> list[str]:
    """The server's open transactions that hold a transaction id, oldest first, one description each: a new
    logical slot cannot be created until every one of them has ended (in any database of the server).
    Transactions of other roles are visible only to a role with pg_read_all_stats (or a superuser)."""
    with conn.cursor() as cur:
        cur.execute("SELECT pid, datname, usename, application_name, state, "
                    "extract(epoch FROM now() - xact_start)::bigint FROM pg_stat_activity "
                    "WHERE backend_xid IS NOT NULL AND pid <> pg_backend_pid() ORDER BY xact_start")
        open_rows = cur.fetchall()
        cur.execute("SELECT gid, database, extract(epoch FROM now() - prepared)::bigint FROM pg_prepared_xacts "
                    "ORDER BY prepared")
        prepared_rows = cur.fetchall()
    return ([f"pid {pid} (database {db}, user {user}, application '{app}', {state}, open {age} s)"
             for pid, db, user, app, state, age in open_rows]
            + [f"prepared transaction '{gid}' (database {db}, prepared {age} s ago; COMMIT PREPARED or "
               f"ROLLBACK PREPARED ends it)" for gid, db, age in prepared_rows])


@contextmanager
def slot_wait_notices(props: PostgresProperties, creating_pid: int) -> Iterator[None]:
    """Around a slot creation by the server process `creating_pid`: PostgreSQL creates a logical slot only once
    every transaction holding a transaction id has ended, and says nothing while it waits (an idle-in-transaction
    session left by an application can hold it up for hours). If the creation has not returned after
    SLOT_WAIT_NOTICE_AFTER_S, a warning names the transactions it waits for and how to give up (Ctrl-C cannot
    reach a run blocked in the server's reply), repeated every SLOT_WAIT_NOTICE_EVERY_S."""
    done = threading.Event()

    def notify() -> None:
        if done.wait(SLOT_WAIT_NOTICE_AFTER_S):
            return
        conn = None
        try:
            conn = connect(props)
            while not done.is_set():
                waits_for = transactions_holding_xids(conn)
                give_up = f"to give up instead, SELECT pg_cancel_backend({creating_pid})"
                if waits_for:
                    log.warning("creating replication slot %s waits for %d open transaction(s) on the server "
                                "to end: %s; %s", props.slot_name, len(waits_for), "; ".join(waits_for), give_up)
                else:
                    log.warning("creating replication slot %s waits for open transactions on the server to end; "
                                "none is visible to %s (a role with pg_read_all_stats sees them); %s",
                                props.slot_name, props.user, give_up)
                done.wait(SLOT_WAIT_NOTICE_EVERY_S)
        except (LakecdcError, psycopg2.Error) as exc:  # a notice only: the creation itself goes on
            log.debug("cannot list the transactions a slot creation waits for: %s", exc)
        finally:
            if conn is not None:
                conn.close()

    watcher = threading.Thread(target=notify, name=f"slot-wait-{props.slot_name}", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        done.set()
        watcher.join(timeout=SLOT_WAIT_NOTICE_AFTER_S)  # at most its query in flight
