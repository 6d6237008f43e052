"""MariaDB restarts in the middle of a large transaction being streamed, on a private MariaDB (the shared server
must never be restarted). The family suite (tests/integration/connectors/test_connector_family.py) restarts
and crashes the server under a running workload for every connector; this is MariaDB's deterministic case of
a binlog dump positioned inside one transaction."""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from pathlib import Path

import pymysql
import pytest

from ingest.bronze.contract import BatchLimits
from ingest.config import EngineSettings
from tests.support.connector_family import MEMBERS, SCHEMA, bronze_events, replay
from tests.support.mariadb import private_mariadb

pytestmark = [pytest.mark.integration, pytest.mark.slow]

SOURCE = "mysqlrestart"


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
            cur.execute(f"CREATE DATABASE {SCHEMA}")
            cur.execute(f"CREATE TABLE {SCHEMA}.bulk (id INT PRIMARY KEY, round INT NOT NULL, pad VARCHAR(1200))")
        conn.close()

        def big_transaction(round_no: int) -> None:
            c = pymysql.connect(**server.params, autocommit=False)
            with c.cursor() as cur:
                base = round_no * 10_000
                for start in range(0, rows_per_txn, 500):  # several statements, several row events each
                    cur.execute(f"INSERT INTO {SCHEMA}.bulk VALUES " + ",".join(
                        f"({base + i}, {round_no}, REPEAT('x', 1000))" for i in range(start, start + 500)))
                cur.execute(f"UPDATE {SCHEMA}.bulk SET pad = 'updated' WHERE round = {round_no} AND id % 7 = 0")
                cur.execute(f"DELETE FROM {SCHEMA}.bulk WHERE round = {round_no} AND id % 11 = 0")
            c.commit()
            c.close()

        writer = BronzeWriter(engine.spark, engine_settings, SOURCE)
        connector = MEMBERS["mariadb"].make_connector(server, SOURCE)
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
        events = bronze_events(warehouse, SOURCE)
        seqs = [e["seq"] for e in events]
        assert len(seqs) == len(set(seqs)), "a seq landed twice"
        creates = Counter(json.loads(e["key"])["id"] for e in events if e["op"] == "c")
        assert len(creates) == 3 * rows_per_txn and set(creates.values()) == {1}
        want = {json.dumps({"id": i}, separators=(",", ":")): {"id": i, "round": r, "pad": p}
                for i, r, p in MEMBERS["mariadb"].query(server, f"SELECT id, round, pad FROM {SCHEMA}.bulk")}
        got = replay(events).get("bulk", {})
        assert sorted(got) == sorted(want)
        assert all(got[k] == want[k] for k in want)
