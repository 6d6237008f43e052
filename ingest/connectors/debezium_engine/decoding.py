"""The embedded engine's records decoded into bronze's event columns in Java, without a Python step per record.

The engine hands records over unconverted (Debezium's `Connect` format: Kafka Connect's SourceRecord); their
conversion is part of the hand-over, so a record Debezium's queue no longer holds is either being handed over or
in lakecdc's queue (what the catch-up check relies on, catch_up.py). EventColumns.java (beside this file) writes
each record's key and value as JsonConverter does, through ConnectJson.java (JsonConverter's bytes without schemas,
written straight from the record's values, where Kafka Connect's JsonConverter builds a Jackson tree of each
record first), and builds the rows the debezium-json `Decoder` would: the same seq (source position, BLAKE2b
tiebreak), table_id, op, timestamps, transaction and snapshot marker, the key and value texts. It hands a batch's
rows over as Arrow buffers in one crossing. The records it leaves (schema change events, anything on the schema
change topic, anything unusual) go through the Python `Decoder`, which also rejects what cannot be landed; the
two share the decoder's position across those records.

The classes are compiled once per process, by Janino (a Java compiler in a jar, which Spark uses for its own code
generation: pyspark's jars hold it, as does every Spark installation), since a JRE has no compiler: on a thread
of its own when a run validates its source (compile_in_background), else when the engine starts."""

from __future__ import annotations

import glob
import importlib.util
import json
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from ingest.bronze.contract import (
    EVENT_BLOCK_COLUMNS,
    BronzeEvent,
    BronzeEventBlock,
    BronzeReject,
    BronzeSchemaChange,
)
from ingest.connectors.debezium_engine.jvm import enveloped, source_position
from ingest.connectors.debezium_engine.offsets import EngineOffsets
from ingest.connectors.debezium_json.records import DecodedSchemaChange, Decoder, RecordError
from ingest.connectors.debezium_json.seq import tiebreak
from ingest.errors import LakecdcError

JAVA_SOURCE = Path(__file__).with_name("EventColumns.java")
JAVA_CLASS = "lakecdc.EventColumns"
CONVERTER_SOURCE = Path(__file__).with_name("ConnectJson.java")
CONVERTER_CLASS = "lakecdc.ConnectJson"
# EventColumns.take()'s columns, in its order
TEXT_COLUMNS = ("topic", "table_id", "op", "seq", "key", "value", "txn_id", "snapshot")
LONG_COLUMNS = ("ts_ms", "source_ts_ms")
INT_COLUMNS = ("at", "key_schema", "value_schema")   # record index in its batch, schema numbers (-1: none)
_BUFFER_COUNT = 3 * len(TEXT_COLUMNS) + 2 * len(LONG_COLUMNS) + len(INT_COLUMNS)
_compile_lock = threading.Lock()
_compiled: dict[str, Any] = {}

Output = BronzeEvent | BronzeSchemaChange | BronzeReject


def janino_jars() -> list[str]:
    """Janino's two jars (janino, commons-compiler) from pyspark's jars, $SPARK_HOME/jars or Databricks' jars."""
    places = []
    # found, not imported: another thread may be importing pyspark (compile_in_background)
    spec = importlib.util.find_spec("pyspark")
    if spec is not None and spec.submodule_search_locations:
        places.append(Path(next(iter(spec.submodule_search_locations))) / "jars")
    if os.environ.get("SPARK_HOME"):
        places.append(Path(os.environ["SPARK_HOME"]) / "jars")
    places.append(Path("/databricks/jars"))
    for place in places:
        names = sorted(glob.glob(str(place / "*.jar")))
        compiler = [n for n in names if "commons-compiler" in Path(n).name and "jdk" not in Path(n).name]
        janino = [n for n in names if "janino" in Path(n).name and "commons-compiler" not in Path(n).name]
        if compiler and janino:
            return [janino[-1], compiler[-1]]
    raise LakecdcError("the Debezium engine's decoder needs Janino (a Java compiler in a jar, part of every Spark "
                       f"installation), found in none of {', '.join(str(p) for p in places)}")


def compile_java(source: str, class_name: str) -> Any:
    """The class `class_name` of the Java `source`, compiled with Janino (the JVM must be running); its parent class
    loader is the system one, where Debezium's and Kafka Connect's classes are. Raises jpype.JException."""
    import jpype

    java = jpype.JClass
    urls = [Path(jar).resolve().as_uri() for jar in janino_jars()]
    system = java("java.lang.ClassLoader").getSystemClassLoader()
    loader = java("java.net.URLClassLoader")([java("java.net.URL")(url) for url in urls], system)
    compiler = java("org.codehaus.janino.SimpleCompiler", loader=loader)()
    compiler.setParentClassLoader(system)
    compiler.cook(source)
    return java(compiler.getClassLoader().loadClass(class_name))


