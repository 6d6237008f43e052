"""Server restarts during streaming: on a private PostgreSQL (wal_level=logical; the shared server must
never be restarted) the connector streams into bronze (connector.batches() -> BronzeWriter.write ->
acknowledge, as the runner does) while a workload keeps committing and retries through the outages; the
server is restarted once with `-m fast` (clean shutdown) and once with `-m immediate` (a crash, recovery
from WAL). Every committed transaction must land exactly once and bronze must replay to the source state.

The workload makes each transaction checkable: it changes table `t` (insert of a fresh key, update setting
v to the transaction's number, or delete) and records the change in `ops` (id = transaction number) in the
same transaction, so `ops` in the source lists exactly the committed transactions, whatever happened to
the commits that failed during an outage."""

from __future__ import annotations

import json
import logging
import random
import threading
import time
from collections import Counter
from pathlib import Path

import psycopg2
import pytest

from ingest.bronze.contract import BatchLimits
from ingest.config import EngineSettings, SourceSettings
from ingest.connectors.postgres import PostgresConnector
from tests.support.pg import PrivateServer, assert_same_rows, private_server, query

pytestmark = pytest.mark.integration

SOURCE = "pgconn_restart"
PLACEHOLDER = "__debezium_unavailable_value"


class Workload(threading.Thread):
    """Small transactions until stopped; on a lost connection it reconnects (retrying while the server is
    down) and re-reads the live keys, since a commit that failed may or may not have happened."""

    def __init__(self, dsn: str) -> None:
        super().__init__(daemon=True)
        self.dsn = dsn
        self.rng = random.Random(11)
        self.stop_flag = threading.Event()
        self.attempted = 0
        self.outages = 0
        self.error: BaseException | None = None

    def _connect(self):
        while not self.stop_flag.is_set():
            try:
                conn = psycopg2.connect(self.dsn, connect_timeout=2)
                with conn.cursor() as cur:
                    cur.execute("SELECT k FROM rs.t")
                    keys = [k for (k,) in cur.fetchall()]
                conn.commit()
                return conn, keys
            except psycopg2.OperationalError:
                time.sleep(0.05)
        return None, []

    def run(self) -> None:
        try:
            conn, keys = self._connect()
            n = 1000
            while not self.stop_flag.is_set():
                n += 1
                self.attempted += 1
                try:
                    with conn.cursor() as cur:
                        r = self.rng.random()
                        if r < 0.4 or len(keys) < 20:
                            kind, k = "c", n
                            cur.execute("INSERT INTO rs.t VALUES (%s, %s)", (k, n))
                        elif r < 0.8:
                            kind, k = "u", self.rng.choice(keys)
                            cur.execute("UPDATE rs.t SET v = %s WHERE k = %s", (n, k))
                        else:
                            kind, k = "d", self.rng.choice(keys)
                            cur.execute("DELETE FROM rs.t WHERE k = %s", (k,))
                        assert cur.rowcount == 1, (kind, k)
                        cur.execute("INSERT INTO rs.ops VALUES (%s, %s, %s)", (n, kind, k))
                    conn.commit()
                    if kind == "c":
                        keys.append(k)
                    elif kind == "d":
                        keys.remove(k)
                except (psycopg2.OperationalError, psycopg2.InterfaceError):
                    self.outages += 1
                    conn.close()
                    conn, keys = self._connect()
                time.sleep(0.003)
            if conn is not None:
                conn.close()
        except BaseException as exc:  # surfaced by the test
            self.error = exc


def make_connector(server: PrivateServer) -> PostgresConnector:
    return PostgresConnector(SourceSettings(SOURCE, "postgresql", {
        "database.hostname": "127.0.0.1", "database.port": server.port, "database.user": "postgres",
        "database.dbname": "postgres", "topic.prefix": "restart", "slot.name": SOURCE, "publication.name": SOURCE,
        "table.include.list": "rs\\..*", "poll.interval.ms": 50, "slot.retry.delay.ms": 200,
        "slot.max.retries": 12, "status.update.interval.ms": 1000}))


def bronze_events(warehouse: Path) -> list[dict]:
    from deltalake import DeltaTable

    table = DeltaTable(str(warehouse / "bronze" / f"{SOURCE}_events"))
    return table.to_pyarrow_table(columns=["seq", "table_id", "op", "key", "value", "txn_id"]).to_pylist()


def replay(events: list[dict]) -> dict[str, dict[str, dict]]:
    state: dict[str, dict[str, dict]] = {}
    for e in sorted(events, key=lambda e: e["seq"]):
        rows = state.setdefault(e["table_id"].split(".")[-1], {})
        if e["op"] in ("r", "c", "u"):
            rows[e["key"]] = json.loads(e["value"])["after"]
        elif e["op"] == "d":
            rows.pop(e["key"], None)
    return state


