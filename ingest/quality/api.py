"""One call that does a whole quality run: load suites and settings, add defaults for uncovered tables,
validate on the engine, write the report. Used by `lakecdc quality`, the tests and bench/quality.py."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ingest.config import ProjectConfig
from ingest.errors import LakecdcError
from ingest.quality.discover import Lakehouse
from ingest.quality.generate import default_suites, write_defaults
from ingest.quality.ingest_metrics import read_ingest
from ingest.quality.plan import build_plan
from ingest.quality.report import write_report
from ingest.quality.runner import QualityRunResult, Runner
from ingest.quality.suites import load_settings, load_suites


@dataclass
class QualityRun:
    result: QualityRunResult
    report_dir: Path
    index: Path
    generated: list[Path]
    keyless: list[str] = field(default_factory=list)  # silver tables without a key: not checked for uniqueness,
    #                                                    reconciliation or source values


def project_dir(config: ProjectConfig) -> Path:
    return config.path.resolve().parent if config.path else Path.cwd()


def run_quality(config: ProjectConfig, *, select: list[str] | None = None, generate: bool = False,
                output: Path | None = None, expectations_dir: Path | None = None,
                spark: object | None = None) -> QualityRun:
    root = project_dir(config)
    exp_dir = (expectations_dir or root / "expectations").resolve()
    settings = load_settings(exp_dir)
    suites = load_suites(exp_dir)
    report_dir = (output or root / settings["report"]["directory"]).resolve()
    if spark is None:
        from ingest.engine import start_engine

        spark = start_engine(config.engine).spark
    lake = Lakehouse(spark=spark, catalog=config.engine.catalog, schemas=dict(settings["schemas"]))
    defaults = default_suites(lake, suites)
    generated = write_defaults(defaults, exp_dir) if generate else []
    plan = build_plan(lake, suites + defaults, settings, exp_dir, select, sources=config.sources, base_dir=root)
    if select and not plan:
        raise LakecdcError(f"--select {' '.join(select)} matches no suite")
    try:
        report_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise LakecdcError(f"report directory {report_dir} is not writable: {exc.strerror or exc}") from None
    # Sail (local, remote) has no DataFrame.persist: each call only printed a warning (18-36 per run)
    runner = Runner(report_dir, sample_rows=int(settings["report"]["sample_rows"]),
                    persist=config.engine.can_persist_dataframes)
    result = runner.run(plan)
    keep = int(settings["report"]["history_runs"])
    docs_index = runner.build_data_docs(result, keep)
    index = write_report(result, report_dir, docs_index, keep, read_ingest(lake))
    keyless = sorted(s.table for s in suites + defaults
                     if s.table.partition(".")[0] == lake.schemas["silver"] and not s.key
                     and any(info.name == s.name for info in plan))
    return QualityRun(result=result, report_dir=report_dir, index=index, generated=generated, keyless=keyless)
