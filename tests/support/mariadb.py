"""A throwaway MariaDB of a test's own, for tests that restart or reconfigure the server (the shared server
of scripts/services.sh must never be restarted); started with scripts/services.sh's settings."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pymysql

from tests.support.pg import free_port


class PrivateMariaDb:
    """One mariadbd process on a free port, over a data directory of its own."""

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
    """mariadb-install-db + start on a free port; killed and removed afterwards."""
    root = Path(tempfile.mkdtemp(prefix="mariadb_private_", dir="/tmp"))
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

