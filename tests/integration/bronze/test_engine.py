"""The local engine writes real Delta tables that persist across processes and that delta-rs reads."""

from __future__ import annotations

import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import ROOT, run_lakecdc

pytestmark = pytest.mark.integration


def _write_rows(engine, warehouse: Path) -> None:
    spark = engine.spark
    spark.sql("CREATE SCHEMA IF NOT EXISTS demo")
    spark.sql(f"CREATE TABLE demo.people (id BIGINT, name STRING) USING delta LOCATION '{warehouse}/demo/people'")
    spark.sql("INSERT INTO demo.people VALUES (1, 'ada'), (2, 'grace'), (3, 'edsger')")


def test_table_persists_across_processes_by_name(engine, warehouse: Path):
    _write_rows(engine, warehouse)
    engine.stop()
    code = textwrap.dedent(f"""
        from pathlib import Path
        from ingest.config import EngineSettings
        from ingest.engine import start_engine
        eng = start_engine(EngineSettings(profile="local", warehouse=Path({str(warehouse)!r})))
        rows = eng.spark.sql("SELECT id, name FROM demo.people ORDER BY id").collect()
        print(";".join(f"{{r.id}}={{r.name}}" for r in rows))
        eng.stop()
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "1=ada;2=grace;3=edsger"


def test_delta_rs_reads_what_the_engine_wrote(engine, warehouse: Path):
    from deltalake import DeltaTable

    _write_rows(engine, warehouse)
    table = DeltaTable(str(warehouse / "demo" / "people")).to_pyarrow_table()
    assert sorted(zip(table["id"].to_pylist(), table["name"].to_pylist(), strict=True)) == [
        (1, "ada"), (2, "grace"), (3, "edsger")]


def _one_line_error(result: subprocess.CompletedProcess[str], needle: str) -> None:
    assert result.returncode != 0
    lines = [line for line in result.stderr.splitlines() if line.startswith("lakecdc: error:")]
    assert len(lines) == 1, result.stderr
    assert needle in lines[0]
    assert "Traceback" not in result.stderr


def test_unknown_profile_is_one_line(tmp_path: Path):
    result = run_lakecdc("doctor", env={"LAKECDC_PROFILE": "nosuch"}, cwd=tmp_path)
    _one_line_error(result, "unknown profile 'nosuch'")


def test_unreachable_remote_is_one_line(tmp_path: Path):
    result = run_lakecdc("dbt", "debug", env={"LAKECDC_PROFILE": "remote", "LAKECDC_REMOTE": "sc://127.0.0.1:1"},
                         cwd=tmp_path)
    _one_line_error(result, "127.0.0.1:1 is unreachable")


def test_unwritable_warehouse_is_one_line(tmp_path: Path):
    # root ignores permission bits, so make the warehouse path sit below a regular file instead
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    result = run_lakecdc("dbt", "debug", env={"LAKECDC_WAREHOUSE": str(blocker / "wh")}, cwd=tmp_path)
    _one_line_error(result, "is not writable")
    assert stat.S_ISREG(blocker.stat().st_mode)


def test_doctor_reports_each_failure_on_its_own_line(tmp_path: Path):
    (tmp_path / "lakecdc.yml").write_text(
        "sources:\n  pg: {connector: postgresql, database.hostname: 127.0.0.1, database.port: 1, topic.prefix: pg,"
        " database.user: u, database.dbname: d}\n"
        "  files: {connector: debezium-json, path: /nonexistent/lakecdc}\n")
    result = run_lakecdc("doctor", cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert any(line.startswith("ok   engine:") for line in lines), lines
    assert any(line.startswith("FAIL dbt:") and "dbt_project.yml" in line for line in lines), lines
    assert any(line.startswith("FAIL source pg:") and "127.0.0.1:1 is unreachable" in line for line in lines)
    assert any(line.startswith("FAIL source files:") and "does not exist" in line for line in lines)
