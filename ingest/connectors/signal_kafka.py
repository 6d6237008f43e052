"""The kafka signal channel (signal.enabled.channels=kafka), as Debezium's KafkaSignalChannel: records on partition 0
of `signal.kafka.topic` (default `<topic.prefix>-signal`) whose key is the connector's name (topic.prefix) and whose
value is a JSON object with id, type and data. Records with another key are skipped (one log line each), as
Debezium's are.

Where the channel reads from is part of bronze's resume state: the offset of the last record taken travels in the
snapshots' state (Debezium keeps it in its offsets as incremental_snapshot_signal_offset), so a restarted run reads
on after it, and a signal whose effect had not landed is read again. Without a stored offset the channel starts at
the consumer group's committed offset, else at the topic's beginning (Debezium's auto.offset.reset=earliest). The
group's offsets are committed for monitoring only. confluent-kafka (the `kafka` extra) is imported when the channel
is first used."""

from __future__ import annotations

import json
import logging
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from ingest.connectors.signals import refuse
from ingest.errors import ConfigError, LakecdcError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class KafkaSignalSettings:
    """signal.kafka.* and signal.consumer.* of one source."""

    topic: str
    bootstrap_servers: str
    group_id: str
    poll_timeout_ms: int
    connector_name: str   # topic.prefix: the key of this connector's signals
    consumer: dict[str, str] = field(default_factory=dict)   # librdkafka settings (signal.consumer.*)


def _kafka() -> Any:
    try:
        import confluent_kafka
    except ImportError:
        raise ConfigError("signal.enabled.channels=kafka needs confluent-kafka: pip install 'lakecdc[kafka]'") from None
    return confluent_kafka


class KafkaSignalChannel:
    """The signals of one source from its signal topic; `take` is called between transactions of the stream."""

    READ_TO_END_SECONDS = 10.0   # how long one look may wait for records the topic already holds

    def __init__(self, settings: KafkaSignalSettings) -> None:
        self.settings = settings
        self._consumer: Any = None
        self._next = 0    # the offset of the next record to read
        self._last_error: str | None = None

    def take(self, source: str, after: int | None) -> list[tuple[Any, Any, Any, int]]:
        """Every signal the topic holds after the last one taken, as (id, type, data text, offset): it reads to the
        partition's end as it was when asked, so a run caught up with its stream has seen every signal published
        before. `after`: the offset of the last record taken before this run (the state's), for the first call."""
        kafka = _kafka()
        partition = kafka.TopicPartition(self.settings.topic, 0)
        try:
            if self._consumer is None:
                self._consumer = self._open(kafka, partition, after)
            high = self._consumer.get_watermark_offsets(partition, timeout=5)[1]
        except kafka.KafkaException as exc:
            self._refuse_once(source, str(exc.args[0] if exc.args else exc))
            return []
        taken: list[tuple[Any, Any, Any, int]] = []
        deadline = time.monotonic() + self.READ_TO_END_SECONDS
        while self._next < high and time.monotonic() < deadline:
            for message in self._consumer.consume(num_messages=500, timeout=0.5):
                error = message.error()
                if error is not None:
                    if error.code() != kafka.KafkaError._PARTITION_EOF:
                        self._refuse_once(source, str(error))
                    continue
                self._next = message.offset() + 1
                taken.append(self._signal(source, message))
        return taken

    def _signal(self, source: str, message: Any) -> tuple[Any, Any, Any, int]:
        """One record as (id, type, data text, offset); (None, None, None, offset) for one not to act on."""
        offset = message.offset()
        key = message.key().decode("utf-8", "replace") if message.key() is not None else None
        if key != self.settings.connector_name:
            log.info("%s: signal key %r is not the connector's name %r: skipped", source, key,
                     self.settings.connector_name)
            return None, None, None, offset
        text = (message.value() or b"").decode("utf-8", "replace")
        try:
            item = json.loads(text)
        except json.JSONDecodeError as exc:
            refuse(source, f"kafka signal at offset {offset}: not JSON ({exc.msg} at {exc.pos})")
            return None, None, None, offset
        if not isinstance(item, dict):
            refuse(source, f"kafka signal at offset {offset}: a signal is a JSON object with id, type and data")
            return None, None, None, offset
        data = item.get("data")
        return item.get("id"), item.get("type"), json.dumps(data) if isinstance(data, dict | list) else data, offset

    def _open(self, kafka: Any, partition: Any, after: int | None) -> Any:
        """The consumer, assigned partition 0 at the offset after `after`; without one, at the group's committed
        offset, else at the beginning."""
        s = self.settings
        consumer = kafka.Consumer({"bootstrap.servers": s.bootstrap_servers, "group.id": s.group_id,
                                   "client.id": str(uuid.uuid4()), "enable.auto.commit": True,
                                   "auto.offset.reset": "earliest", **s.consumer})
        if after is not None:
            start = after + 1
        else:
            committed = consumer.committed([partition], timeout=5)[0].offset
            start = committed if committed >= 0 else consumer.get_watermark_offsets(partition, timeout=5)[0]
        consumer.assign([kafka.TopicPartition(s.topic, 0, start)])
        self._next = start
        return consumer

    def _refuse_once(self, source: str, problem: str) -> None:
        if problem != self._last_error:   # once per distinct error, not on every look
            self._last_error = problem
            refuse(source, f"kafka signal channel ({self.settings.topic}): {problem}")

    def close(self) -> None:
        if self._consumer is not None:
            self._consumer.close()
            self._consumer = None


def send_kafka_signal(settings: KafkaSignalSettings, signal_type: str, data: dict[str, Any]) -> str:
    """Publish one signal to partition 0 of the signal topic, keyed by the connector's name (what `lakecdc signal`
    does for the kafka channel); returns its id."""
    kafka = _kafka()
    signal_id = str(uuid.uuid4())
    producer = kafka.Producer({"bootstrap.servers": settings.bootstrap_servers, **{
        k: v for k, v in settings.consumer.items() if k.startswith(("security.", "sasl.", "ssl."))}})
    failures: list[str] = []
    producer.produce(settings.topic, key=settings.connector_name.encode(), partition=0,
                     value=json.dumps({"id": signal_id, "type": signal_type, "data": data}).encode(),
                     on_delivery=lambda error, _: failures.append(str(error)) if error is not None else None)
    if producer.flush(30) or failures:
        raise LakecdcError(f"the signal was not delivered to {settings.topic} at {settings.bootstrap_servers}: "
                           f"{failures[0] if failures else 'no answer in 30 s'}")
    return signal_id
