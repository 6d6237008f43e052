"""MySqlOffset, the one encoder and decoder of the MariaDB/MySQL resume position: the exact JSON bytes bronze
holds (key order included), the round trip through ResumeState, and the text pieces of the columnar snapshot."""

from __future__ import annotations

import json

import pytest

from ingest.bronze.contract import ResumeState
from ingest.connectors.mysql.offsets import (
    RECOVERY_INDEX,
    MySqlOffset,
    first_recovery_seq,
    is_recovery_seq,
    make_seq,
)

pytestmark = pytest.mark.unit

SNAPSHOT = MySqlOffset.in_snapshot("mariadb-bin.000002", 328, "0-1-42")
ROW = SNAPSHOT.at_row("shop.orders", [7, "b\u00e9", 1.5], 12, ["shop.a", "shop.b"])


def test_positions_have_the_bytes_bronze_holds():
    assert MySqlOffset.streaming("mariadb-bin.000003", 1234, "0-1-5,1-2-3").to_json() == (
        '{"file":"mariadb-bin.000003","pos":1234,"gtids":"0-1-5,1-2-3","snapshot_completed":true}')
    assert SNAPSHOT.to_json() == '{"file":"mariadb-bin.000002","pos":328,"gtids":"0-1-42","snapshot":true}'
    assert MySqlOffset.in_snapshot("f.000001", 4, "", completed=True).to_json() == (
        '{"file":"f.000001","pos":4,"gtids":"","snapshot":true,"snapshot_completed":true}')
    assert ROW.to_json() == ('{"file":"mariadb-bin.000002","pos":328,"gtids":"0-1-42","snapshot":true,'
                             '"table":"shop.orders","key":[7,"b\u00e9",1.5],"ordinal":12,"done":["shop.a","shop.b"]}')
    assert ROW.completed().to_json() == ROW.to_json()[:-1] + ',"snapshot_completed":true}'


INCREMENTAL = MySqlOffset.streaming("b.000009", 99, "3-3-3", {"id": "s1", "tables": ["d.t"], "conditions": {},
                                                                "last_key": [4, "x"], "max_key": [9, "z"],
                                                                "max_key_read": True, "paused": False})


def test_an_incremental_snapshot_under_way_is_the_positions_last_key():
    assert INCREMENTAL.to_json() == (
        '{"file":"b.000009","pos":99,"gtids":"3-3-3","snapshot_completed":true,"incremental":{"id":"s1",'
        '"tables":["d.t"],"conditions":{},"last_key":[4,"x"],"max_key":[9,"z"],"max_key_read":true,"paused":false}}')
    assert MySqlOffset.streaming("b.000009", 99, "3-3-3", None).to_json() == (
        '{"file":"b.000009","pos":99,"gtids":"3-3-3","snapshot_completed":true}')


@pytest.mark.parametrize("offset", [MySqlOffset.streaming("b.000009", 99, "3-3-3"), SNAPSHOT, ROW, ROW.completed(),
                                    SNAPSHOT.at_row("d.t", [], 0, []), INCREMENTAL])
def test_round_trip_through_bronze(offset):
    text = offset.to_json()
    back = MySqlOffset.from_position(ResumeState.from_row("seq", text).position)
    assert back == offset and back.to_json() == text
    assert MySqlOffset.from_json(text) == offset


def test_phase_and_resume_point():
    assert MySqlOffset.from_position(None) is None and MySqlOffset.from_position({}) is None
    assert SNAPSHOT.snapshot_running and ROW.snapshot_running
    assert not ROW.completed().snapshot_running and not MySqlOffset.streaming("f", 4, "").snapshot_running
    assert ROW.resumed_ordinal == 13 and SNAPSHOT.resumed_ordinal == 0
    legacy = json.loads('{"file":"f.000001","pos":"120","snapshot":true}')  # what a reader may give: no gtids
    assert MySqlOffset.from_position(legacy) == MySqlOffset("f.000001", 120, "", snapshot=True)


