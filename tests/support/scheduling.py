"""How `make test` spreads the test files over its parallel workers (pytest-xdist, tests/conftest.py).

- A test file is one unit of work: it runs whole, in order, on one worker (module fixtures built once).
- The files of the costly session fixtures (the Apache Spark JVM of `apache_spark`, the real Debezium's captures of
  tests/conformance) form one unit, so that those start once per run.
- Longest first (from tests/durations.json, the seconds each unit took in a serial run; unknown files count as
  DEFAULT_SECONDS): a long file taken up last would leave the other worker idle at the end.

Refresh the figures after adding slow tests: `python -m tests.support.scheduling JUNIT_XML` (a junit report of a
serial `pytest tests --junitxml=...`) rewrites tests/durations.json.
"""

from __future__ import annotations

import json
import re
import sys
import xml.etree.ElementTree as ET
from collections import defaultdict
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DURATIONS = ROOT / "tests" / "durations.json"
COSTLY = "costly-session-fixtures"
COSTLY_DIRS = ("tests/conformance/",)
# a test function taking the apache_spark fixture (its signature may span lines)
COSTLY_FIXTURE_USE = re.compile(r"def \w+\([^)]*\bapache_spark\b", re.S)
DEFAULT_SECONDS = 5.0


@cache
def unit_of(path: str) -> str:
    """The unit of work of a test file (its path relative to the repository)."""
    if path.startswith(COSTLY_DIRS):
        return COSTLY
    file = ROOT / path
    text = file.read_text(encoding="utf-8") if file.is_file() else ""
    return COSTLY if COSTLY_FIXTURE_USE.search(text) else path


@cache
def expected_seconds() -> dict[str, float]:
    return json.loads(DURATIONS.read_text(encoding="utf-8")) if DURATIONS.is_file() else {}


def unit_seconds(unit: str) -> float:
    return expected_seconds().get(unit, DEFAULT_SECONDS)


def make_scheduler(config, log):  # noqa: ANN001, ANN201 (pytest-xdist's types)
    """The scheduler for pytest_xdist_make_scheduler."""
    from xdist.scheduler import LoadScopeScheduling

    class LongestFileFirst(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return unit_of(nodeid.split("::", 1)[0])

        def _assign_work_unit(self, node) -> None:  # noqa: ANN001
            # the next unit of work a worker takes is the longest left (the queue is in collection order)
            if self.workqueue:
                self.workqueue.move_to_end(max(self.workqueue, key=unit_seconds), last=False)
            super()._assign_work_unit(node)

    return LongestFileFirst(config, log)


def durations_from_junit(report: Path) -> dict[str, float]:
    """Seconds per unit of work from a junit report of a serial run."""
    seconds: dict[str, float] = defaultdict(float)
    for case in ET.parse(report).getroot().iter("testcase"):
        parts = case.get("classname", "").split(".")
        module = next(i for i, part in enumerate(parts) if part.startswith("test_"))
        seconds[unit_of("/".join(parts[:module + 1]) + ".py")] += float(case.get("time") or 0)
    return {unit: round(s, 1) for unit, s in sorted(seconds.items(), key=lambda item: -item[1])}


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python -m tests.support.scheduling JUNIT_XML")
    DURATIONS.write_text(json.dumps(durations_from_junit(Path(sys.argv[1])), indent=1) + "\n", encoding="utf-8")
    print(f"wrote {DURATIONS.relative_to(ROOT)}")
