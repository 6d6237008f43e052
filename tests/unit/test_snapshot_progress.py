"""The snapshot progress line of `lakecdc run` (ingest.connectors.progress): table n of N, rows read against the
server's estimates, percent and ETA, table-driven with a clock that only moves when told."""

from __future__ import annotations

import io
import re
from types import SimpleNamespace

import pytest

from ingest.connectors.progress import SnapshotProgress
from ingest.runner import RunResult, _Progress

pytestmark = pytest.mark.unit


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def progress(estimates: list[int | None]) -> tuple[SnapshotProgress, Clock]:
    clock = Clock()
    return SnapshotProgress([(f"db.t{i + 1}", e) for i, e in enumerate(estimates)], clock=clock), clock


# (estimates, [(table started, rows read in it)...], seconds elapsed, expected line)
CASES = [
    ([1000, 3000], [], 0, "snapshot of 2 tables starting"),
    ([1000, 3000], [("db.t1", 0)], 0, "snapshot table 1/2 db.t1: 0 rows read of ~4,000 (0%)"),
    ([1000, 3000], [("db.t1", 500)], 10, "snapshot table 1/2 db.t1: 500 rows read of ~4,000 (12%), ETA 0:01:10"),
    ([1000, 3000], [("db.t1", 1000), ("db.t2", 1000)], 20,
     "snapshot table 2/2 db.t2: 2,000 rows read of ~4,000 (50%), ETA 0:00:20"),
    # an estimate below what was read: the rest of that table is unknown, never 100% before the end
    ([10, 3000], [("db.t1", 50)], 5, "snapshot table 1/2 db.t1: 50 rows read of ~3,050 (1%), ETA 0:05:00"),
    ([1000], [("db.t1", 5000)], 5, "snapshot table 1/1 db.t1: 5,000 rows read of ~5,000 (99%)"),
    # no estimate for any table left (never analyzed): rows only
    ([1000, None], [("db.t1", 1000), ("db.t2", 7)], 3, "snapshot table 2/2 db.t2: 1,007 rows read"),
    ([None, 200], [("db.t1", 10)], 1, "snapshot table 1/2 db.t1: 10 rows read of ~210 (4%), ETA 0:00:20"),
    # 3600 s of work left: hours shown
    ([4000], [("db.t1", 100)], 100, "snapshot table 1/1 db.t1: 100 rows read of ~4,000 (2%), ETA 1:05:00"),
]


@pytest.mark.parametrize(("estimates", "reads", "elapsed", "expected"), CASES)
def test_progress_line(estimates, reads, elapsed, expected):
    snapshot, clock = progress(estimates)
    for table, rows in reads:
        snapshot.start_table(table)
        snapshot.add_rows(rows)
    clock.now += elapsed
    assert snapshot.describe() == expected


def test_finished_snapshot_and_run_line():
    snapshot, clock = progress([3, 4])
    result = RunResult(source="pg", events=3, batches=1)
    line = _Progress(result, enabled=False, stream=io.StringIO(), connector=SimpleNamespace(snapshot_progress=snapshot))
    snapshot.start_table("db.t1")
    snapshot.add_rows(3)
    assert re.fullmatch(r"pg: snapshot table 1/2 db\.t1: 3 rows read of ~7 \(42%\); 3 events, 0 schema changes, "
                        r"0 rejects in 1 batches, [\d,]+ events/s, last seq -", line.text()), line.text()
    snapshot.start_table("db.t2")
    snapshot.add_rows(4)
    snapshot.finish()
    assert snapshot.describe() == "snapshot done: 7 rows of 2 tables"
    assert line.text().startswith("pg: 3 events")  # streaming: no snapshot part
