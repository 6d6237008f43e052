"""How `make test` spreads test files over its parallel workers (tests/support/scheduling.py)."""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.conftest import SERVICE_VARS, pytest_configure
from tests.support import scheduling
from tests.support.scheduling import COSTLY, durations_from_junit, make_scheduler, unit_of

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(("path", "unit"), [
    ("tests/conformance/test_postgres.py", COSTLY),               # the real Debezium's captures
    ("tests/integration/silver/test_engine_lane.py", COSTLY),     # a test takes the Spark fixture
    ("tests/integration/quality/test_quality_checks.py", COSTLY),
    ("tests/unit/test_scheduling.py", "tests/unit/test_scheduling.py"),
    ("tests/integration/project/test_wheel.py", "tests/integration/project/test_wheel.py"),
    ("tests/unit/test_no_such_file.py", "tests/unit/test_no_such_file.py"),
])
def test_unit_of_a_test_file(path: str, unit: str) -> None:
    assert unit_of(path) == unit


def test_durations_from_a_junit_report(tmp_path: Path) -> None:
    report = tmp_path / "junit.xml"
    report.write_text("""<testsuites><testsuite>
      <testcase classname="tests.unit.test_seq" name="test_a" time="1.25"/>
      <testcase classname="tests.unit.test_seq" name="test_b" time="0.5"/>
      <testcase classname="tests.integration.project.test_wheel.TestInstalled" name="test_c" time="100"/>
      <testcase classname="tests.conformance.test_postgres" name="test_d" time="30"/>
      <testcase classname="tests.integration.silver.test_engine_lane" name="test_e" time="12.5"/>
    </testsuite></testsuites>""")
    assert durations_from_junit(report) == {"tests/integration/project/test_wheel.py": 100.0, COSTLY: 42.5,
                                            "tests/unit/test_seq.py": 1.8}


class Config:
    """What the scheduler reads of pytest's config: the workers to start (`-n 2` is `--tx 2*popen`)."""

    option = SimpleNamespace(loadscopereorder=True)   # xdist's default: units by number of tests

    def getvalue(self, name: str) -> list[str]:
        assert name == "tx"
        return ["2*popen"]


class Worker:
    """What the scheduler needs of pytest-xdist's WorkerController: it is sent the indexes of tests to run."""

    def __init__(self, name: str) -> None:
        self.gateway, self.sent, self.shutting_down = SimpleNamespace(id=name), [], False

    def send_runtest_some(self, indexes: list[int]) -> None:
        self.sent.append(indexes)

    def shutdown(self) -> None:
        self.shutting_down = True


def test_workers_take_whole_files_longest_first(monkeypatch: pytest.MonkeyPatch) -> None:
    seconds = {"a.py": 1.0, "b.py": 50.0, "c.py": 20.0, "d.py": 30.0}
    monkeypatch.setattr(scheduling, "unit_seconds", lambda unit: seconds[unit])
    collection = [f"{file}::test_{i}" for file in ("a.py", "b.py", "c.py", "d.py") for i in range(3)]
    scheduler = make_scheduler(Config(), None)
    workers = [Worker("gw0"), Worker("gw1")]
    for worker in workers:
        scheduler.add_node(worker)
        scheduler.add_node_collection(worker, collection)
    scheduler.schedule()

    def files(indexes: list[int]) -> set[str]:
        return {collection[i].split("::")[0] for i in indexes}

    # b (50 s) and d (30 s) first, each whole on one worker
    assert [[files(sent) for sent in w.sent] for w in workers] == [[{"b.py"}], [{"d.py"}]]
    # a worker with two tests left takes its next file (xdist's rule): the longest left, c, then a
    scheduler.mark_test_complete(workers[1], collection.index("d.py::test_0"))
    assert files(workers[1].sent[-1]) == {"c.py"}
    scheduler.mark_test_complete(workers[0], collection.index("b.py::test_0"))
    assert files(workers[0].sent[-1]) == {"a.py"}


SERVICE_VALUES = {var: (f"{var}-set-0", f"{var}-set-1") for var in SERVICE_VARS}


@pytest.mark.parametrize(("worker", "set_index"), [("gw0", 0), ("gw1", 1)])
def test_each_worker_gets_its_own_service_set(monkeypatch: pytest.MonkeyPatch, worker: str, set_index: int) -> None:
    monkeypatch.setenv("PYTEST_XDIST_WORKER", worker)
    monkeypatch.setenv("LAKECDC_SERVICE_SETS", "2")
    for var, (first, second) in SERVICE_VALUES.items():
        monkeypatch.setenv(var, first)
        monkeypatch.setenv(f"{var}_1", second)
    pytest_configure(None)
    assert {var: os.environ[var] for var in SERVICE_VARS} == {
        var: values[set_index] for var, values in SERVICE_VALUES.items()}


def test_a_worker_without_a_service_set_stops_the_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw2")
    monkeypatch.setenv("LAKECDC_SERVICE_SETS", "2")
    monkeypatch.setenv("LAKECDC_PG_DSN", "host=127.0.0.1")
    with pytest.raises(pytest.UsageError, match="worker gw2 has no servers of its own"):
        pytest_configure(None)
