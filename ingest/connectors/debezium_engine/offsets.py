"""Where a Debezium-engine source resumes: the one place that encodes and decodes its position JSON.

Bronze keeps Debezium's own offsets: every row of a batch carries, as `{"offsets": [{"partition", "offset"}]}`,
the offset after the batch's last record of each source partition (a SQL Server source reading several
databases has one partition per database; the other connectors have one). A new run writes them into the
engine's offset file before the engine starts, so it resumes where bronze ends, on any machine.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any


def canonical(value: Any) -> str:
    """JSON text with sorted keys: the same partition always gives the same text."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


@dataclass
class EngineOffsets:
    """partition (canonical JSON) -> offset (JSON object) of every partition seen so far."""

    offsets: dict[str, dict[str, Any]] = field(default_factory=dict)

    @classmethod
    def from_position(cls, position: dict[str, Any] | None) -> EngineOffsets:
        entries = (position or {}).get("offsets") or []
        return cls({canonical(entry["partition"]): entry["offset"] for entry in entries})

    def update(self, offsets: dict[str, str]) -> None:
        """Take a hand-over's offsets (partition JSON -> offset JSON, as the engine wrote them)."""
        for partition, offset in offsets.items():
            self.offsets[canonical(json.loads(partition))] = json.loads(offset)

    def position(self) -> str:
        return json.dumps({"offsets": [{"partition": json.loads(p), "offset": o} for p, o in self.offsets.items()]},
                          separators=(",", ":"))

    def pairs(self) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        return [(json.loads(p), o) for p, o in self.offsets.items()]

    def unfinished_snapshot(self) -> bool:
        """An offset inside the initial snapshot (Debezium marks them `snapshot`, and the last record of a
        finished one `last_snapshot_record` / `snapshot_completed`): the engine would take it again."""
        return any(in_snapshot(offset) for offset in self.offsets.values())


def in_snapshot(offset: dict[str, Any]) -> bool:
    snapshot = offset.get("snapshot")
    if snapshot in (None, False) or str(snapshot).lower() in ("false", ""):
        return False
    return not (_true(offset.get("snapshot_completed")) or _true(offset.get("last_snapshot_record")))


def _true(value: Any) -> bool:
    return value is True or str(value).lower() == "true"
