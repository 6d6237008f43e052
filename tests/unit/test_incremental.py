"""Signals and the incremental snapshot's state machine (connectors/signals.py, connectors/incremental.py)."""

from __future__ import annotations

import json

import pytest

from ingest.connectors.incremental import BlockingSnapshot, IncrementalSnapshot, SignalledSnapshots
from ingest.connectors.signals import SignalError, is_select, parse_signal, snapshot_request


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
    ({"data-collections": ["a.b"], "type": "other"}, "snapshot type 'other'"),
    ({"data-collections": []}, "data-collections must be a non-empty list"),
    ({"data-collections": "a.b"}, "data-collections must be a non-empty list"),
    ({"data-collections": ["a.b"], "surrogate-key": ["x"]}, "surrogate-key must be a column name"),
    ({"data-collections": ["a.b"], "additional-conditions": [{"filter": "x > 1"}]}, "needs data-collection"),
])
def test_execute_snapshot_data_is_checked(data: dict, problem: str) -> None:
    with pytest.raises(SignalError, match=problem):
        snapshot_request(parse_signal("s1", "execute-snapshot", json.dumps(data)))


def test_execute_snapshot_request() -> None:
    signal = parse_signal("s1", "execute-snapshot", json.dumps({
        "data-collections": ["public.a", "public\\.b.*"],
        "additional-conditions": [{"data-collection": "public.a", "filter": "id > 10"}]}))
    assert snapshot_request(signal) == ("incremental", ["public.a", "public\\.b.*"], {"public.a": "id > 10"}, None)
    blocking = parse_signal("s3", "execute-snapshot", json.dumps({"data-collections": ["a.b"], "type": "BLOCKING",
                                                                  "surrogate-key": "code"}))
    assert snapshot_request(blocking) == ("blocking", ["a.b"], {}, "code")


@pytest.mark.parametrize(("condition", "select"), [
    ("SELECT * FROM a.b WHERE x = 0 ORDER BY y DESC", True), ("  select * from b", True), ("(SELECT 1)", True),
    ("selected = 1", False), ("x > 1", False), (None, False), ("", False)])
def test_a_condition_is_a_where_condition_or_a_whole_select(condition: str | None, select: bool) -> None:
    assert is_select(condition) is select
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


def test_the_signal_file_is_taken_whole_and_emptied(tmp_path, monkeypatch) -> None:
    from ingest.connectors import signals
    from ingest.connectors.signals import FileSignalChannel, append_signal, file_channel

    refused: list[str] = []   # the log lines of refused signals, whatever the logging set-up of the run
    monkeypatch.setattr(signals, "refuse", lambda source, problem: refused.append(problem))

    path = tmp_path / "signals" / "file-signals.txt"
    channel = file_channel(frozenset({"source", "file"}), "signals/file-signals.txt", tmp_path)
    assert channel is not None and channel.path == path
    assert file_channel(frozenset({"source"}), "x.txt", tmp_path) is None
    assert channel.take("src") == []   # no file yet
    first = append_signal(path, "execute-snapshot", {"data-collections": ["a.b"]})
    with path.open("a") as handle:   # what an operator may append by hand: data as text, blank and broken lines
        handle.write('{"id": "hand-1", "type": "log", "data": "{\\"message\\": \\"hi\\"}"}\n\n{broken\n[1]\n')
    taken = channel.take("src")
    assert taken == [(first, "execute-snapshot", '{"data-collections": ["a.b"]}'),
                     ("hand-1", "log", '{"message": "hi"}')]
    assert path.read_text() == "" and channel.take("src") == []
    assert [p.removeprefix(f"{path} ") for p in refused] == [
        "line 4: not JSON (Expecting property name enclosed in double quotes at 1)",
        "line 5: a signal is a JSON object with id, type and data"]
    assert isinstance(FileSignalChannel(path), FileSignalChannel)


def test_signals_are_written_where_the_connector_reads_them(tmp_path) -> None:
    from ingest.connectors.signals import file_channel, send
    from ingest.errors import ConfigError

    channel = file_channel(frozenset({"file"}), "s.txt", tmp_path)
    assert send(frozenset({"source", "file"}), lambda: "row-1", channel, "log", {}) == "row-1"
    signal_id = send(frozenset({"file"}), lambda: "row-1", channel, "log", {"message": "m"})
    assert json.loads((tmp_path / "s.txt").read_text()) == {"id": signal_id, "type": "log",
                                                            "data": {"message": "m"}}
    with pytest.raises(ConfigError, match="takes no signals"):
        send(frozenset({"source"}), None, None, "log", {})


