"""MongoDB collections in silver, the Python half (ingest/generate/mongodb.py): the kind of each extended JSON
value, how kinds widen, and the fields `lakecdc generate` infers from a collection's change events. The values
silver gives them are checked through dbt by tests/integration/silver/test_silver_mongodb.py, on the same table."""

from __future__ import annotations

import json

import pytest

from ingest.events import connect_schema as cs
from ingest.events import envelope as ev
from ingest.generate.mongodb import (
    NULL,
    TEXT,
    Kind,
    MongoEvent,
    infer_fields,
    is_mongodb_schema,
    kind_of,
    spark_type,
    widen,
)
from tests.support.mongodb import CONVERSIONS, Conversion

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("case", CONVERSIONS, ids=[c.field for c in CONVERSIONS])
def test_the_conversion_table_kinds(case: Conversion) -> None:
    kind = kind_of(json.loads(json.dumps(case.value)))   # as parsed from the document text
    assert (kind.type_name, spark_type(kind.type_name)) == (case.type_name, case.spark_type)


@pytest.mark.parametrize(("value", "type_name"), [
    (2**31 - 1, "int"), (-(2**31), "int"), (2**31, "bigint"), (-(2**31) - 1, "bigint"),
    (2**63, "double"),                                   # no BSON integer is that large: a double's digits
    (1.0, "double"), (-0.0, "double"),
    ({"$numberInt": "2147483648"}, "json"),              # not an int32: kept as it is
    ({"$numberLong": "12.5"}, "json"), ({"$numberLong": 5}, "json"),
    ({"$numberDouble": "Infinity"}, "double"), ({"$numberDouble": "x"}, "json"),
    ({"$numberDecimal": "0.001"}, "decimal(38,3)"), ({"$numberDecimal": "-0"}, "decimal(38,0)"),
    ({"$numberDecimal": "1E+3"}, "text"),                # an exponent: the engines' decimal cast does not read it
    ({"$numberDecimal": "1" * 39}, "text"),              # 39 digits do not fit decimal(38, 0)
    ({"$numberDecimal": "Infinity"}, "text"),
    ({"$date": "2019-05-27"}, "timestamp"), ({"$date": "yesterday"}, "json"), ({"$date": 1.5}, "json"),
    ({"$date": {"$numberLong": "x"}}, "json"),
    ({"$oid": 5}, "json"), ({"$oid": "596e275826f08b2730779e1f", "x": 1}, "json"), ({}, "json"), ([], "json"),
    ("", "string"), (False, "boolean"), (None, "string"),
])
def test_kinds_at_their_edges(value: object, type_name: str) -> None:
    assert kind_of(value).type_name == type_name


INT, BIGINT, DOUBLE, STRING = Kind("int"), Kind("bigint"), Kind("double"), Kind("string")


@pytest.mark.parametrize(("a", "b", "wide"), [
    (NULL, INT, INT), (INT, NULL, INT), (NULL, NULL, NULL),
    (INT, BIGINT, BIGINT), (BIGINT, INT, BIGINT), (INT, DOUBLE, DOUBLE), (BIGINT, DOUBLE, DOUBLE),
    (Kind("decimal", 3, 2), Kind("decimal", 10, 0), Kind("decimal", 10, 2)),
    (Kind("decimal", 3, 2), INT, Kind("decimal", 10, 2)), (BIGINT, Kind("decimal", 3, 20), Kind("decimal", 19, 20)),
    (Kind("decimal", 3, 2), DOUBLE, TEXT),
    (INT, STRING, TEXT), (Kind("objectid"), STRING, TEXT), (Kind("boolean"), INT, TEXT),
    (Kind("timestamp"), BIGINT, TEXT), (Kind("json"), STRING, TEXT), (TEXT, INT, TEXT), (TEXT, NULL, TEXT),
])
def test_widening(a: Kind, b: Kind, wide: Kind) -> None:
    assert widen(a, b) == wide


