"""The ingest runner and the `lakecdc run` / `lakecdc status` commands, on the debezium-json source."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from pathlib import Path

import pytest

from ingest.bronze.contract import BatchLimits
from ingest.bronze.status import source_status
from ingest.config import load_config
from ingest.connectors.debezium_json import DebeziumJsonConnector
from ingest.connectors.debezium_json.records import Decoder
from ingest.connectors.debezium_json.sample import kcat_lines
from ingest.errors import ConfigError, LakecdcError
from ingest.runner import run_source, source_lock
from tests.conftest import ROOT, run_lakecdc

pytestmark = pytest.mark.integration


def project(tmp_path: Path, warehouse: Path, inbox: Path, extra: str = "") -> Path:
    config = tmp_path / "lakecdc.yml"
    config.write_text(f"engine:\n  warehouse: {warehouse}\nsources:\n  inv:\n    connector: debezium-json\n"
                      f"    path: {inbox.name}\n    topic.prefix: inventory\n    poll.interval.ms: 50\n{extra}")
    return config


def test_run_until_caught_up_resumes_and_reports_status(tmp_path: Path, warehouse: Path, engine):
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    lines = list(kcat_lines(1_000, seed=5))
    (inbox / "a.jsonl").write_bytes(b"".join(lines[:600]) + b"garbage\n")
    config = load_config(project(tmp_path, warehouse, inbox))  # path relative to the config file
    assert config.engine == engine.settings

    first = run_source(config, "inv", until_caught_up=True, limits=BatchLimits(max_events=250), progress=False)
    assert (first.events, first.rejects, first.stopped_by) == (600, 1, "caught-up")
    assert first.batches == 3  # 250 + 250 + 101 lines
    # the directory grows; a second run lands only the new records
    (inbox / "b.jsonl").write_bytes(b"".join(lines[600:]))
    second = run_source(config, "inv", until_caught_up=True, progress=False)
    assert (second.events, second.rejects) == (400, 0)
    again = run_source(config, "inv", until_caught_up=True, progress=False)
    assert (again.events, again.batches) == (0, 0)

    spark = engine.spark
    values = [r[0] for r in spark.sql("SELECT value FROM bronze.inv_events ORDER BY seq").collect()]
    assert len(values) == 1000
    st = source_status(spark, "inv", now_ms=1_700_000_100_000)
    newest = spark.sql("SELECT max(source_ts_ms) FROM bronze.inv_events").collect()[0][0]
    assert (st.landed, st.events, st.rejects, st.batches) == (True, 1000, 1, 4)
    assert st.lag_ms == 1_700_000_100_000 - newest
    assert st.last_seq == max(r[0] for r in spark.sql("SELECT seq FROM bronze.inv_events").collect())
    assert source_status(spark, "nothing_here").landed is False


def test_max_events_and_unknown_source(tmp_path: Path, warehouse: Path, engine):
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    (inbox / "a.jsonl").write_bytes(b"".join(kcat_lines(500, seed=2)))
    config = load_config(project(tmp_path, warehouse, inbox))
    result = run_source(config, "inv", max_events=120, limits=BatchLimits(max_events=50), progress=False)
    # whole batches only: it stops after the batch in which 120 was reached
    assert (result.events, result.batches, result.stopped_by) == (150, 3, "max-events")
    with pytest.raises(ConfigError, match="unknown source 'nope'"):
        run_source(config, "nope", until_caught_up=True)


def test_one_process_per_source(tmp_path: Path, warehouse: Path):
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    config = load_config(project(tmp_path, warehouse, inbox))
    with source_lock(config, "inv"):
        with pytest.raises(LakecdcError, match="already being ingested"):
            with source_lock(config, "inv"):
                pass
    with source_lock(config, "inv"):  # released
        pass


def scrape(port: int) -> dict[str, float]:
    """`name{labels}` -> value of a Prometheus text page; {} while nothing answers yet."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
            text = response.read().decode()
    except OSError:
        return {}
    return {line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line}


