"""The `debezium-json` source: Debezium change events as Kafka-record JSON lines (kcat -J, a file sink),
read from a file or a growing directory and landed in bronze as they are.

Properties: properties.py (Debezium-style names; anything else is a ConfigError).

Where it resumes: offsets.py (every row of a batch carries the batch's end: a batch is one commit).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ingest.bronze.contract import Batch, BatchLimits, BronzeEvent, BronzeReject, BronzeSchemaChange, ResumeState
from ingest.config import SourceSettings
from ingest.connectors.base import SourceConnector
from ingest.connectors.common_properties import producer_type_modes
from ingest.connectors.debezium_json.offsets import FileOffset, reject_seq
from ingest.connectors.debezium_json.properties import FIELDS
from ingest.connectors.debezium_json.records import DecodedSchemaChange, Decoder, RecordError
from ingest.connectors.debezium_json.schema_resolver import SchemaResolver
from ingest.connectors.debezium_json.tail import Line, LineTail
from ingest.errors import LakecdcError


class DebeziumJsonConnector(SourceConnector):
    connector_name = "debezium-json"

    def __init__(self, settings: SourceSettings, base_dir: Path | None = None) -> None:
        super().__init__(settings, base_dir)
        props = FIELDS.parse(settings.properties, f"sources.{settings.name} (debezium-json)")
        path = Path(props["path"]).expanduser()
        if not path.is_absolute():
            path = (base_dir or Path.cwd()) / path
        self.path = path
        self.glob = props["file.glob"]
        self.topic_prefix = props["topic.prefix"]
        self.poll_seconds = props["poll.interval.ms"] / 1000.0
        self.max_line_bytes = props["max.line.bytes"]
        self.type_modes: dict[str, str] = {f.name: props[f.name] for f in producer_type_modes()}
        self._tail: LineTail | None = None

    def check(self) -> str:
        if not self.path.exists():
            raise LakecdcError(f"sources.{self.source_name}: input path {self.path} does not exist")
        if not (self.path.is_file() or self.path.is_dir()):
            raise LakecdcError(f"sources.{self.source_name}: input path {self.path} is not a file or directory")
        return f"input path {self.path} exists"

    def _start(self, resume: ResumeState) -> tuple[LineTail, Decoder]:
        start = FileOffset.from_position(resume.position)
        if start.file is not None and self.path.is_file() and start.file != self.path.name:
            raise LakecdcError(f"sources.{self.source_name}: bronze was landed from file {start.file!r}, "
                               f"but the input is now {self.path}; point `path` at the directory or the same file")
        tail = LineTail(self.path, self.glob, start.file, start.offset, self.max_line_bytes)
        resolver = SchemaResolver(self.topic_prefix, self.type_modes, resume.landed_schemas, self.source_name)
        return tail, Decoder(self.topic_prefix, start.prev, event_type=BronzeEvent, resolver=resolver)

    def batches(self, resume: ResumeState, limits: BatchLimits) -> Iterator[Batch]:
        tail, decoder = self._start(resume)
        self._tail = tail
        items: list[tuple[Line, Any]] = []  # (line, BronzeEvent | DecodedSchemaChange | RecordError)
        # bound once: this loop runs per input line
        read, decode, monotonic = tail.read, decoder.decode, time.monotonic
        max_events, max_seconds = limits.max_events, limits.max_seconds
        opened = 0.0
        try:
            while True:
                line = read()
                if line is None:  # caught up
                    if items:
                        yield self._close(items, tail, decoder, caught_up=True)
                        items = []
                    else:
                        yield Batch(caught_up=True)
                        time.sleep(self.poll_seconds)
                    continue
                if not items:
                    opened = monotonic()
                if line.too_long:
                    items.append((line, RecordError("decode", f"line longer than max.line.bytes "
                                                              f"({self.max_line_bytes})")))
                else:
                    try:
                        decoded = decode(line.data)
                    except RecordError as exc:
                        decoded = exc
                    except (TypeError, ValueError, KeyError, AttributeError) as exc:  # odd shapes: reject, go on
                        decoded = RecordError("parse", f"{type(exc).__name__}: {exc}")
                    if decoded is None:  # blank line
                        continue
                    items.append((line, decoded))
                if len(items) >= max_events or monotonic() - opened >= max_seconds:
                    yield self._close(items, tail, decoder, caught_up=False)
                    items = []
        finally:
            tail.close()

    def _close(self, items: list[tuple[Line, Any]], tail: LineTail, decoder: Decoder, caught_up: bool) -> Batch:
        """Build the batch; every row carries the batch's end position (where a restart continues)."""
        positions = FileOffset(tail.file, tail.offset, decoder.prev_main).row_positions()
        decoder.resolve_schemas()
        batch = Batch(caught_up=caught_up)
        events, changes, rejects = batch.events, batch.schema_changes, batch.rejects
        for line, decoded in items:
            position = positions.of(line.file, line.offset)
            if type(decoded) is BronzeEvent:  # built by the decoder (event_type), without its position
                decoded.position = position
                events.append(decoded)
            elif type(decoded) is DecodedSchemaChange:
                changes.append(BronzeSchemaChange(*decoded, position))
            else:
                rejects.append(BronzeReject(reject_seq(line.file, line.offset), decoded.stage, str(decoded),
                                            line.data, position))
        return batch

    def close(self) -> None:
        if self._tail is not None:
            self._tail.close()
