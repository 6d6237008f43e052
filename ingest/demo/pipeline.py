"""The end-to-end demo: generate the inventory data, land it in bronze, build the schema history, run dbt
(silver and gold), run the quality checks, and summarise.

Each step goes through the public `lakecdc` command line (in this process, so the embedded engine starts
once), exactly as a user or a Databricks task runs it. A step whose command or module does not exist yet
in this installation is reported as "pending" (detected from the registered commands and the tables the
previous steps wrote), never faked;
a step that exists and fails is "failed".
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re
import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ingest.demo.generate import DEFAULT_CHANGES, DEFAULT_SEED, EVENTS_FILE, generate_demo
from ingest.errors import LakecdcError

SOURCE = "inventory"
MARKER = ".lakecdc-demo"
CONFIG_NAME = "lakecdc.yml"
LAYERS = ("bronze", "silver", "gold")


@dataclass
class StepResult:
    name: str
    status: str                 # ok | failed | pending
    detail: str
    seconds: float = 0.0
    data: dict[str, Any] = field(default_factory=dict)


@dataclass
class DemoRun:
    root: Path
    config_path: Path
    steps: list[StepResult] = field(default_factory=list)
    rows: dict[str, dict[str, int]] = field(default_factory=dict)   # layer -> table -> rows

    @property
    def ok(self) -> bool:
        return all(s.status != "failed" for s in self.steps)


# -- detection ----------------------------------------------------------------------------------------------

def available_commands() -> set[str]:
    """The subcommands this installation's `lakecdc` offers (registered command modules included)."""
    from ingest.cli import build_parser

    parser = build_parser()
    for action in parser._subparsers._group_actions if parser._subparsers else []:  # noqa: SLF001
        if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
            return set(action.choices)
    return set()


def model_files(project_dir: Path, layer: str) -> list[Path]:
    folder = project_dir / "models" / layer
    return sorted(folder.rglob("*.sql")) if folder.is_dir() else []


# -- the project the demo runs in ---------------------------------------------------------------------------

def prepare(root: Path) -> Path:
    """A fresh demo folder: <root>/lakecdc.yml, data and warehouse are (re)created. A non-empty folder
    that is not a demo folder is refused rather than wiped."""
    if root.exists() and any(root.iterdir()) and not (root / MARKER).exists():
        raise LakecdcError(f"demo: {root} exists and is not a demo folder; choose another --dir")
    for sub in ("data", "warehouse", "reports", "project"):
        shutil.rmtree(root / sub, ignore_errors=True)
    root.mkdir(parents=True, exist_ok=True)
    (root / MARKER).write_text("created by `lakecdc demo`; the folder is rebuilt on every run\n")
    config_path = root / CONFIG_NAME
    config_path.write_text(demo_config_text())
    return config_path


def demo_config_text() -> str:
    return (
        "# Written by `lakecdc demo`: the generated inventory records, landed with the debezium-json source.\n"
        "engine:\n"
        "  profile: local\n"
        "  warehouse: ./warehouse\n"
        "sources:\n"
        f"  {SOURCE}:\n"
        "    connector: debezium-json\n"
        f"    path: ./data/{EVENTS_FILE.parent.as_posix()}\n"
        f"    topic.prefix: {SOURCE}\n"
    )


@contextlib.contextmanager
def demo_environment(config_path: Path) -> Iterator[None]:
    """LAKECDC_CONFIG points every command at the demo project; engine overrides from the caller's
    environment would send the demo elsewhere, so they are cleared for the run."""
    names = ("LAKECDC_CONFIG", "LAKECDC_PROFILE", "LAKECDC_WAREHOUSE", "LAKECDC_REMOTE")
    saved = {n: os.environ.get(n) for n in names}
    for n in names:
        os.environ.pop(n, None)
    os.environ["LAKECDC_CONFIG"] = str(config_path)
    try:
        yield
    finally:
        for n, v in saved.items():
            if v is None:
                os.environ.pop(n, None)
            else:
                os.environ[n] = v


