"""`seq` for events read from Debezium JSON: the source commit order, taken from the `source` block.

A seq is `<main>-<tiebreak>-<kind>` (see ingest.bronze.contract.encode_seq, fixed-width hex):

  main      per connector, from the source block (source commit order):
              postgresql      sequence [last_commit_lsn, lsn] (lsn alone when `sequence` is missing)
              mysql, mariadb  binlog file number, pos, row
              sqlserver       commit_lsn, change_lsn, event_serial_no (LSNs are 80 bits: 20 hex digits)
              oracle          commit_scn, scn, ssn
              mongodb         ts_ms, ord
              fallback        source.ts_ms (else envelope ts_ms), 0: only as good as the clock
  tiebreak  64-bit hash of topic + key (events that share a position: snapshot rows, truncates);
            a duplicated delivery of the same event gets the same seq. Schema changes: their arrival order
            at the position (schema_change_tie), before the events there
  kind      0: the event carries its own position; 1: it has none (tombstone, heartbeat, transaction
            marker) and inherits the main part of the event read before it, so it sorts right after it
"""

from __future__ import annotations

import hashlib
from typing import Any

import orjson

from ingest.bronze.contract import encode_seq

W16 = 16
_FALLBACK_WIDTHS = (W16, W16)


def _int(value: Any) -> int:
    """A non-negative integer from an int or a decimal string; None/empty -> 0."""
    kind = type(value)
    if kind is int:
        return value
    if kind is str:
        return int(value) if value else 0
    if value is None:
        return 0
    return int(value) if isinstance(value, int) else int(str(value).strip())


def _hex(value: int, width: int) -> str:
    """Fixed-width hex (as encode_seq), without its generic checks on the hot path."""
    text = f"{value:0{width}x}"
    if value < 0 or len(text) > width:
        raise ValueError(f"{value} does not fit in {width} hex digits")
    return text


def _sqlserver_lsn(value: Any) -> int:
    """`00000027:00000758:0005` -> one 80-bit integer (the LSN's parts are fixed-width hex)."""
    if not value:
        return 0
    return int(str(value).replace(":", ""), 16)


def _binlog_number(name: Any) -> int:
    """`mysql-bin.000003` -> 3."""
    if not name:
        return 0
    return _int(str(name).rsplit(".", 1)[-1])


_MAX64 = 1 << 64


def _pg(source: dict[str, Any]) -> str | None:
    sequence = source.get("sequence")
    if sequence:
        parsed = orjson.loads(sequence) if isinstance(sequence, str) else sequence
        if isinstance(parsed, list) and len(parsed) == 2:
            first, second = _int(parsed[0]), _int(parsed[1])
            if 0 <= first < _MAX64 and 0 <= second < _MAX64:  # the checks of _hex, inlined (hot path)
                return "%016x-%016x" % (first, second)  # noqa: UP031 (half the time of an f-string here)
            return f"{_hex(first, W16)}-{_hex(second, W16)}"
    if source.get("lsn") is not None:
        return f"{_hex(0, W16)}-{_hex(_int(source['lsn']), W16)}"
    return None


def _mysql(source: dict[str, Any]) -> str | None:
    if source.get("file") is None or source.get("pos") is None:
        return None
    return (f"{_hex(_binlog_number(source['file']), W16)}-{_hex(_int(source['pos']), W16)}-"
            f"{_hex(_int(source.get('row')), W16)}")


def _sqlserver(source: dict[str, Any]) -> str | None:
    if not source.get("commit_lsn") and not source.get("change_lsn"):
        return None
    commit, change = _sqlserver_lsn(source.get("commit_lsn")), _sqlserver_lsn(source.get("change_lsn"))
    return f"{_hex(commit, 20)}-{_hex(change, 20)}-{_hex(_int(source.get('event_serial_no')), 8)}"


def _oracle(source: dict[str, Any]) -> str | None:
    if source.get("scn") is None and source.get("commit_scn") is None:
        return None
    scn = _int(source.get("scn"))
    # commit_scn is filled only by the LogMiner adapter; without it the change SCN is the best order.
    commit = _int(source.get("commit_scn")) if source.get("commit_scn") else scn
    return f"{_hex(commit, W16)}-{_hex(scn, W16)}-{_hex(_int(source.get('ssn')), 8)}"


def _mongodb(source: dict[str, Any]) -> str | None:
    if source.get("ts_ms") is None or source.get("ord") is None:
        return None
    return f"{_hex(_int(source['ts_ms']), W16)}-{_hex(_int(source['ord']), 8)}"


_EXTRACT = {
    "postgresql": _pg,
    "mysql": _mysql,
    "mariadb": _mysql,
    "sqlserver": _sqlserver,
    "oracle": _oracle,
    "mongodb": _mongodb,
}


def main_seq(source: Any, envelope_ts_ms: Any) -> str:
    """The main (position) part of the seq from a Debezium `source` block; the fallback when the block
    lacks the connector's position fields. Raises ValueError for unusable values."""
    if isinstance(source, dict):
        extract = _EXTRACT.get(source.get("connector"))  # type: ignore[arg-type]
        if extract is not None:
            main = extract(source)
            if main is not None:
                return main
        ts = source.get("ts_ms", envelope_ts_ms)
    else:
        ts = envelope_ts_ms
    return encode_seq([_int(ts), 0], _FALLBACK_WIDTHS)


def tiebreak(*texts: str | None) -> str:
    """A stable 64-bit hash of the given texts, as 16 hex digits."""
    joined = f"{texts[0]}\x00{texts[1] or ''}" if len(texts) == 2 else "\x00".join([t or "" for t in texts])
    return hashlib.blake2b(joined.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


def schema_change_tie(index: int) -> str:
    """The tiebreak of the index-th schema change read at one source position: schema changes keep their
    arrival order there (a MySQL snapshot writes DROP DATABASE, CREATE DATABASE, DROP TABLE, CREATE TABLE ... at
    the snapshot's binlog position) and sort before the events at that position (the snapshot's rows), whose
    hash tiebreaks are below 0x10000 with a probability of 2^-48 each."""
    return f"{index:016x}"


def full_seq(main: str, tie: str, inherited: bool) -> str:
    return f"{main}-{tie}-{1 if inherited else 0}"


# The main part before any event was read: sorts before everything.
START_MAIN = encode_seq([0, 0], _FALLBACK_WIDTHS)
