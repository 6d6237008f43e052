"""The connector family suite's parts (tests/integration/connectors/test_connector_family.py): what every
connector that runs here must do the same way, written once; each `FamilyMember` says how its database does
the few things that differ (start a private server, restart or crash it, qualify a table, take a privilege
away, turn the change log off).

The workload makes each transaction checkable: it changes table `t` (insert of a fresh key, update setting
v to the transaction's number, or delete) and records the change in `ops` (id = transaction number) in the
same transaction, so `ops` in the source lists exactly the committed transactions, whatever happened to the
commits that failed during an outage."""

from __future__ import annotations

import json
import random
import threading
import time
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

import psycopg2
import pymysql

from ingest.bronze.contract import BatchLimits
from ingest.config import SourceSettings
from ingest.connectors.base import SourceConnector
from ingest.connectors.mysql import MySqlConnector
from ingest.connectors.postgres import PostgresConnector
from tests.support import mariadb
from tests.support.pg import assert_same_rows, private_server

SCHEMA = "family"          # PostgreSQL schema / MariaDB database of the captured tables
NO_REPLICATION = "family_norepl"


class FamilyMember(ABC):
    """One connector as the family suite drives it, on a private server of its own."""

    name: str
    restart_modes: tuple[str, str]   # a clean restart, then a crash (recovery at the next start)
    lost_message: str                # the start of the WARNING the connector logs when its stream drops
    limits: BatchLimits
    connection_errors: tuple[type[BaseException], ...]

    @abstractmethod
    def private_server(self) -> AbstractContextManager[Any]: ...

    @abstractmethod
    def connect(self, server: Any) -> Any:
        """A DB-API connection as the server's superuser, autocommit off."""

    @abstractmethod
    def make_connector(self, server: Any, source: str, **overrides: Any) -> SourceConnector: ...

    @abstractmethod
    def restart(self, server: Any, mode: str) -> None: ...

    @abstractmethod
    def create_user_without_replication(self, server: Any) -> dict[str, str]:
        """Creates a login that may read tables but not the change log; the connector properties to use it."""

    @abstractmethod
    def no_replication_error(self) -> str:
        """The connector's one-line error for that login."""

    @abstractmethod
    def change_log_off(self, server: Any) -> AbstractContextManager[str]:
        """Turns the change log off (or to a format the connector cannot read) for the duration; yields the
        words the connector's error must contain."""

    def execute(self, server: Any, *statements: str) -> None:
        conn = self.connect(server)
        try:
            with conn.cursor() as cur:
                for statement in statements:
                    cur.execute(statement)
            conn.commit()
        finally:
            conn.close()

    def query(self, server: Any, statement: str) -> list[tuple]:
        conn = self.connect(server)
        try:
            with conn.cursor() as cur:
                cur.execute(statement)
                return list(cur.fetchall())
        finally:
            conn.close()


class PostgresMember(FamilyMember):
    name = "postgresql"
    restart_modes = ("fast", "immediate")
    lost_message = "replication connection lost"
    limits = BatchLimits(max_events=2000, max_seconds=0.5)
    connection_errors = (psycopg2.OperationalError, psycopg2.InterfaceError)

    def private_server(self) -> AbstractContextManager[Any]:
        return private_server("logical")

    def connect(self, server: Any) -> Any:
        return psycopg2.connect(server.dsn, connect_timeout=2)

    def make_connector(self, server: Any, source: str, **overrides: Any) -> SourceConnector:
        return PostgresConnector(SourceSettings(source, "postgresql", {
            "database.hostname": "127.0.0.1", "database.port": server.port, "database.user": "postgres",
            "database.dbname": "postgres", "topic.prefix": source, "slot.name": source, "publication.name": source,
            "table.include.list": f"{SCHEMA}\\..*", "poll.interval.ms": 50, "slot.retry.delay.ms": 200,
            "slot.max.retries": 12, "status.update.interval.ms": 1000, **overrides}))

    def restart(self, server: Any, mode: str) -> None:
        server.restart(mode)

    def create_user_without_replication(self, server: Any) -> dict[str, str]:
        self.execute(server, f"CREATE ROLE {NO_REPLICATION} LOGIN")
        return {"database.user": NO_REPLICATION}

    def no_replication_error(self) -> str:
        return f"role {NO_REPLICATION} has no REPLICATION attribute (ALTER ROLE {NO_REPLICATION} WITH REPLICATION)"

    @contextmanager
    def change_log_off(self, server: Any) -> Iterator[str]:
        logical = server.options
        server.options = logical.replace("wal_level=logical", "wal_level=replica")
        server.restart("fast")
        try:
            yield ("wal_level is 'replica': logical decoding needs wal_level=logical "
                   "(set it in postgresql.conf and restart the server)")
        finally:
            server.options = logical
            server.restart("fast")


