"""Where a `debezium-json` source resumes: the one place that encodes and decodes its position JSON.

Every row of a batch carries the batch's end, `{"file", "offset", "prev", "record"}`: `file`/`offset` where the
next batch starts (a batch is one commit), `prev` the main seq part inherited by events without a position of
their own, `record` (`file:offset`) the row's own input line. Rejects are keyed by their input line (reject_seq).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson


def reject_seq(file: str, offset: int) -> str:
    """Rejects are keyed by their input position."""
    return f"input:{file}:{offset:016x}"


@dataclass(frozen=True)
class FileOffset:
    """The end of a committed batch: the next line to read and the seq state to continue with."""

    file: str | None = None
    offset: int = 0
    prev: Any = None

    @classmethod
    def from_position(cls, position: dict[str, Any] | None) -> FileOffset:
        position = position or {}
        return cls(position.get("file"), int(position.get("offset") or 0), position.get("prev"))

    def row_positions(self) -> RowPositions:
        return RowPositions(orjson.dumps({"file": self.file, "offset": self.offset, "prev": self.prev}).decode())


class RowPositions:
    """The position text of each row of one batch: the batch's end plus the row's own `record`, built from a
    cached head per input file (this runs per input line)."""

    def __init__(self, end: str) -> None:
        self._head = end[:-1] + ',"record":'
        self._file_heads: dict[str, str] = {}

    def of(self, file: str, offset: int) -> str:
        # `record` is orjson.dumps(f"{file}:{offset}"): the file name's JSON string, then the digits
        file_head = self._file_heads.get(file)
        if file_head is None:
            file_head = self._file_heads[file] = self._head + orjson.dumps(file + ":").decode()[:-1]
        return f'{file_head}{offset}"}}'
