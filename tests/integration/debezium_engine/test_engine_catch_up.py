"""When a Debezium-engine source counts as caught up (catch_up.py), asked of the real MariaDB of `make test`: a run
that goes on after catching up (the Kafka tests run a workload there) must not count as caught up again before the
connector has read what the source wrote since. Seen in a CI run: the first target, kept, let the producer stop
before the workload's ALTER TABLE reached the topics."""

from __future__ import annotations

import pymysql
import pytest

from ingest.connectors.debezium_engine.catch_up import BinlogProbe
from ingest.connectors.debezium_engine.jvm import Progress

pytestmark = pytest.mark.integration


def _master_position(params: dict) -> tuple[str, int]:
    conn = pymysql.connect(**params, autocommit=True)
    try:
        with conn.cursor() as cur:
            cur.execute("SHOW MASTER STATUS")
            file, position = cur.fetchone()[:2]
            return file, int(position)
    finally:
        conn.close()


def _write(params: dict) -> None:
    conn = pymysql.connect(**params, autocommit=True)
    try:
        with conn.cursor() as cur:
            cur.execute("CREATE DATABASE IF NOT EXISTS catch_up_probe")
            cur.execute("CREATE TABLE IF NOT EXISTS catch_up_probe.t (id int PRIMARY KEY AUTO_INCREMENT)")
            cur.execute("INSERT INTO catch_up_probe.t VALUES ()")
    finally:
        conn.close()


def test_a_binlog_target_reached_is_asked_again_next_time(mariadb_params: dict) -> None:
    probe = BinlogProbe({"database.hostname": mariadb_params["host"], "database.port": mariadb_params["port"],
                         "database.user": mariadb_params["user"], "database.password": mariadb_params["password"]})
    before = _master_position(mariadb_params)
    read_up_to = Progress(connected=True, queue_empty=True, binlog=before)

    assert not probe.reached(Progress(connected=True, queue_empty=True, binlog=None), 0)   # not streaming yet
    _write(mariadb_params)   # the server moves on before the connector has read anything: the target is after it
    assert not probe.reached(read_up_to, 0)
    first = Progress(connected=True, queue_empty=True, binlog=_master_position(mariadb_params))
    assert probe.reached(first, 0)

    _write(mariadb_params)   # written after the catch-up: the next one waits for it
    assert not probe.reached(first, 0)
    assert probe.reached(Progress(connected=True, queue_empty=True, binlog=_master_position(mariadb_params)), 0)
