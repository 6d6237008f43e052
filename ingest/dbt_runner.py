"""Run dbt in-process against the configured engine (dbt-spark, `method: session`).

dbt-spark's session method asks PySpark for `SparkSession.builder.getOrCreate()`; with `SPARK_REMOTE`
pointing at the engine's URL (which carries the engine's session id) dbt joins the very session that
holds the re-registered warehouse tables.
"""

from __future__ import annotations

import os
from pathlib import Path

from ingest.config import ProjectConfig
from ingest.engine import start_engine

PROJECT_ROOT_MARKER = "dbt_project.yml"


def find_project_dir(start: Path | None = None) -> Path | None:
    """The dbt project directory: the nearest folder upwards holding dbt_project.yml."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / PROJECT_ROOT_MARKER).exists():
            return folder
    return None


def dbt_environment(config: ProjectConfig, remote_url: str | None) -> dict[str, str]:
    """Environment variables dbt needs to reach the engine and place tables."""
    env = {"LAKECDC_WAREHOUSE": str(config.engine.warehouse)}
    if remote_url:
        env["SPARK_REMOTE"] = remote_url
    return env


def run_dbt(config: ProjectConfig, args: list[str]) -> int:
    """Invoke dbt with `args` in this process; returns dbt's exit code (0 ok, 1 failures, 2 error)."""
    from dbt.cli.main import dbtRunner

    engine = start_engine(config.engine)
    os.environ.update(dbt_environment(config, engine.remote_url))
    project_dir = find_project_dir()
    if project_dir is not None:
        if "--project-dir" not in args and "DBT_PROJECT_DIR" not in os.environ:
            args = [*args, "--project-dir", str(project_dir)]
        if "--profiles-dir" not in args and "DBT_PROFILES_DIR" not in os.environ:
            if (project_dir / "profiles.yml").exists():
                args = [*args, "--profiles-dir", str(project_dir)]
    result = dbtRunner().invoke(args)
    if result.exception is not None:
        return 2
    return 0 if result.success else 1
