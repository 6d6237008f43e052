"""Signals and the incremental snapshot's state machine (connectors/signals.py, connectors/incremental.py)."""

from __future__ import annotations

import json

import pytest

from ingest.connectors.incremental import IncrementalSnapshot
from ingest.connectors.signals import SignalError, parse_signal, snapshot_request


@pytest.mark.parametrize(("signal_type", "data", "problem"), [
    ("execute-snapshot", "{not json", "data is not JSON"),
    ("execute-snapshot", "[1, 2]", "data must be a JSON object, not list"),
    ("explode", "{}", "unknown type 'explode'"),
    ("", None, "unknown type ''"),
])
def test_signals_that_cannot_be_carried_out_say_why(signal_type: str, data: str | None, problem: str) -> None:
    with pytest.raises(SignalError, match=problem):
        parse_signal("s1", signal_type, data)


@pytest.mark.parametrize(("data", "problem"), [
    ({"data-collections": ["a.b"], "type": "blocking"}, "blocking snapshots are not supported yet"),
    ({"data-collections": ["a.b"], "type": "other"}, "snapshot type 'other'"),
    ({"data-collections": []}, "data-collections must be a non-empty list"),
    ({"data-collections": "a.b"}, "data-collections must be a non-empty list"),
    ({"data-collections": ["a.b"], "surrogate-key": "x"}, "surrogate-key is not supported yet"),
    ({"data-collections": ["a.b"], "additional-conditions": [{"filter": "x > 1"}]}, "needs data-collection"),
])
def test_execute_snapshot_data_is_checked(data: dict, problem: str) -> None:
    with pytest.raises(SignalError, match=problem):
        snapshot_request(parse_signal("s1", "execute-snapshot", json.dumps(data)))


def test_execute_snapshot_request() -> None:
    signal = parse_signal("s1", "execute-snapshot", json.dumps({
        "data-collections": ["public.a", "public\\.b.*"],
        "additional-conditions": [{"data-collection": "public.a", "filter": "id > 10"}]}))
    assert snapshot_request(signal) == (["public.a", "public\\.b.*"], {"public.a": "id > 10"})
    assert parse_signal("s2", "log", None).data == {}


def chunk(snap: IncrementalSnapshot, table: str, keys: list[int], size: int) -> str:
    chunk_id = f"c{keys[0] if keys else 'x'}"
    snap.begin_chunk(chunk_id, table, [((str(k),), [str(k), f"v{k}"]) for k in keys], size)
    return chunk_id


def test_a_chunk_loses_the_rows_streamed_between_its_watermarks() -> None:
    snap = IncrementalSnapshot()
    assert snap.start(["s.t", "s.u", "s.t"], {"s.u": "x > 1"}) == ["s.t", "s.u"]
    assert snap.wants_chunk() and snap.current == "s.t"
    snap.set_max_key(["5"])
    chunk_id = chunk(snap, "s.t", [1, 2, 3], size=3)
    assert not snap.wants_chunk()
    snap.streamed("s.t", ("2",))          # before the open watermark: the chunk's SELECT already saw it
    snap.watermark_opened(chunk_id)
    snap.streamed("s.t", ("3",))          # inside the window: the stream's state is newer
    snap.streamed("s.u", ("1",))          # another table
    assert snap.watermark_closed("other") is None
    window = snap.watermark_closed(chunk_id)
    assert window is not None and sorted(window.rows) == [("1",), ("2",)]
    assert snap.chunk_done(window) is False and snap.last_key == ["3"]
    state = snap.state()
    assert state is not None and state["tables"] == ["s.t", "s.u"] and state["conditions"] == {"s.u": "x > 1"}
    # a new run resumes from the state: the next chunk after key 3, up to the same max key
    resumed = IncrementalSnapshot.from_state(json.loads(json.dumps(state)))
    assert resumed.last_key == ["3"] and resumed.max_key == ["5"] and resumed.max_key_read and resumed.wants_chunk()
    last = chunk(resumed, "s.t", [4, 5], size=3)
    resumed.watermark_opened(last)
    window = resumed.watermark_closed(last)
    assert window is not None and resumed.chunk_done(window) is True   # fewer rows than the chunk size
    assert resumed.current == "s.u" and resumed.last_key is None and not resumed.max_key_read
    assert resumed.conditions == {"s.u": "x > 1"}


def test_a_full_chunk_ending_at_the_max_key_finishes_the_table() -> None:
    snap = IncrementalSnapshot()
    snap.start(["s.t"], {})
    snap.set_max_key(["2"])
    chunk_id = chunk(snap, "s.t", [1, 2], size=2)
    snap.watermark_opened(chunk_id)
    window = snap.watermark_closed(chunk_id)
    assert window is not None and snap.chunk_done(window) is True
    assert not snap.active and snap.state() is None and snap.snapshot_id is None


def test_a_close_watermark_without_its_open_one_is_a_chunk_of_a_stopped_run() -> None:
    snap = IncrementalSnapshot()
    snap.start(["s.t"], {})
    chunk_id = chunk(snap, "s.t", [1], size=5)
    assert snap.watermark_closed(chunk_id) is None   # the open watermark did not come through: not this chunk's


def test_stop_pause_and_resume() -> None:
    snap = IncrementalSnapshot()
    snap.start(["s.t", "s.u"], {})
    snap.set_max_key(["9"])
    chunk(snap, "s.t", [1], size=5)
    assert snap.stop(["s.t"]) == ["s.t"]
    assert snap.window is None and snap.current == "s.u" and snap.max_key is None
    snap.paused = True
    assert not snap.wants_chunk()
    snap.paused = False
    assert snap.wants_chunk()
    assert snap.stop(None) == ["s.u"] and not snap.active
