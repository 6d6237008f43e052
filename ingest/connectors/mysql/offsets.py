"""Where a MariaDB/MySQL source resumes (Debezium's offset context): the seq of each event and its position
JSON. This module is the one place that encodes and decodes them.

seq = <binlog file number:8 hex>-<position:10 hex>-<index:8 hex>. Streamed events use the END position of
their binlog event (unique per event) and the row index inside it; snapshot schema changes and rows use
the snapshot's binlog position P and an ordinal. Every event streamed after the snapshot ends after P, so
snapshot rows sort before it. snapshot.mode=recovery records use index RECOVERY_INDEX + n at the position
to resume from.

The position JSON of each event, keys in this order:

  {"file", "pos": where the event's transaction began (the snapshot: P), "gtids": the GTID set completed
   before it, "snapshot": true while the snapshot runs, then for a snapshot row "table", "key" (its primary
   key values), "ordinal", "done" (the tables read completely), and "snapshot_completed": true on the
   snapshot's last event and on every streamed event, "incremental": the incremental snapshot's state while
   one is under way (connectors/incremental.py)}

Resuming reconnects at file/pos and drops every event whose seq is <= the last committed seq (exactly once).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import orjson

from ingest.bronze.contract import encode_seq

SEQ_WIDTHS = (8, 10, 8)
RECOVERY_INDEX = 0x80000000  # seq index of snapshot.mode=recovery records: after any DDL or truncate at that pos
HEARTBEAT_INDEX = 0x40000000  # seq index of the first heartbeat at a position (after its END marker, truncates)
SIGNAL_INDEX = 0x20000000  # seq index of the first event a signal or watermark row gives (reads, notifications)


def make_seq(file_number: int, pos: int, index: int) -> str:
    """encode_seq((file_number, pos, index), SEQ_WIDTHS), formatted directly (it is on the per-event path)."""
    # %-formatting: about half the time of an f-string with format specs
    if 0 <= file_number < 1 << 32 and 0 <= pos < 1 << 40 and 0 <= index < 1 << 32:
        return "%08x-%010x-%08x" % (file_number, pos, index)  # noqa: UP031
    return encode_seq((file_number, pos, index), SEQ_WIDTHS)  # raises


def heartbeat_seq(file_number: int, pos: int, last_seq: str | None) -> str:
    """The seq of a heartbeat at `pos` (the end of the last complete transaction): HEARTBEAT_INDEX + n, n
    counting on from the last heartbeat landed at that position."""
    seq = make_seq(file_number, pos, HEARTBEAT_INDEX)
    if last_seq is not None and last_seq[:-8] == seq[:-8] and HEARTBEAT_INDEX <= int(last_seq[-8:], 16) \
            < RECOVERY_INDEX:
        return seq[:-8] + f"{int(last_seq[-8:], 16) + 1:08x}"
    return seq


def is_recovery_seq(seq: str) -> bool:
    """A snapshot.mode=recovery record's seq (its index is RECOVERY_INDEX or more)."""
    return int(seq[-8:], 16) >= RECOVERY_INDEX


def first_recovery_seq(seq: str) -> str:
    """The seq of the first record of the recovery set that `seq` belongs to (same file and position)."""
    return seq[:-8] + f"{RECOVERY_INDEX:08x}"


@dataclass(frozen=True, slots=True)
class MySqlOffset:
    """One resume position. `key` and `done` are set only for a snapshot row (with `table` and `ordinal`)."""

    file: str
    pos: int
    gtids: str = ""
    snapshot: bool = False             # written while the snapshot runs
    snapshot_completed: bool = False   # the snapshot is over: resume by streaming from file/pos
    table: str | None = None           # snapshot row: its table ("db.table")
    key: tuple[Any, ...] = ()          # snapshot row: its primary key values (position JSON values)
    ordinal: int = -1                  # snapshot row: its ordinal (the seq index)
    done: tuple[str, ...] = ()         # snapshot row: the tables read completely before its table
    incremental: dict[str, Any] | None = None  # streaming: the incremental snapshot under way

    @classmethod
    def streaming(cls, file: str, pos: int, gtids: str, incremental: dict[str, Any] | None = None) -> MySqlOffset:
        """A position to stream from (after the snapshot): the transaction beginning at file/pos."""
        return cls(file, pos, gtids, snapshot_completed=True, incremental=incremental)

    @staticmethod
    def streaming_json(file: str, pos: int, gtids: str, incremental: dict[str, Any] | None = None) -> str:
        """streaming(...).to_json(), built directly: the position of every streamed transaction's events."""
        body: dict[str, Any] = {"file": file, "pos": pos, "gtids": gtids, "snapshot_completed": True}
        if incremental:
            body["incremental"] = incremental
        return orjson.dumps(body).decode()

    @classmethod
    def in_snapshot(cls, file: str, pos: int, gtids: str, completed: bool = False) -> MySqlOffset:
        """The position of a snapshot taken at file/pos (its schema change events)."""
        return cls(file, pos, gtids, snapshot=True, snapshot_completed=completed)

    def at_row(self, table: str, key: list[Any], ordinal: int, done: list[str]) -> MySqlOffset:
        """The position of a snapshot row: `ordinal`, whose primary key in `table` is `key`."""
        return replace(self, table=table, key=tuple(key), ordinal=ordinal, done=tuple(done))

    def completed(self) -> MySqlOffset:
        return replace(self, snapshot_completed=True)

    @property
    def snapshot_running(self) -> bool:
        """The snapshot was interrupted here: resume it (not streaming)."""
        return self.snapshot and not self.snapshot_completed

    @property
    def resumed_ordinal(self) -> int:
        """The ordinal of the next snapshot row after this position."""
        return self.ordinal + 1

    @classmethod
    def from_position(cls, position: dict[str, Any] | None) -> MySqlOffset | None:
        """The offset of a position read back from bronze (ResumeState.position); None when there is none."""
        if not position:
            return None
        table = position.get("table")
        return cls(file=str(position.get("file")), pos=int(position.get("pos") or 0),
                   gtids=position.get("gtids") or "", snapshot=bool(position.get("snapshot")),
                   snapshot_completed=bool(position.get("snapshot_completed")),
                   table=str(table) if table is not None else None, key=tuple(position.get("key") or ()),
                   ordinal=int(position.get("ordinal", -1)), done=tuple(position.get("done") or ()),
                   incremental=position.get("incremental") or None)

    @classmethod
    def from_json(cls, text: str) -> MySqlOffset:
        offset = cls.from_position(orjson.loads(text))
        assert offset is not None, text
        return offset

    def to_json(self) -> str:
        body: dict[str, Any] = {"file": self.file, "pos": self.pos, "gtids": self.gtids}
        if self.snapshot:
            body["snapshot"] = True
        if self.table is not None:
            body.update(table=self.table, key=self.key, ordinal=self.ordinal, done=self.done)
        if self.snapshot_completed:
            body["snapshot_completed"] = True
        if self.incremental:
            body["incremental"] = self.incremental
        return orjson.dumps(body).decode()

    def row_texts(self) -> tuple[str, str, str]:
        """(head, middle, tail) of the positions of this snapshot table's rows (set `table` and `done`): head + the
        key values (JSON, comma separated) + middle + the ordinal + tail is a row's to_json(). The columnar
        snapshot joins them for a whole chunk."""
        text = self.to_json()
        marker = ',"key":['
        head_end = text.index(marker) + len(marker)
        tail_start = text.index(',"done":')
        return text[:head_end], '],"ordinal":', text[tail_start:]