def _compiled_class(source: Path, class_name: str, what: str) -> Any:
    """The class `class_name` of the Java file `source`, compiled once per process (the JVM must be running)."""
    with _compile_lock:
        if class_name not in _compiled:
            import jpype

            try:
                _compiled[class_name] = compile_java(source.read_text(), class_name)
            except jpype.JException as exc:
                raise LakecdcError(f"the Debezium engine's {what} does not compile: {exc.getMessage()}") from None
        return _compiled[class_name]


def event_columns_class() -> Any:
    """lakecdc.EventColumns (the decoder)."""
    return _compiled_class(JAVA_SOURCE, JAVA_CLASS, "decoder")


def connect_json_class() -> Any:
    """lakecdc.ConnectJson (JsonConverter's bytes without its Jackson tree)."""
    return _compiled_class(CONVERTER_SOURCE, CONVERTER_CLASS, "converter")


def compile_in_background() -> None:
    """Start compiling ConnectJson and EventColumns on a thread of their own (the JVM must be running): a run
    validates its source first, and the compilation (about a second) overlaps the Spark session's start. A failure
    shows when the engine starts (the class is compiled again there, and raises)."""

    def compile_quietly() -> None:
        try:
            connect_json_class()
            event_columns_class()
        except Exception:  # noqa: BLE001 (raised again where the class is needed)
            pass

    threading.Thread(target=compile_quietly, name="lakecdc-compile-decoder", daemon=True).start()


@dataclass
class DecodedRecords:
    """Records of a hand-over, decoded: `rows` (an Arrow table of bronze's event columns, without `position`, plus
    INT_COLUMNS) decoded in Java, and `others` (record index, output) decoded by the Python decoder, both in record
    order. `schemas`: schema number -> canonical schema JSON."""

    rows: pa.Table
    others: list[tuple[int, Output]]
    schemas: dict[int, str | None]
    prev_at_cut: str = ""   # the decoder's position after the records before the hand-over's cut
    prev_after: str = ""    # and after all of them

    def __len__(self) -> int:
        return self.rows.num_rows + len(self.others)

    def data_events(self) -> int:
        """How many are data change events (an op)."""
        return (self.rows.num_rows - self.rows.column("op").null_count
                + sum(1 for _, item in self.others if type(item) is BronzeEvent and item.op is not None))

    def split(self, cut: int) -> tuple[DecodedRecords, DecodedRecords]:
        """Those of records[:cut] and those of records[cut:]."""
        at = self.rows.column("at")
        before = int(pc.sum(pc.less(at, cut)).as_py() or 0)   # `at` increases: the rows before the cut come first
        head = [(index, item) for index, item in self.others if index < cut]
        tail = [(index, item) for index, item in self.others if index >= cut]
        return (DecodedRecords(self.rows.slice(0, before), head, self.schemas),
                DecodedRecords(self.rows.slice(before), tail, self.schemas))

    def outputs(self) -> list[Output]:
        return [item for _, item in self.others]

    def blocks(self) -> list[BronzeEventBlock]:
        """The rows as blocks, one per (key schema, value schema), in the order of their first row."""
        rows = self.rows
        if not rows.num_rows:
            return []
        keys, values = rows.column("key_schema"), rows.column("value_schema")
        pairs = pc.add(pc.multiply(pc.cast(keys, pa.int64()), 1 << 32), pc.cast(values, pa.int64()))
        distinct = pc.unique(pairs).to_pylist()   # in order of first appearance
        event_columns = [name for name, _ in EVENT_BLOCK_COLUMNS if name != "position"]
        blocks = []
        for pair in distinct:
            part = rows if len(distinct) == 1 else rows.filter(pc.equal(pairs, pair))
            columns = part.select(event_columns).append_column("position", pa.nulls(part.num_rows, pa.string()))
            key_no, value_no = part.column("key_schema")[0].as_py(), part.column("value_schema")[0].as_py()
            blocks.append(BronzeEventBlock(columns, self.schemas.get(key_no), self.schemas.get(value_no)))
        return blocks


