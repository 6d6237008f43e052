"""Every record lakecdc wrote to bronze in this suite (so every schema it registered), replayed through Kafka
Connect's own org.apache.kafka.connect.json.JsonConverter.toConnectData in the suite's JVM, must deserialize:
a Kafka Connect sink reading lakecdc's records must accept them as it accepts Debezium's."""

from __future__ import annotations

import json
from collections import defaultdict

import pytest

from tests.conformance.capture import Captured
from tests.conformance.debezium import JsonConverter, Record

pytestmark = pytest.mark.integration


def replay(captured: Captured) -> tuple[int, dict[str, list[str]], set[str]]:
    """(records replayed, error -> schema names that hit it, canonical schemas seen in the records)."""
    keys, values = JsonConverter(is_key=True), JsonConverter(is_key=False)
    errors: dict[str, list[str]] = defaultdict(list)
    seen: set[str] = set()
    count = 0
    for _, lakecdc in captured.runs.values():
        for record in lakecdc:
            count += 1
            for converter, text in ((keys, record.key), (values, record.value)):
                if text is None:
                    continue
                schema = json.loads(text)["schema"]
                seen.add(json.dumps(schema, sort_keys=True))
                try:
                    converter.to_connect_data(record.topic, text)
                except Exception as exc:  # the Java DataException, as JPype raises it
                    errors[str(exc).splitlines()[0][:200]].append(_name(record, schema))
    return count, errors, seen


def _name(record: Record, schema: dict | None) -> str:
    return (schema or {}).get("name") or record.topic


def registered(captured: Captured) -> set[str]:
    return {json.dumps(json.loads(s), sort_keys=True) for run in captured.runs
            if run not in captured.refused for s in captured.lakecdc.bronze_schemas(run)}


@pytest.mark.parametrize("which", ["pg_captured", "mariadb_captured"])
def test_bronze_records_deserialize_with_kafka_json_converter(which: str, request: pytest.FixtureRequest) -> None:
    captured: Captured = request.getfixturevalue(which)
    count, errors, seen = replay(captured)
    assert count > 0
    assert seen == registered(captured), "every schema in S_schemas was replayed through a record"
    report = "\n".join(f"{len(names)}x {error}\n    schemas: {', '.join(sorted(set(names)))[:300]}"
                       for error, names in sorted(errors.items()))
    assert not errors, f"JsonConverter.toConnectData rejected lakecdc records:\n{report}"


def test_json_converter_rejects_what_it_should() -> None:
    """The check can fail: Kafka's converter refuses lakecdc's old float schema spelling."""
    converter = JsonConverter(is_key=False)
    good = '{"schema":{"type":"double","optional":true},"payload":1.5}'
    bad = '{"schema":{"type":"float64","optional":true},"payload":1.5}'
    assert converter.round_trip("t", good) == good
    with pytest.raises(Exception, match="Unknown schema type: float64"):
        converter.to_connect_data("t", bad)