def test_row_texts_join_to_the_row_position():
    head, middle, tail = SNAPSHOT.at_row("shop.orders", [], 0, ["shop.a", "shop.b"]).row_texts()
    assert head + '7,"b\u00e9",1.5' + middle + "12" + tail == ROW.to_json()
    odd = SNAPSHOT.at_row('d.t,"key":[', [], 0, ['x,"done":'])  # names that look like the keys
    head, middle, tail = odd.row_texts()
    assert head + "1" + middle + "3" + tail == odd.at_row(odd.table, [1], 3, list(odd.done)).to_json()


def test_seqs():
    from ingest.connectors.mysql.offsets import HEARTBEAT_INDEX, SIGNAL_INDEX

    assert make_seq(2, 328, 5) == "00000002-0000000148-00000005"
    # what a signal or watermark row gives sorts after its rows event's own rows, before a heartbeat there
    assert make_seq(2, 328, 4 * 1000) < make_seq(2, 328, SIGNAL_INDEX) < make_seq(2, 328, HEARTBEAT_INDEX)
    recovery = make_seq(2, 328, RECOVERY_INDEX + 3)
    assert is_recovery_seq(recovery) and not is_recovery_seq(make_seq(2, 328, 3))
    assert first_recovery_seq(recovery) == make_seq(2, 328, RECOVERY_INDEX)


@pytest.mark.parametrize("parts", [(0, 0, 0), (2, 328, 5), (2**32 - 1, 2**40 - 1, 2**32 - 1), (7, 2**33 + 5, 9)])
def test_make_seq_is_encode_seq(parts):
    """make_seq formats directly (the per-event path): the same text as the generic encode_seq."""
    from ingest.bronze.contract import encode_seq
    from ingest.connectors.mysql.offsets import SEQ_WIDTHS

    assert make_seq(*parts) == encode_seq(parts, SEQ_WIDTHS)


@pytest.mark.parametrize("parts", [(2**32, 0, 0), (0, 2**40, 0), (0, 0, 2**32), (-1, 0, 0), (0, -1, 0), (0, 0, -1)])
def test_make_seq_refuses_what_does_not_fit(parts):
    with pytest.raises(ValueError, match="does not fit"):
        make_seq(*parts)


def test_heartbeat_seqs_count_on_at_a_position_and_sort_between_transactions() -> None:
    from ingest.connectors.mysql.offsets import HEARTBEAT_INDEX, RECOVERY_INDEX, heartbeat_seq, make_seq

    first = heartbeat_seq(3, 1000, last_seq=make_seq(3, 1000, 0))          # after the END marker at 1000
    assert first == make_seq(3, 1000, HEARTBEAT_INDEX) and first > make_seq(3, 1000, 5)
    second = heartbeat_seq(3, 1000, last_seq=first)                          # the next one, or after a restart
    assert second == make_seq(3, 1000, HEARTBEAT_INDEX + 1)
    assert heartbeat_seq(3, 2000, last_seq=second) == make_seq(3, 2000, HEARTBEAT_INDEX)
    assert second < make_seq(3, 1001, 0) and second < make_seq(3, 1000, RECOVERY_INDEX)


@pytest.mark.parametrize("incremental", [None, {}, {"table": "db.t", "chunk": 3, "window": [1, "x"]}])
def test_streaming_json_is_the_streaming_offsets_json(incremental):
    """The streaming source builds its position text directly (once per transaction): the same text as the
    offset's own to_json, which reads back as the same offset."""
    from ingest.connectors.mysql.offsets import MySqlOffset

    text = MySqlOffset.streaming_json("mariadb-bin.000003", 328, "0-1-42,1-2-7", incremental)
    assert text == MySqlOffset.streaming("mariadb-bin.000003", 328, "0-1-42,1-2-7", incremental).to_json()
    assert MySqlOffset.from_json(text) == MySqlOffset.streaming("mariadb-bin.000003", 328, "0-1-42,1-2-7",
                                                                incremental or None)
