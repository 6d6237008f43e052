"""Read lines from one file, or from the files of a directory that grows, in file-name order.

A position is (file name, byte offset of the next unread byte). Only complete lines are returned: a last
line without its newline is taken when it is a complete JSON object or when a later file exists (the
writer moved on), otherwise it is left until more bytes arrive.
"""

from __future__ import annotations

import fnmatch
import os
from pathlib import Path
from typing import BinaryIO, NamedTuple

import orjson

from ingest.errors import LakecdcError


class Line(NamedTuple):
    file: str      # file name (relative to the directory; the name of the single input file)
    offset: int    # byte offset where the line starts
    end: int       # byte offset after the line (the resume offset)
    data: bytes    # the line without its newline; for a too long line, its first max_line_bytes
    too_long: bool = False


class LineTail:
    def __init__(self, path: Path, glob: str = "*", start_file: str | None = None, start_offset: int = 0,
                 max_line_bytes: int = 64 * 1024 * 1024, read_buffer: int = 1 << 20) -> None:
        self.path = path
        self.glob = glob
        self.max_line_bytes = max_line_bytes
        self.read_buffer = read_buffer
        self.file: str | None = start_file
        self.offset = start_offset if start_file else 0
        self._fh: BinaryIO | None = None

    # -- files -------------------------------------------------------------------------------------
    def _files(self) -> list[str]:
        if self.path.is_file():
            return [self.path.name]
        try:
            entries = list(os.scandir(self.path))
        except FileNotFoundError:
            raise LakecdcError(f"input path {self.path} does not exist") from None
        return sorted(e.name for e in entries
                      if not e.name.startswith(".") and e.is_file() and fnmatch.fnmatchcase(e.name, self.glob))

    def _file_path(self, name: str) -> Path:
        return self.path if self.path.is_file() else self.path / name

    def _open(self, name: str, offset: int) -> None:
        self.close()
        path = self._file_path(name)
        size = path.stat().st_size
        if offset > size:
            raise LakecdcError(f"input file {path} is shorter ({size} bytes) than the committed position "
                               f"({offset}): it was truncated or replaced")
        self._fh = open(path, "rb", buffering=self.read_buffer)  # noqa: SIM115 - kept open while tailing
        self._fh.seek(offset)
        self.file, self.offset = name, offset

    def _next_file(self) -> str | None:
        """The first file after the current one (or the first file at all)."""
        for name in self._files():
            if self.file is None or name > self.file:
                return name
        return None

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None

    # -- lines -------------------------------------------------------------------------------------
    def read(self) -> Line | None:
        """The next complete line, or None when there is nothing more for now."""
        while True:
            if self._fh is None:
                if self.file is not None and self._file_path(self.file).is_file():
                    self._open(self.file, self.offset)
                else:
                    following = self._next_file()
                    if following is None:
                        return None
                    self._open(following, 0)
            assert self._fh is not None and self.file is not None
            start = self.offset
            data = self._fh.readline(self.max_line_bytes + 1)
            if data.endswith(b"\n"):
                self.offset += len(data)
                return Line(self.file, start, self.offset, data[:-1])
            if len(data) > self.max_line_bytes:
                return self._skip_long_line(start, data)
            # end of file: a tail without newline, or nothing
            if data and self._complete_json(data):
                self.offset += len(data)
                return Line(self.file, start, self.offset, data)
            following = self._next_file()
            if following is None:
                self._fh.seek(start)  # wait for the rest of the line
                return None
            if data:  # the writer moved to a later file: this unterminated tail is final
                self.offset += len(data)
                return Line(self.file, start, self.offset, data)
            self._open(following, 0)

    def _skip_long_line(self, start: int, head: bytes) -> Line | None:
        """Skip to the end of a line longer than max_line_bytes; it becomes a reject with its first bytes."""
        assert self._fh is not None and self.file is not None
        skipped = len(head)
        while True:
            chunk = self._fh.readline(self.read_buffer)
            if not chunk:
                if self._next_file() is None:
                    self._fh.seek(start)  # the line is still being written
                    return None
                break
            skipped += len(chunk)
            if chunk.endswith(b"\n"):
                break
        self.offset = start + skipped
        return Line(self.file, start, self.offset, head[: self.max_line_bytes], too_long=True)

    @staticmethod
    def _complete_json(data: bytes) -> bool:
        # A truncated JSON object never parses, so a parseable tail is a whole record.
        if not data.rstrip().endswith(b"}"):
            return False
        try:
            return isinstance(orjson.loads(data), dict)
        except orjson.JSONDecodeError:
            return False