class RecordDecoder:
    """Decodes the engine's batches on its thread, in order: EventColumns for what it can, the Python `Decoder`
    for the rest. `decoder` holds the position a run starts from (and is kept current); `converter_properties`: the
    engine's `converter.*` properties, without the prefix (how JsonConverter would write keys and values)."""

    def __init__(self, decoder: Decoder, topic_prefix: str, schema_topic: str, converter_properties: dict[str, str],
                 offsets: EngineOffsets) -> None:
        import jpype

        config = jpype.JClass("java.util.HashMap")()
        for key, value in converter_properties.items():
            config.put(key, value)
        key_converter, value_converter = connect_json_class()(), connect_json_class()()
        key_converter.configure(config, True)
        value_converter.configure(config, False)
        self.decoder = decoder
        self.schema_topic = schema_topic
        self._java = event_columns_class()(topic_prefix, schema_topic, config, key_converter, value_converter)
        self._schemas: dict[int, str | None] = {-1: None}
        self._offsets = EngineOffsets(dict(offsets.offsets))   # after the last hand-over: a reject's position

    def decode(self, records: Any, cut: int, offsets: dict[str, str]) -> DecodedRecords:
        """The records (the engine's batch, a java.util.List) decoded; `cut` and `offsets`: the hand-over's (see
        jvm.HandOver)."""
        java, decoder = self._java, self.decoder
        size = records.size()
        others: list[tuple[int, Output]] = []
        prev_at_cut = decoder.prev_main
        java.setMain(decoder.main)
        for start, end in ((0, cut), (cut, size)):
            at = start
            while at < end:
                stop = int(java.decode(records, at, end))
                if stop < end:   # a record for the Python decoder, which continues from Java's position
                    decoder.main = str(java.main())
                    others.append((stop, self._decode_in_python(records, stop)))
                    java.setMain(decoder.main)
                    stop += 1
                at = stop
            decoder.main = str(java.main())
            if end == cut:
                prev_at_cut = decoder.prev_main
        rows = _arrow_rows(bytes(java.take()))
        for number in range(len(self._schemas) - 1, int(java.schemaCount())):
            self._schemas[number] = decoder.canonical_schema(str(java.schemaJson(number)))
        self._offsets.update(offsets)   # where a reject in the next hand-over says the source was
        return DecodedRecords(rows, others, self._schemas, prev_at_cut, decoder.prev_main)

    def texts(self, records: Any, index: int) -> tuple[str, str | None, str | None, str | None, str | None]:
        """A record as the Python decoder takes it: topic, key schema JSON, key JSON, value schema JSON, value JSON
        (JsonConverter's, without schemas; None where absent)."""
        topic, key_schema, key, value_schema, value = (None if text is None else str(text)
                                                       for text in self._java.texts(records, index))
        return topic, key_schema, key, value_schema, value   # type: ignore[return-value]

    def _decode_in_python(self, records: Any, index: int) -> Output:
        topic, key_schema, key, value_schema, value = self.texts(records, index)
        known = self._java.topicTable(topic)
        if known is not None:
            self.decoder.note_topic_table(topic, str(known))
        try:
            decoded = self.decoder.decode_payloads(topic, key_schema, key, value_schema, value)
        except RecordError as exc:
            raw = json.dumps({"topic": topic, "key": enveloped(key_schema, key),
                              "value": enveloped(value_schema, value)}).encode()
            return BronzeReject(f"engine:{tiebreak(topic, key, value)}", exc.stage, str(exc), raw,
                                self._offsets.position())
        if type(decoded) is DecodedSchemaChange:
            position = None
            if topic == self.schema_topic and value is not None:   # the schema history is rebuilt from it
                position = source_position(records.get(index))
            # its seq keeps the connector's order among the schema changes at one position (seq.py)
            return BronzeSchemaChange(*decoded, position)
        if decoded.op is not None:   # type: ignore[union-attr]  (built as BronzeEvent)
            self._java.noteTopicTable(topic, decoded.table_id)   # type: ignore[union-attr]
        return decoded  # type: ignore[return-value]


def _arrow_rows(data: bytes) -> pa.Table:
    """EventColumns.take()'s bytes as an Arrow table (the buffers are used in place)."""
    whole = pa.py_buffer(data)
    view = memoryview(data)
    count = int.from_bytes(view[0:4], "little")
    lengths = [int.from_bytes(view[4 + 4 * i:8 + 4 * i], "little") for i in range(_BUFFER_COUNT)]
    at = (4 + 4 * _BUFFER_COUNT + 7) & ~7
    buffers = []
    for length in lengths:
        buffers.append(whole.slice(at, length))
        at += (length + 7) & ~7
    columns: dict[str, pa.Array] = {}
    taken = iter(buffers)
    for name in TEXT_COLUMNS:
        validity, offsets, text = next(taken), next(taken), next(taken)
        columns[name] = pa.Array.from_buffers(pa.string(), count, [validity, offsets, text])
    for name in LONG_COLUMNS:
        validity, values = next(taken), next(taken)
        columns[name] = pa.Array.from_buffers(pa.int64(), count, [validity, values])
    for name in INT_COLUMNS:
        columns[name] = pa.Array.from_buffers(pa.int32(), count, [None, next(taken)])
    order = [name for name, _ in EVENT_BLOCK_COLUMNS if name != "position"] + list(INT_COLUMNS)
    return pa.table({name: columns[name] for name in order})