class MemorySnapshots(SignalledSnapshots):
    """The shared signal and chunk logic over an in-memory table (the connector's database work faked): what it
    emits is recorded; the watermarks it writes are handed back by the test, as the stream would."""

    def __init__(self, rows: dict[int, str], notification_channels: frozenset[str],
                 state: dict | None = None) -> None:
        super().__init__("mem", state, 2, True, None, True, notification_channels)
        self.rows = rows
        self.states: list[dict | None] = []   # state() at each state_changed()
        self.notified: list[tuple[str, str, dict]] = []
        self.emitted: list[tuple[str, object]] = []
        self.watermarks_written: list[tuple[str, str]] = []

    def captured_names(self) -> list[str]:
        return ["db.t"]

    def has_key(self, table: str, surrogate: str | None = None) -> str | None:
        return None if surrogate in (None, "id") else f"has no column {surrogate!r}"

    def max_key(self, table: str, condition: str | None, surrogate: str | None = None) -> list | None:
        return [max(self.rows)] if self.rows else None

    def read_chunk(self, table, last_key, max_key, condition, size, surrogate=None):
        keys = sorted(k for k in self.rows if (last_key is None or k > last_key[0]) and k <= max_key[0])[:size]
        return [((k,), (k, self.rows[k])) for k in keys], [keys[-1]] if keys else None

    def write_watermark(self, signal_id: str, kind: str) -> None:
        self.watermarks_written.append((signal_id, kind))

    def emit_read(self, out, table, row) -> None:
        self.emitted.append(("r", row))

    def emit_blocking_read(self, out, table, row, mark) -> None:
        self.emitted.append(("b", (row, mark, json.dumps(self.state()))))

    def emit_notification(self, out, kind, data, aggregate) -> None:
        self.emitted.append(("n", kind))
        self.notified.append((aggregate, kind, data))

    def state_changed(self) -> None:
        self.states.append(self.state())


def test_a_blocking_snapshot_reads_whole_chunks_marks_them_and_resumes_after_the_last_one() -> None:
    rows = {k: f"v{k}" for k in range(1, 6)}
    snapshots = MemorySnapshots(rows, frozenset({"sink"}))
    # a blocking snapshot needs no watermarks: it is read while the stream waits
    snapshots.on_signal("s1", "execute-snapshot", json.dumps({"data-collections": ["db.t"], "type": "blocking"}),
                        None)
    assert snapshots.blocking_due and snapshots.active and not snapshots.snapshot.active
    snapshots.blocking_chunk(None)   # rows 1, 2
    snapshots.blocking_chunk(None)   # rows 3, 4
    state = snapshots.state()
    assert state is not None and state["blocking"]["last_key"] == [4] and state["blocking"]["rows_read"] == 4
    # every row of a chunk carries the state after the chunk: a run stopped there resumes with row 5
    chunk2 = [json.loads(item[2])["blocking"]["last_key"] for _, item in
              [e for e in snapshots.emitted if e[0] == "b"][2:4]]
    assert chunk2 == [[4], [4]]
    resumed = MemorySnapshots(rows, frozenset({"sink"}), state=json.loads(json.dumps(state)))
    assert resumed.blocking_due
    resumed.blocking_chunk(None)     # row 5: the table ends, so does the snapshot
    assert not resumed.active and resumed.state() is None
    marks = [item[1] for what, item in snapshots.emitted + resumed.emitted if what == "b"]
    assert marks == ["first", "true", "true", "true", "last"]
    assert snapshots.notified + resumed.notified == [   # as Debezium's InitialSnapshotNotificationService
        ("Initial Snapshot", "STARTED", {}),
        ("Initial Snapshot", "IN_PROGRESS", {"current_collection_in_progress": "db.t", "data_collections": "db.t"}),
        ("Initial Snapshot", "TABLE_SCAN_COMPLETED", {"scanned_collection": "db.t", "data_collections": "db.t",
                                                      "total_rows_scanned": "5", "status": "SUCCEEDED"}),
        ("Initial Snapshot", "COMPLETED", {})]
    # the last row lands with the state after the table: nothing is left to resume
    assert json.loads([e for e in resumed.emitted if e[0] == "b"][-1][1][2]) is None


@pytest.mark.parametrize(("tables", "sizes", "expected"), [
    (2, (3, 0), ["first", "true", "last_in_data_collection"]),            # an empty last table takes no mark
    (2, (1, 2), ["first", "first_in_data_collection", "last"]),
    (1, (1,), ["last"]),
    (1, (2,), ["first", "last"]),
])
def test_blocking_snapshot_marks(tables: int, sizes: tuple[int, ...], expected: list[str]) -> None:
    snap = BlockingSnapshot()
    snap.start([f"db.t{i}" for i in range(tables)], {})
    marks: list[str] = []
    for n in sizes:
        marks += snap.marks(n, last_chunk=True)
        snap.rows_read += n
        snap.table_rows += n
        snap.finish_table()
    assert marks == expected


