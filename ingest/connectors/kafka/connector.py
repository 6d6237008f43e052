"""The `kafka` source: Debezium's records read from Kafka topics with confluent-kafka and landed through the
`debezium-json` decoder (seq from each record's source block, so bronze's order is the source's, whatever the
topics' partitioning) and the bronze writer.

Exactly once: the consumer is positioned by lakecdc (`assign`, no group rebalancing): every partition starts at
the offset bronze holds for it (offsets.py), and the consumer group's offsets are committed only after a bronze
commit, for monitoring tools. Records that cannot be decoded land in S_rejects with their topic, partition,
offset and value bytes; ingest goes on.

Properties: properties.py. Tested against a Kafka-protocol broker (tansu) with records of the real Debezium
postgres connector (docs/connectors/kafka.md).
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ingest.bronze.contract import Batch, BatchLimits, BronzeEvent, BronzeReject, BronzeSchemaChange, ResumeState
from ingest.config import SourceSettings
from ingest.connectors.base import SourceConnector
from ingest.connectors.common_properties import producer_type_modes
from ingest.connectors.debezium_json.records import DecodedSchemaChange, Decoder, RecordError
from ingest.connectors.debezium_json.schema_resolver import SchemaResolver
from ingest.connectors.kafka.avro import AvroDecoder, SchemaRegistry
from ingest.connectors.kafka.offsets import KafkaOffsets, reject_seq
from ingest.connectors.kafka.properties import FIELDS, OWNED_CONSUMER_SETTINGS
from ingest.errors import ConfigError, LakecdcError

METADATA_TIMEOUT_S = 10.0
TOPIC_REFRESH_S = 5.0   # how often topics.regex looks for new topics, and every topic for new partitions


class KafkaConnector(SourceConnector):
    connector_name = "kafka"

    def __init__(self, settings: SourceSettings, base_dir: Path | None = None) -> None:
        super().__init__(settings, base_dir)
        label = f"sources.{settings.name} (kafka)"
        props = FIELDS.parse(settings.properties, label)
        self.bootstrap: str = props["bootstrap.servers"]
        self.topics: list[str] = list(props["topics"] or [])
        regex = props["topics.regex"]
        if not self.topics and not regex:
            raise ConfigError(f"{label}: set topics (a list) or topics.regex")
        try:
            self.topics_regex = re.compile(regex) if regex else None
        except re.error as exc:
            raise ConfigError(f"{label}: topics.regex is not a valid regular expression ({exc})") from None
        self.topic_prefix: str = props["topic.prefix"]
        self.group_id: str = props["group.id"].replace("{source}", settings.name)
        self.poll_seconds: float = props["poll.interval.ms"] / 1000.0
        self.value_converter: str = props["value.converter"]
        self.key_converter: str = props["key.converter"] or self.value_converter
        self.type_modes: dict[str, str] = {f.name: props[f.name] for f in producer_type_modes()}
        self.registry_url: str | None = props["schema.registry.url"]
        self._registry_user_info: str | None = props["schema.registry.basic.auth.user.info"] or None
        if "avro" in (self.key_converter, self.value_converter) and not self.registry_url:
            raise ConfigError(f"{label}: schema.registry.url is needed to read Avro records")
        self.client_settings: dict[str, str] = {}
        for name, value in props.forwarded.items():
            setting = name.removeprefix("kafka.")
            if setting in OWNED_CONSUMER_SETTINGS:
                raise ConfigError(f"{label}: {name}: lakecdc sets the consumer's {setting} itself "
                                  "(offsets are kept in bronze)")
            self.client_settings[setting] = str(value).lower() if isinstance(value, bool) else str(value)
        self._consumer: Any = None
        self._assigned: dict[tuple[str, int], int] = {}
        self._avro: AvroDecoder | None = None

    def _avro_decoder(self) -> AvroDecoder | None:
        if "avro" not in (self.key_converter, self.value_converter):
            return None
        try:
            import fastavro  # noqa: F401
        except ImportError:
            raise LakecdcError("reading Avro records needs fastavro: pip install 'lakecdc[kafka]'") from None
        return AvroDecoder(SchemaRegistry(self.registry_url or "", self._registry_user_info))

    # -- the client ----------------------------------------------------------------------------------------------
    def _config(self) -> dict[str, Any]:
        # librdkafka stops prefetching for fetch.queue.backoff.ms (1 s by default) whenever its queue is over
        # queued.max.messages.kbytes; a consumer that decodes between polls keeps hitting that and then waits in
        # consume(): 10 ms made the kafka benchmark's connector 2.7x faster (docs/connectors/kafka.md)
        return {"fetch.queue.backoff.ms": 10, **self.client_settings,
                "bootstrap.servers": self.bootstrap, "group.id": self.group_id,
                "enable.auto.commit": False, "enable.auto.offset.store": False,
                "auto.offset.reset": "earliest", "enable.partition.eof": False}

    def _new_consumer(self) -> Any:
        try:
            from confluent_kafka import Consumer
        except ImportError:
            raise LakecdcError("connector kafka needs confluent-kafka: pip install 'lakecdc[kafka]'") from None
        return Consumer(self._config())

    def _partitions(self, consumer: Any) -> list[tuple[str, int]]:
        """The partitions of the configured topics (a configured topic the broker does not know: an error)."""
        try:
            metadata = consumer.list_topics(timeout=METADATA_TIMEOUT_S)
        except Exception as exc:  # KafkaException: unreachable brokers, authentication
            raise LakecdcError(f"sources.{self.source_name}: Kafka at {self.bootstrap} did not answer: "
                               f"{_first_line(exc)}") from None
        known = metadata.topics
        if self.topics:
            missing = [t for t in self.topics if t not in known]
            if missing:
                raise LakecdcError(f"sources.{self.source_name}: topic(s) {', '.join(missing)} not found at "
                                   f"{self.bootstrap}")
            names = self.topics
        else:
            names = sorted(t for t in known if self.topics_regex.fullmatch(t) and not t.startswith("__consumer"))
        return [(name, p) for name in names for p in sorted(known[name].partitions)]

    def check(self) -> str:
        consumer = self._new_consumer()
        try:
            partitions = self._partitions(consumer)
        finally:
            consumer.close()
        topics = sorted({t for t, _ in partitions})
        return f"Kafka {self.bootstrap}: {len(topics)} topic(s), {len(partitions)} partition(s) to read"

    def _assign_new(self, consumer: Any, offsets: KafkaOffsets) -> None:
        """Assign every partition not assigned yet, at the offset bronze holds for it (else the beginning)."""
        from confluent_kafka import OFFSET_BEGINNING, TopicPartition

        new = [tp for tp in self._partitions(consumer) if tp not in self._assigned]
        if not new:
            return
        for tp in new:
            self._assigned[tp] = offsets.next_offsets.get(tp, OFFSET_BEGINNING)
        consumer.incremental_assign([TopicPartition(t, p, self._assigned[(t, p)]) for t, p in new])

    def _caught_up(self, consumer: Any, offsets: KafkaOffsets) -> bool:
        """Every assigned partition read up to its end: the high watermark of the partition's last fetch response
        (librdkafka keeps it; asking the broker costs a round trip per partition). A partition not fetched yet
        is not caught up."""
        from confluent_kafka import TopicPartition

        for topic, partition in self._assigned:
            low, high = consumer.get_watermark_offsets(TopicPartition(topic, partition), cached=True)
            if high < 0:   # no fetch response yet
                return False
            if offsets.next_offsets.get((topic, partition), low) < high:
                return False
        return True

    def partition_lag(self, landed: ResumeState) -> dict[tuple[str, int], int]:
        """(topic, partition) -> records in the partition after what bronze holds (high watermark minus the
        landed next offset; a partition bronze has nothing of counts from its low watermark)."""
        from confluent_kafka import TopicPartition

        offsets = KafkaOffsets.from_position(landed.position)
        consumer = self._new_consumer()
        try:
            lag = {}
            for topic, partition in self._partitions(consumer):
                low, high = consumer.get_watermark_offsets(TopicPartition(topic, partition),
                                                           timeout=METADATA_TIMEOUT_S, cached=False)
                lag[(topic, partition)] = max(0, high - max(low, offsets.next_offsets.get((topic, partition), low)))
            return lag
        finally:
            consumer.close()

    def source_lag(self, landed: ResumeState) -> str | None:
        lag = self.partition_lag(landed)
        behind = sorted(((n, f"{t}[{p}]") for (t, p), n in lag.items() if n), reverse=True)
        text = f"kafka: {len(lag)} partition(s), {sum(lag.values()):,} record(s) not landed"
        if behind:
            shown = ", ".join(f"{name} {n:,}" for n, name in behind[:10])
            text += f" ({shown}{', ...' if len(behind) > 10 else ''})"
        return text

    # -- the batches ---------------------------------------------------------------------------------------------
    def batches(self, resume: ResumeState, limits: BatchLimits) -> Iterator[Batch]:
        offsets = KafkaOffsets.from_position(resume.position)
        resolver = SchemaResolver(self.topic_prefix, self.type_modes, resume.landed_schemas, self.source_name)
        decoder = Decoder(self.topic_prefix, (resume.position or {}).get("prev"), event_type=BronzeEvent,
                          resolver=resolver)
        consumer = self._consumer = self._new_consumer()
        self._avro = self._avro_decoder()
        self._assigned = {}
        self._assign_new(consumer, offsets)
        refreshed = time.monotonic()
        batch, opened = Batch(), 0.0
        while True:
            if time.monotonic() - refreshed >= TOPIC_REFRESH_S:
                self._assign_new(consumer, offsets)
                refreshed = time.monotonic()
            messages = consumer.consume(num_messages=min(limits.max_events, 10_000), timeout=self.poll_seconds)
            if not messages:
                caught_up = self._caught_up(consumer, offsets)
                yield self._close(batch, offsets, decoder, caught_up)
                batch = Batch()
                continue
            if not len(batch):
                opened = time.monotonic()
            self._add(batch, messages, decoder, offsets)
            if len(batch) >= limits.max_events or time.monotonic() - opened >= limits.max_seconds:
                yield self._close(batch, offsets, decoder, caught_up=False)
                batch = Batch()

    def _add(self, batch: Batch, messages: list[Any], decoder: Decoder, offsets: KafkaOffsets) -> None:
        for message in messages:
            error = message.error()
            if error is not None:
                if error.fatal() or not error.retriable():
                    raise LakecdcError(f"sources.{self.source_name}: Kafka: {error.str()}")
                continue
            topic, partition, offset = message.topic(), message.partition(), message.offset()
            key, value = message.key(), message.value()
            try:
                decoded = self._decode(decoder, topic, key, value)
            except RecordError as exc:
                batch.rejects.append(BronzeReject(reject_seq(topic, partition, offset), exc.stage, str(exc),
                                                  value or b"", None))
            except (TypeError, ValueError, KeyError, AttributeError) as exc:  # odd shapes: reject, go on
                batch.rejects.append(BronzeReject(reject_seq(topic, partition, offset), "parse",
                                                  f"{type(exc).__name__}: {exc}", value or b"", None))
            else:
                if type(decoded) is DecodedSchemaChange:
                    batch.schema_changes.append(BronzeSchemaChange(*decoded, None))
                else:
                    batch.events.append(decoded)  # type: ignore[arg-type]  (built as BronzeEvent)
            offsets.advance(topic, partition, offset)

    def _decode(self, decoder: Decoder, topic: str, key: bytes | None, value: bytes | None) -> Any:
        """One record through the producers' converters and the debezium-json decoder. Raises RecordError."""
        if self._avro is None:
            return decoder.decode_record(topic, _text(key, "key"), _text(value, "value"))
        key_schema = key_text = value_schema = value_text = None
        if key is not None:
            key_schema, key_text = (self._avro.decode(key, "key") if self.key_converter == "avro"
                                    else decoder.part(_text(key, "key"), "key"))
        if value is not None:
            value_schema, value_text = (self._avro.decode(value, "value") if self.value_converter == "avro"
                                        else decoder.part(_text(value, "value"), "value"))
        return decoder.decode_payloads(topic, key_schema, key_text, value_schema, value_text)

    @staticmethod
    def _close(batch: Batch, offsets: KafkaOffsets, decoder: Decoder, caught_up: bool) -> Batch:
        """Every row of the batch carries where each partition continues (Batch.position)."""
        batch.caught_up = caught_up
        decoder.resolve_schemas()
        if len(batch):
            batch.position = offsets.position(decoder.prev_main)
            batch.ack = dict(offsets.next_offsets)
        return batch

    def acknowledge(self, batch: Batch) -> None:
        """Bronze holds the batch: commit the landed offsets to the consumer group (monitoring only)."""
        if self._consumer is None or not batch.ack:
            return
        from confluent_kafka import TopicPartition

        self._consumer.commit(offsets=[TopicPartition(t, p, o) for (t, p), o in batch.ack.items()],
                              asynchronous=True)

    def close(self) -> None:
        if self._consumer is not None:
            self._consumer.close()
            self._consumer = None


def _text(part: bytes | None, what: str) -> str | None:
    if part is None:
        return None
    try:
        return part.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RecordError("decode", f"the record's {what} is not UTF-8 text ({exc.reason} at byte {exc.start})") \
            from None


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]