class MariaDbMember(FamilyMember):
    name = "mariadb"
    restart_modes = ("clean", "kill")
    lost_message = "binlog connection lost"
    limits = BatchLimits(max_events=40, max_seconds=0.2)   # small batches: resumes inside transactions
    connection_errors = (pymysql.err.OperationalError, pymysql.err.InterfaceError)

    def private_server(self) -> AbstractContextManager[Any]:
        return mariadb.private_mariadb()

    def connect(self, server: Any) -> Any:
        return pymysql.connect(**server.params, connect_timeout=2, autocommit=False)

    def make_connector(self, server: Any, source: str, **overrides: Any) -> SourceConnector:
        return MySqlConnector(SourceSettings(source, "mariadb", {
            "database.hostname": "127.0.0.1", "database.port": server.port, "database.user": "root",
            "database.password": "", "database.server.id": 330_001, "topic.prefix": source,
            "database.include.list": SCHEMA, "reconnect.backoff.initial.ms": 100, "reconnect.backoff.max.ms": 800,
            "reconnect.max.attempts": 40, "provide.transaction.metadata": True, **overrides}))

    def restart(self, server: Any, mode: str) -> None:
        server.restart(mode)

    def create_user_without_replication(self, server: Any) -> dict[str, str]:
        self.execute(server, f"CREATE USER {NO_REPLICATION}@'%' IDENTIFIED BY 'family-secret'",
                     f"GRANT SELECT, RELOAD, SHOW DATABASES, LOCK TABLES ON *.* TO {NO_REPLICATION}@'%'")
        return {"database.user": NO_REPLICATION, "database.password": "family-secret"}

    def no_replication_error(self) -> str:
        return (f"mariadb user '{NO_REPLICATION}' cannot read the binary log: it lacks REPLICATION SLAVE, "
                f"BINLOG MONITOR (GRANT REPLICATION SLAVE, BINLOG MONITOR ON *.* TO '{NO_REPLICATION}'@'%')")

    @contextmanager
    def change_log_off(self, server: Any) -> Iterator[str]:
        self.execute(server, "SET GLOBAL binlog_format = 'STATEMENT'")
        try:
            yield "binlog_format is 'STATEMENT': set binlog_format=ROW"
        finally:
            self.execute(server, "SET GLOBAL binlog_format = 'ROW'")


MEMBERS: dict[str, FamilyMember] = {m.name: m for m in (PostgresMember(), MariaDbMember())}


class Workload(threading.Thread):
    """Small transactions until stopped; on a lost connection it reconnects (retrying while the server is
    down) and re-reads the live keys and the last committed transaction number, since a commit that failed
    may or may not have happened."""

    def __init__(self, member: FamilyMember, server: Any) -> None:
        super().__init__(daemon=True)
        self.member, self.server = member, server
        self.rng = random.Random(11)
        self.stop_flag = threading.Event()
        self.attempted = 0
        self.outages = 0
        self.error: BaseException | None = None

    def _connect(self) -> tuple[Any, list[int], int]:
        while not self.stop_flag.is_set():
            try:
                conn = self.member.connect(self.server)
                with conn.cursor() as cur:
                    cur.execute(f"SELECT k FROM {SCHEMA}.t")
                    keys = [k for (k,) in cur.fetchall()]
                    cur.execute(f"SELECT coalesce(max(id), 1000) FROM {SCHEMA}.ops")
                    last = cur.fetchone()[0]
                conn.commit()
                return conn, keys, last
            except self.member.connection_errors:
                time.sleep(0.05)
        return None, [], 0

    def run(self) -> None:
        try:
            conn, keys, n = self._connect()
            while not self.stop_flag.is_set():
                n += 1
                self.attempted += 1
                try:
                    with conn.cursor() as cur:
                        r = self.rng.random()
                        if r < 0.4 or len(keys) < 20:
                            kind, k = "c", n
                            cur.execute(f"INSERT INTO {SCHEMA}.t VALUES (%s, %s)", (k, n))
                        elif r < 0.8:
                            kind, k = "u", self.rng.choice(keys)
                            cur.execute(f"UPDATE {SCHEMA}.t SET v = %s WHERE k = %s", (n, k))
                        else:
                            kind, k = "d", self.rng.choice(keys)
                            cur.execute(f"DELETE FROM {SCHEMA}.t WHERE k = %s", (k,))
                        assert cur.rowcount == 1, (kind, k)
                        cur.execute(f"INSERT INTO {SCHEMA}.ops VALUES (%s, %s, %s)", (n, kind, k))
                    conn.commit()
                    if kind == "c":
                        keys.append(k)
                    elif kind == "d":
                        keys.remove(k)
                except self.member.connection_errors:
                    self.outages += 1
                    try:
                        conn.close()
                    except Exception:  # noqa: BLE001 - the connection is gone either way
                        pass
                    conn, keys, n = self._connect()  # numbers go on after the highest committed one
                time.sleep(0.003)
            if conn is not None:
                conn.close()
        except BaseException as exc:  # surfaced by the test
            self.error = exc


