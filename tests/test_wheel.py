"""The lakecdc wheel (what the Databricks bundle deploys) builds with `python -m build`, installs with its
dependencies into a clean virtual environment, and its entry points run there. Slow (a full dependency
install from PyPI or the pip cache: a few minutes)."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.integration


def run(cmd: list[str], cwd: Path | None = None, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "LAKECDC_CONFIG")}
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"{' '.join(cmd)} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


@pytest.mark.timeout(1500)
def test_wheel_builds_installs_in_a_clean_venv_and_runs(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    # sdist first, then the wheel from the unpacked sdist (nothing is built inside the source tree)
    run([sys.executable, "-m", "build", "--outdir", str(dist), str(ROOT)], cwd=tmp_path)
    wheels = list(dist.glob("lakecdc-*.whl"))
    assert len(wheels) == 1 and len(list(dist.glob("lakecdc-*.tar.gz"))) == 1
    with zipfile.ZipFile(wheels[0]) as whl:
        names = whl.namelist()
        entry_points = next(whl.read(n).decode() for n in names if n.endswith(".dist-info/entry_points.txt"))
    assert "ingest/cli.py" in names and "ingest/demo/generate.py" in names
    assert not any(n.startswith(("tests/", "warehouse/", "models/")) for n in names)
    assert "lakecdc = ingest.cli:main" in entry_points and "lakecdc-job = ingest.cli:job_main" in entry_points

    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", str(venv)])
    python = venv / "bin" / "python"
    run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", str(wheels[0])], timeout=1200)

    # run from an empty folder so nothing from the source checkout can be imported by accident
    work = tmp_path / "work"
    work.mkdir()
    where = run([str(python), "-c", "import ingest; print(ingest.__file__)"], cwd=work).stdout.strip()
    assert where.startswith(str(venv))
    help_text = run([str(venv / "bin" / "lakecdc"), "--help"], cwd=work).stdout
    for command in ("run", "status", "dbt", "quality", "generate", "demo", "doctor", "serve"):
        assert f"    {command} " in help_text, command
    # the Databricks entry point: success returns normally, failure raises SystemExit with the exit code
    run([str(venv / "bin" / "lakecdc-job"), "--version"], cwd=work)
    bad = subprocess.run([str(venv / "bin" / "lakecdc-job"), "--config", "missing.yml", "status"], cwd=work,
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "configuration file not found" in bad.stderr
    # the installed package generates the demo data without the source tree
    run([str(venv / "bin" / "lakecdc"), "demo", "generate", "--out", str(work / "data"), "--changes", "200"],
        cwd=work)
    assert (work / "data" / "events" / "inventory.jsonl").stat().st_size > 0
