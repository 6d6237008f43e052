"""Helpers shared by the PostgreSQL connector tests (own database pgconn_test, slots and publications
prefixed pgconn_)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg2
import pytest

from ingest.bronze.contract import Batch, BatchLimits, ResumeState
from ingest.config import SourceSettings
from ingest.connectors.postgres import PostgresConnector

DB = "pgconn_test"


def admin_dsn(pg_dsn: str, dbname: str = "postgres") -> str:
    parts = [p for p in pg_dsn.split() if not p.startswith("dbname=")]
    return " ".join(parts + [f"dbname={dbname}"])


def dsn_params(pg_dsn: str) -> dict[str, Any]:
    params = dict(p.split("=", 1) for p in pg_dsn.split())
    return {"host": params.get("host", "127.0.0.1"), "port": int(params.get("port", 5432)),
            "user": params.get("user", "postgres"), "password": params.get("password", "")}


def ensure_database(pg_dsn: str) -> str:
    """Create pgconn_test once (extensions citext, ltree, hstore in it); returns its DSN."""
    conn = psycopg2.connect(admin_dsn(pg_dsn))
    conn.autocommit = True
    with conn.cursor() as cur:
        cur.execute("SELECT 1 FROM pg_database WHERE datname = %s", (DB,))
        if cur.fetchone() is None:
            cur.execute(f"CREATE DATABASE {DB}")
    conn.close()
    dsn = admin_dsn(pg_dsn, DB)
    conn = psycopg2.connect(dsn)
    conn.autocommit = True
    with conn.cursor() as cur:
        for ext in ("citext", "ltree", "hstore"):
            cur.execute(f"CREATE EXTENSION IF NOT EXISTS {ext}")
    conn.close()
    return dsn


def execute(dsn: str, *statements: str) -> None:
    conn = psycopg2.connect(dsn)
    conn.autocommit = True
    with conn.cursor() as cur:
        for statement in statements:
            cur.execute(statement)
    conn.close()


def query(dsn: str, statement: str) -> list[tuple]:
    conn = psycopg2.connect(dsn)
    conn.autocommit = True
    with conn.cursor() as cur:
        cur.execute(statement)
        rows = cur.fetchall()
    conn.close()
    return rows


def drop_slot_and_publication(dsn: str, slot: str, publication: str) -> None:
    execute(dsn,
            f"SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE slot_name = '{slot}' "
            f"AND active_pid IS NOT NULL",
            f"DROP PUBLICATION IF EXISTS {publication}")
    for _ in range(50):
        rows = query(dsn, f"SELECT active FROM pg_replication_slots WHERE slot_name = '{slot}'")
        if not rows:
            return
        if not rows[0][0]:
            execute(dsn, f"SELECT pg_drop_replication_slot('{slot}')")
            return
        time.sleep(0.1)


PGBIN = Path("/usr/lib/postgresql/15/bin")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class PrivateServer:
    """A throwaway PostgreSQL 15 of a test's own (the shared server must never be reconfigured or restarted)."""

    root: Path
    port: int
    options: str

    @property
    def data(self) -> Path:
        return self.root / "data"

    @property
    def dsn(self) -> str:
        return f"host=127.0.0.1 port={self.port} user=postgres dbname=postgres"

    def pg_ctl(self, *args: str) -> None:
        run_as = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        subprocess.run(run_as + [str(PGBIN / "pg_ctl"), "-D", str(self.data), "-l", str(self.root / "log"), *args],
                       check=True, capture_output=True, timeout=60)

    def start(self) -> None:
        self.pg_ctl("-w", "start", "-o", self.options)

    def restart(self, mode: str) -> None:
        """`fast` (clean shutdown) or `immediate` (a crash: recovery from WAL at the next start)."""
        self.pg_ctl("-w", "-m", mode, "restart", "-o", self.options)