def create_tables(member: FamilyMember, server: Any) -> None:
    """t with 100 rows, and the empty ops log."""
    member.execute(server, f"CREATE SCHEMA {SCHEMA}",
                   f"CREATE TABLE {SCHEMA}.t (k INT PRIMARY KEY, v INT NOT NULL)",
                   f"CREATE TABLE {SCHEMA}.ops (id INT PRIMARY KEY, kind CHAR(1) NOT NULL, k INT NOT NULL)",
                   f"INSERT INTO {SCHEMA}.t VALUES " + ",".join(f"({i}, {i})" for i in range(1, 101)))


def bronze_events(warehouse: Path, source: str) -> list[dict]:
    from deltalake import DeltaTable

    table = DeltaTable(str(warehouse / "bronze" / f"{source}_events"))
    return table.to_pyarrow_table(columns=["seq", "table_id", "op", "key", "value", "txn_id"]).to_pylist()


def replay(events: list[dict]) -> dict[str, dict[str, dict]]:
    """Bronze rows applied in seq order: table name -> {key JSON -> after row}."""
    state: dict[str, dict[str, dict]] = {}
    for e in sorted(events, key=lambda e: e["seq"]):
        rows = state.setdefault(e["table_id"].split(".")[-1], {})
        if e["op"] in ("r", "c", "u"):
            rows[e["key"]] = json.loads(e["value"])["after"]
        elif e["op"] == "d":
            rows.pop(e["key"], None)
    return state


def source_rows(member: FamilyMember, server: Any) -> dict[str, dict[str, dict]]:
    return {
        "t": {json.dumps({"k": k}, separators=(",", ":")): {"k": k, "v": v}
              for k, v in member.query(server, f"SELECT k, v FROM {SCHEMA}.t")},
        "ops": {json.dumps({"id": i}, separators=(",", ":")): {"id": i, "kind": kind, "k": k}
                for i, kind, k in member.query(server, f"SELECT id, kind, k FROM {SCHEMA}.ops")},
    }


def assert_each_commit_landed_once(events: list[dict], source: dict[str, dict[str, dict]]) -> int:
    """Every committed transaction exactly once (its ops insert and its change of t, in one transaction), no
    seq twice, and bronze replays to the source state. Returns the number of committed transactions."""
    seqs = [e["seq"] for e in events]
    assert len(seqs) == len(set(seqs)), "a seq landed twice"
    committed = {row["id"]: row for row in source["ops"].values()}
    ops_events = [e for e in events if e["table_id"].endswith(".ops")]
    landed = Counter(json.loads(e["key"])["id"] for e in ops_events)
    missing = sorted(set(committed) - set(landed))[:10]
    twice = sorted(i for i, n in landed.items() if n > 1)[:10]
    phantom = sorted(set(landed) - set(committed))[:10]
    assert not (missing or twice or phantom), f"lost {missing}, landed twice {twice}, never committed {phantom}"
    assert all(e["op"] == "c" for e in ops_events)
    txn_of = {json.loads(e["key"])["id"]: e["txn_id"] for e in ops_events}
    assert all(txn_of.values()), "a streamed change without its transaction id"
    t_events = [e for e in events if e["table_id"].endswith(".t") and e["op"] in ("c", "u", "d")]
    by_txn: dict[str, list[dict]] = {}
    for e in t_events:
        by_txn.setdefault(e["txn_id"], []).append(e)
    for op_id, row in committed.items():
        changes = by_txn.get(txn_of[op_id], [])
        assert [(c["op"], json.loads(c["key"])["k"]) for c in changes] == [(row["kind"], row["k"])], (op_id, row)
        if row["kind"] != "d":
            assert json.loads(changes[0]["value"])["after"]["v"] == op_id
    assert len(t_events) == len(committed)  # no change of t outside a committed transaction
    state = replay(events)
    for table in ("t", "ops"):
        assert_same_rows(state.get(table, {}), source[table])
    return len(committed)
