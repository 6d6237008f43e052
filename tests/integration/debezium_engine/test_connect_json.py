"""ConnectJson.java, which writes the key and value texts of the engine's records (decoding.py), writes the bytes
Kafka Connect's JsonConverter writes: every Connect type and the values at its edges, under each setting lakecdc
passes on (the engine tests also run with LAKECDC_VERIFY_CONNECT_JSON=1, tests/conftest.py: every record of theirs
is converted both ways and compared)."""

from __future__ import annotations

import math
from typing import Any

import pytest

from ingest.connectors.debezium_engine import jvm

pytestmark = pytest.mark.integration

SETTINGS = [{"schemas.enable": "false", "replace.null.with.default": "false"},
            {"schemas.enable": "false", "replace.null.with.default": "true"},
            {"schemas.enable": "false", "replace.null.with.default": "false", "decimal.format": "NUMERIC"},
            {"schemas.enable": "true"}]


def _java() -> dict[str, Any]:
    jvm.start_jvm()
    import jpype

    from ingest.connectors.debezium_engine.decoding import connect_json_class

    names = {"SchemaBuilder": "org.apache.kafka.connect.data.SchemaBuilder",
             "Schema": "org.apache.kafka.connect.data.Schema", "Struct": "org.apache.kafka.connect.data.Struct",
             "Decimal": "org.apache.kafka.connect.data.Decimal", "Date": "org.apache.kafka.connect.data.Date",
             "Time": "org.apache.kafka.connect.data.Time", "Timestamp": "org.apache.kafka.connect.data.Timestamp",
             "JsonConverter": "org.apache.kafka.connect.json.JsonConverter", "HashMap": "java.util.HashMap",
             "ArrayList": "java.util.ArrayList", "LinkedHashMap": "java.util.LinkedHashMap",
             "BigDecimal": "java.math.BigDecimal", "JDate": "java.util.Date", "ByteBuffer": "java.nio.ByteBuffer"}
    java = {short: jpype.JClass(name) for short, name in names.items()}
    java["ConnectJson"] = connect_json_class()
    java["jpype"] = jpype
    return java


def _cases(j: dict[str, Any]) -> list[tuple[str, Any, Any]]:
    """(what, schema, value)."""
    jpype, sb, schema = j["jpype"], j["SchemaBuilder"], j["Schema"]
    cases: list[tuple[str, Any, Any]] = []
    for what, s, values in [
        ("int8", schema.INT8_SCHEMA, [jpype.JByte(v) for v in (-128, 0, 127)]),
        ("int16", schema.INT16_SCHEMA, [jpype.JShort(v) for v in (-32768, 7, 32767)]),
        ("int32", schema.INT32_SCHEMA, [jpype.JInt(v) for v in (-(2**31), 0, 2**31 - 1)]),
        ("int64", schema.INT64_SCHEMA, [jpype.JLong(v) for v in (-(2**63), 1, 2**63 - 1)]),
        ("boolean", schema.BOOLEAN_SCHEMA, [jpype.JBoolean(True), jpype.JBoolean(False)]),
        ("float64", schema.FLOAT64_SCHEMA, [jpype.JDouble(v) for v in (
            0.0, -0.0, 1.5, 0.1, 1e-7, 1e-3, 1e7, 1e21, 123456789.125, 5e-324, 1.7976931348623157e308,
            math.nan, math.inf, -math.inf)]),
        ("float32", schema.FLOAT32_SCHEMA, [jpype.JFloat(v) for v in (
            0.0, -0.0, 0.1, 1e-5, 3.4e38, 1.4e-45, 16777217.0, math.nan, math.inf, -math.inf)]),
        ("string", schema.STRING_SCHEMA, ["", "plain", "quote \" backslash \\ slash /", "".join(map(chr, range(0x20))),
                                          "\x7f", "é ß", "€ \u2028 \u2029 \ufeff \uffff", "emoji 😀",
                                          "x" * 5000]),
        ("bytes", schema.BYTES_SCHEMA, [jpype.JArray(jpype.JByte)(b) for b in (b"", bytes(range(256)), b"\x00" * 7)]),
        ("optional null", schema.OPTIONAL_STRING_SCHEMA, [None]),
    ]:
        cases += [(what, s, v) for v in values]
    window = j["ByteBuffer"].wrap(jpype.JArray(jpype.JByte)(b"abcdef"), 2, 3)   # JsonConverter takes the whole array
    cases.append(("bytes buffer", schema.BYTES_SCHEMA, window))
    for scale, texts in ((2, ["0.00", "-1.25", "123456789012345678901234567890.99"]), (0, ["0", "-128", "255"])):
        s = j["Decimal"].schema(scale)
        cases += [(f"decimal scale {scale}", s, j["BigDecimal"](t)) for t in texts]
    cases += [("date", j["Date"].SCHEMA, j["JDate"](86_400_000 * 19_000)),
              ("time", j["Time"].SCHEMA, j["JDate"](45_296_789)),
              ("timestamp", j["Timestamp"].SCHEMA, j["JDate"](1_700_000_000_123))]
    ints = j["ArrayList"]()
    for v in (1, 2, 3):
        ints.add(jpype.JInt(v))
    texts = j["ArrayList"]()
    for v in ("a", None, "c"):
        texts.add(v)
    cases += [("array", sb.array(schema.INT32_SCHEMA).build(), ints),
              ("array of optional", sb.array(schema.OPTIONAL_STRING_SCHEMA).build(), texts)]
    by_text, by_int = j["LinkedHashMap"](), j["LinkedHashMap"]()
    for k, v in (("b", 2), ("a\n", 1)):
        by_text.put(k, jpype.JInt(v))
        by_int.put(jpype.JInt(v), k)
    cases += [("map by text", sb.map(schema.STRING_SCHEMA, schema.INT32_SCHEMA).build(), by_text),
              ("map by int", sb.map(schema.INT32_SCHEMA, schema.STRING_SCHEMA).build(), by_int)]
    inner = sb.struct().name("inner").field("n", schema.OPTIONAL_INT64_SCHEMA).optional().build()
    outer = (sb.struct().name("outer").field("id", schema.INT32_SCHEMA)
             .field("with_default", sb.string().optional().defaultValue("dflt").build())
             .field("inner", inner).field("tags", sb.array(schema.STRING_SCHEMA).optional().build()).build())
    full = j["Struct"](outer).put("id", jpype.JInt(1)).put("with_default", "set").put(
        "inner", j["Struct"](inner).put("n", jpype.JLong(-5)))
    empty = j["Struct"](outer).put("id", jpype.JInt(2))
    cases += [("struct", outer, full), ("struct with nulls and a default", outer, empty)]
    return cases


def _convert(converter: Any, schema: Any, value: Any) -> bytes | str:
    """The converter's bytes, or the name of the exception it raised."""
    import jpype

    try:
        written = converter.fromConnectData("topic", schema, value)
    except jpype.JException as exc:
        return type(exc).__name__
    return b"<null>" if written is None else bytes(written)


def test_connect_json_writes_json_converters_bytes() -> None:
    j = _java()
    hash_map = j["HashMap"]
    checked = 0
    for settings in SETTINGS:
        for is_key in (False, True):
            config = hash_map()
            for key, value in settings.items():
                config.put(key, value)
            ours, theirs = j["ConnectJson"](), j["JsonConverter"]()
            ours.configure(config, is_key)
            theirs.configure(config, is_key)
            for what, schema, value in _cases(j):
                expected = _convert(theirs, schema, value)
                assert _convert(ours, schema, value) == expected, (what, settings, expected)
                checked += 1
    assert checked > 300

