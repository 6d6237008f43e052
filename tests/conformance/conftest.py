"""Session-wide captures (one JVM per pytest process: every Debezium engine runs in it) and the closing note
with the counts per connector."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from tests.conformance import mariadb_workload as my
from tests.conformance import pg_workload as pg
from tests.conformance.capture import Captured, capture_mariadb, capture_postgres
from tests.conformance.compare import Comparison, compare, summarize

_began = time.monotonic()
COMPARISONS: dict[tuple[str, str], Comparison] = {}
TIMINGS: dict[str, float] = {}


@pytest.fixture(scope="session")
def conformance_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("conformance")


@pytest.fixture(scope="session")
def pg_captured(pg_dsn: str, conformance_dir: Path) -> Captured:
    captured = capture_postgres(pg_dsn, conformance_dir)
    TIMINGS["postgresql capture"] = captured.seconds
    return captured


@pytest.fixture(scope="session")
def mariadb_captured(mariadb_dbz_url: str, conformance_dir: Path) -> Captured:
    captured = capture_mariadb(mariadb_dbz_url, conformance_dir)
    TIMINGS["mariadb capture"] = captured.seconds
    return captured


def compared(connector: str, captured: Captured, run: str) -> Comparison:
    """The comparison of one run (computed once, kept for the closing note)."""
    if (connector, run) not in COMPARISONS:
        debezium, lakecdc = captured.runs[run]
        modes = (pg.RUNS if connector == "postgresql" else my.RUNS)[run]
        COMPARISONS[(connector, run)] = compare(connector, run, debezium, lakecdc, captured.refused.get(run), modes)
    return COMPARISONS[(connector, run)]


def pytest_terminal_summary(terminalreporter) -> None:  # noqa: ANN001 (pytest's reporter object)
    if not COMPARISONS:
        return
    tr = terminalreporter
    tr.section("conformance with the real Debezium 3.6.3")
    totals: dict[str, list[int]] = {}
    for (connector, run), c in sorted(COMPARISONS.items()):
        t = totals.setdefault(connector, [0, 0, 0])
        t[0] += c.compared
        t[1] += c.identical
        t[2] += len(c.groups)
        tr.write_line(f"{connector} {run} ({c.modes}): {c.compared} compared, {c.identical} identical, "
                      f"{c.differing} differing")
    for connector, (n, same, groups) in totals.items():
        tr.write_line(f"TOTAL {connector}: {n} events compared, {same} identical, {n - same} differing "
                      f"({groups} difference groups)")
    report = os.environ.get("LAKECDC_CONFORMANCE_REPORT")
    if report:  # the grouped differences of every run, per connector, for routing fixes
        with open(report, "w") as out:
            for connector in totals:
                out.write(f"== {connector}\n")
                out.write(summarize([c for (name, _), c in sorted(COMPARISONS.items()) if name == connector]) + "\n")
        tr.write_line(f"grouped differences written to {report}")
    for what, seconds in TIMINGS.items():
        tr.write_line(f"{what}: {seconds:.1f}s")
    tr.write_line(f"conformance suite wall time so far: {time.monotonic() - _began:.1f}s")
