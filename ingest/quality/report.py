"""The analyst's report under the report directory (default reports/quality/):

  index.html             suites with pass / warn / fail, counts, links (self-contained, no network)
  suites/<suite>.html    one page per suite (table): every expectation with severity, result, observed
                         value and, for failures, a sample of the offending rows
  history.html           status of every suite across the kept runs (not only the last)
  ingest.html            per source with metrics in bronze: the newest figures, lag and events/s charts
  summary.json           this run, machine-readable; runs/<run_id>.json keeps each run
  history.jsonl          one line per run (the source of history.html)
  data_docs/index.html   great-expectations Data Docs of the same validations (suites and results)
"""

from __future__ import annotations

import dataclasses
import html
import json
import re
from pathlib import Path
from typing import Any

from ingest.quality.charts import line_chart
from ingest.quality.ingest_metrics import KEPT_BATCHES, SourceIngest
from ingest.quality.runner import Outcome, QualityRunResult, SuiteResult

STATUS_LABEL = {"pass": "PASS", "warn": "WARN", "fail": "FAIL"}
CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px;color:#1f2328;background:#fff}
h1{font-size:22px;margin:0 0 4px} h2{font-size:18px;margin:24px 0 8px} .meta{color:#59636e;margin-bottom:16px}
table{border-collapse:collapse;margin:8px 0 16px;font-size:14px} th,td{border:1px solid #d1d9e0;padding:4px 8px;
text-align:left;vertical-align:top} th{background:#f6f8fa} .status{font-weight:700;border-radius:4px;padding:1px 6px}
tr.fail-row td{background:#fff5f5} tr.warn-row td{background:#fffbe6}
.pass{background:#dafbe1;color:#116329} .warn{background:#fff8c5;color:#7d4e00} .fail{background:#ffebe9;color:#a40e26}
.sample{font-family:ui-monospace,Menlo,monospace;font-size:12px} .sample td{max-width:360px;overflow-wrap:anywhere}
nav a{margin-right:16px} .err{color:#a40e26} code{background:#f6f8fa;padding:0 3px}
.scroll{max-width:100%;overflow-x:auto} td{overflow-wrap:anywhere}
#headline{font-size:15px;margin:8px 0 12px} #headline b{font-size:17px} .trend{color:#59636e}
"""


def _e(value: Any) -> str:
    if isinstance(value, dict | list):
        value = json.dumps(value, default=str)
    return html.escape("" if value is None else str(value))


def suite_filename(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name) + ".html"


def _page(title: str, body: str, depth: int = 0) -> str:
    up = "../" * depth
    # no link to great-expectations' Data Docs index: it draws its table with scripts from CDNs, so offline it
    # is an empty page; each suite page links its (static) GX validation pages
    nav = (f'<nav><a href="{up}index.html">Suites</a><a href="{up}history.html">Run history</a>'
           f'<a href="{up}ingest.html">Ingest</a><a href="{up}summary.json">summary.json</a></nav>')
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{_e(title)}</title><style>{CSS}</style>"
            f"</head><body>{nav}{body}</body></html>\n")


def _badge(status: str) -> str:
    return f'<span class="status {status}">{STATUS_LABEL.get(status, status.upper())}</span>'


def _outcome_status(o: Outcome) -> str:
    return "pass" if o.success else o.severity


def _counts(suite: SuiteResult) -> tuple[int, int, int]:
    passed = sum(o.success for o in suite.outcomes)
    failed = sum(not o.success and o.severity == "fail" for o in suite.outcomes)
    return passed, sum(not o.success for o in suite.outcomes) - failed, failed


def _defined_in(suite: SuiteResult) -> str:
    if suite.kind == "cdc":
        return "expectations/project.yml (project-wide CDC checks)"
    return suite.file or "generated default (not saved: lakecdc quality --generate)"


def run_counts(run: QualityRunResult) -> dict[str, int]:
    """Suites by status and expectations by result: the index headline, summary.json and history.jsonl."""
    suites = {status: sum(s.status == status for s in run.suites) for status in ("pass", "warn", "fail")}
    totals = [_counts(s) for s in run.suites]
    return {"suites": len(run.suites), "suites_pass": suites["pass"], "suites_warn": suites["warn"],
            "suites_fail": suites["fail"], "expectations": sum(sum(t) for t in totals),
            "expectations_passed": sum(t[0] for t in totals), "expectations_warned": sum(t[1] for t in totals),
            "expectations_failed": sum(t[2] for t in totals)}


def _trend(run: QualityRunResult, previous: dict[str, Any] | None) -> str:
    """What changed since the previous kept run: suites newly failing or warning, suites fixed."""
    if previous is None:
        return "first run: no earlier run to compare with"
    before = previous.get("suites", {})
    worse = [s.name for s in run.suites if s.status != "pass" and before.get(s.name, "pass") == "pass"]
    fixed = [s.name for s in run.suites if s.status == "pass" and before.get(s.name, "pass") != "pass"]
    def names(items: list[str]) -> str:
        return ", ".join(items[:5]) + (" ..." if len(items) > 5 else "")

    parts = []
    if worse:
        parts.append(f"{len(worse)} newly failing or warning ({names(worse)})")
    if fixed:
        parts.append(f"{len(fixed)} fixed ({names(fixed)})")
    since = f"since run {previous['run_id'].removeprefix('lakecdc-')} ({STATUS_LABEL.get(previous['status'], '?')})"
    return f"{since}: " + ("; ".join(parts) if parts else "no suite changed status")


def _index(run: QualityRunResult, previous: dict[str, Any] | None) -> str:
    overall = overall_status(run)
    c = run_counts(run)
    rows = []
    for s in run.suites:
        passed, warned, failed = _counts(s)
        gx = (f'<a href="{_e(s.docs_pages[0]["page"])}">Data Docs</a>' if s.docs_pages else "")
        rows.append(f"<tr><td>{_badge(s.status)}</td><td><a href='suites/{suite_filename(s.name)}'>{_e(s.name)}</a>"
                    f"</td><td>{_e(s.kind)}</td><td>{_e(s.table or '')}</td><td>{passed}</td><td>{warned}</td>"
                    f"<td>{failed}</td><td>{gx}</td><td>{_e(_defined_in(s))}</td></tr>")
    headline = (f"<div id='headline'><b>{c['suites']} suites</b>: <span id='suites-pass'>{c['suites_pass']}</span>"
                f" pass, <span id='suites-warn'>{c['suites_warn']}</span> warn, <span id='suites-fail'>"
                f"{c['suites_fail']}</span> fail · <b>{c['expectations']} expectations</b>: "
                f"{c['expectations_passed']} passed, {c['expectations_warned']} warnings, "
                f"{c['expectations_failed']} failures<div class='trend' id='trend'>{_e(_trend(run, previous))}"
                "</div></div>")
    body = (f"<h1>Data quality {_badge(overall)}</h1><div class='meta'>run {_e(run.run_id)} · started "
            f"{_e(run.started_at)} · {run.duration_s:.1f} s</div>" + headline +
            "<div class='scroll'><table id='suites'><tr><th>Status</th><th>Suite</th><th>Kind</th><th>Table</th>"
            "<th>Passed</th><th>Warnings</th><th>Failures</th><th>GX</th><th>Defined in</th></tr>" + "".join(rows)
            + "</table></div>")
    return _page("Data quality", body)


def _sample_table(sample: dict[str, Any]) -> str:
    head = "".join(f"<th>{_e(c)}</th>" for c in sample["columns"])
    rows = "".join("<tr>" + "".join(f"<td>{_e(v)}</td>" for v in row) + "</tr>" for row in sample["rows"])
    return f"<div class='scroll'><table class='sample'><tr>{head}</tr>{rows}</table></div>"


def _suite_page(suite: SuiteResult, run: QualityRunResult) -> str:
    rows, details = [], []
    rank = {"fail": 0, "warn": 1, "pass": 2}  # failures first, then warnings, each in suite order
    for n, o in enumerate(sorted(suite.outcomes, key=lambda o: rank[_outcome_status(o)])):
        status = _outcome_status(o)
        unexpected = "" if o.unexpected_count is None else f"{o.unexpected_count}"
        if o.unexpected_percent is not None:
            unexpected += f" ({o.unexpected_percent:.4g}%)"
        observed = o.observed
        if isinstance(observed, dict) and "columns" in observed:
            observed = "; ".join(", ".join(f"{c}={v}" for c, v in zip(observed["columns"], row, strict=False))
                                 for row in observed["rows"])
        link = f"<a href='#x{n}'>rows</a>" if o.sample else ""
        rows.append(f"<tr class='exp {status}-row'><td>{_badge(status)}</td><td>{_e(o.severity)}</td>"
                    f"<td>{_e(o.description)}<br><code>{_e(o.type)}</code></td><td>{_e(o.column or '')}</td>"
                    f"<td>{_e(observed)}</td><td>{_e(unexpected)}</td><td class='err'>{_e(o.error or '')}</td>"
                    f"<td>{link}</td></tr>")
        if o.sample:
            details.append(f"<h2 id='x{n}'>Offending rows: {_e(o.description)}</h2>"
                           f"<div class='meta'>{len(o.sample['rows'])} rows shown (a sample) · "
                           f"<code>{_e(o.type)}</code> · batch {_e(o.batch)}</div>{_sample_table(o.sample)}")
    passed, warned, failed = _counts(suite)
    gx = "".join(f" · <a href='../{_e(p['page'])}'>GX Data Docs: {_e(p['batch'])}</a>" for p in suite.docs_pages)
    where = f"table {suite.table}" if suite.table else "project-wide CDC checks of source " + suite.name[4:]
    body = (f"<h1>{_e(suite.name)} {_badge(suite.status)}</h1><div class='meta'>{_e(suite.kind)} · "
            f"{_e(where)} · {passed} passed, {warned} warnings, {failed} failures · run {_e(run.run_id)}"
            f"{gx}</div><div class='scroll'><table id='expectations'><tr><th>Status</th><th>Severity</th>"
            "<th>Expectation</th><th>Column</th><th>Observed</th><th>Unexpected</th><th>Error</th><th>Sample</th></tr>"
            + "".join(rows) + "</table></div>" + "".join(details))
    return _page(suite.name, body, depth=1)


def _history_page(history: list[dict[str, Any]]) -> str:
    runs = list(reversed(history))  # newest first
    names = sorted({name for h in runs for name in h["suites"]})
    head = "".join(f"<th>{_e(h['run_id'].removeprefix('lakecdc-'))}<br>{_e(h['started_at'])}</th>" for h in runs)
    overall = "".join(f"<td>{_badge(h['status'])}</td>" for h in runs)
    rows = [f"<tr><th>all suites</th>{overall}</tr>"]
    for name in names:
        cells = "".join(f"<td>{_badge(h['suites'][name]) if name in h['suites'] else '–'}</td>" for h in runs)
        rows.append(f"<tr><td><a href='suites/{suite_filename(name)}'>{_e(name)}</a></td>{cells}</tr>")
    body = (f"<h1>Run history</h1><div class='meta'>{len(runs)} runs kept, newest first</div>"
            f"<div class='scroll'><table id='history'><tr><th>Suite</th>{head}</tr>{''.join(rows)}</table></div>")
    return _page("Run history", body)


def _ingest_page(sources: list[SourceIngest]) -> str:
    if not sources:
        body = ("<h1>Ingest</h1><div class='meta' id='no-metrics'>No source has metrics in bronze yet: runs write "
                "them with <code>lakecdc run --metrics-port PORT</code> (docs/metrics.md).</div>")
        return _page("Ingest", body)
    parts = [f"<h1>Ingest</h1><div class='meta'>{len(sources)} sources with metrics in bronze; the charts cover "
             f"the newest {KEPT_BATCHES} batches of each</div>"]
    for ingest in sources:
        rows = "".join(f"<tr><td>{_e(context)}</td><td>{_e(attribute)}</td><td>{_e(table or '')}</td>"
                       f"<td>{_e(f'{value:,.0f}' if value.is_integer() else f'{value:,.3f}')}</td></tr>"
                       for context, attribute, table, value in ingest.latest)
        name = re.sub(r"[^A-Za-z0-9_-]", "_", ingest.source)
        parts.append(
            f"<h2 id='source-{name}'>{_e(ingest.source)}</h2><div class='meta'>from {_e(ingest.table)} · newest "
            f"batch {ingest.newest_batch} at {_e(ingest.recorded_at)}</div>"
            + line_chart(f"lag-{name}", "Streaming behind the source", "ms", ingest.lag_ms)
            + line_chart(f"rate-{name}", "Events produced by the connector", "events/s", ingest.events_per_s)
            + f"<details><summary>Figures after batch {ingest.newest_batch}</summary><div class='scroll'>"
            f"<table id='latest-{name}'><tr><th>Context</th><th>Attribute</th><th>Table</th><th>Value</th></tr>"
            f"{rows}</table></div></details>")
    return _page("Ingest", "".join(parts))


def overall_status(run: QualityRunResult) -> str:
    """One word for the run, the same in the index page, summary.json, history and the CLI: fail (the exit
    code says so), warn (no failure, some suite warned), pass."""
    return "fail" if run.exit_code else ("warn" if any(s.status == "warn" for s in run.suites) else "pass")


def summary_dict(run: QualityRunResult, docs_index: str | None) -> dict[str, Any]:
    return {
        "run_id": run.run_id, "started_at": run.started_at, "duration_s": round(run.duration_s, 3),
        "status": overall_status(run), "exit_code": run.exit_code, "data_docs": docs_index,
        "counts": run_counts(run),
        "suites": [{"name": s.name, "table": s.table, "kind": s.kind, "file": s.file, "status": s.status,
                    "data_docs": s.docs_pages, "page": f"suites/{suite_filename(s.name)}",
                    "expectations": [dataclasses.asdict(o) for o in s.outcomes]} for s in run.suites],
    }


def write_report(run: QualityRunResult, report_dir: Path, docs_index: str | None, keep_runs: int,
                 ingest: list[SourceIngest] | None = None) -> Path:
    """Write every page and the JSON files; returns the index page."""
    (report_dir / "suites").mkdir(parents=True, exist_ok=True)
    (report_dir / "runs").mkdir(exist_ok=True)
    summary = summary_dict(run, docs_index)
    text = json.dumps(summary, indent=2, default=str)
    (report_dir / "summary.json").write_text(text)
    (report_dir / "runs" / f"{run.run_id}.json").write_text(text)

    history_file = report_dir / "history.jsonl"
    history = [json.loads(line) for line in history_file.read_text().splitlines() if line.strip()] \
        if history_file.exists() else []
    previous = history[-1] if history else None
    history.append({"run_id": run.run_id, "started_at": run.started_at, "status": summary["status"],
                    "counts": summary["counts"], "suites": {s.name: s.status for s in run.suites}})
    for old in history[:-keep_runs]:
        (report_dir / "runs" / f"{old['run_id']}.json").unlink(missing_ok=True)
    history = history[-keep_runs:]
    history_file.write_text("".join(json.dumps(h) + "\n" for h in history))

    for suite in run.suites:
        (report_dir / "suites" / suite_filename(suite.name)).write_text(_suite_page(suite, run))
    (report_dir / "history.html").write_text(_history_page(history))
    (report_dir / "ingest.html").write_text(_ingest_page(ingest or []))
    index = report_dir / "index.html"
    index.write_text(_index(run, previous))
    return index