@pytest.mark.parametrize("channels", [frozenset({"sink", "log"}), frozenset({"log"}), frozenset()])
def test_the_shared_chunk_loop_and_the_notification_channels(channels: frozenset[str], monkeypatch) -> None:
    from ingest.connectors import signals

    logged: list[str] = []   # the log channel (signals.notify), recorded whatever the logging set-up of the run
    monkeypatch.setattr(signals, "notify", lambda source, action, message, *args: logged.append(action))
    snapshots = MemorySnapshots({1: "a", 2: "b", 3: "c"}, channels)
    snapshots.on_signal("s1", "execute-snapshot", json.dumps({"data-collections": ["db\\.t"]}), None)
    while snapshots.active:
        snapshots.next_chunk(None)
        for signal_id, kind in snapshots.watermarks_written:   # the stream hands the watermarks back
            snapshots.on_table_row(signal_id, kind, None, None)
            if kind == "snapshot-window-open":
                snapshots.snapshot.streamed("db.t", (2,))   # row 2 changed between the watermarks: not read
        snapshots.watermarks_written.clear()
    reads = [row for what, row in snapshots.emitted if what == "r"]
    assert reads == [(1, "a"), (3, "c")]
    notifications = [kind for what, kind in snapshots.emitted if what == "n"]
    steps = ["STARTED", "IN_PROGRESS", "IN_PROGRESS", "TABLE_SCAN_COMPLETED", "COMPLETED"]   # a chunk of 2, of 1
    assert notifications == (steps if "sink" in channels else [])
    assert logged == (steps if "log" in channels else [])
    if "sink" in channels:   # Debezium's additional data (IncrementalSnapshotNotificationService)
        assert [data for _, _, data in snapshots.notified] == [
            {"data_collections": "db.t"},
            {"data_collections": "db.t", "current_collection_in_progress": "db.t", "maximum_key": "3",
             "last_processed_key": "2"},
            {"data_collections": "db.t", "current_collection_in_progress": "db.t", "maximum_key": "3",
             "last_processed_key": "3"},
            {"data_collections": "db.t", "scanned_collection": "db.t", "total_rows_scanned": "3",
             "status": "SUCCEEDED"},
            {}]
        assert {aggregate for aggregate, _, _ in snapshots.notified} == {"Incremental Snapshot"}


@pytest.mark.parametrize(("data", "order"), [
    # measured on Debezium 3.6.3's postgres connector (blocking snapshot notifications, docs/signals.md)
    ({"current_collection_in_progress": "s.a", "data_collections": "s.a,s.b"},
     ["current_collection_in_progress", "connector_name", "data_collections"]),
    ({"scanned_collection": "s.a", "data_collections": "s.a", "total_rows_scanned": "3", "status": "SUCCEEDED"},
     ["scanned_collection", "connector_name", "total_rows_scanned", "data_collections", "status"]),
    ({}, ["connector_name"]),
])
def test_notification_data_is_ordered_as_debeziums_hashmap(data: dict, order: list[str]) -> None:
    from ingest.events.envelope import notification_data

    built = notification_data(data, "shop")
    assert list(built) == order and built["connector_name"] == "shop"


def test_a_surrogate_key_is_kept_per_table_and_checked_when_the_signal_comes(monkeypatch) -> None:
    from ingest.connectors import signals

    refused: list[str] = []
    monkeypatch.setattr(signals, "refuse", lambda source, problem: refused.append(problem))
    snapshots = MemorySnapshots({1: "a", 2: "b"}, frozenset())
    snapshots.on_signal("s1", "execute-snapshot", json.dumps({"data-collections": ["db.t"], "surrogate-key": "nope"}),
                        None)
    assert not snapshots.active and refused and "has no column 'nope'" in refused[0]
    snapshots.on_signal("s2", "execute-snapshot", json.dumps({"data-collections": ["db.t"], "surrogate-key": "id"}),
                        None)
    state = snapshots.state()
    assert state is not None and state["surrogates"] == {"db.t": "id"}
    assert IncrementalSnapshot.from_state(json.loads(json.dumps(state))).surrogates == {"db.t": "id"}
    snapshots.on_signal("s3", "stop-snapshot", json.dumps({"data-collections": ["db.t"]}), None)
    assert snapshots.snapshot.surrogates == {}
