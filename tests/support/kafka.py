"""Real Debezium records into Kafka for the kafka source's tests: Debezium's own postgres connector in the
embedded engine (the `debezium` source's code path, with its catch-up probe) hands its records, as Kafka
Connect's JsonConverter wrote them, to a confluent-kafka producer; each hand-over is marked processed only after
the producer flushed it."""

from __future__ import annotations

import json
from typing import Any

from ingest.bronze.contract import BatchLimits, ResumeState
from ingest.config import SourceSettings
from ingest.connectors.debezium_engine.connector import DebeziumEngineConnector
from ingest.connectors.debezium_engine.jvm import enveloped


def produce_debezium_records(bootstrap: str, properties: dict[str, Any],
                             resume: ResumeState) -> tuple[int, ResumeState]:
    """Run the connector until it caught up with the source, producing every record to the topic Debezium
    named; returns the number produced and where the connector resumes next time."""
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "linger.ms": 5})
    connector = DebeziumEngineConnector(SourceSettings("producer", "debezium", properties))
    produced = 0
    add = connector._add   # the engine connector's hand-over step: tapped to see the records as Debezium wrote them

    def tap(batch, handover, decoder, offsets) -> None:   # type: ignore[no-untyped-def]
        nonlocal produced
        for topic, key_schema, key, value_schema, value, _ in handover.records:
            key, value = enveloped(key_schema, key), enveloped(value_schema, value)   # JsonConverter with schemas
            producer.produce(topic, value=None if value is None else value.encode(),
                             key=None if key is None else key.encode())
            produced += 1
            producer.poll(0)
        add(batch, handover, decoder, offsets)

    connector._add = tap  # type: ignore[method-assign]
    position = resume.position
    try:
        for batch in connector.batches(resume, BatchLimits(max_events=2_000, max_seconds=1)):
            assert producer.flush(60) == 0, "the producer could not deliver every record"
            connector.acknowledge(batch)
            if batch.position is not None:
                position = json.loads(batch.position)
            if batch.caught_up:
                break
    finally:
        connector.close()
    return produced, ResumeState(position=position)
