"""Reuse of parsed TableMapEvents in mysql-replication.

The server writes a TableMapEvent before the row events of every statement. mysql-replication parses
each one completely (columns, optional metadata, a new Table object), which costs about as much as the
row events of a small transaction: with one-row transactions it was a third of the streaming time.
Identical event bytes always parse to the same result, so `install()` wraps TableMapEvent.__init__: when
the body (table id, names, column types, metadata) and the parse options are those of an event parsed
before, the earlier result is copied instead of parsed again. Anything else (a new table id, changed
columns after DDL, checksum verification) goes through the library's own parser.
"""

from __future__ import annotations

from typing import Any

from pymysqlreplication.row_event import TableMapEvent

_MAX_ENTRIES = 4096  # distinct table maps remembered (each is a few kB); the cache is cleared when full
_PER_EVENT = ("packet", "table_map", "_ctl_connection", "event_type", "timestamp", "event_size", "dbms")
_BODY_OFFSET = 20
_original_init = TableMapEvent.__init__
_parsed: dict[tuple, dict[str, Any]] = {}
stats = {"parsed": 0, "reused": 0}


_OPTIONS = ("only_tables", "ignored_tables", "only_schemas", "ignored_schemas", "freeze_schema",
            "optional_meta_data", "use_column_name_cache", "ignore_decode_errors")


def _frozen(value: Any) -> Any:
    return tuple(value) if isinstance(value, list | set) else value


def _cached_init(self: TableMapEvent, from_packet: Any, event_size: int, table_map: dict, ctl_connection: Any,
                 **kwargs: Any) -> None:
    if kwargs.get("verify_checksum"):
        _original_init(self, from_packet, event_size, table_map, ctl_connection, **kwargs)
        return
    # the body follows the OK byte and the 19-byte event header of the packet (BinLogEvent's own checksum
    # check relies on the same layout); peeked, not consumed, so a miss parses exactly as before
    body = from_packet.packet.get_bytes(_BODY_OFFSET, event_size)
    options = tuple(map(kwargs.get, _OPTIONS))
    try:
        key = (body, ctl_connection._get_dbms(), options)
        cached = _parsed.get(key)
    except TypeError:  # a list-valued filter option: make it hashable (rarely used, slower)
        key = (body, ctl_connection._get_dbms(), tuple(map(_frozen, options)))
        cached = _parsed.get(key)
    if cached is None:
        _original_init(self, from_packet, event_size, table_map, ctl_connection, **kwargs)
        stats["parsed"] += 1
        if len(_parsed) >= _MAX_ENTRIES:
            _parsed.clear()
        _parsed[key] = {k: v for k, v in self.__dict__.items() if k not in _PER_EVENT}
        return
    stats["reused"] += 1
    from_packet.advance(event_size)
    self.__dict__.update(cached)
    self.packet, self.table_map, self._ctl_connection = from_packet, table_map, ctl_connection
    self.event_type, self.timestamp, self.event_size = from_packet.event_type, from_packet.timestamp, event_size
    self.dbms = key[1]
    if self._processed:
        table_map[self.table_id] = self.table_obj


def install() -> None:
    """Wrap TableMapEvent.__init__ (idempotent)."""
    if TableMapEvent.__init__ is not _cached_init:
        TableMapEvent.__init__ = _cached_init  # type: ignore[method-assign]


def uninstall() -> None:
    TableMapEvent.__init__ = _original_init  # type: ignore[method-assign]
    _parsed.clear()
