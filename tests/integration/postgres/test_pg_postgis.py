"""PostGIS GEOMETRY and GEOGRAPHY on the real server (scripts/services.sh installs Debian's PostGIS): the
snapshot and pgoutput streaming both give {wkb, srid} as Debezium 3.6.3 does (measured with the real
connector): wkb is PostGIS's EWKB exactly as the server sends it (ST_AsEWKB: SRID flag and SRID kept),
srid is the EWKB's SRID (null when it has none); geometry columns are io.debezium.data.geometry.Geometry
(doc "Geometry"), geography columns io.debezium.data.geometry.Geography (doc "Geography")."""

from __future__ import annotations

import base64
import json

import pytest

from tests.support.pg import (
    Collector,
    connector,
    execute,
    query,
)

pytestmark = pytest.mark.integration

SHAPES = [  # (id, geometry literal, geography literal)
    (1, "SRID=4326;POINT(1 2)", "SRID=4326;POINT(13.4 52.5)"),
    (2, "LINESTRING(0 0, 1 1, 2 0)", "LINESTRING(0 0, 1 1)"),
    (3, "SRID=3857;POLYGON((0 0, 4 0, 4 4, 0 4, 0 0), (1 1, 2 1, 2 2, 1 1))", "POLYGON((0 0, 1 0, 1 1, 0 0))"),
    (4, "SRID=4326;MULTIPOINT((1 1), (2 2))", None),
    (5, "POINT Z (1 2 3)", "SRID=4326;POINT(-71.06 42.36)"),
    (6, None, None),
]


def test_geometry_and_geography_snapshot_and_streaming(pg_dsn, db) -> None:
    dsn, name, s = db
    execute(dsn, "CREATE EXTENSION IF NOT EXISTS postgis",
            f"CREATE TABLE {s}.shapes (id int PRIMARY KEY, g geometry, geo geography)")

    def insert(rows: list) -> None:
        for i, g, geo in rows:
            execute(dsn, f"INSERT INTO {s}.shapes VALUES ({i}, "
                         f"{'NULL' if g is None else repr(g) + '::geometry'}, "
                         f"{'NULL' if geo is None else repr(geo) + '::geography'})")

    insert(SHAPES[:3])
    c = Collector(connector(pg_dsn, name, s)).run()
    insert(SHAPES[3:])
    c.run(until=lambda c: sum(e.op == "c" for e in c.events) >= 3)
    c.conn.close()

    expected = {}
    for i, g_ewkb, g_srid, geo_ewkb, geo_srid in query(
            dsn, f"SELECT id, ST_AsEWKB(g), ST_SRID(g), ST_AsEWKB(geo::geometry), ST_SRID(geo) FROM {s}.shapes"):
        expected[i] = {
            "g": None if g_ewkb is None else {"wkb": base64.b64encode(bytes(g_ewkb)).decode(),
                                              "srid": g_srid or None},
            "geo": None if geo_ewkb is None else {"wkb": base64.b64encode(bytes(geo_ewkb)).decode(),
                                                  "srid": geo_srid},
        }
    got = {}
    ops = {}
    for e in c.events:
        if e.op in ("r", "c"):
            after = json.loads(e.value)["after"]
            got[after["id"]] = {"g": after["g"], "geo": after["geo"]}
            ops[after["id"]] = e.op
    assert ops == {1: "r", 2: "r", 3: "r", 4: "c", 5: "c", 6: "c"}
    assert got == expected
    assert expected[1]["g"]["srid"] == 4326 and expected[2]["g"]["srid"] is None
    assert expected[3]["geo"]["srid"] == 4326  # geography defaults to WGS 84
    schema = json.loads(next(e for e in c.events if e.op == "c").value_schema)
    after = next(f for f in schema["fields"] if f["field"] == "after")
    fields = {f["field"]: f for f in after["fields"]}
    for column, label in (("g", "Geometry"), ("geo", "Geography")):
        assert (fields[column]["name"], fields[column]["doc"]) == (f"io.debezium.data.geometry.{label}", label)
        assert [(f["field"], f["type"], f["optional"]) for f in fields[column]["fields"]] == [
            ("wkb", "bytes", False), ("srid", "int32", True)]
