"""Validate every planned batch with great-expectations on its Spark DataFrame and collect the outcomes
(with a sample of offending rows for each failure). great-expectations' file context under
`<report dir>/_gx` keeps suites and validation results across runs; its Data Docs site is
`<report dir>/data_docs`."""

from __future__ import annotations

import datetime as dt
import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ingest.quality.checks import SuiteInfo, ValidationBatch
from ingest.quality.samples import json_safe, offending_frame, sample_rows
from ingest.quality.suites import ExpectationSpec

SITE_NAME = "lakecdc"


@dataclass
class Outcome:
    suite: str
    batch: str
    type: str
    kwargs: dict[str, Any]
    severity: str
    origin: str
    description: str | None
    success: bool
    observed: Any = None
    element_count: int | None = None
    unexpected_count: int | None = None
    unexpected_percent: float | None = None
    sample: dict[str, Any] | None = None  # {"columns": [...], "rows": [[...]]}: offending rows
    error: str | None = None

    @property
    def column(self) -> str | None:
        return self.kwargs.get("column") or (",".join(self.kwargs["column_list"]) if "column_list" in self.kwargs
                                             else None)


@dataclass
class SuiteResult:
    name: str
    table: str | None
    kind: str
    file: str | None
    outcomes: list[Outcome] = field(default_factory=list)
    docs_pages: list[dict[str, str]] = field(default_factory=list)  # GX validation pages: {"batch", "page"}

    @property
    def status(self) -> str:
        failed = [o for o in self.outcomes if not o.success]
        if any(o.severity == "fail" for o in failed):
            return "fail"
        return "warn" if failed else "pass"


@dataclass
class QualityRunResult:
    run_id: str
    started_at: str
    duration_s: float
    suites: list[SuiteResult]

    @property
    def exit_code(self) -> int:
        return 1 if any(s.status == "fail" for s in self.suites) else 0


def _gx_context(report_dir: Path) -> Any:
    os.environ.setdefault("GX_ANALYTICS_ENABLED", "false")
    import great_expectations as gx
    from great_expectations.data_context.types.base import ProgressBarsConfig

    context = gx.get_context(mode="file", project_root_dir=str(report_dir / "_gx"))
    site = {
        "class_name": "SiteBuilder",
        "show_how_to_buttons": False,
        "store_backend": {"class_name": "TupleFilesystemStoreBackend",
                          "base_directory": str((report_dir / "data_docs").resolve())},
        "site_index_builder": {"class_name": "DefaultSiteIndexBuilder"},
    }
    sites = context.list_data_docs_sites()
    if sites.get(SITE_NAME) != site:
        for name in list(sites):
            context.delete_data_docs_site(name)
        context.add_data_docs_site(SITE_NAME, site)
    bars = context.variables.progress_bars
    if bars is None or (bars.get("globally", True) if isinstance(bars, dict) else bars.globally):
        context.variables.progress_bars = ProgressBarsConfig(globally=False, metric_calculations=False)
        context.variables.save()
    if context.config.analytics_enabled is not False:
        context.enable_analytics(False)
    return context


def _describe(spec: ExpectationSpec) -> str:
    if spec.description:
        return spec.description
    words = spec.type.removeprefix("expect_").replace("_", " ")
    args = ", ".join(f"{k}={v}" for k, v in spec.kwargs.items() if k not in ("result_format", "catch_exceptions"))
    return f"{words} ({args})" if args else words


def _error_outcomes(batch: ValidationBatch, message: str) -> list[Outcome]:
    specs = [batch.stands_for.get(i, e) for i, e in enumerate(batch.expectations)]
    return [Outcome(batch.suite, batch.name, e.type, e.kwargs, e.severity, e.origin, _describe(e), False,
                    error=message) for e in specs]


