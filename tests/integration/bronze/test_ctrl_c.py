"""Ctrl-C stops lakecdc at once and safely (issue 20, item 1), typed into a real terminal: the commands run
under a pseudo-terminal and the test writes ^C to it, so the kernel sends SIGINT to the foreground process
group as it does for a user. Before the fix, the embedded engine shut down on the signal under its own
client: a run hung in the client's retries (about ten minutes) and `dbt build` failed after minutes.

Each wait below is on a condition (a line of output, the process's exit); the one time limit is a hang
detector far above the seconds a stop takes, never a speed measure."""

from __future__ import annotations

import os
import pty
import re
import select
import signal
import sys
import time
from pathlib import Path

import psycopg2
import pytest
import yaml

from ingest.dbt_runner import DBT_PACKAGE_MACROS
from tests.conftest import ROOT, run_lakecdc

pytestmark = [pytest.mark.integration, pytest.mark.slow]

HANG = 120.0  # seconds: a stop takes about one; a hang took ten minutes


class Terminal:
    """A command under a pseudo-terminal: its output as it comes, ^C typed into it, its exit status."""

    def __init__(self, args: list[str], cwd: Path, env: dict[str, str]) -> None:
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # the child: the command, in the terminal's foreground process group
            os.chdir(cwd)
            os.execve(sys.executable, [sys.executable, "-m", "ingest.cli", *args], {**os.environ, **env})
        self.output = b""
        self.status: int | None = None

    def _pump(self, timeout: float) -> None:
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if ready:
            try:
                self.output += os.read(self.fd, 65536)
            except OSError:  # the child closed the terminal
                pass
        if self.status is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.status = os.waitstatus_to_exitcode(status)

    def wait_for(self, pattern: str) -> None:
        deadline = time.monotonic() + HANG
        while not re.search(pattern, self.text):
            assert self.status is None, f"exited ({self.status}) before {pattern!r}:\n{self.text[-3000:]}"
            if time.monotonic() > deadline:
                os.kill(self.pid, signal.SIGKILL)
                raise AssertionError(f"no {pattern!r} after {HANG:.0f} s:\n{self.text[-3000:]}")
            self._pump(0.2)

    def ctrl_c_and_wait(self) -> int:
        os.write(self.fd, b"\x03")
        deadline = time.monotonic() + HANG
        while self.status is None:
            if time.monotonic() > deadline:
                os.kill(self.pid, signal.SIGKILL)
                raise AssertionError(f"still running {HANG:.0f} s after Ctrl-C (a hang):\n{self.text[-3000:]}")
            self._pump(0.2)
        self._pump(0.5)
        return self.status

    @property
    def text(self) -> str:
        return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", self.output.decode(errors="replace"))


@pytest.fixture()
def project(tmp_path: Path, pg_dsn: str):
    """A PostgreSQL source over a 200,000-row table and a project folder (lakecdc.yml)."""
    parts = dict(p.split("=", 1) for p in pg_dsn.split())
    admin = psycopg2.connect(pg_dsn)
    admin.autocommit = True
    with admin.cursor() as cur:
        cur.execute("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots "
                    "WHERE slot_name = 'lakecdc_ctrl_c' AND NOT active")
        cur.execute("DROP DATABASE IF EXISTS lakecdc_ctrl_c")
        cur.execute("CREATE DATABASE lakecdc_ctrl_c")
    db = psycopg2.connect(pg_dsn.replace(f"dbname={parts.get('dbname', 'postgres')}", "dbname=lakecdc_ctrl_c"))
    db.autocommit = True
    with db.cursor() as cur:
        cur.execute("CREATE TABLE items (id int PRIMARY KEY, v text)")
        cur.execute("INSERT INTO items SELECT g, md5(g::text) FROM generate_series(1, 200000) g")
    db.close()
    config = {"engine": {"warehouse": str(tmp_path / "warehouse")},
              "sources": {"pg": {"connector": "postgresql", "database.hostname": parts.get("host", "127.0.0.1"),
                                 "database.port": int(parts.get("port", 5432)),
                                 "database.user": parts.get("user", "postgres"), "database.dbname": "lakecdc_ctrl_c",
                                 "topic.prefix": "pg", "slot.name": "lakecdc_ctrl_c",
                                 "publication.name": "lakecdc_ctrl_c"}}}
    (tmp_path / "lakecdc.yml").write_text(yaml.safe_dump(config))
    yield tmp_path
    with admin.cursor() as cur:
        # a run the test killed may leave its walsender behind for a moment
        cur.execute("SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots "
                    "WHERE slot_name = 'lakecdc_ctrl_c' AND active")
        deadline = time.monotonic() + HANG
        while time.monotonic() < deadline:
            cur.execute("SELECT count(*) FROM pg_replication_slots WHERE slot_name = 'lakecdc_ctrl_c' AND active")
            if cur.fetchone()[0] == 0:
                break
            time.sleep(0.2)
        cur.execute("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots "
                    "WHERE slot_name = 'lakecdc_ctrl_c' AND NOT active")
        cur.execute("DROP DATABASE IF EXISTS lakecdc_ctrl_c")
    admin.close()


