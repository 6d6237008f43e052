"""The comparator itself (no services): what counts as a difference, the declared exclusions and the
written exceptions — each exception pinned here by the exact values it accepts, and nothing else."""

from __future__ import annotations

import json

import pytest

from tests.conformance.compare import EXCEPTIONS, EXCLUDED, FloatText, compare, fold
from tests.conformance.debezium import Record

pytestmark = pytest.mark.unit

KEY = json.dumps({"schema": {"type": "struct", "fields": [{"type": "int32", "optional": False, "field": "id"}],
                             "optional": False, "name": "p.s.t.Key"}, "payload": {"id": 1}})


def value(after: dict, op: str = "c", source: dict | None = None, schema: dict | None = None, **top) -> str:
    payload = {"before": None, "after": after, "op": op, "ts_ms": 1,
               "source": {"connector": "postgresql", "snapshot": "false", "lsn": 10, **(source or {})}, **top}
    return json.dumps({"schema": schema or {"type": "struct", "fields": [], "optional": False}, "payload": payload})


def differences(d: str, lc: str, connector: str = "postgresql", d_key: str = KEY, lc_key: str = KEY) -> list:
    result = compare(connector, "unit", [Record("p.s.t", d_key, d)], [Record("p.s.t", lc_key, lc)])
    return [(path, x.debezium, x.lakecdc) for (_, path), items in result.groups.items() for _, x in items]


def test_identical_after_key_order_canonicalisation() -> None:
    d = value({"a": 1, "b": "x"})
    lc = json.dumps(dict(reversed(list(json.loads(d).items()))))
    assert differences(d, lc) == []


@pytest.mark.parametrize("d_after,lc_after", [
    ({"r": 1.0}, {"r": 1}),                        # number text: 1.0 is not 1
    ({"b": True}, {"b": 1}),                        # true is not 1
    ({"x": None}, {}),                              # a missing field is not a null one
    ({"v": "NaN"}, {"v": None}),
])
def test_strict_values(d_after: dict, lc_after: dict) -> None:
    assert differences(value(d_after), value(lc_after)), (d_after, lc_after)


def test_float_text_is_kept() -> None:
    d = '{"schema":null,"payload":{"after":{"r":-1.76229696E8},"op":"c","source":{}}}'
    lc = '{"schema":null,"payload":{"after":{"r":-176229696.0},"op":"c","source":{}}}'
    assert differences(d, lc) == [("value.payload.row.r", "-1.76229696E8", "-176229696.0")]


def test_field_order_in_schemas_matters_key_order_does_not() -> None:
    fields = [{"type": "int32", "optional": False, "field": "a"}, {"type": "string", "optional": True, "field": "b"}]
    d = value({}, schema={"type": "struct", "fields": fields, "optional": False})
    lc = value({}, schema={"type": "struct", "fields": fields[::-1], "optional": False})
    assert differences(d, lc) == [("value.schema.fields", ["a", "b"], ["b", "a"])]
    swapped = [{k: f[k] for k in reversed(list(f))} for f in fields]
    assert differences(d, value({}, schema={"type": "struct", "fields": swapped, "optional": False})) == []


def test_exclusions_apply_only_in_their_scope() -> None:
    snapshot_d = value({"id": 1}, op="r", source={"lsn": 1, "ts_ms": 5, "snapshot": "first"})
    snapshot_lc = value({"id": 1}, op="r", source={"lsn": 2, "ts_ms": 6, "snapshot": "first"}, ts_ms=99)
    assert differences(snapshot_d, snapshot_lc) == []
    streamed_d = value({"id": 1}, source={"lsn": 1, "ts_ms": 5})
    streamed_lc = value({"id": 1}, source={"lsn": 2, "ts_ms": 6})
    assert sorted(differences(streamed_d, streamed_lc)) == [("value.payload.source.lsn", 1, 2),
                                                            ("value.payload.source.ts_ms", 5, 6)]
    # the MariaDB binlog coordinates are not excluded for PostgreSQL
    assert differences(value({}, source={"gtid": "0-1-1"}), value({}, source={"gtid": None}))


def test_every_exclusion_has_a_reason_and_a_payload_path() -> None:
    for x in EXCLUDED:
        assert x.reason and x.scope and x.path.startswith("value.payload."), x


def test_missing_extra_and_misordered_events() -> None:
    a, b = value({"id": 1}), value({"id": 2}, op="u")
    result = compare("postgresql", "unit", [Record("p.s.t", KEY, a), Record("p.s.t", KEY, b)],
                     [Record("p.s.t", KEY, b), Record("p.s.t", KEY, a), Record("p.s.t", KEY, None)])
    paths = {path for _, path in result.groups}
    assert paths == {"event.extra", "order"}
    assert (result.compared, result.identical) == (3, 2)


def test_refused_configuration_is_a_difference() -> None:
    result = compare("postgresql", "unit", [Record("p.s.t", KEY, value({}))], [], refused="bad mode")
    assert result.differing == 1 and "bad mode" in result.report()


def test_fold_merges_before_and_after_only() -> None:
    assert fold("value.payload.after.c_real") == fold("value.payload.before.c_real") == "value.payload.row.c_real"
    assert fold("value.schema.after.c_real.type") == "value.schema.row.c_real.type"
    assert fold("value.payload.source.ts_ms") == "value.payload.source.ts_ms"


# ------------------------------------------------------------------ the written exceptions, one test each

def _exception(name: str):
    return next(e for e in EXCEPTIONS if e.name == name)