def _readable(frame: Any, spec: ExpectationSpec) -> Any:
    """A sample as analysts read it: lakecdc's derived check columns (cdc.DERIVED_LABELS) dropped but the failing
    check's own, which is shown under its label."""
    from ingest.quality.cdc import DERIVED_LABELS

    own = spec.kwargs.get("column")
    frame = frame.drop(*[c for c in frame.columns if c in DERIVED_LABELS and c != own])
    if own in DERIVED_LABELS and own in frame.columns:
        frame = frame.withColumnRenamed(own, DERIVED_LABELS[own])
    return frame


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return (lines[0] if lines else type(exc).__name__)[:500]


class Runner:
    def __init__(self, report_dir: Path, sample_rows: int = 20, persist: bool = True) -> None:
        import great_expectations as gx

        self.gx = gx
        self.report_dir = report_dir
        self.sample_limit = sample_rows
        self.context = _gx_context(report_dir)
        # persist: great-expectations caches each batch's DataFrame (engines that can)
        self.datasource = self.context.data_sources.add_or_update_spark(name=SITE_NAME, persist=persist)
        now = dt.datetime.now(dt.UTC)
        self.run_name = "lakecdc-" + now.strftime("%Y%m%dT%H%M%S%fZ")
        from great_expectations.core.run_identifier import RunIdentifier

        self.run_identifier = RunIdentifier(run_name=self.run_name, run_time=now)
        self.started_at = now

    def _batch_definition(self, name: str) -> Any:
        try:
            asset = self.datasource.get_asset(name)
        except LookupError:
            asset = self.datasource.add_dataframe_asset(name=name)
        try:
            return asset.get_batch_definition("whole")
        except (KeyError, LookupError, ValueError):
            return asset.add_batch_definition_whole_dataframe("whole")

    def validate(self, batch: ValidationBatch) -> list[Outcome]:
        if not batch.expectations:
            return []
        try:
            df = batch.frame()
            df.schema  # noqa: B018 - resolves the plan now: a missing table or column fails here
            if batch.aggregate:
                df = df.sparkSession.createDataFrame(df.limit(1000).collect(), schema=df.schema)
        except Exception as exc:
            return _error_outcomes(batch, _first_line(exc))
        suite = self.gx.ExpectationSuite(name=batch.gx_suite_name, expectations=[e.to_gx() for e in batch.expectations])
        suite = self.context.suites.add_or_update(suite)
        position = {e.id: i for i, e in enumerate(suite.expectations)}
        definition = self.context.validation_definitions.add_or_update(self.gx.ValidationDefinition(
            name=batch.gx_suite_name, data=self._batch_definition(batch.gx_suite_name), suite=suite))
        result_format: dict[str, Any] = {"result_format": "SUMMARY", "partial_unexpected_count": self.sample_limit}
        if batch.index_columns:
            result_format["unexpected_index_column_names"] = list(batch.index_columns)
        try:
            result = definition.run(batch_parameters={"dataframe": df}, result_format=result_format,
                                    run_id=self.run_identifier)
        except Exception as exc:
            return _error_outcomes(batch, _first_line(exc))
        outcomes: list[Outcome | None] = [None] * len(batch.expectations)
        for r in result.results:
            i = position.get(r.expectation_config.id)
            if i is None:
                continue
            outcomes[i] = self._outcome(batch, i, r, df)
        missing = _error_outcomes(batch, "great-expectations returned no result for this expectation")
        return [o if o is not None else missing[i] for i, o in enumerate(outcomes)]

    def _outcome(self, batch: ValidationBatch, i: int, r: Any, df: Any) -> Outcome:
        spec = batch.stands_for.get(i, batch.expectations[i])
        res = r.result or {}
        error = None
        if r.exception_info and r.exception_info.get("raised_exception"):
            error = (r.exception_info.get("exception_message") or "error")[:500]
        out = Outcome(batch.suite, batch.name, spec.type, spec.kwargs, spec.severity, spec.origin, _describe(spec),
                      bool(r.success), observed=json_safe(res.get("observed_value")),
                      element_count=res.get("element_count"), unexpected_count=res.get("unexpected_count"),
                      unexpected_percent=res.get("unexpected_percent"), error=error)
        if batch.aggregate and out.observed is None:
            # an aggregate batch (one row per source or per check): its values are the observation
            out.observed = sample_rows(df, 5)
        if not out.success and error is None:
            out.sample = self._sample(batch, i, batch.expectations[i], df, res)
        return out

    def _sample(self, batch: ValidationBatch, i: int, spec: ExpectationSpec, df: Any,
                res: dict[str, Any]) -> dict | None:
        try:
            sampler = batch.samplers.get(i)
            frame = sampler() if sampler else offending_frame(df, spec)
            if frame is not None:
                return sample_rows(_readable(frame, spec), self.sample_limit,
                                   order_by=batch.order_by or batch.index_columns)
        except Exception as exc:  # the check itself ran; only the sample failed
            return {"columns": ["sample error"], "rows": [[_first_line(exc)]]}
        values = res.get("partial_unexpected_list") or []
        rows = res.get("partial_unexpected_index_list") or [{"value": v} for v in values]
        if not rows:
            return None
        columns = list(rows[0].keys()) if isinstance(rows[0], dict) else ["value"]
        return {"columns": columns, "rows": [[json_safe(row.get(c)) for c in columns] for row in rows]}

    def run(self, plan: list[SuiteInfo]) -> QualityRunResult:
        began = time.perf_counter()
        suites = []
        for info in plan:
            result = SuiteResult(info.name, info.table, info.kind, info.file)
            for batch in info.batches:
                result.outcomes.extend(self.validate(batch))
            suites.append(result)
        return QualityRunResult(run_id=self.run_name, started_at=self.started_at.isoformat(timespec="seconds"),
                                duration_s=time.perf_counter() - began, suites=suites)

    def build_data_docs(self, run: QualityRunResult, keep_runs: int) -> str | None:
        """Render this run's validation pages and the GX index; drop runs beyond the retention."""
        from great_expectations.data_context.types.resource_identifiers import ExpectationSuiteIdentifier

        store = self.context.validation_results_store
        keys = store.list_keys()
        runs = sorted({k.run_id.run_name for k in keys if k.run_id.run_name}, reverse=True)
        expired = set(runs[keep_runs:])
        for key in keys:
            if key.run_id.run_name in expired:
                store.remove_key(key)
        roots = [self.report_dir / "data_docs" / "validations", self.report_dir / "_gx"]
        for name in expired:  # the rendered pages, and the store's now empty run folders
            for root in roots:
                for path in root.glob(f"**/{name}"):
                    if path.is_dir():
                        shutil.rmtree(path, ignore_errors=True)
        current = [k for k in keys if k.run_id.run_name == self.run_name]
        suite_ids = [ExpectationSuiteIdentifier(name=n) for n in sorted({k.expectation_suite_identifier.name
                                                                         for k in current})]
        self.context.build_data_docs(site_names=[SITE_NAME], resource_identifiers=[*current, *suite_ids])
        by_suite: dict[str, list[str]] = {}
        for key in current:
            urls = self.context.get_docs_sites_urls(resource_identifier=key, site_name=SITE_NAME)
            if urls and urls[0].get("site_url"):
                path = Path(urls[0]["site_url"].removeprefix("file://"))
                by_suite.setdefault(key.expectation_suite_identifier.name, []).append(
                    os.path.relpath(path, self.report_dir))
        for suite in run.suites:
            for gx_name, pages in sorted(by_suite.items(), key=lambda item: (item[0] != suite.name, item[0])):
                if gx_name == suite.name or gx_name.startswith(suite.name + "."):
                    batch = "table" if gx_name == suite.name else gx_name[len(suite.name) + 1:]
                    suite.docs_pages.extend({"batch": batch, "page": page} for page in pages)
        index = self.report_dir / "data_docs" / "index.html"
        return os.path.relpath(index, self.report_dir) if index.exists() else None