@contextmanager
def private_server(wal_level: str) -> Iterator[PrivateServer]:
    """initdb + start a private server on a free port (trust auth, fsync off); stopped and removed afterwards."""
    if not (PGBIN / "initdb").exists():
        pytest.fail(f"PostgreSQL server binaries not found in {PGBIN}")
    root = Path(tempfile.mkdtemp(prefix="pgconn_private_", dir="/tmp"))
    os.chmod(root, 0o777)
    run_as = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    subprocess.run(run_as + [str(PGBIN / "initdb"), "-D", str(root / "data"), "-U", "postgres", "-A", "trust",
                             "-E", "UTF8", "--no-sync"], check=True, capture_output=True)
    port = free_port()
    server = PrivateServer(root, port, f"-c listen_addresses=127.0.0.1 -p {port} -k {root} "
                                       f"-c wal_level={wal_level} -c fsync=off")
    server.start()
    try:
        yield server
    finally:
        subprocess.run(run_as + [str(PGBIN / "pg_ctl"), "-D", str(server.data), "-m", "immediate", "stop"],
                       capture_output=True)
        shutil.rmtree(root, ignore_errors=True)


def connector(pg_dsn: str, name: str, schema: str, **overrides: Any) -> PostgresConnector:
    """A connector on pgconn_test capturing one schema, with its own slot and publication pgconn_<name>."""
    params = dsn_params(pg_dsn)
    props: dict[str, Any] = {
        "database.hostname": params["host"], "database.port": params["port"], "database.user": params["user"],
        "database.password": params["password"], "database.dbname": DB, "topic.prefix": name,
        "slot.name": f"pgconn_{name}", "publication.name": f"pgconn_{name}",
        "publication.autocreate.mode": "filtered", "table.include.list": f"{schema}\\..*",
        "poll.interval.ms": 50, "slot.retry.delay.ms": 100,
    }
    props.update(overrides)
    return PostgresConnector(SourceSettings(name, "postgresql", props))


class Collector:
    """Drives connector.batches() like the runner: 'commits' each batch in memory, then acknowledges it."""

    def __init__(self, conn: PostgresConnector, resume: ResumeState | None = None,
                 limits: BatchLimits | None = None) -> None:
        self.conn = conn
        self.batches: list[Batch] = []
        self.iterator = conn.batches(resume or ResumeState(), limits or BatchLimits(max_events=500, max_seconds=1))

    @property
    def events(self) -> list:
        return [e for b in self.batches for e in b.all_events()]

    @property
    def schema_changes(self) -> list:
        return [s for b in self.batches for s in b.schema_changes]

    def run(self, until: Callable[[Collector], bool] = lambda c: True, timeout: float = 30.0) -> Collector:
        """Consume batches until caught up and `until(self)` holds."""
        deadline = time.monotonic() + timeout
        for batch in self.iterator:
            self.batches.append(batch)
            self.conn.acknowledge(batch)
            if batch.caught_up and until(self):
                return self
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out; {len(self.events)} events so far")
        return self

    def resume_state(self) -> ResumeState:
        """What the bronze writer would read back: the highest committed seq and its position."""
        events = self.events
        if not events:
            return ResumeState()
        last = max(events, key=lambda e: e.seq)
        return ResumeState(last_seq=last.seq, position=json.loads(last.position))


def replay(events: list) -> dict[str, dict[str, dict]]:
    """Apply events in seq order: table_id -> {key JSON -> after row}, the way silver would."""
    state: dict[str, dict[str, dict]] = {}
    for e in sorted(events, key=lambda e: e.seq):
        rows = state.setdefault(e.table_id, {})
        if e.op in ("r", "c", "u"):
            value = json.loads(e.value)
            after = value["after"]
            previous = rows.get(e.key, {})
            rows[e.key] = {k: (previous.get(k) if v == "__debezium_unavailable_value" else v)
                           for k, v in after.items()}
        elif e.op == "d":
            rows.pop(e.key, None)
        elif e.op == "t":
            rows.clear()
    return state


def assert_same_rows(state: dict[str, dict], source: dict[str, dict]) -> None:
    """Compare replayed rows with source rows, reporting only a few differences (pytest's own diff of
    big dicts is very slow)."""
    missing = sorted(set(source) - set(state))[:5]
    extra = sorted(set(state) - set(source))[:5]
    differ = [(k, state[k], source[k]) for k in sorted(set(state) & set(source)) if state[k] != source[k]][:5]
    assert not (missing or extra or differ), f"missing {missing}, extra {extra}, different {differ}"


def psycopg2_connect(params: dict[str, Any], factory: Any) -> Any:
    """A connection to pgconn_test of class `factory` (e.g. LogicalReplicationConnection), from dsn_params()."""
    return psycopg2.connect(host=params["host"], port=params["port"], user=params["user"],
                            password=params["password"], dbname=DB, connection_factory=factory)


