"""databricks.yml: structure (targets, tasks, dependencies, retries, no inline secrets), and every task's
command line run locally, in dependency order, against the embedded engine with the demo data.

What the local run substitutes, and nothing else (there is no Databricks workspace here):
- `${workspace.file_path}` is a local folder holding what `databricks bundle deploy` uploads (the dbt
  project, lakecdc.yml) and `/Volumes/` is a local folder (a Unity Catalog volume's stand-in);
- the job cluster's environment is used as declared, except LAKECDC_PROFILE (databricks -> local) and the
  secret references, which get test values;
- the bundle variable `dbt_vars` is overridden (as `databricks bundle deploy --var dbt_vars=...` would) with
  the embedded engine's dialect, and the dbt task's commands run through `lakecdc dbt` with the project's
  local profile instead of the profile Databricks generates for a SQL warehouse;
- python_wheel_task entry points are loaded from the installed distribution's metadata and called with
  the task's parameters as argv, as the Databricks wheel task runner does.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import ROOT

BUNDLE = ROOT / "databricks.yml"
_REF = re.compile(r"\$\{([a-z_]+)\.([A-Za-z0-9_.]+)\}")
_SECRET_REF = re.compile(r"^\{\{secrets/[A-Za-z0-9_.${}-]+/[A-Za-z0-9_.-]+\}\}$")
_SECRET_NAMES = re.compile(r"(password|passwd|secret|token|credential|api_?key|private_?key)", re.IGNORECASE)
_TOKEN_LIKE = re.compile(r"(dapi[0-9a-f]{20,}|ghp_[A-Za-z0-9]{20,}|AKIA[0-9A-Z]{16}|xox[bp]-|-----BEGIN)")


def load_bundle() -> dict[str, Any]:
    return yaml.safe_load(BUNDLE.read_text())


def job(bundle: dict[str, Any]) -> dict[str, Any]:
    jobs = bundle["resources"]["jobs"]
    assert len(jobs) == 1, "one job per target"
    return next(iter(jobs.values()))


def tasks_by_key(bundle: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {t["task_key"]: t for t in job(bundle)["tasks"]}


def wheel_tasks(bundle: dict[str, Any], command: str) -> list[dict[str, Any]]:
    """python_wheel_task tasks whose lakecdc command (the first parameter after the options) is `command`."""
    return [t for t in job(bundle)["tasks"]
            if "python_wheel_task" in t and command in t["python_wheel_task"]["parameters"]]


def ingest_tasks(bundle: dict[str, Any]) -> list[dict[str, Any]]:
    return wheel_tasks(bundle, "run")


def walk(node: Any, path: str = "") -> list[tuple[str, Any]]:
    """(dotted path, value) of every scalar in the YAML tree."""
    if isinstance(node, dict):
        return [item for k, v in node.items() for item in walk(v, f"{path}.{k}" if path else str(k))]
    if isinstance(node, list):
        return [item for i, v in enumerate(node) for item in walk(v, f"{path}[{i}]")]
    return [(path, node)]


def resolve(node: Any, values: dict[str, str]) -> Any:
    """Substitute ${var.x}, ${bundle.x}, ${workspace.x}; an unknown reference fails the test."""
    if isinstance(node, dict):
        return {k: resolve(v, values) for k, v in node.items()}
    if isinstance(node, list):
        return [resolve(v, values) for v in node]
    if not isinstance(node, str):
        return node

    def sub(match: re.Match[str]) -> str:
        name = f"{match.group(1)}.{match.group(2)}"
        assert name in values, f"unresolved reference ${{{name}}}"
        return values[name]

    for _ in range(5):  # variables may refer to other references
        node = _REF.sub(sub, node)
    return node


def variable_values(bundle: dict[str, Any], target: str, overrides: dict[str, str]) -> dict[str, str]:
    values = {f"var.{k}": str(v.get("default", "")) for k, v in bundle["variables"].items() if "default" in v}
    values.update({f"var.{k}": str(v) for k, v in (bundle["targets"][target].get("variables") or {}).items()})
    values.update({f"var.{k}": v for k, v in overrides.items()})
    values["bundle.target"] = target
    values["bundle.name"] = bundle["bundle"]["name"]
    return values


def topological(tasks: dict[str, dict[str, Any]]) -> list[str]:
    done: list[str] = []
    pending = dict(tasks)
    while pending:
        ready = [k for k, t in pending.items() if all(d["task_key"] in done for d in t.get("depends_on", []))]
        assert ready, f"dependency cycle or unknown dependency among {sorted(pending)}"
        for key in sorted(ready):
            done.append(key)
            del pending[key]
    return done


# -- structure ------------------------------------------------------------------------------------------------

@pytest.mark.unit
def test_targets_dev_and_prod_with_their_own_catalog() -> None:
    bundle = load_bundle()
    assert bundle["bundle"]["name"] == "lakecdc"
    targets = bundle["targets"]
    assert set(targets) >= {"dev", "prod"}
    assert targets["dev"]["mode"] == "development" and targets["dev"].get("default") is True
    assert targets["prod"]["mode"] == "production"
    dev, prod = (variable_values(bundle, t, {"warehouse_id": "x"}) for t in ("dev", "prod"))
    assert dev["var.catalog"] != prod["var.catalog"]
    assert prod["var.schedule_pause"] == "UNPAUSED"


@pytest.mark.unit
def test_every_reference_is_declared() -> None:
    bundle = load_bundle()
    declared = set(bundle["variables"])
    for path, value in walk(bundle):
        if isinstance(value, str):
            for kind, name in _REF.findall(value):
                assert kind in ("var", "bundle", "workspace"), f"{path}: ${{{kind}.{name}}}"
                if kind == "var":
                    assert name in declared, f"{path}: undeclared variable {name}"
    required = [k for k, v in bundle["variables"].items() if "default" not in v]
    assert required == ["warehouse_id"]  # the one value a deployer must give (docs/databricks.md)


@pytest.mark.unit
def test_tasks_and_dependencies() -> None:
    bundle = load_bundle()
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    scripts = pyproject["project"]["scripts"]
    tasks = tasks_by_key(bundle)
    ingest = ingest_tasks(bundle)
    assert ingest, "an ingest task per source"
    for task in ingest:
        wheel = task["python_wheel_task"]
        params = wheel["parameters"]
        assert wheel["package_name"] == pyproject["project"]["name"] and wheel["entry_point"] in scripts
        assert params[params.index("run") + 1:][:1] == ["--source"] and "--until-caught-up" in params
        assert task["max_retries"] >= 1 and task.get("retry_on_timeout") is True
        assert any("whl" in lib for lib in task["libraries"])
    dbt = [t for t in tasks.values() if "dbt_task" in t]
    assert len(dbt) == 1
    dbt_task = dbt[0]
    assert {d["task_key"] for d in dbt_task["depends_on"]} == {t["task_key"] for t in ingest}
    assert dbt_task["dbt_task"]["commands"] and all(c.startswith("dbt build") for c in dbt_task["dbt_task"]["commands"])
    assert dbt_task["dbt_task"]["catalog"] == "${var.catalog}"
    assert any("dbt-databricks" in lib.get("pypi", {}).get("package", "") for lib in dbt_task["libraries"])
    quality = wheel_tasks(bundle, "quality")
    assert len(quality) == 1
    assert [d["task_key"] for d in quality[0]["depends_on"]] == [dbt_task["task_key"]]
    assert topological(tasks)[-1] == quality[0]["task_key"]
    clusters = {c["job_cluster_key"] for c in job(bundle)["job_clusters"]}
    assert all(t["job_cluster_key"] in clusters for t in tasks.values())
    schedule = job(bundle)["schedule"]
    assert schedule["quartz_cron_expression"] and schedule["pause_status"] == "${var.schedule_pause}"
    assert any(a.get("type") == "whl" for a in bundle["artifacts"].values())


@pytest.mark.unit
def test_no_secret_is_written_in_the_bundle() -> None:
    bundle = load_bundle()
    secret_refs = 0
    for path, value in walk(bundle):
        if not isinstance(value, str):
            continue
        assert not _TOKEN_LIKE.search(value), f"{path} looks like a credential"
        leaf = path.rsplit(".", 1)[-1]
        if _SECRET_NAMES.search(leaf) and leaf not in ("secret_scope",):
            assert _SECRET_REF.match(value), f"{path} must be a {{{{secrets/<scope>/<key>}}}} reference"
            secret_refs += 1
        if "{{secrets/" in value:
            assert _SECRET_REF.match(value), f"{path}: malformed secret reference"
    assert secret_refs >= 1  # the source credentials do come from the secret scope
    assert "password" not in BUNDLE.read_text().lower().replace("source-password", "").replace(
        "lakecdc_source_password", "")


@pytest.mark.unit
def test_job_entry_point_raises_on_failure_and_returns_on_success(tmp_path: Path, monkeypatch) -> None:
    from ingest.cli import job_main

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "argv", ["lakecdc-job", "--config", str(tmp_path / "missing.yml"), "status"])
    with pytest.raises(SystemExit) as raised:
        job_main()
    assert raised.value.code == 2
    monkeypatch.setattr(sys, "argv", ["lakecdc-job", "demo", "generate", "--out", str(tmp_path / "d"),
                                      "--changes", "100"])
    assert job_main() is None
    assert (tmp_path / "d" / "events" / "inventory.jsonl").exists()


# -- every task, locally, end to end -------------------------------------------------------------------------

# the bundle syncs the repository: the dbt project and the package with lakecdc's dbt macros
PROJECT_PARTS = ("dbt_project.yml", "profiles.yml", "ingest", "models", "expectations")


def deploy_locally(workspace: Path, root: Path) -> None:
    """What `databricks bundle deploy` uploads, as far as the tasks use it: the dbt project and lakecdc.yml
    (a debezium-json source named inventory reading the demo data from a volume)."""
    from ingest.demo.generate import generate_demo

    workspace.mkdir(parents=True)
    for name in PROJECT_PARTS:
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, workspace / name, ignore=shutil.ignore_patterns("__pycache__"))
        elif src.is_file():
            shutil.copy2(src, workspace / name)
    generate_demo(root / "Volumes" / "lakecdc_dev" / "landing" / "inventory", seed=5, changes=300)
    (workspace / "lakecdc.yml").write_text(volumes(
        "engine:\n  profile: local\n  warehouse: ./warehouse\n"
        "sources:\n  inventory:\n    connector: debezium-json\n"
        "    path: /Volumes/lakecdc_dev/landing/inventory/events\n    topic.prefix: inventory\n", root))


def volumes(text: str, root: Path) -> str:
    return text.replace("/Volumes/", f"{root}/Volumes/")


def task_env(bundle: dict[str, Any], values: dict[str, str], task: dict[str, Any], root: Path) -> dict[str, str]:
    cluster = next(c for c in job(bundle)["job_clusters"] if c["job_cluster_key"] == task["job_cluster_key"])
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LAKECDC_", "SPARK_REMOTE"))}
    for key, value in resolve(cluster["new_cluster"].get("spark_env_vars", {}), values).items():
        env[key] = f"test-value-of-{key.lower()}" if str(value).startswith("{{secrets/") else str(value)
    assert env.pop("LAKECDC_PROFILE") == "databricks"
    env["LAKECDC_PROFILE"] = "local"
    env["RUST_LOG"] = "error"
    return env


def call_entry_point(entry_point: str, params: list[str], cwd: Path, env: dict[str, str]):
    code = ("import sys\nfrom importlib.metadata import entry_points\n"
            f"ep = entry_points(group='console_scripts')[{entry_point!r}]\n"
            f"sys.argv = [{entry_point!r}, *sys.argv[1:]]\nep.load()()\n")
    return subprocess.run([sys.executable, "-c", code, *params], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=600)


@pytest.mark.slow
@pytest.mark.integration
def test_every_task_command_runs_locally_in_dependency_order(tmp_path: Path) -> None:
    bundle = load_bundle()
    workspace = tmp_path / "Workspace" / "files"
    deploy_locally(workspace, tmp_path)
    values = variable_values(bundle, "dev", {
        "warehouse_id": "local-sail",
        "dbt_vars": '{"lakecdc_engine": "sail", "lakecdc_managed_tables": false}',
    })
    values["workspace.file_path"] = str(workspace)
    tasks = tasks_by_key(bundle)
    ran = []
    for key in topological(tasks):
        task = resolve(tasks[key], values)
        env = task_env(bundle, values, task, tmp_path)
        if "python_wheel_task" in task:
            wheel = task["python_wheel_task"]
            params = [volumes(p, tmp_path) for p in wheel["parameters"]]
            proc = call_entry_point(wheel["entry_point"], params, workspace, env)
            assert proc.returncode == 0, f"{key}: {proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
            if "run" in params:
                # the models of the captured tables are generated from bronze before deployment
                # (docs/databricks.md): the dbt task runs the deployed project
                gen = subprocess.run([sys.executable, "-m", "ingest.cli", "generate", "--source",
                                      params[params.index("--source") + 1]], cwd=workspace, env=env,
                                     capture_output=True, text=True, timeout=600)
                assert gen.returncode == 0, gen.stdout + gen.stderr
        elif "dbt_task" in task:
            dbt = task["dbt_task"]
            project = Path(dbt["project_directory"])
            assert project == workspace and dbt["source"] == "WORKSPACE"
            for command in dbt["commands"]:
                args = shlex.split(command)
                assert args[0] == "dbt"
                proc = subprocess.run([sys.executable, "-m", "ingest.cli", "dbt", *args[1:], "--project-dir",
                                       str(project), "--profiles-dir", str(project)], cwd=project, env=env,
                                      capture_output=True, text=True, timeout=900)
                assert proc.returncode == 0, f"{key}: {command}\n{proc.stdout[-3000:]}\n{proc.stderr[-2000:]}"
        else:
            pytest.fail(f"task {key} has a type this test cannot run locally")
        ran.append(key)

    assert ran == topological(tasks) and len(ran) == len(tasks)
    warehouse = workspace / "warehouse"
    from deltalake import DeltaTable

    assert DeltaTable(str(warehouse / "bronze" / "inventory_events")).to_pyarrow_table().num_rows > 300
    assert DeltaTable(str(warehouse / "silver" / "inventory__customers")).to_pyarrow_table().num_rows > 0
    reports = Path(volumes(resolve("/Volumes/${var.catalog}/${var.reports_volume}", values), tmp_path))
    assert (reports / "summary.json").exists() and (reports / "index.html").exists()
    # one ingest task per configured source
    from ingest.config import load_config

    configured = set(load_config(workspace / "lakecdc.yml").sources)
    params = [t["python_wheel_task"]["parameters"] for t in ingest_tasks(bundle)]
    assert {p[p.index("--source") + 1] for p in params} == configured