def source_rows(dsn: str) -> dict[str, dict[str, dict]]:
    return {
        "t": {json.dumps({"k": k}, separators=(",", ":")): {"k": k, "v": v}
              for k, v in query(dsn, "SELECT k, v FROM rs.t")},
        "ops": {json.dumps({"id": i}, separators=(",", ":")): {"id": i, "kind": kind, "k": k}
                for i, kind, k in query(dsn, "SELECT id, kind, k FROM rs.ops")},
    }


def test_server_restart_fast_and_crash_during_streaming(engine, engine_settings: EngineSettings, warehouse: Path,
                                                         caplog: pytest.LogCaptureFixture) -> None:
    from ingest.bronze.writer import BronzeWriter

    caplog.set_level(logging.WARNING, logger="ingest.connectors.postgres.connector")

    with private_server("logical") as server:
        dsn = server.dsn
        conn = psycopg2.connect(dsn)
        conn.autocommit = True
        with conn.cursor() as cur:
            cur.execute("CREATE SCHEMA rs")
            cur.execute("CREATE TABLE rs.t (k int PRIMARY KEY, v int NOT NULL)")
            cur.execute("CREATE TABLE rs.ops (id int PRIMARY KEY, kind text NOT NULL, k int NOT NULL)")
            cur.execute("INSERT INTO rs.t SELECT g, g FROM generate_series(1, 100) g")
        conn.close()

        writer = BronzeWriter(engine.spark, engine_settings, SOURCE)
        connector = make_connector(server)
        workload = Workload(dsn)
        restarts: list[str] = []
        restarter_error: list[BaseException] = []

        def restarter() -> None:
            try:
                for mode in ("fast", "immediate"):
                    time.sleep(2.0)
                    server.restart(mode)
                    restarts.append(mode)
                time.sleep(2.0)
            except BaseException as exc:  # surfaced by the test
                restarter_error.append(exc)
            finally:
                workload.stop_flag.set()

        thread = threading.Thread(target=restarter, daemon=True)
        streamed = 0
        deadline = time.monotonic() + 45
        try:
            for batch in connector.batches(writer.resume_state(), BatchLimits(max_events=2000, max_seconds=0.5)):
                writer.write(batch)
                connector.acknowledge(batch)
                streamed += sum(1 for e in batch.events if e.op in ("c", "u", "d"))
                if batch.caught_up and not thread.is_alive() and not workload.is_alive():
                    if not workload.ident:  # snapshot done and streaming: start the workload and the restarts
                        workload.start()
                        thread.start()
                        continue
                    ops = query(dsn, "SELECT count(*) FROM rs.ops")[0][0]
                    landed = sum(1 for e in bronze_events(warehouse) if e["table_id"].endswith(".ops"))
                    if landed >= ops:
                        break
                assert time.monotonic() < deadline, f"timed out: restarts {restarts}, {streamed} changes streamed"
        finally:
            workload.stop_flag.set()
            connector.close()

        assert workload.error is None, workload.error
        assert not restarter_error, restarter_error
        assert restarts == ["fast", "immediate"]
        assert workload.outages >= 2  # the workload really saw both outages
        lost = [r for r in caplog.records if r.getMessage().startswith("replication connection lost")]
        assert len(lost) >= 2, [r.getMessage() for r in caplog.records]  # and so did the connector, streaming

        events = bronze_events(warehouse)
        seqs = [e["seq"] for e in events]
        assert len(seqs) == len(set(seqs)), "a seq landed twice"
        source = source_rows(dsn)
        committed = {row["id"]: row for row in source["ops"].values()}
        assert len(committed) > 200
        assert workload.attempted >= len(committed)

        # every committed transaction exactly once: its ops insert and its change of t, in one transaction
        ops_events = [e for e in events if e["table_id"].endswith(".ops")]
        landed = Counter(json.loads(e["key"])["id"] for e in ops_events)
        lost = sorted(set(committed) - set(landed))[:10]
        twice = sorted(i for i, n in landed.items() if n > 1)[:10]
        phantom = sorted(set(landed) - set(committed))[:10]
        assert not (lost or twice or phantom), f"lost {lost}, landed twice {twice}, never committed {phantom}"
        assert all(e["op"] == "c" for e in ops_events)
        txn_of = {json.loads(e["key"])["id"]: e["txn_id"] for e in ops_events}
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

        # bronze replays to the source state
        state = replay(events)
        for table in ("t", "ops"):
            assert_same_rows(state.get(table, {}), source[table])
