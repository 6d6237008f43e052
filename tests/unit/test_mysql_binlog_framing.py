"""The binlog reader's own packet framing (BinlogReader._read_payload) on a byte stream: MySQL packets of up to
16 MiB - 1 bytes, a longer payload continued in the next packets, sequence numbers, a server error, a dropped
connection. The events inside are checked against mysql-replication on a real server by
tests/integration/mysql/test_mysql_rowdecode.py."""

from __future__ import annotations

import io

import pymysql
import pytest

from ingest.connectors.mysql.binlog_reader import BinlogReader

MAX = 2**24 - 1


class _Stream:
    """What _read_payload uses of a pymysql connection: the buffered socket file, the sequence id, the
    encoding, and the close on failure."""

    def __init__(self, data: bytes, next_seq_id: int = 1) -> None:
        self._rfile = io.BufferedReader(io.BytesIO(data))
        self._next_seq_id = next_seq_id
        self.encoding = "utf8"
        self.closed = False

    def _force_close(self) -> None:
        self.closed = True


def _packet(payload: bytes, seq: int) -> bytes:
    return len(payload).to_bytes(3, "little") + bytes([seq % 256]) + payload


def _reader(stream: _Stream) -> BinlogReader:
    reader = BinlogReader(connection_settings={}, server_id=1, hot_path=True)
    reader._stream_connection = stream
    return reader


def test_payloads_in_order_with_their_sequence_numbers():
    stream = _Stream(_packet(b"\x00first", 1) + _packet(b"\x00second", 2) + _packet(b"\xfe\x00\x00", 3))
    reader = _reader(stream)
    assert [reader._read_payload() for _ in range(3)] == [b"\x00first", b"\x00second", b"\xfe\x00\x00"]
    assert stream._next_seq_id == 4


def test_a_payload_of_16_mib_or_more_continues_in_the_next_packets():
    big = b"\x00" + bytes(range(256)) * (MAX // 256) + b"x" * (MAX % 256 - 1) + b"tail-of-it"
    first, rest = big[:MAX], big[MAX:]
    stream = _Stream(_packet(first, 255) + _packet(rest, 0) + _packet(b"\x00next", 1), next_seq_id=255)
    reader = _reader(stream)
    assert reader._read_payload() == big
    assert reader._read_payload() == b"\x00next"
    # exactly 16 MiB - 1: an empty packet ends it
    stream = _Stream(_packet(first, 1) + _packet(b"", 2))
    assert _reader(stream)._read_payload() == first


def test_wrong_sequence_number_closes_the_connection():
    stream = _Stream(_packet(b"\x00x", 5))
    with pytest.raises(pymysql.err.InternalError, match="got 5 expected 1"):
        _reader(stream)._read_payload()
    assert stream.closed
    # MariaDB's error packet at shutdown has sequence number 0: a lost connection, which the reader reconnects after
    stream = _Stream(_packet(b"\xff\x00\x00", 0))
    with pytest.raises(pymysql.err.OperationalError) as lost:
        _reader(stream)._read_payload()
    assert lost.value.args[0] == 2013 and stream.closed


def test_server_error_packet_raises_its_error():
    error = b"\xff" + (1236).to_bytes(2, "little") + b"#HY000" + b"Could not find first log file name in binary log"
    with pytest.raises(pymysql.err.OperationalError) as raised:
        _reader(_Stream(_packet(error, 1)))._read_payload()
    assert raised.value.args == (1236, "Could not find first log file name in binary log")


@pytest.mark.parametrize("cut", [2, 4, 7])
def test_a_connection_dropped_mid_packet_is_a_lost_connection(cut):
    stream = _Stream(_packet(b"\x00payload", 1)[:cut])
    with pytest.raises(pymysql.err.OperationalError) as lost:
        _reader(stream)._read_payload()
    assert lost.value.args[0] == 2013 and stream.closed
