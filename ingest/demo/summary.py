"""The short summary `lakecdc demo` prints at the end: steps, rows per layer, checks, report location."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ingest.demo.pipeline import LAYERS, DemoRun


def expectation_counts(summary: dict[str, Any]) -> tuple[int, int]:
    """(passed, total) expectations over every suite of a `lakecdc quality` JSON summary."""
    passed = total = 0
    for suite in summary.get("suites") or []:
        for expectation in suite.get("expectations") or []:
            total += 1
            passed += bool(expectation.get("success"))
    return passed, total


def report_location(summary: dict[str, Any]) -> str:
    """The HTML index next to the summary file."""
    folder = Path(summary["path"]).parent
    index = folder / "index.html"
    return str(index if index.exists() else folder)


def render_summary(run: DemoRun) -> str:
    lines = ["", "lakecdc demo summary", "===================="]
    for step in run.steps:
        lines.append(f"  {step.status:<8} {step.name}")
    lines.append("")
    lines.append("rows per layer:")
    for layer in LAYERS:
        tables = run.rows.get(layer, {})
        if not tables:
            lines.append(f"  {layer:<7} no tables")
            continue
        total = sum(tables.values())
        detail = ", ".join(f"{t} {n}" for t, n in sorted(tables.items()))
        lines.append(f"  {layer:<7} {total} rows in {len(tables)} tables ({detail})")
    verify = next((s for s in run.steps if s.name == "verify silver"), None)
    if verify is not None:
        lines.append(f"silver vs source: {verify.detail}")
    quality = next((s for s in run.steps if s.name == "quality"), None)
    if quality is None or quality.status == "pending":
        lines.append("quality: pending (`lakecdc quality` is not part of this installation yet)")
    else:
        summary = quality.data.get("summary")
        if summary:
            passed, total = expectation_counts(summary)
            suites = len(summary.get("suites") or [])
            lines.append(f"quality: {passed} of {total} checks passed in {suites} suites "
                         f"(status {summary.get('status', quality.status)})")
            lines.append(f"HTML report: {report_location(summary)}")
        else:
            lines.append(f"quality: {quality.status}; {quality.detail}")
    pending = [s.name for s in run.steps if s.status == "pending"]
    failed = [s.name for s in run.steps if s.status == "failed"]
    lines.append(f"demo folder: {run.root}")
    if pending:
        lines.append(f"pending (not built yet): {', '.join(pending)}")
    if failed:
        lines.append(f"FAILED: {', '.join(failed)} (details above)")
    return "\n".join(lines)