def landed(project: Path) -> int:
    status = run_lakecdc("status", "--no-source", "--json", cwd=project)
    import json

    return json.loads(status.stdout)[0]["events"]


def test_ctrl_c_during_a_snapshot_and_while_streaming(project: Path) -> None:
    # 1. during the snapshot: small batches, ^C once the first has landed; the run stops after the batch
    #    being written, and a new run continues to exactly the table's rows
    #    (TERM=dumb: a terminal that cannot redraw a line gets plain progress lines; before, it got nothing)
    run = Terminal(["run", "--batch-size", "2000"], project, {"TERM": "dumb"})
    run.wait_for(r"pg: (snapshot [^;]*; )?[\d,]+ events")
    assert re.search(r"pg: snapshot table 1/1 public\.items: [\d,]+ rows read", run.text), run.text[-3000:]
    assert run.ctrl_c_and_wait() == 0, run.text[-3000:]
    assert "stopped: signal" in run.text
    first = landed(project)
    assert 0 < first < 200_000, first
    # 2. idle streaming: the rest of the snapshot landed (bronze holds every row), waiting for changes; ^C
    #    (a terminal that redraws: rich's live line)
    run = Terminal(["run"], project, {"TERM": "xterm-256color"})
    run.wait_for(r"pg: (snapshot [^;]*; )?[\d,]+ events")
    deadline = time.monotonic() + HANG
    while landed(project) < 200_000:
        assert time.monotonic() < deadline and run.status is None, run.text[-3000:]
        run._pump(1.0)
    assert run.ctrl_c_and_wait() == 0, run.text[-3000:]
    assert "stopped: signal" in run.text
    assert landed(project) == 200_000   # nothing lost, nothing twice (the snapshot resumed by chunk)


def test_ctrl_c_during_dbt_build(project: Path) -> None:
    """A model that runs for minutes; ^C once dbt has started it: dbt cancels and exits, and the next build
    (the same engine, a new process) works."""
    (project / "dbt_project.yml").write_text(
        "name: lakecdc\nversion: '1.0'\nconfig-version: 2\nprofile: lakecdc\n"
        f"macro-paths: ['{DBT_PACKAGE_MACROS}']\non-run-start: [\"{{{{ lakecdc.lakecdc_on_run_start() }}}}\"]\n"
        f"vars:\n  lakecdc_warehouse: '{project / 'warehouse'}'\n"
        "models:\n  lakecdc:\n    +file_format: delta\n")
    (project / "profiles.yml").write_text((ROOT / "profiles.yml").read_text())
    (project / "models").mkdir()
    (project / "models" / "slow.sql").write_text(
        "{{ config(materialized='table') }}\nselect sum(id % 7) as s from range(0, 100000000000)\n")
    (project / "models" / "quick.sql").write_text("{{ config(materialized='table') }}\nselect 1 as one\n")
    env = {"DBT_PROFILES_DIR": str(project)}
    build = Terminal(["dbt", "build", "--select", "slow"], project, env)
    build.wait_for(r"START sql table model")
    status = build.ctrl_c_and_wait()
    assert status == 130 and "Exited because of keyboard interrupt" in build.text, build.text[-3000:]
    quick = run_lakecdc("dbt", "build", "--select", "quick", cwd=project, env=env)
    assert quick.returncode == 0, quick.stdout[-3000:] + quick.stderr[-3000:]