def run_cli(args: list[str]) -> tuple[int, str]:
    """`lakecdc <args>` in this process; (exit code, combined output)."""
    from ingest.cli import main

    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(buffer):
        try:
            code = main(args)
        except SystemExit as exc:  # argparse errors
            code = int(exc.code or 0) if not isinstance(exc.code, str) else 2
    return code, buffer.getvalue()


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _last_line(text: str) -> str:
    lines = [_ANSI.sub("", line).strip() for line in text.strip().splitlines()]
    lines = [line for line in lines if line]
    return lines[-1][:300] if lines else ""


# -- steps ---------------------------------------------------------------------------------------------------

def step_generate(root: Path, seed: int, changes: int) -> StepResult:
    data = generate_demo(root / "data", seed=seed, changes=changes)
    by_op = data.workload.by_op
    detail = (f"{data.records} Kafka records ({by_op['r']} snapshot rows, {by_op['c']} inserts, {by_op['u']} updates, "
              f"{by_op['d']} deletes, {len(data.workload.ddl)} DDL, {len(data.workload.pk_changes)} key change; "
              f"{data.delivery.late} late, {data.delivery.redelivered + data.delivery.reread} duplicated)")
    return StepResult("generate", "ok", detail, data={"records": data.records})


def step_command(name: str, args: list[str], commands: set[str]) -> StepResult:
    """`lakecdc <args>`; pending when this installation has no such command (its module is not registered)."""
    if args[0] not in commands:
        return StepResult(name, "pending", f"`lakecdc {args[0]}` is not part of this installation yet")
    code, output = run_cli(args)
    status = "ok" if code == 0 else "failed"
    detail = _last_line(output) or f"exit code {code}"
    return StepResult(name, status, detail if status == "ok" else f"exit {code}: {detail}", data={"output": output})


GOLD_MODELS = Path(__file__).resolve().parent / "gold"  # the demo's gold models (models/gold/inventory)


def make_demo_project(target: Path) -> Path:
    """The demo's own dbt project, made as a user makes one (`lakecdc init`: lakecdc's dbt package through
    packages.yml) plus the demo's gold models; the demo's configuration is <demo>/lakecdc.yml, not the
    project's. Nothing of the user's own project (the working directory) is read or changed."""
    from ingest.dbt_runner import install_dbt_packages
    from ingest.project_init import init_project

    shutil.rmtree(target, ignore_errors=True)
    init_project(target)
    (target / "lakecdc.yml").unlink()
    shutil.copytree(GOLD_MODELS, target / "models" / "gold", dirs_exist_ok=True)
    install_dbt_packages(target)
    return target


def step_generate_models(root: Path, commands: set[str]) -> StepResult:
    demo_project = make_demo_project(root / "project")
    result = step_command("generate models", ["generate", "--source", SOURCE, "--models-dir",
                                              str(demo_project / "models")], commands)
    result.data["project"] = demo_project
    return result


def step_dbt(root: Path, commands: set[str]) -> StepResult:
    project = root / "project"
    if not (project / "dbt_project.yml").exists():
        return StepResult("dbt build", "pending", "no dbt project (dbt_project.yml) found")
    silver = model_files(project, "silver")
    if not silver:
        return StepResult("dbt build", "pending", "no silver models (models/silver is empty)")
    args = ["dbt", "build", "--project-dir", str(project), "--profiles-dir", str(project),
            "--target-path", str(project / "target"), "--log-path", str(project / "logs"),
            "--vars", "{lakecdc_gold_inventory: true}"]
    result = step_command("dbt build", args, commands)
    result.detail = f"{len(silver)} silver, {len(model_files(project, 'gold'))} gold model files; " + result.detail
    return result


def step_schema_history(commands: set[str]) -> StepResult:
    """The parsed schema history (bronze.<S>_schema_history), rebuilt from bronze.<S>_schema_changes."""
    return step_command("schema history", ["schema", "rebuild", "--source", SOURCE], commands)


