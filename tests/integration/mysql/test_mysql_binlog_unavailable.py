"""A resume position the server cannot send the binlog from (error 1236, ER_MASTER_FATAL_ERROR_READING_BINLOG:
purged, past the end of its file after the server's binlogs were reset or restored) fails the run at once with
the server's reason, as Debezium's MariaDbErrorHandler does (1236 is its one non-retriable code). Until stop 51
the streaming source treated it as a lost connection: eleven reconnects with backoff (minutes) and then "lost
the binlog connection 11 times in a row"."""

from __future__ import annotations

import logging
import os

import pymysql
import pytest

from ingest.bronze.contract import BatchLimits, ResumeState
from ingest.config import SourceSettings
from ingest.connectors.mysql import MySqlConnector
from ingest.errors import LakecdcError

pytestmark = pytest.mark.integration


def test_a_position_past_the_end_of_its_binlog_file_fails_at_once_without_reconnecting(
        mariadb_params: dict, caplog: pytest.LogCaptureFixture) -> None:
    conn = pymysql.connect(**mariadb_params)
    try:
        with conn.cursor() as cur:
            cur.execute("SHOW MASTER STATUS")
            binlog_file, binlog_pos = cur.fetchone()[:2]
    finally:
        conn.close()
    properties = {"database.hostname": mariadb_params["host"], "database.port": mariadb_params["port"],
                  "database.user": mariadb_params["user"], "database.password": mariadb_params["password"],
                  "database.server.id": 520_000 + os.getpid() % 40_000, "topic.prefix": "gone",
                  "database.include.list": "mysqlgone_none"}
    connector = MySqlConnector(SourceSettings(name="gone", connector="mariadb", properties=properties))
    beyond = int(binlog_pos) + 1_000_000_000   # the file exists (the start check passes), the position does not
    resume = ResumeState("00000001-0000000004-00000000", {"file": binlog_file, "pos": beyond, "gtids": "",
                                                          "snapshot_completed": True})
    with caplog.at_level(logging.WARNING), pytest.raises(LakecdcError) as failure:
        try:
            for _ in connector.batches(resume, BatchLimits(max_events=100, max_seconds=5)):
                pass
        finally:
            connector.close()
    message = str(failure.value)
    assert "error 1236" in message and f"{binlog_file} at position {beyond}" in message, message
    assert "lakecdc source reset --source gone" in message, message
    assert connector.stats["reconnects"] == 0
    assert not [r for r in caplog.records if "reconnecting" in r.getMessage()]