def test_cli_run_status_and_sigterm(tmp_path: Path, warehouse: Path):
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    lines = list(kcat_lines(300, seed=9))
    (inbox / "a.jsonl").write_bytes(b"".join(lines))
    ops = Counter(Decoder().decode(line).op for line in lines)   # what the metrics must count
    config = project(tmp_path, warehouse, inbox)
    bad = run_lakecdc("--config", str(config), "run", "--source", "nope", "--until-caught-up")
    assert bad.returncode == 2 and "unknown source 'nope' (configured: inv)" in bad.stderr

    # without a stop option the run keeps tailing, serving Debezium's metrics of the run (Prometheus' format);
    # SIGTERM stops it after the current batch
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with socket.socket() as probe:   # a free port for the metrics
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "ingest.cli", "--config", str(config), "run", "--batch-size",
                             "100", "--quiet", "--metrics-port", str(port)], cwd=tmp_path, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        metrics: dict[str, float] = {}
        deadline = time.monotonic() + 120
        while metrics.get('lakecdc_bronze_batches_total{source="inv"}') != 3 and time.monotonic() < deadline:
            assert proc.poll() is None, proc.communicate()
            metrics = scrape(port)
            time.sleep(0.1)
        labels = 'plugin="debezium-json",context="{}",name="inv"'
        snapshot, streaming = labels.format("snapshot"), labels.format("streaming")
        assert metrics[f"debezium_metrics_TotalNumberOfEventsSeen{{{snapshot}}}"] == ops["r"] == 30, metrics
        assert sum(v for k, v in metrics.items() if k.startswith("debezium_metrics_RowsScanned{")) == 30, metrics
        for op, word in (("c", "Create"), ("u", "Update"), ("d", "Delete")):
            assert metrics[f"debezium_metrics_TotalNumberOf{word}EventsSeen{{{streaming}}}"] == ops[op], (op, metrics)
        assert metrics[f"debezium_metrics_TotalNumberOfEventsSeen{{{streaming}}}"] == ops["c"] + ops["u"] + ops["d"]
        assert metrics[f"debezium_metrics_Connected{{{streaming}}}"] == 1
        assert metrics[f"debezium_metrics_MilliSecondsBehindSource{{{streaming}}}"] > 86_400_000   # 2023's changes
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:   # an assertion failed: the run must not outlive the test
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err
    assert "inv: landed 300 events" in out and "stopped: signal" in out
    # the same figures, after each landed batch, in bronze.inv_metrics
    from deltalake import DeltaTable

    rows = DeltaTable(str(warehouse / "bronze" / "inv_metrics")).to_pyarrow_table().to_pylist()
    assert sorted({r["batch_id"] for r in rows}) == [1, 2, 3], rows
    last = {(r["context"], r["attribute"], r["table_id"]): r["value"] for r in rows if r["batch_id"] == 3}
    assert last[("streaming", "TotalNumberOfEventsSeen", None)] == ops["c"] + ops["u"] + ops["d"]
    assert last[("bronze", "batches_total", None)] == 3 and {r["source"] for r in rows} == {"inv"}

    # nothing new: --json prints the summary as an object, --verbose logs the steps on stderr
    again = run_lakecdc("run", "--config", str(config), "--until-caught-up", "--json", "--verbose")
    assert again.returncode == 0, again.stderr
    summary = json.loads(again.stdout)
    assert (summary["source"], summary["events"], summary["stopped_by"]) == ("inv", 0, "caught-up")
    assert "INFO ingest.runner: inv: resuming after seq " in again.stderr, again.stderr

    status = run_lakecdc("--config", str(config), "status")
    assert status.returncode == 0, status.stderr
    line = next(x for x in status.stdout.splitlines() if x.startswith("inv "))
    assert line.split()[1:4] == ["300", "3", "0"]
    # for monitoring: JSON, and exit 1 naming the problem when the newest change is older than --max-lag
    # (the test records carry source times of 2023) or a source has not landed
    lagging = run_lakecdc("status", "--config", str(config), "--json", "--max-lag", "60")
    assert lagging.returncode == 1, lagging.stderr
    (report,) = json.loads(lagging.stdout)
    assert (report["source"], report["events"], report["batches"]) == ("inv", 300, 3)
    assert report["problems"] and "over --max-lag 60s" in report["problems"][0]
    # starting over: `source reset` removes the source's bronze tables (asks for --yes first); the next run
    # lands everything again
    refused = run_lakecdc("source", "reset", "--config", str(config))
    assert refused.returncode == 2 and "deletes what inv has landed (5 bronze tables" in refused.stderr
    reset = run_lakecdc("source", "reset", "--yes", "--config", str(config))
    assert reset.returncode == 0, reset.stderr
    assert ("inv: removed 5 bronze tables (inv_events, inv_schemas, inv_schema_changes, inv_rejects, inv_metrics)"
            in reset.stdout)
    assert not (warehouse / "bronze" / "inv_events").exists()
    rerun = run_lakecdc("run", "--config", str(config), "--until-caught-up", "--json")
    assert rerun.returncode == 0 and json.loads(rerun.stdout)["events"] == 300, rerun.stderr

    (tmp_path / "other").mkdir()
    other = project(tmp_path / "other", warehouse / "other", inbox)
    missing = run_lakecdc("status", "--config", str(other))
    assert missing.returncode == 1 and "problem: inv: not landed yet" in missing.stderr, missing.stderr


