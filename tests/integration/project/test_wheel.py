"""The lakecdc wheel (what the Databricks bundle deploys) builds with `python -m build`, installs with its
dependencies into a clean virtual environment, and its entry points run there. Slow (a full dependency
install from PyPI or the pip cache: a few minutes)."""

from __future__ import annotations

import copy
import os
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from ingest.dbt_runner import DBT_PACKAGE_MACROS
from ingest.project_init import TEMPLATE_DIR
from tests.conftest import ROOT
from tests.support.e2e import (
    MARIA_DB,
    MARIA_JSON,
    MARIA_SOURCE,
    MARIA_TABLES,
    PG_JSON,
    PG_SOURCE,
    PG_TABLES,
    Project,
    compare_source,
    maria_server_id,
    maria_setup,
    maria_source_rows,
    maria_workload_1,
    pg_drop_slot,
    pg_properties,
    pg_setup,
    pg_source_rows,
    pg_workload_1,
)

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def run(cmd: list[str], cwd: Path | None = None, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "LAKECDC_CONFIG")}
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"{' '.join(cmd)} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    """(the built wheel, a clean virtual environment with it installed); the venv (a few GB) is removed after."""
    tmp_path = tmp_path_factory.mktemp("wheel")
    dist = tmp_path / "dist"
    # sdist first, then the wheel from the unpacked sdist (nothing is built inside the source tree)
    run([sys.executable, "-m", "build", "--outdir", str(dist), str(ROOT)], cwd=tmp_path)
    wheels = list(dist.glob("lakecdc-*.whl"))
    assert len(wheels) == 1 and len(list(dist.glob("lakecdc-*.tar.gz"))) == 1
    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", str(venv)])
    run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check", str(wheels[0])],
        timeout=1200)
    yield wheels[0], venv
    shutil.rmtree(venv, ignore_errors=True)


@pytest.mark.timeout(1500)
def test_wheel_builds_installs_in_a_clean_venv_and_runs(installed: tuple[Path, Path], tmp_path: Path) -> None:
    wheel, venv = installed
    with zipfile.ZipFile(wheel) as whl:
        names = whl.namelist()
        entry_points = next(whl.read(n).decode() for n in names if n.endswith(".dist-info/entry_points.txt"))
    assert "ingest/cli.py" in names and "ingest/demo/generate.py" in names
    # what `lakecdc init` writes and installs: the dbt package and the project template
    package = {n.removeprefix("ingest/dbt_package/") for n in names if n.startswith("ingest/dbt_package/")}
    assert package == {"dbt_project.yml", *(f"macros/{p.name}" for p in DBT_PACKAGE_MACROS.glob("*.sql"))}
    template = {n.removeprefix("ingest/project_template/") for n in names if n.startswith("ingest/project_template/")}
    assert template == {str(p.relative_to(TEMPLATE_DIR)) for p in TEMPLATE_DIR.rglob("*") if p.is_file()}
    assert not any(n.startswith(("tests/", "warehouse/", "models/")) for n in names)
    assert "lakecdc = ingest.cli:console_main" in entry_points and "lakecdc-job = ingest.cli:job_main" in entry_points
    python = venv / "bin" / "python"

    # run from an empty folder so nothing from the source checkout can be imported by accident
    work = tmp_path / "work"
    work.mkdir()
    where = run([str(python), "-c", "import ingest; print(ingest.__file__)"], cwd=work).stdout.strip()
    assert where.startswith(str(venv))
    help_text = run([str(venv / "bin" / "lakecdc"), "--help"], cwd=work).stdout
    for command in ("init", "run", "status", "dbt", "quality", "generate", "demo", "doctor", "serve"):
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


# -- the new user's first hour, from the wheel ------------------------------------------------------------------

class InstalledProject(Project):
    """A Project whose every `lakecdc` command is the installed wheel's executable, in a clean environment."""

    executable: Path
    init_config = ""

    def __init__(self, executable: Path, *args, **kwargs) -> None:
        self.executable = executable
        super().__init__(*args, **kwargs)
        for name in ("VIRTUAL_ENV", "PYTHONPATH", "LAKECDC_CONFIG"):
            self.env.pop(name, None)

    def lakecdc(self, *args: str) -> str:
        output = self.run(str(self.executable), *args)
        if args == ("init",):  # what init wrote, before the Project replaces it
            self.init_config = (self.dir / "lakecdc.yml").read_text()
        return output

    def for_source(self, source: str) -> InstalledProject:
        view = copy.copy(self)
        view.source = source
        return view


@pytest.mark.timeout(1500)
def test_new_user_walkthrough_from_the_wheel(installed: tuple[Path, Path], tmp_path: Path, pg_dsn: str,
                                            mariadb_params: dict) -> None:
    """In an empty folder, with nothing from the repository: `lakecdc init`, lakecdc.yml edited to a PostgreSQL
    and a MariaDB database, `doctor`, `run --until-caught-up` (snapshot, then a workload streamed), `generate`,
    `dbt build`, `quality`: every command exits 0 and every silver table equals its source table."""
    _, venv = installed
    dsn = pg_setup(pg_dsn)
    maria_setup(mariadb_params)
    try:
        project = InstalledProject(venv / "bin" / "lakecdc", tmp_path, PG_SOURCE, "postgresql", {})
        assert (project.dir / "dbt_packages" / "lakecdc" / "macros").resolve().is_relative_to(venv)
        # the user's edit of what init wrote: `sources: {}` replaced by two sources, comments and engine kept
        assert "sources: {}\n" in project.init_config and "warehouse: ./warehouse" in project.init_config
        project.warehouse = project.dir / "warehouse"
        sources = {PG_SOURCE: {"connector": "postgresql", **pg_properties(pg_dsn)},
                   MARIA_SOURCE: {"connector": "mariadb", "database.hostname": mariadb_params["host"],
                                  "database.port": mariadb_params["port"], "database.user": mariadb_params["user"],
                                  "database.password": "${WALKTHROUGH_MARIADB_PASSWORD}",
                                  "database.server.id": maria_server_id() + 1, "topic.prefix": MARIA_SOURCE,
                                  "database.include.list": MARIA_DB}}
        project.env["WALKTHROUGH_MARIADB_PASSWORD"] = mariadb_params["password"]
        (project.dir / "lakecdc.yml").write_text(project.init_config.replace(
            "sources: {}\n", yaml.safe_dump({"sources": sources}, sort_keys=False), 1))

        doctor = project.lakecdc("doctor")
        assert f"ok   source {PG_SOURCE}" in doctor and f"ok   source {MARIA_SOURCE}" in doctor, doctor
        project.lakecdc("run", "--until-caught-up")
        pg_workload_1(dsn)
        maria_workload_1(mariadb_params)
        project.lakecdc("run", "--until-caught-up")
        project.lakecdc("schema", "rebuild")
        project.lakecdc("generate")
        build = project.lakecdc("dbt", "build")
        assert "Completed successfully" in build, build[-3000:]
        quality = project.lakecdc("quality")
        assert (project.dir / "reports" / "quality" / "index.html").is_file(), quality[-2000:]

        compare_source(project.for_source(PG_SOURCE), PG_TABLES, PG_JSON, lambda t: pg_source_rows(dsn, t),
                       "walkthrough:")
        compare_source(project.for_source(MARIA_SOURCE), MARIA_TABLES, MARIA_JSON,
                       lambda t: maria_source_rows(mariadb_params, t), "walkthrough:")
    finally:
        pg_drop_slot(pg_dsn)
