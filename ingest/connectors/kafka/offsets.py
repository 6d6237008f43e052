"""Where a `kafka` source resumes: the one place that encodes and decodes its position JSON.

Every row of a batch carries `{"kafka": {"<topic>\u0000<partition>": next offset, ...}, "prev": ...}`: the next
offset to read of every partition read so far (cumulative: the newest batch's rows say where every partition
continues), and the decoder's inherited seq part. Rejects are keyed by their record: kafka:<topic>:<partition>:<offset>.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

SEPARATOR = "\u0000"   # cannot occur in a topic name


def reject_seq(topic: str, partition: int, offset: int) -> str:
    return f"kafka:{topic}:{partition}:{offset:016x}"


@dataclass
class KafkaOffsets:
    """(topic, partition) -> the next offset to read."""

    next_offsets: dict[tuple[str, int], int] = field(default_factory=dict)

    @classmethod
    def from_position(cls, position: dict[str, Any] | None) -> KafkaOffsets:
        entries = (position or {}).get("kafka") or {}
        out = {}
        for key, offset in entries.items():
            topic, _, partition = key.rpartition(SEPARATOR)
            out[(topic, int(partition))] = int(offset)
        return cls(out)

    def advance(self, topic: str, partition: int, offset: int) -> None:
        """A record at `offset` was read: that partition continues after it."""
        self.next_offsets[(topic, partition)] = offset + 1

    def position(self, prev: Any) -> str:
        kafka = {f"{topic}{SEPARATOR}{partition}": offset for (topic, partition), offset in self.next_offsets.items()}
        return json.dumps({"kafka": kafka, "prev": prev}, separators=(",", ":"))
