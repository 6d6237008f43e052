"""The kafka source's properties: what it refuses, in one line, before anything connects."""

from __future__ import annotations

import json
import re

import pytest

from ingest.config import SourceSettings
from ingest.connectors.kafka import KafkaConnector
from ingest.connectors.kafka.offsets import KafkaOffsets
from ingest.errors import ConfigError

pytestmark = pytest.mark.unit

BASE = {"bootstrap.servers": "127.0.0.1:9092", "topic.prefix": "shop"}


def make(**props: object) -> KafkaConnector:
    return KafkaConnector(SourceSettings("k", "kafka", {**BASE, **props}))


@pytest.mark.parametrize("props, message", [
    ({}, "set topics (a list) or topics.regex"),
    ({"topics.regex": "shop\\.(", "topics": None}, "topics.regex is not a valid regular expression"),
    ({"topics": ["a"], "topics.regex": "a"}, "topics.regex"),
    ({"topics": ["a"], "kafka.group.id": "x"}, "kafka.group.id: lakecdc sets the consumer's group.id itself"),
    ({"topics": ["a"], "kafka.enable.auto.commit": True}, "lakecdc sets the consumer's enable.auto.commit itself"),
    ({"topics": ["a"], "value.converter": "protobuf"}, "value.converter"),
    ({"topics": ["a"], "value.converter": "avro"}, "schema.registry.url is needed to read Avro records"),
    ({"topics": ["a"], "key.converter": "avro"}, "schema.registry.url is needed to read Avro records"),
])
def test_refused(props: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)):
        make(**props)


def test_settings_reach_the_consumer_and_lakecdc_keeps_its_own() -> None:
    connector = make(topics=["shop.inv.orders"], **{"kafka.security.protocol": "SASL_SSL",
                                                    "kafka.sasl.password": "s3cret", "kafka.enable.ssl.certificate"
                                                    ".verification": False})
    config = connector._config()
    assert config["security.protocol"] == "SASL_SSL" and config["sasl.password"] == "s3cret"
    assert config["enable.ssl.certificate.verification"] == "false"
    assert config["group.id"] == "lakecdc-k" and config["enable.auto.commit"] is False


def test_prefetch_backs_off_briefly_unless_the_user_says_otherwise() -> None:
    """librdkafka's default fetch.queue.backoff.ms (1 s) stalls a consumer that decodes between polls (the kafka
    source ran at a third of its speed, docs/connectors/kafka.md); a kafka.* property still sets its own value."""
    assert make(topics=["a"])._config()["fetch.queue.backoff.ms"] == 10
    assert make(topics=["a"], **{"kafka.fetch.queue.backoff.ms": 500})._config()["fetch.queue.backoff.ms"] == "500"


def test_offsets_round_trip_through_the_position() -> None:
    offsets = KafkaOffsets()
    offsets.advance("shop.inv.orders", 3, 41)
    offsets.advance("weird.topic", 0, 0)
    again = KafkaOffsets.from_position(json.loads(offsets.position(prev="p")))
    assert again.next_offsets == {("shop.inv.orders", 3): 42, ("weird.topic", 0): 1}
