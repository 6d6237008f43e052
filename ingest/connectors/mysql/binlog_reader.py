"""The binlog reader: mysql-replication's connection and dump, with the hot path read by our own code.

mysql-replication ignores a saved file/position when `is_mariadb=True` (upstream issue #618: it always
sends position 4 and an empty file name). `BinlogReader` sends the real file and position in MariaDB's
COM_BINLOG_DUMP (same layout as MySQL's), keeping the annotate-rows flag that only the MariaDB path sets.

The hot path (`hot_path=True`, the streaming source's reader): mysql-replication builds several Python objects
for every binlog event (a packet wrapper, an event, a table map with its columns), which was most of the time of
one-row transactions (GTID, table map, rows and XID events for each row). The events that make up a transaction
are read here straight from the packet bytes instead:
  - MariaDB's GTID event and the XID event: a `HotEvent` with the header fields and the GTID;
  - a table map event whose bytes were seen before: the Table parsed then (the server writes one before every
    statement), kept in the caller's `table_maps`;
  - version-1 rows events (MariaDB's WRITE/UPDATE/DELETE_ROWS) of a mapped table: a `HotEvent` that points at the
    row images in the packet, for `rowdecode.RowPlan.decode_rows`; `HotEvent.library_event()` gives
    mysql-replication's own event of the same packet when the caller needs it (generic row decoding, signals).
Every other event (rotate, format description, query, annotate rows, MySQL's GTID and version-2 rows events, a
table map seen for the first time, ...) goes through mysql-replication exactly as its own `fetchone` handles it.
tests/integration/mysql/test_mysql_rowdecode.py checks that both readings give the same bronze events.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import Any

import pymysql
from pymysql.constants import CR
from pymysql.constants.COMMAND import COM_BINLOG_DUMP
from pymysql.protocol import MysqlPacket
from pymysqlreplication import BinLogStreamReader
from pymysqlreplication.binlogstream import MYSQL_EXPECTED_ERROR_CODES
from pymysqlreplication.constants import BINLOG
from pymysqlreplication.packet import BinLogPacketWrapper

# OK byte, then the event header: timestamp, type, server id, event size, end position (flags not needed)
_HEADER = struct.Struct("<xIBIII")
_BODY = 20  # the OK byte and the 19-byte event header
_GTID = struct.Struct("<QI")  # MariaDB GTID event: sequence number, domain id
_ROWS_OPS = {BINLOG.WRITE_ROWS_EVENT_V1: "c", BINLOG.UPDATE_ROWS_EVENT_V1: "u", BINLOG.DELETE_ROWS_EVENT_V1: "d"}
_ROWS_POST_HEADER = 8  # table id (6 bytes) and flags (2) of a version-1 rows event
_MAX_TABLE_MAPS = 4096  # distinct table map events remembered; the cache is cleared when full
_MAX_PACKET = 2**24 - 1  # a payload this long continues in the next packet
_READ_SIZE = 1 << 16  # bytes asked of the dump connection's socket at a time (it gives what has arrived)
_SKIP = object()  # a packet handled here that gives the caller no event (a table map seen before)

GTID, XID, ROWS = "gtid", "xid", "rows"
# process-wide counts, for tests and benchmarks: events given by the hot path, table maps reused and parsed
stats = {"hot_events": 0, "table_maps_reused": 0, "table_maps_parsed": 0}


def _table_id(data: bytes) -> int:
    """The 6-byte table id that opens the body of table map and rows events."""
    return int.from_bytes(data[_BODY:_BODY + 6], "little")


class HotEvent:
    """A GTID, XID or rows event read by the hot path (header fields, plus what its kind needs)."""

    __slots__ = ("kind", "timestamp", "server_id", "event_size", "log_pos", "gtid", "gtid_numbers", "op", "schema",
                 "table", "table_obj", "data", "rows_at", "rows_end", "columns", "present", "present2", "_reader")

    def __init__(self, kind: str, header: tuple[int, int, int, int, int]) -> None:
        self.kind = kind
        self.timestamp, _, self.server_id, self.event_size, self.log_pos = header
        self.gtid: str | None = None

    def library_event(self) -> Any:
        """mysql-replication's event for the same packet (rows events; the table maps are still those it was read
        with as long as the caller asks before reading the next event)."""
        return self._reader.library_event(self.data)


class BinlogReader(BinLogStreamReader):
    """BinLogStreamReader that resumes MariaDB at a binlog file and position, with the hot path above when
    `hot_path` is set (then `table_maps`, owned by the caller, keeps parsed table maps across readers)."""

    def __init__(self, *args: Any, hot_path: bool = False, table_maps: dict[bytes, Any] | None = None,
                 **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.hot_path = hot_path
        self.table_maps: dict[bytes, Any] = {} if table_maps is None else table_maps
        # read ahead of the dump connection (_read_payload): the bytes, where the next packet starts, whose they are
        self._buffer, self._at, self._buffered_connection = b"", 0, None
        self._events: Iterator[Any] | None = None   # fetchone's generator of the hot path

    def _BinLogStreamReader__set_mariadb_settings(self) -> bytes:  # noqa: N802 (overrides a name-mangled method)
        cur = self._stream_connection.cursor()
        cur.execute("SET @slave_gtid_strict_mode=1")
        cur.execute("SET @slave_gtid_ignore_duplicates=0")
        cur.close()
        flags = 0
        if self._BinLogStreamReader__annotate_rows_event:
            flags |= 0x02  # BINLOG_SEND_ANNOTATE_ROWS_EVENT
        if not self._BinLogStreamReader__blocking:
            flags |= 0x01  # BINLOG_DUMP_NON_BLOCK
        name = (self.log_file or "").encode()
        prelude = struct.pack("<i", len(name) + 11) + bytes([COM_BINLOG_DUMP])
        prelude += struct.pack("<I", int(self.log_pos or 4)) + struct.pack("<H", flags)
        prelude += struct.pack("<I", self._BinLogStreamReader__server_id) + name
        return prelude

    # ------------------------------------------------------------------ the hot path
    def fetchone(self) -> Any:
        if not self.hot_path:
            return super().fetchone()
        if self._events is None:
            self._events = self._hot_events()
        return next(self._events, None)

    def __iter__(self) -> Iterator[Any]:
        # the hot path iterates its own generator: no call of fetchone for every event
        return self._hot_events() if self.hot_path else super().__iter__()

    def _hot_events(self) -> Iterator[Any]:
        """The events of the hot path, until a non-blocking dump reaches the binlog's end."""
        if self.end_log_pos or self.skip_to_timestamp:
            raise ValueError("the binlog hot path reads whole binlogs: no end_log_pos or skip_to_timestamp")
        read_payload, hot = self._read_payload, self._hot
        while True:
            if not self._BinLogStreamReader__connected_stream:
                self._BinLogStreamReader__connect_to_stream()
            if not self._BinLogStreamReader__connected_ctl:
                self._BinLogStreamReader__connect_to_ctl()
            try:
                data = read_payload()
            except pymysql.OperationalError as error:
                if error.args[0] in MYSQL_EXPECTED_ERROR_CODES:   # as mysql-replication does: connect again
                    self._stream_connection.close()
                    self._BinLogStreamReader__connected_stream = False
                    continue
                raise
            if data[0] == 0xFE and len(data) < 9:   # EOF: a non-blocking dump is at the binlog's end
                self.close()
                return
            if data[0] != 0 or len(data) < 7:   # not an event (as mysql-replication, skipped)
                continue
            event = hot(data)
            if event is None:
                event = self._library_fetch(data)
                if event is not None:
                    yield event
            elif event is _SKIP:
                stats["table_maps_reused"] += 1
            else:
                stats["hot_events"] += 1
                yield event

    def _read_payload(self) -> bytes:
        """The next packet's payload from the dump connection: pymysql's `_read_packet` without its packet object
        (one per binlog event), read from a buffer of our own (one socket read brings many small events; only
        this reader reads the dump connection once the dump started). Errors as pymysql raises them."""
        conn = self._stream_connection
        if conn is not self._buffered_connection:   # a new dump connection: nothing of it read yet
            self._buffered_connection, self._buffer, self._at = conn, b"", 0
        buffer, at = self._buffer, self._at
        if len(buffer) - at >= 4:   # the common case: a whole small packet in the buffer
            length = buffer[at] | buffer[at + 1] << 8 | buffer[at + 2] << 16
            end = at + 4 + length
            small = end <= len(buffer) and length < _MAX_PACKET and buffer[at + 3] == conn._next_seq_id
        else:
            small = False
        if small:
            conn._next_seq_id = (conn._next_seq_id + 1) % 256
            self._at = end
            data = buffer[at + 4:end]
        else:
            chunks = []
            while True:
                header = self._take(conn, 4)
                length = header[0] | header[1] << 8 | header[2] << 16
                if header[3] != conn._next_seq_id:
                    self._wrong_sequence(conn, header[3])
                conn._next_seq_id = (conn._next_seq_id + 1) % 256
                chunks.append(self._take(conn, length))
                if length < _MAX_PACKET:
                    break
            data = chunks[0] if len(chunks) == 1 else b"".join(chunks)
        if data[0] == 0xFF:
            MysqlPacket(data, conn.encoding).raise_for_error()
        return data

    def _take(self, conn: Any, count: int) -> bytes:
        """The next `count` bytes of the dump connection: from the buffer, then from the socket (reads of at least
        _READ_SIZE bytes; what they bring beyond `count` stays in the buffer)."""
        buffer, at = self._buffer, self._at
        if len(buffer) - at >= count:
            self._at = at + count
            return buffer[at:at + count]
        parts = [buffer[at:]]
        need = count - (len(buffer) - at)
        self._buffer, self._at = b"", 0
        while need > 0:
            try:
                chunk = conn._rfile.read1(max(need, _READ_SIZE))
            except OSError as exc:
                conn._force_close()
                raise pymysql.err.OperationalError(CR.CR_SERVER_LOST,
                                                   f"Lost connection to MySQL server ({exc})") from None
            if not chunk:
                conn._force_close()
                raise pymysql.err.OperationalError(CR.CR_SERVER_LOST, "Lost connection to MySQL server during query")
            if len(chunk) > need:
                parts.append(chunk[:need])
                self._buffer, self._at = chunk, need
                need = 0
            else:
                parts.append(chunk)
                need -= len(chunk)
        return parts[0] if len(parts) == 1 else b"".join(parts)

    @staticmethod
    def _wrong_sequence(conn: Any, got: int) -> None:
        conn._force_close()
        if got == 0:   # MariaDB sends its error packet with sequence number 0 when it shuts down
            raise pymysql.err.OperationalError(CR.CR_SERVER_LOST, "Lost connection to MySQL server during query")
        raise pymysql.err.InternalError(f"Packet sequence number wrong - got {got} expected {conn._next_seq_id}")

    def _hot(self, data: bytes) -> Any:
        """The packet's HotEvent, _SKIP for a table map seen before, or None for mysql-replication."""
        header = _HEADER.unpack_from(data)
        event_type = header[1]
        if not header[4]:
            return None   # an artificial event (no position): the library's way
        if event_type == BINLOG.XID_EVENT:
            self.log_pos = header[4]
            return HotEvent(XID, header)
        if event_type == BINLOG.MARIADB_GTID_EVENT:
            self.log_pos = header[4]
            event = HotEvent(GTID, header)
            seq_no, domain_id = _GTID.unpack_from(data, _BODY)
            event.gtid = f"{domain_id}-{header[2]}-{seq_no}"
            event.gtid_numbers = (domain_id, header[2], seq_no)
            return event
        if event_type == BINLOG.TABLE_MAP_EVENT:
            table = self.table_maps.get(data[_BODY:self._body_end(header)])
            if table is None:
                return None
            self.log_pos = header[4]
            self.table_map[_table_id(data)] = table
            return _SKIP
        op = _ROWS_OPS.get(event_type)
        if op is None or self._post_header_length(event_type) != _ROWS_POST_HEADER:
            return None
        table = self.table_map.get(_table_id(data))
        count = data[_BODY + _ROWS_POST_HEADER]
        if table is None or count >= 251:   # an unmapped (filtered) table, or a long column count: the library's way
            return None
        at = _BODY + _ROWS_POST_HEADER + 1
        width = (count + 7) >> 3
        self.log_pos = header[4]
        event = HotEvent(ROWS, header)
        event.op, event.schema, event.table, event.table_obj = op, table.schema, table.table, table
        event.columns, event.present = count, data[at:at + width]
        at += width
        if op == "u":
            event.present2 = data[at:at + width]
            at += width
        else:
            event.present2 = None
        event.data, event.rows_at, event.rows_end = data, at, self._body_end(header)
        event._reader = self
        return event

    def _body_end(self, header: tuple[int, ...]) -> int:
        """Where the event's body ends in the packet: before the CRC32 checksum when the binlog has them."""
        return 1 + header[3] - (4 if self._BinLogStreamReader__use_checksum else 0)

    def _post_header_length(self, event_type: int) -> int:
        lengths = self._BinLogStreamReader__post_header_lengths
        if not lengths or event_type - 1 >= len(lengths):
            return _ROWS_POST_HEADER   # no format description read yet: the documented length
        return lengths[event_type - 1]

    def library_event(self, data: bytes) -> Any:
        """mysql-replication's event for a packet's payload (None if it filters the event out)."""
        m = "_BinLogStreamReader__"
        return BinLogPacketWrapper(
            MysqlPacket(data, self._stream_connection.encoding), self.table_map, self._ctl_connection,
            self.mysql_version, getattr(self, m + "use_checksum"),
            getattr(self, m + "allowed_events_in_packet"), getattr(self, m + "only_tables"),
            getattr(self, m + "ignored_tables"), getattr(self, m + "only_schemas"),
            getattr(self, m + "ignored_schemas"), getattr(self, m + "freeze_schema"),
            getattr(self, m + "ignore_decode_errors"), getattr(self, m + "verify_checksum"),
            getattr(self, m + "optional_meta_data"), getattr(self, m + "enable_logging"),
            getattr(self, m + "use_column_name_cache"), getattr(self, m + "post_header_lengths")).event

    def _library_fetch(self, data: bytes) -> Any:
        """One packet the way mysql-replication's fetchone handles it (rotate, format description, table map,
        event filter); a new table map is remembered for the hot path. None: no event for the caller."""
        header = _HEADER.unpack_from(data)
        event = self.library_event(data)
        event_type = header[1]
        if event_type == BINLOG.ROTATE_EVENT:
            self.log_pos, self.log_file = event.position, event.next_binlog
            if header[0] != 0:   # a rotate written by the server (not the dump's first): table ids may be reused
                self.table_map = {}
        elif header[4]:
            self.log_pos = header[4]
        if event_type == BINLOG.FORMAT_DESCRIPTION_EVENT and event is not None:
            self.mysql_version = event.mysql_version
            self._BinLogStreamReader__post_header_lengths = event.post_header_len
        if event_type == BINLOG.TABLE_MAP_EVENT and event is not None:
            table = self.table_map[event.table_id] = event.get_table()
            stats["table_maps_parsed"] += 1
            if len(self.table_maps) >= _MAX_TABLE_MAPS:
                self.table_maps.clear()
            self.table_maps[data[_BODY:self._body_end(header)]] = table
        if event is None or event.__class__ not in self._BinLogStreamReader__allowed_events:
            return None
        return event