def step_verify(root: Path, config_path: Path, dbt: StepResult, history_pending: bool = False) -> StepResult:
    """Silver current state against the generator's expected final state of the source database."""
    if dbt.status != "ok":
        return StepResult("verify silver", "pending", "needs a successful dbt build")
    from ingest.config import load_config
    from ingest.demo.verify import compare_silver
    from ingest.engine import start_engine

    config = load_config(config_path)
    comparisons = compare_silver(start_engine(config.engine).spark, config.engine.warehouse, root / "data", SOURCE)
    matching = [c for c in comparisons if c.matches]
    detail = f"{len(matching)} of {len(comparisons)} tables equal the source's final state"
    wrong = [c.describe() for c in comparisons if not c.matches]
    if wrong:
        detail += " (" + "; ".join(wrong) + ")"
    status = "ok" if len(matching) == len(comparisons) else "failed"
    if wrong and history_pending:
        detail += "; the schema history step is pending, so renames cannot be applied"
    return StepResult("verify silver", status, detail, data={"comparisons": comparisons})


def count_rows(config_path: Path) -> dict[str, dict[str, int]]:
    """Rows of every Delta table in the demo warehouse, by layer (schema folder)."""
    from ingest.config import load_config
    from ingest.engine import find_warehouse_tables, start_engine

    config = load_config(config_path)
    spark = start_engine(config.engine).spark
    out: dict[str, dict[str, int]] = {}
    for schema, table, location in find_warehouse_tables(config.engine.warehouse):
        out.setdefault(schema, {})[table] = spark.read.format("delta").load(str(location)).count()
    return out


def quality_summary(root: Path) -> dict[str, Any] | None:
    """The quality run's JSON summary under <demo>/reports, with its path."""
    for path in sorted((root / "reports").rglob("summary.json")):
        try:
            return {"path": str(path), **json.loads(path.read_text())}
        except (OSError, ValueError):
            continue
    return None


# -- the whole run -------------------------------------------------------------------------------------------

def run_demo(root: Path, *, seed: int = DEFAULT_SEED, changes: int = DEFAULT_CHANGES,
             echo: Callable[[str], None] = print) -> DemoRun:
    root = root.resolve()
    config_path = prepare(root)
    run = DemoRun(root=root, config_path=config_path)
    commands = available_commands()

    def step(name: str, action: Callable[[], StepResult]) -> StepResult:
        """Run one step; an unexpected exception fails the step (and is shown), it does not end the demo."""
        began = time.perf_counter()
        try:
            result = action()
        except Exception as exc:  # noqa: BLE001 - the demo reports every step, whatever happens in one
            first = (str(exc).strip().splitlines() or [""])[0][:300]
            result = StepResult(name, "failed", f"{type(exc).__name__}: {first}")
        result.seconds = time.perf_counter() - began
        run.steps.append(result)
        echo(f"  {result.status:<8} {result.name:<15} {result.detail}  ({result.seconds:.1f}s)")
        return result

    os.environ.setdefault("RUST_LOG", "error")  # the embedded engine's warnings would drown the demo's output
    echo(f"lakecdc demo: project {config_path}")
    expectations = root / "project" / "expectations"
    quality_args = ["quality", "--output", str(root / "reports" / "quality"), "--expectations", str(expectations),
                    "--generate"]
    with demo_environment(config_path):
        step("generate", lambda: step_generate(root, seed, changes))
        ingest = step("ingest", lambda: step_command("ingest", ["run", "--source", SOURCE, "--until-caught-up"],
                                                     commands))
        history = step("schema history", lambda: step_schema_history(commands))
        step("generate models", lambda: step_generate_models(root, commands))
        dbt = step("dbt build", lambda: step_dbt(root, commands))
        step("verify silver", lambda: step_verify(root, config_path, dbt, history.status == "pending"))
        expectations.mkdir(parents=True, exist_ok=True)
        quality = step("quality", lambda: step_command("quality", quality_args, commands))
        if quality.status != "pending":
            summary = quality_summary(root)
            if summary:
                quality.data["summary"] = summary
        if ingest.status == "ok" or any(s.status == "ok" for s in run.steps[2:]):
            try:
                run.rows = count_rows(config_path)
            except Exception as exc:  # noqa: BLE001 - the summary is still printed
                echo(f"  (rows per layer unavailable: {type(exc).__name__}: {str(exc).splitlines()[0][:200]})")
    return run
