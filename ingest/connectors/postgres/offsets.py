"""Where a PostgreSQL source resumes (Debezium's offset context): the seq of each event and its position JSON.
This module is the one place that encodes and decodes them.

seq = encode_seq([commit LSN, change LSN, event index], SEQ_WIDTHS). Snapshot rows and snapshot schema
changes use [consistent point of the slot, 0, running row number], so they sort before every streamed
change of that slot (whose change LSN is never 0). The position JSON of each event says where to resume:

  snapshot:  {"phase": "snapshot", "slot_lsn", "table": "schema.table", "key": [key texts], "n", "xmin"}
  streaming: {"phase": "streaming", "slot_lsn", "restart_lsn": end LSN of the last transaction fully
              before this event, "last_commit_lsn", "commit_lsn": the event's transaction (a heartbeat: its
              restart_lsn)[, "incremental": an incremental snapshot under way (connectors/incremental.py)]}
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from ingest.bronze.contract import encode_seq
from ingest.events.json_converter import dumps_str

SEQ_WIDTHS = (16, 16, 8)


def make_seq(commit_lsn: int, lsn: int, index: int) -> str:
    """encode_seq((commit_lsn, lsn, index), SEQ_WIDTHS), formatted directly (it is on the per-event path)."""
    # %-formatting: about half the time of an f-string with format specs
    if 0 <= commit_lsn < 1 << 64 and 0 <= lsn < 1 << 64 and 0 <= index < 1 << 32:
        return "%016x-%016x-%08x" % (commit_lsn, lsn, index)  # noqa: UP031
    return encode_seq((commit_lsn, lsn, index), SEQ_WIDTHS)  # raises


# A heartbeat's seq is [end LSN of the last complete transaction, HEARTBEAT_LSN, n]: after every event up to
# that transaction and any non-transactional message at that LSN, before the next transaction (whose commit
# LSN is larger); n counts the heartbeats at that position, on from the last one landed.
HEARTBEAT_LSN = (1 << 64) - 1


def heartbeat_seq(restart_lsn: int, last_seq: str | None) -> str:
    prefix = f"{restart_lsn:016x}-{HEARTBEAT_LSN:016x}-"
    n = int(last_seq[len(prefix):], 16) + 1 if last_seq is not None and last_seq.startswith(prefix) else 0
    return prefix + f"{n:08x}"


def snapshot_seq_prefix(slot_lsn: int) -> str:
    """The seq of snapshot row number n is this prefix followed by n as 8 hex digits (make_seq(slot_lsn, 0, n))."""
    return f"{slot_lsn:016x}-{0:016x}-"


def snapshot_position(slot_lsn: int, table: str, key: list | None, n: int, xmin: int) -> str:
    """The position of one snapshot event: resume after row `n`, whose key in `table` is `key`."""
    head, tail = snapshot_position_head(slot_lsn, table), snapshot_position_tail(xmin)
    return f'{head}{orjson.dumps(key).decode()},"n":{n}{tail}'


def snapshot_position_head(slot_lsn: int, table: str) -> str:
    """The text of a snapshot position up to its key (columnar snapshot blocks join head, key, n and tail)."""
    return f'{{"phase":"snapshot","slot_lsn":{slot_lsn},"table":{dumps_str(table)},"key":'


def snapshot_position_tail(xmin: int) -> str:
    return f',"xmin":{xmin}}}'


@dataclass(frozen=True)
class PostgresOffset:
    """A resume position read back from bronze (the position of the last committed event)."""

    phase: str                     # "snapshot" or "streaming"
    slot_lsn: int                  # the slot's consistent point: where its snapshot was taken
    restart_lsn: int = 0           # streaming: end of the last transaction fully committed
    last_commit_lsn: int = 0       # streaming: commit LSN of that transaction
    table: str | None = None       # snapshot: the table being read ("schema.table")
    key: list | None = None        # snapshot: the key texts of the last committed row
    n: int = 0                     # snapshot: the running row number of the last committed row
    incremental: dict[str, Any] | None = None   # streaming: an incremental snapshot under way

    @classmethod
    def from_position(cls, position: dict[str, Any] | None) -> PostgresOffset | None:
        """None when there is no position, or it is not one of ours (a source that never landed an event)."""
        if not position or position.get("phase") not in ("snapshot", "streaming"):
            return None
        return cls(phase=position["phase"], slot_lsn=int(position.get("slot_lsn", 0)),
                   restart_lsn=int(position.get("restart_lsn", 0)),
                   last_commit_lsn=int(position.get("last_commit_lsn", 0)),
                   table=position.get("table"), key=position.get("key"), n=int(position.get("n", 0)),
                   incremental=position.get("incremental"))


class OffsetContext:
    """The live offset of a run, shared by the snapshot and the streaming source: what the next position JSON
    says, and which seqs were handed out already (a resumed run and a reconnected stream skip those)."""

    def __init__(self, resume_seq: str | None = None) -> None:
        self.slot_lsn = 0
        self.restart_lsn = 0
        self.last_commit_lsn = 0
        self.resume_seq = resume_seq   # highest seq committed before this run
        self.last_seq = resume_seq     # highest seq handed out
        self.incremental: dict[str, Any] | None = None   # the incremental snapshot's state, in every position
        self.last_change: tuple[int, int] | None = None   # (LSN, xid) of the last row change streamed

    def resume_streaming(self, offset: PostgresOffset) -> None:
        self.slot_lsn, self.restart_lsn, self.last_commit_lsn = offset.slot_lsn, offset.restart_lsn, \
            offset.last_commit_lsn
        self.incremental = offset.incremental

    def start_snapshot(self, slot_lsn: int) -> None:
        self.slot_lsn = self.restart_lsn = slot_lsn
        self.last_commit_lsn = 0

    def claim(self, seq: str) -> bool:
        """True when `seq` is new (and it becomes the last handed out); False for one handed out before."""
        if self.last_seq is not None and seq <= self.last_seq:
            return False
        self.last_seq = seq
        return True

    def committed_before_run(self, seq: str) -> bool:
        """`seq` lies strictly before what this run resumes from (a repeat at the resume point is kept)."""
        return self.resume_seq is not None and seq < self.resume_seq

    def streaming_position(self, commit_lsn: int) -> str:
        position = {"phase": "streaming", "slot_lsn": self.slot_lsn, "restart_lsn": self.restart_lsn,
                    "last_commit_lsn": self.last_commit_lsn, "commit_lsn": commit_lsn}
        if self.incremental is not None:
            position["incremental"] = self.incremental
        return orjson.dumps(position).decode()
