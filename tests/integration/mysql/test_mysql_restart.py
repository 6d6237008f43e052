"""MariaDB server restarts during binlog streaming: on a private MariaDB (the shared server on 53306 must never
be restarted; same settings as scripts/services.sh) the connector streams into bronze (connector.batches() ->
BronzeWriter.write -> acknowledge, as ingest.runner does) while a workload keeps committing and retries
through the outages; the server is stopped once cleanly (SIGTERM, shutdown) and once with kill -9 (crash
recovery at the next start). Every committed transaction must land exactly once and bronze must replay to
the source state.

The workload makes each transaction checkable: it changes table `t` (insert of a fresh key, update setting
v to the transaction's number, or delete) and records the change in `ops` (id = transaction number) in the
same transaction, so `ops` in the source lists exactly the committed transactions, whatever happened to
the commits that failed during an outage."""

from __future__ import annotations

import json
import logging
import os
import random
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pymysql
import pytest

from ingest.bronze.contract import BatchLimits
from ingest.config import EngineSettings, SourceSettings
from ingest.connectors.mysql import MySqlConnector
from tests.support.pg import free_port

pytestmark = [pytest.mark.integration, pytest.mark.slow]

SOURCE = "mysqlrestart"
DB = "mysqlrestart_rs"


class PrivateMariaDb:
    """A throwaway MariaDB of a test's own, started with scripts/services.sh's settings."""

    def __init__(self, root: Path, port: int) -> None:
        self.root, self.port = root, port
        self.proc: subprocess.Popen | None = None

    @property
    def params(self) -> dict:
        return {"host": "127.0.0.1", "port": self.port, "user": "root", "password": ""}

    def _args(self) -> list[str]:
        run_as = ["--user=mysql"] if os.geteuid() == 0 else []
        r = self.root
        return ["mariadbd", "--no-defaults", *run_as, f"--datadir={r}/data", "--bind-address=127.0.0.1",
                f"--port={self.port}", f"--socket={r}/mysqld.sock", f"--pid-file={r}/mysqld.pid",
                f"--log-error={r}/error.log", f"--log-bin={r}/data/binlog", "--binlog-format=ROW",
                "--binlog-row-image=FULL", "--binlog-row-metadata=FULL", "--binlog-annotate-row-events=ON",
                "--server-id=1", "--gtid-strict-mode=ON", "--log-slave-updates=ON", "--default-time-zone=+00:00",
                "--skip-name-resolve", "--innodb-buffer-pool-size=32M", "--innodb-log-file-size=16M",
                "--innodb-flush-log-at-trx-commit=2", "--sync-binlog=0", "--performance-schema=OFF"]

    def start(self) -> None:
        self.proc = subprocess.Popen(self._args(), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + 60
        while True:
            try:
                pymysql.connect(**self.params, connect_timeout=1).close()
                return
            except pymysql.err.OperationalError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    log = (self.root / "error.log").read_text(errors="replace")[-2000:]
                    raise AssertionError(f"private MariaDB did not start: {log}") from None
                time.sleep(0.05)

    def stop(self, mode: str) -> None:
        """`clean` (SIGTERM: a normal shutdown) or `kill` (SIGKILL: crash recovery at the next start)."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGTERM if mode == "clean" else signal.SIGKILL)
        self.proc.wait(60)
        self.proc = None

    def restart(self, mode: str, down_seconds: float = 0.5) -> None:
        self.stop(mode)
        time.sleep(down_seconds)  # the connector's reconnects fail for a while
        self.start()


@contextmanager
def private_mariadb() -> Iterator[PrivateMariaDb]:
    root = Path(tempfile.mkdtemp(prefix="mysqlrestart_", dir="/tmp"))
    os.chmod(root, 0o755)
    if os.geteuid() == 0:
        shutil.chown(root, "mysql", "mysql")
    install = subprocess.run(["mariadb-install-db", "--no-defaults", *(["--user=mysql"] if os.geteuid() == 0 else []),
                              f"--datadir={root}/data", "--auth-root-authentication-method=normal",
                              "--skip-test-db"], capture_output=True, text=True)
    assert install.returncode == 0, install.stderr[-2000:]
    server = PrivateMariaDb(root, free_port())
    server.start()
    try:
        yield server
    finally:
        if server.proc is not None:
            server.proc.kill()
            server.proc.wait(30)
        shutil.rmtree(root, ignore_errors=True)


class Workload(threading.Thread):
    """Small transactions until stopped; on a lost connection it reconnects (retrying while the server is
    down) and re-reads the live keys, since a commit that failed may or may not have happened."""

    def __init__(self, params: dict) -> None:
        super().__init__(daemon=True)
        self.params = params
        self.rng = random.Random(11)
        self.stop_flag = threading.Event()
        self.attempted = 0
        self.outages = 0
        self.error: BaseException | None = None

    def _connect(self):
        while not self.stop_flag.is_set():
            try:
                conn = pymysql.connect(**self.params, connect_timeout=2, autocommit=False)
                with conn.cursor() as cur:
                    cur.execute(f"SELECT k FROM {DB}.t")
                    keys = [k for (k,) in cur.fetchall()]
                    cur.execute(f"SELECT coalesce(max(id), 1000) FROM {DB}.ops")
                    last = cur.fetchone()[0]
                conn.commit()
                return conn, keys, last
            except pymysql.err.OperationalError:
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
                            cur.execute(f"INSERT INTO {DB}.t VALUES (%s, %s)", (k, n))
                        elif r < 0.8:
                            kind, k = "u", self.rng.choice(keys)
                            cur.execute(f"UPDATE {DB}.t SET v = %s WHERE k = %s", (n, k))
                        else:
                            kind, k = "d", self.rng.choice(keys)
                            cur.execute(f"DELETE FROM {DB}.t WHERE k = %s", (k,))
                        assert cur.rowcount == 1, (kind, k)
                        cur.execute(f"INSERT INTO {DB}.ops VALUES (%s, %s, %s)", (n, kind, k))
                    conn.commit()
                    if kind == "c":
                        keys.append(k)
                    elif kind == "d":
                        keys.remove(k)
                except (pymysql.err.OperationalError, pymysql.err.InterfaceError):
                    self.outages += 1
                    try:
                        conn.close()
                    except pymysql.err.Error:
                        pass
                    conn, keys, n = self._connect()  # ids restart after the highest committed one
                time.sleep(0.003)
            if conn is not None:
                conn.close()
        except BaseException as exc:  # surfaced by the test
            self.error = exc


def make_connector(server: PrivateMariaDb) -> MySqlConnector:
    return MySqlConnector(SourceSettings(SOURCE, "mariadb", {
        "database.hostname": "127.0.0.1", "database.port": server.port, "database.user": "root",
        "database.password": "", "database.server.id": 330_001, "topic.prefix": "restart",
        "database.include.list": DB, "reconnect.backoff.initial.ms": 100, "reconnect.backoff.max.ms": 800,
        "reconnect.max.attempts": 40, "provide.transaction.metadata": True}))


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


def query(params: dict, sql: str) -> list[tuple]:
    conn = pymysql.connect(**params)
    try:
        with conn.cursor() as cur:
            cur.execute(sql)
            return list(cur.fetchall())
    finally:
        conn.close()


def source_rows(params: dict) -> dict[str, dict[str, dict]]:
    return {
        "t": {json.dumps({"k": k}, separators=(",", ":")): {"k": k, "v": v}
              for k, v in query(params, f"SELECT k, v FROM {DB}.t")},
        "ops": {json.dumps({"id": i}, separators=(",", ":")): {"id": i, "kind": kind, "k": k}
                for i, kind, k in query(params, f"SELECT id, kind, k FROM {DB}.ops")},
    }


def test_server_restart_clean_and_kill_9_during_streaming(engine, engine_settings: EngineSettings, warehouse: Path,
                                                          caplog: pytest.LogCaptureFixture) -> None:
    from ingest.bronze.writer import BronzeWriter

    caplog.set_level(logging.WARNING, logger="ingest.connectors.mysql.streaming")
    with private_mariadb() as server:
        conn = pymysql.connect(**server.params, autocommit=True)
        with conn.cursor() as cur:
            cur.execute(f"CREATE DATABASE {DB}")
            cur.execute(f"CREATE TABLE {DB}.t (k INT PRIMARY KEY, v INT NOT NULL)")
            cur.execute(f"CREATE TABLE {DB}.ops (id INT PRIMARY KEY, kind CHAR(1) NOT NULL, k INT NOT NULL)")
            cur.execute(f"INSERT INTO {DB}.t VALUES " + ",".join(f"({i}, {i})" for i in range(1, 101)))
        conn.close()

        writer = BronzeWriter(engine.spark, engine_settings, SOURCE)
        connector = make_connector(server)
        connector.validate()
        workload = Workload(server.params)
        restarts: list[str] = []
        restarter_error: list[BaseException] = []

        def restarter() -> None:
            try:
                for mode in ("clean", "kill"):
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
        deadline = time.monotonic() + 50
        try:
            for batch in connector.batches(writer.resume_state(), BatchLimits(max_events=40, max_seconds=0.2)):
                writer.write(batch)
                connector.acknowledge(batch)
                streamed += sum(1 for e in batch.events if e.op in ("c", "u", "d"))
                if batch.caught_up and not thread.is_alive() and not workload.is_alive():
                    if not workload.ident:  # snapshot done and streaming: start the workload and the restarts
                        workload.start()
                        thread.start()
                        continue
                    ops = query(server.params, f"SELECT count(*) FROM {DB}.ops")[0][0]
                    landed = sum(1 for e in bronze_events(warehouse) if e["table_id"].endswith(".ops"))
                    if landed >= ops:
                        break
                assert time.monotonic() < deadline, f"timed out: restarts {restarts}, {streamed} changes streamed"
        finally:
            workload.stop_flag.set()
            connector.close()

        assert workload.error is None, workload.error
        assert not restarter_error, restarter_error
        assert restarts == ["clean", "kill"]
        assert workload.outages >= 2  # the workload really saw both outages
        lost = [r for r in caplog.records if r.getMessage().startswith(f"{SOURCE}: binlog connection lost")]
        assert len(lost) >= 2, [r.getMessage() for r in caplog.records]  # and so did the connector, streaming
        assert connector.stats["reconnects"] >= 2

        events = bronze_events(warehouse)
        seqs = [e["seq"] for e in events]
        assert len(seqs) == len(set(seqs)), "a seq landed twice"
        source = source_rows(server.params)
        committed = {row["id"]: row for row in source["ops"].values()}
        assert len(committed) > 200
        assert workload.attempted >= len(committed)

        # every committed transaction exactly once: its ops insert and its change of t, in one transaction
        ops_events = [e for e in events if e["table_id"].endswith(".ops")]
        landed = Counter(json.loads(e["key"])["id"] for e in ops_events)
        missing = sorted(set(committed) - set(landed))[:10]
        twice = sorted(i for i, n in landed.items() if n > 1)[:10]
        phantom = sorted(set(landed) - set(committed))[:10]
        assert not (missing or twice or phantom), f"lost {missing}, landed twice {twice}, never committed {phantom}"
        assert all(e["op"] == "c" for e in ops_events)
        txn_of = {json.loads(e["key"])["id"]: e["txn_id"] for e in ops_events}
        assert all(txn_of.values())  # every streamed change carries its GTID
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
            got, want = state.get(table, {}), source[table]
            assert sorted(got) == sorted(want), f"{table}: keys differ"
            assert all(got[k] == want[k] for k in want), table


def test_restart_in_the_middle_of_a_large_transaction(engine, engine_settings: EngineSettings,
                                                       warehouse: Path) -> None:
    """Deterministic variant: a batch ends inside an 8000-row, 8 MB transaction (more than the socket buffers
    hold, so the dump connection is open and positioned mid-transaction), then the server goes away before
    the connector reads on: restarted cleanly, killed and back before the next read (mysql-replication
    reconnects by itself at its last event), killed and still down at the next read (MySqlStreamingSource.run's backoff
    and reconnect at the transaction's beginning, dropping the seqs already emitted)."""
    from ingest.bronze.writer import BronzeWriter

    rows_per_txn = 8000
    with private_mariadb() as server:
        conn = pymysql.connect(**server.params, autocommit=True)
        with conn.cursor() as cur:
            cur.execute(f"CREATE DATABASE {DB}")
            cur.execute(f"CREATE TABLE {DB}.bulk (id INT PRIMARY KEY, round INT NOT NULL, pad VARCHAR(1200))")
        conn.close()

        def big_transaction(round_no: int) -> None:
            c = pymysql.connect(**server.params, autocommit=False)
            with c.cursor() as cur:
                base = round_no * 10_000
                for start in range(0, rows_per_txn, 500):  # several statements, several row events each
                    cur.execute(f"INSERT INTO {DB}.bulk VALUES " + ",".join(
                        f"({base + i}, {round_no}, REPEAT('x', 1000))" for i in range(start, start + 500)))
                cur.execute(f"UPDATE {DB}.bulk SET pad = 'updated' WHERE round = {round_no} AND id % 7 = 0")
                cur.execute(f"DELETE FROM {DB}.bulk WHERE round = {round_no} AND id % 11 = 0")
            c.commit()
            c.close()

        writer = BronzeWriter(engine.spark, engine_settings, SOURCE)
        connector = make_connector(server)
        connector.validate()
        rounds = [("clean", 0.0), ("kill", 0.0), ("kill", 1.5)]  # (how, seconds still down at the next read)
        done: list[str] = []
        restarted = threading.Event()
        deadline = time.monotonic() + 50
        try:
            in_round = False
            for batch in connector.batches(writer.resume_state(), BatchLimits(max_events=1000, max_seconds=5)):
                writer.write(batch)
                bulk = [e for e in batch.events if e.table_id.endswith(".bulk")]
                if in_round and bulk and not batch.caught_up:
                    how, down = rounds[len(done)]
                    in_round = False
                    if down:
                        server.stop(how)
                        timer = threading.Timer(down, lambda: (server.start(), restarted.set()))
                        timer.start()
                    else:
                        server.restart(how, down_seconds=0.2)
                        restarted.set()
                    done.append(how)
                elif batch.caught_up and not in_round:
                    if len(done) == len(rounds):
                        if restarted.wait(10):
                            break
                    else:
                        restarted.wait(10)
                        restarted.clear()
                        big_transaction(len(done) + 1)
                        in_round = True
                assert time.monotonic() < deadline, f"timed out after restarts {done}"
        finally:
            connector.close()

        assert done == ["clean", "kill", "kill"]
        assert connector.stats["reconnects"] >= 1
        events = bronze_events(warehouse)
        seqs = [e["seq"] for e in events]
        assert len(seqs) == len(set(seqs)), "a seq landed twice"
        creates = Counter(json.loads(e["key"])["id"] for e in events if e["op"] == "c")
        assert len(creates) == 3 * rows_per_txn and set(creates.values()) == {1}
        want = {json.dumps({"id": i}, separators=(",", ":")): {"id": i, "round": r, "pad": p}
                for i, r, p in query(server.params, f"SELECT id, round, pad FROM {DB}.bulk")}
        got = replay(events).get("bulk", {})
        assert sorted(got) == sorted(want)
        assert all(got[k] == want[k] for k in want)
