"""The kafka source's Avro reading, the parts no real producer here writes: what it refuses and how it fails.
(Real AvroConverter records: tests/conformance/test_avro_converter.py, tests/integration/kafka/.)"""

from __future__ import annotations

import io
import json
import struct

import fastavro
import pytest

from ingest.connectors.debezium_json.records import RecordError
from ingest.connectors.kafka.avro import AvroDecoder, SchemaRegistry, connect_schema
from ingest.errors import LakecdcError

pytestmark = pytest.mark.unit


class Registry:
    """Schemas by id, as the registry would answer (the HTTP side: tests/support/schema_registry.py)."""

    url = "http://registry.test"

    def __init__(self, **schemas: object) -> None:
        self.schemas = {int(k[1:]): json.dumps(v) for k, v in schemas.items()}

    def schema(self, schema_id: int) -> str | None:
        return self.schemas.get(schema_id)


def record(schema_id: int, schema: object, datum: object) -> bytes:
    body = io.BytesIO()
    fastavro.schemaless_writer(body, fastavro.parse_schema(schema), datum)
    return b"\x00" + schema_id.to_bytes(4, "big") + body.getvalue()


ROW = {"type": "record", "name": "Value", "namespace": "shop.inv.t", "connect.name": "shop.inv.t.Value",
       "fields": [{"name": "id", "type": "int"}, {"name": "r", "type": ["null", "float"], "default": None},
                  {"name": "s", "type": {"type": "int", "connect.type": "int16"}},
                  {"name": "b", "type": ["null", "bytes"], "default": None}]}


def test_a_row_reads_as_json_converter_writes_it() -> None:
    decoder = AvroDecoder(Registry(i7=ROW))   # type: ignore[arg-type]
    schema, payload = decoder.decode(record(7, ROW, {"id": 1, "r": 0.1, "s": -3, "b": b"\xff\x00"}), "value")
    assert payload == '{"id":1,"r":0.1,"s":-3,"b":"/wA="}'   # float32 0.1 as Float.toString prints it
    assert json.loads(schema) == {
        "type": "struct", "optional": False, "name": "shop.inv.t.Value",
        "fields": [{"type": "int32", "optional": False, "field": "id"},
                   {"type": "float", "optional": True, "field": "r"},
                   {"type": "int16", "optional": False, "field": "s"},
                   {"type": "bytes", "optional": True, "field": "b"}]}


@pytest.mark.parametrize("value", [1e10, 1.5e-5, -176229696.0, 3.4028234663852886e38])
def test_float32_text_is_javas(value: float) -> None:
    decoder = AvroDecoder(Registry(i1=ROW))   # type: ignore[arg-type]
    stored = struct.unpack(">f", struct.pack(">f", value))[0]
    _, payload = decoder.decode(record(1, ROW, {"id": 1, "r": stored, "s": 0, "b": None}), "value")
    expected = {1e10: "1.0E10", 1.5e-5: "1.5E-5", -176229696.0: "-1.76229696E8",
                3.4028234663852886e38: "3.4028235E38"}[value]
    assert f'"r":{expected},' in payload


def test_a_union_avro_converter_does_not_write_is_refused() -> None:
    odd = {**ROW, "fields": [{"name": "id", "type": ["null", "int", "string"]}]}
    decoder = AvroDecoder(Registry(i2=odd))   # type: ignore[arg-type]
    with pytest.raises(RecordError, match="schema id 2 is not a schema lakecdc can read: a union of 3 types"):
        decoder.decode(b"\x00\x00\x00\x00\x02\x02\x02", "value")
    with pytest.raises(Exception, match="Avro type 'enum'"):
        connect_schema({"type": "enum", "name": "E", "symbols": ["A"]})


def test_a_registry_that_does_not_answer_stops_the_run_rather_than_rejecting() -> None:
    decoder = AvroDecoder(SchemaRegistry("http://127.0.0.1:9"))   # the discard port: nothing listens
    with pytest.raises(LakecdcError, match="schema registry http://127.0.0.1:9 did not answer"):
        decoder.decode(b"\x00\x00\x00\x00\x05\x02", "value")