def test_exception_logical_message_identity_hash() -> None:
    e = _exception("logical-message-identity-hash")
    name = "io.debezium.connector.postgresql.LogicalDecodingMessageMonitor$LogicalDecodingMessageId@"
    assert e.accepts(name + "64ac86cc", "pga.message")
    assert not e.accepts(name + "64ac86cc", name + "1b2c3d")  # lakecdc never writes the Java name
    assert not e.accepts(name + "64ac86cc", "conformance-txn")
    assert not e.accepts(name + "64ac86cc", "pga.multi_a")
    assert not e.accepts("pga.message", "pga.message ")
    assert not e.accepts("pga.other", "pga.message")
    d = json.dumps({"schema": None, "payload": {"status": "END", "id": "1:2",
                                                "data_collections": [{"data_collection": name + "ab"}]}})
    lc = d.replace(name + "ab", "p.message")
    result = compare("postgresql", "unit", [Record("p.transaction", None, d)], [Record("p.transaction", None, lc)])
    assert result.identical == 1
    assert compare("mariadb", "unit", [Record("p.transaction", None, d)],
                   [Record("p.transaction", None, lc)]).identical == 0  # PostgreSQL only
    # the message entry's place follows its name's HashMap bucket in Debezium: any place is accepted, the
    # tables' order is still compared
    tables = [{"data_collection": "p.a"}, {"data_collection": "p.b"}]

    def end(items: list) -> str:
        return json.dumps({"schema": None, "payload": {"status": "END", "id": "1:2", "data_collections": items}})

    d = end([{"data_collection": name + "ab"}, *tables])
    assert compare("postgresql", "unit", [Record("p.transaction", None, d)],
                   [Record("p.transaction", None, end([*tables, {"data_collection": "p.message"}]))]).identical == 1
    assert compare("postgresql", "unit", [Record("p.transaction", None, d)],
                   [Record("p.transaction", None, end([tables[1], tables[0], {"data_collection": "p.message"}]))]
                   ).identical == 0


def test_exception_mariadb_connector_and_source_schema_names() -> None:
    assert _exception("mariadb-connector-name").accepts("mysql", "mariadb")
    assert not _exception("mariadb-connector-name").accepts("mysql", "mysql ")
    schema = _exception("mariadb-source-schema-name")
    assert schema.accepts("io.debezium.connector.mysql.Source", "io.debezium.connector.mariadb.Source")
    assert not schema.accepts("io.debezium.connector.mysql.Source", "io.debezium.connector.mariadb.Value")
    d = value({}, source={"connector": "mysql"})
    lc = value({}, source={"connector": "mariadb"})
    assert differences(d, lc, connector="mariadb") == []
    assert differences(d, lc, connector="postgresql") == [("value.payload.source.connector", "mysql", "mariadb")]


def test_exception_mariadb_float_snapshot_digits() -> None:
    e = _exception("mariadb-float-snapshot-digits")
    assert e.accepts(FloatText("-1.7623E8"), FloatText("-1.76229696E8"))
    assert e.accepts(FloatText("-59.1061"), FloatText("-59.106117"))
    assert not e.accepts(FloatText("0.3"), FloatText("0.3"))                # equal: no difference to accept
    assert not e.accepts(FloatText("-59.1062"), FloatText("-59.106117"))    # not the 6-digit rounding
    assert not e.accepts(FloatText("-59.106117"), FloatText("-59.1061"))    # the other way round
    assert not e.accepts("-59.1061", FloatText("-59.106117"))               # a string is not a float
    d, lc = value({"c_float": -1.7623E8}), value({"c_float": -1.76229696E8})
    assert differences(d, lc, connector="mariadb") == []
    assert differences(d, lc, connector="postgresql")                     # MariaDB only


def test_exception_bc_date_era_accepts_only_the_era_dropped_day() -> None:
    e = _exception("postgresql-bc-date-era")
    assert e.accepts(-703383, -735160)                       # 0044-03-15 AD for 0044-03-15 BC
    assert e.accepts(-718798, -719163)                       # 0001-12-31 BC (astronomical year 0)
    assert not e.accepts(-703383, -703383) and not e.accepts(-735160, -735160)
    assert not e.accepts(-703384, -735160) and not e.accepts(-703383, -735161)
    assert not e.accepts(17702, 17702) and not e.accepts(None, -735160) and not e.accepts("-703383", -735160)
    d, lc = value({"c_date": -703383, "c_dates": [17702, -703383]}), value({"c_date": -735160,
                                                                            "c_dates": [17702, -735160]})
    assert differences(d, lc) == []
    assert differences(d, lc, connector="mariadb")           # PostgreSQL only
    # a payload field of the envelope or source block is not a column
    assert differences(value({}, source={"x": -703383}), value({}, source={"x": -735160}))


def test_exception_source_snapshot_false() -> None:
    e = _exception("source-snapshot-false")
    assert e.accepts(None, "false")
    assert not e.accepts(None, "true") and not e.accepts("false", None) and not e.accepts(None, False)
    assert differences(value({}, source={"snapshot": None}), value({}, source={"snapshot": "false"})) == []
    assert differences(value({}, source={"snapshot": None}), value({}, source={"snapshot": "last"}))


def test_exception_lakecdc_source_version() -> None:
    e = _exception("lakecdc-source-version")
    assert e.accepts("3.6.3.Final", "lakecdc-0.1.0")
    assert not e.accepts("3.6.2.Final", "lakecdc-0.1.0") and not e.accepts("3.6.3.Final", "3.6.3.Final")
    assert not e.accepts("3.6.3.Final", "lakecdc") and not e.accepts("3.6.3.Final", None)
    d, lc = value({}, source={"version": "3.6.3.Final"}), value({}, source={"version": "lakecdc-0.1.0"})
    assert differences(d, lc) == [] and differences(d, lc, connector="mariadb") == []