def test_a_widened_decimal_that_no_longer_fits_is_text() -> None:
    assert Kind("decimal", 19, 19).type_name == "decimal(38,19)"
    assert widen(BIGINT, Kind("decimal", 1, 20)).type_name == "text"   # 19 integer digits + 20 decimals > 38


def _doc(**fields: object) -> str:
    return json.dumps(fields)


def test_fields_widen_over_the_documents_in_first_seen_order() -> None:
    fields = infer_fields([
        MongoEvent('{"$oid" : "596e275826f08b2730779e1f"}', _doc(_id={"$oid": "596e275826f08b2730779e1f"},
                                                                 n=3, score=7, tag=5, at={"$date": 0})),
        MongoEvent('"k2"', _doc(_id="k2", n={"$numberLong": "5000000000"}, score=2.5, tag="vip", extra=None)),
        MongoEvent('"k3"', _doc(_id="k3", n=4, price={"$numberDecimal": "1.50"})),
        MongoEvent('"k4"', _doc(_id="k4", price={"$numberDecimal": "12.125"})),
    ])
    assert fields.types() == {"_id": "text", "n": "bigint", "score": "double", "tag": "text", "at": "timestamp",
                              "extra": "string", "price": "decimal(38,3)"}
    assert not fields.skipped and fields.unreadable == 0


def test_the_id_comes_from_the_key_and_the_documents() -> None:
    # the seed's key holds 1004 (an int) while its document holds {"$numberLong": "1004"} (Q25)
    key_only = infer_fields([MongoEvent("1004")])
    assert key_only.types() == {"_id": "int"}
    both = infer_fields([MongoEvent("1004", _doc(_id={"$numberLong": "1004"}))])
    assert both.types() == {"_id": "bigint"}
    assert infer_fields([MongoEvent("not json")]).types() == {"_id": "string"}


def test_partial_updates_name_fields_and_give_kinds_of_whole_values() -> None:
    fields = infer_fields([
        MongoEvent("1", _doc(_id=1, a=1)),
        # an old-version patch: $set a whole field (its kind counts) and a path inside one (only the field's name)
        MongoEvent("1", patch=json.dumps({"$v": 1, "$set": {"a": {"$numberLong": "9"}, "address.city": "x"},
                                          "$unset": {"gone": True}})),
        # a patch without operators replaces the whole document
        MongoEvent("1", patch=_doc(_id=1, a=2.5, b="x")),
        # change streams without the lookup: updateDescription
        MongoEvent("1", updated=_doc(c=True, **{"d.e": 1}), removed=["f", "g.h"]),
    ])
    assert fields.types() == {"_id": "int", "a": "double", "address": "string", "gone": "string", "b": "string",
                              "c": "boolean", "d": "string", "f": "string", "g": "string"}


def test_fields_that_cannot_be_columns_are_skipped_with_the_reason() -> None:
    fields = infer_fields([MongoEvent("1", _doc(_id=1, name="a", Name="b", _document="c", VALID_FROM=1,
                                                __x=1, **{"a b": 1, "it's": 2, "": 3, "a.b": 4}))])
    assert fields.types() == {"_id": "int", "name": "string", "a.b": "int"}
    assert set(fields.skipped) == {"Name", "_document", "VALID_FROM", "__x", "a b", "it's", ""}
    assert "only in case" in fields.skipped["Name"] and "own columns" in fields.skipped["_document"]


def test_documents_that_are_not_json_objects_are_counted() -> None:
    fields = infer_fields([MongoEvent("1", "[1, 2]"), MongoEvent("2", "{broken"), MongoEvent("3", _doc(_id=3, a=1))])
    assert fields.unreadable == 2 and fields.types() == {"_id": "int", "a": "int"}


def test_the_mongodb_value_schema_is_recognised() -> None:
    mongo = ev.mongodb_table_schemas("fulfillment", db="inventory", collection="customers")
    assert is_mongodb_schema(json.loads(mongo.envelope_schema_json))
    mysql = ev.table_schemas("mysql", "dbserver1", db="inventory", table="customers",
                             columns=[("id", cs.int32())], key_columns=["id"])
    assert not is_mongodb_schema(json.loads(mysql.envelope_schema_json))