def test_delta_rs_reads_bronze_with_identical_content(tmp_path: Path, warehouse: Path, engine):
    """Independent check: delta-rs (deltalake) reads every bronze table with the content the engine sees."""
    from deltalake import DeltaTable

    inbox = tmp_path / "inbox"
    inbox.mkdir()
    mariadb_change = {"source": {"connector": "mariadb", "name": "m", "ts_ms": 1, "db": "inventory",
                                 "file": "mariadb-bin.000003", "pos": 570, "row": 0},
                      "databaseName": "inventory", "schemaName": None, "ddl": "ALTER TABLE t ADD c INT",
                      "tableChanges": []}
    extra = json.dumps({"topic": "m", "partition": 0, "offset": 0, "key": None,
                        "payload": json.dumps(mariadb_change)}).encode() + b"\n"
    (inbox / "a.jsonl").write_bytes(b"".join(kcat_lines(700, seed=4)) + extra + b"\x00\xffbinary junk\n")
    config = load_config(project(tmp_path, warehouse, inbox))
    run_source(config, "inv", until_caught_up=True, limits=BatchLimits(max_events=300), progress=False)

    for kind in ("events", "schemas", "schema_changes", "rejects"):
        table = f"inv_{kind}"
        ours = engine.spark.sql(f"SELECT * FROM bronze.{table}").toArrow()
        theirs = DeltaTable(str(warehouse / "bronze" / table)).to_pyarrow_table()
        assert ours.num_rows > 0, table
        assert sorted(ours.column_names) == sorted(theirs.column_names)

        def canon(tbl):
            return sorted(tuple(str(r[c]) for c in sorted(tbl.column_names)) for r in tbl.to_pylist())
        assert canon(ours) == canon(theirs), table


class HistoryKeepingConnector(DebeziumJsonConnector):
    """The debezium-json source plus the schema-history hook the MySQL/MariaDB connectors implement."""

    keeps_schema_history = True
    restored: list[tuple[str, str]] | None = None

    def restore_schema_history(self, changes: list[tuple[str, str]]) -> None:
        HistoryKeepingConnector.restored = changes


def test_runner_gives_schema_history_back_before_resuming(tmp_path: Path, warehouse: Path, engine,
                                                          monkeypatch: pytest.MonkeyPatch):
    from ingest.connectors import registry

    monkeypatch.setitem(registry.CONNECTORS, "json-with-history",
                        "tests.integration.bronze.test_runner:HistoryKeepingConnector")
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    change = {"source": {"connector": "mysql", "name": "m", "ts_ms": 1, "db": "inventory",
                         "file": "mysql-bin.000003", "pos": 154, "row": 0},
              "databaseName": "inventory", "ddl": "CREATE TABLE t (id INT PRIMARY KEY)", "tableChanges": []}
    (inbox / "a.jsonl").write_bytes(json.dumps({"topic": "m", "key": None, "value": change}).encode() + b"\n")
    config = load_config(project(tmp_path, warehouse, inbox))
    config = dataclasses.replace(config, sources={"inv": dataclasses.replace(config.sources["inv"],
                                                                             connector="json-with-history")})
    run_source(config, "inv", until_caught_up=True, progress=False)
    assert HistoryKeepingConnector.restored == []
    run_source(config, "inv", until_caught_up=True, progress=False)
    assert [json.loads(event)["ddl"] for _, event in HistoryKeepingConnector.restored] == [change["ddl"]]


def test_unusable_warehouse_is_one_line(tmp_path: Path):
    """A warehouse path under a file: one line naming the warehouse, exit 2, no traceback."""
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    (tmp_path / "a_file").write_text("")
    config = project(tmp_path, tmp_path / "a_file" / "wh", inbox)
    result = run_lakecdc("--config", str(config), "run", "--until-caught-up")
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"lakecdc: error: warehouse {tmp_path / 'a_file' / 'wh'} is not writable: Not a directory"], result.stderr


def test_full_disk_and_read_only_warehouse_are_one_line(tmp_path: Path):
    """The warehouse's disk fills up during a run: the engine's write error in one line (it was a 47-line
    traceback), exit 2; then the disk is read-only: one line before anything starts. A 1 MB tmpfs is the disk
    (mounting needs root, which the test machine has)."""
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(disk)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        inbox = tmp_path / "inbox"
        inbox.mkdir()
        (inbox / "a.jsonl").write_bytes(b"".join(kcat_lines(6_000, seed=3)))
        config = project(tmp_path, disk / "wh", inbox)
        result = run_lakecdc("--config", str(config), "run", "--until-caught-up", "--batch-size", "1000", "--quiet")
        # the same disk read-only: refused before anything starts
        subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
        read_only = run_lakecdc("--config", str(config), "run", "--until-caught-up")
    finally:
        subprocess.run(["umount", str(disk)], check=True)
    assert result.returncode == 2, result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("lakecdc: error: the engine failed: ") and "No space left on device" in line, line
    assert read_only.returncode == 2 and read_only.stderr.strip().splitlines() == [
        f"lakecdc: error: warehouse {disk / 'wh'} is not writable: Read-only file system"], read_only.stderr
