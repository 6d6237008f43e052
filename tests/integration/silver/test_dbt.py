"""dbt runs through the engine: `lakecdc dbt build` twice (incremental merge into Delta), and plain
`dbt build` against `lakecdc serve` from another process."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ingest.dbt_runner import DBT_PACKAGE_DIR, install_dbt_packages
from ingest.project_init import TEMPLATE_DIR
from tests.conftest import ROOT, run_lakecdc

pytestmark = pytest.mark.integration
FIXTURE = ROOT / "tests" / "fixtures" / "dbt_two_models"


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    dest = tmp_path / "proj"
    shutil.copytree(FIXTURE, dest)
    # lakecdc's dbt package as a user's project has it (`lakecdc init`): packages.yml and the schema-name shim
    (dest / "packages.yml").write_text(f"packages:\n  - local: {json.dumps(str(DBT_PACKAGE_DIR))}\n")
    shutil.copytree(TEMPLATE_DIR / "macros", dest / "macros")
    install_dbt_packages(dest)
    return dest


def _read_table(warehouse: Path, name: str) -> list[tuple]:
    from deltalake import DeltaTable

    table = DeltaTable(str(warehouse / "silver" / name)).to_pyarrow_table().to_pylist()
    return sorted(tuple(row.values()) for row in table)


@pytest.mark.slow
def test_lakecdc_dbt_build_twice_merges_incrementally(project: Path):
    warehouse = project / "warehouse"
    env = {"LAKECDC_WAREHOUSE": str(warehouse)}
    first = run_lakecdc("dbt", "build", "--vars", "{upto: 5, version: 1}", cwd=project, env=env)
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    assert _read_table(warehouse, "numbers_merged") == [(i, "v1", 1) for i in range(1, 6)]

    second = run_lakecdc("dbt", "build", "--vars", "{upto: 7, version: 2}", cwd=project, env=env)
    assert second.returncode == 0, second.stdout[-3000:] + second.stderr[-3000:]
    # merged by id: rows 1..5 updated in place, 6..7 inserted, no duplicates
    assert _read_table(warehouse, "numbers_merged") == [(i, "v2", 2) for i in range(1, 8)]
    # the second run was incremental: a MERGE into the existing table, not a rebuild
    log = (project / "logs" / "dbt.log").read_text()
    assert re.search(r"merge into .*numbers_merged", log, re.IGNORECASE), "no MERGE statement in dbt.log"
    # tables land at <warehouse>/<schema>/<model> as Delta
    assert (warehouse / "silver" / "numbers_merged" / "_delta_log").is_dir()


def test_plain_dbt_build_against_lakecdc_serve(project: Path, tmp_path: Path):
    warehouse = project / "warehouse"
    env_file = tmp_path / "serve.env"
    serve = subprocess.Popen(
        [sys.executable, "-m", "ingest.cli", "serve", "--port", "0", "--env-file", str(env_file)],
        cwd=project, env={**os.environ, "LAKECDC_WAREHOUSE": str(warehouse)},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        deadline = time.time() + 120
        while not env_file.exists() and time.time() < deadline and serve.poll() is None:
            time.sleep(0.2)
        assert env_file.exists(), serve.stderr.read() if serve.poll() is not None else "serve did not start"
        exports = dict(re.findall(r'export (\w+)="([^"]*)"', env_file.read_text()))
        assert exports["SPARK_REMOTE"].startswith("sc://")
        dbt = shutil.which("dbt", path=str(Path(sys.executable).parent))
        assert dbt, "dbt executable missing from the virtual environment"
        result = subprocess.run([dbt, "build", "--profiles-dir", str(project)], cwd=project,
                                env={**os.environ, **exports}, capture_output=True, text=True, timeout=600)
        assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
        assert _read_table(warehouse, "numbers_merged") == [(i, "v1", 1) for i in range(1, 6)]
    finally:
        serve.send_signal(signal.SIGINT)
        try:
            serve.wait(timeout=30)
        except subprocess.TimeoutExpired:
            serve.kill()
