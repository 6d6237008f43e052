"""The snapshot's columnar path (ingest.connectors.postgres.columnar) against the row-by-row converters: for
every converter with a vectorized form, every edge of its text forms gives byte-identical JSON; and on the
real server, COPY's CSV form read by Arrow gives the same value texts as PostgreSQL itself, and a
snapshot with an unconvertible value sends exactly that row to the rejects."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ingest.connectors.postgres import types as pgt
from ingest.connectors.postgres.columnar import floor_divide, fragments
from ingest.events.columnar import decimal_json, json_strings
from ingest.events.json_converter import decimal_base64 as scalar_decimal_base64
from ingest.events.json_converter import dumps_str, java_double_text, java_float
from tests.support.pg import (
    Collector,
    connector,
    execute,
)

STRINGS = ["", "plain", 'quote " and \\ backslash', "tab\there", "new\nline", "\x00\x01\x1f", "\x7f del",
           "ünïcödé ✓ 𝄞", "comma, semicolon; {braces}", "\\x41", "/slash/", None]
TIMESTAMPS = ["2024-01-01 00:00:00", "2024-02-29 23:59:59.5", "1970-01-01 00:00:00.000001",
              "1969-12-31 23:59:59.999999", "1000-01-01 00:00:00", "9999-12-31 23:59:59.999999",
              "0999-06-15 12:00:00", "0044-03-15 12:00:00 BC", "1900-01-01 00:00:00.123", None]
ZONED = ["2024-01-01 00:00:00+00", "2024-01-01 10:20:30.456+00", "1969-12-31 23:59:59.999999+00",
         "0999-01-01 00:00:00+00", "0044-03-15 12:00:00+00 BC", "2024-06-01 12:00:00+05:30", None]
DATES = ["2024-01-01", "1970-01-01", "1969-12-31", "1000-01-01", "9999-12-31", "0999-12-31", "0044-03-15 BC",
         None]
DECIMALS = ["0.00", "1.00", "-1.00", "0.01", "-0.01", "1.27", "1.28", "-1.28", "-1.29", "327.67", "327.68",
            "-327.68", "-327.69", "99999999999.99", "-99999999999.99", "12345.6", "NaN", None]

# (case id, converter, texts)
CASES: list[tuple[str, Callable[[str], Any], list[str | None]]] = [
    ("int", int, ["0", "-1", "2147483647", "-9223372036854775808", "9223372036854775807", None]),
    ("str", str, STRINGS),
    ("bool", pgt.pg_bool, ["t", "f", None]),
    ("float", float, ["0", "0.5", "-1.25", "1e+30", "1.5e-07", "NaN", "Infinity", "-Infinity", "3.14159", None]),
    ("decimal2", pgt.FixedDecimal(2), DECIMALS),
    ("decimal0", pgt.FixedDecimal(0), ["0", "127", "128", "-128", "-129", "9223372036854775807",
                                       "-9223372036854775808", "9223372036854775808", "123456789012345678901234",
                                       "-123456789012345678901234", None]),
    ("decimal6", pgt.FixedDecimal(6), ["0.000001", "-0.000001", "1.500000", "-32768.000000", None]),
    # numeric(38,10) with every digit significant (the columnar path hands these to the exact converter)
    ("decimal10", pgt.FixedDecimal(10), ["1234567890123456789012345678.0123456789", "-0.0000000001", "0E-10", None]),
    ("java_float", java_float, ["0", "-0", "0.5", "-1.25", "1e+30", "1.5e-07", "NaN", "Infinity", "-Infinity",
                                "3.14159", "-1.76229696e+08", "0.001", "0.0001", "1e+07", "9999999", "1234567",
                                "-4.3502684e+12", "0.00099", "12.5", None]),
    ("numeric_string", pgt.numeric_string, ["1.50", "NaN", "Infinity", "-Infinity", "-0.001", None]),
    ("java_double", java_double_text, ["0", "0.5", "1e+10", "0.0001", "1e-320", "1234567", "1.7976931348623157e+308",
                                       "NaN", "-Infinity", "2.5e+15", "1.9980225383584097e+18", "0.001", None]),
    ("timestamp_micros", pgt.timestamp_micros, TIMESTAMPS),
    ("timestamp_millis", pgt.timestamp_millis, TIMESTAMPS),
    ("zoned_timestamp", pgt.zoned_timestamp, ZONED),
    ("date", pgt.date_days, DATES),
    ("time_micros", pgt.time_micros, ["00:00:00", "23:59:59.999999", "12:30:00.5", None]),
    ("time_millis", pgt.time_millis, ["00:00:00", "23:59:59.999999", "12:30:00.5", None]),
]


def expected(convert: Callable[[str], Any], texts: list[str | None]) -> tuple[list[str], set[int]]:
    out, failed = [], set()
    for i, text in enumerate(texts):
        if text is None:
            out.append("null")
            continue
        try:
            out.append(dumps_str(convert(text)))
        except (pgt.ConversionError, ValueError):
            out.append("null")
            failed.add(i)
    return out, failed


@pytest.mark.unit
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_fragments_equal_the_row_converter(case) -> None:
    _, convert, texts = case
    want, failed = expected(convert, texts)
    got = fragments(pa.array(texts, pa.string()), convert)
    assert set(got.errors) == failed
    assert [t for i, t in enumerate(got.texts.to_pylist()) if i not in failed] == \
        [t for i, t in enumerate(want) if i not in failed]


@pytest.mark.unit
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_fragments_equal_the_row_converter_one_value_at_a_time(case) -> None:
    """A column of one value takes the fast path whenever that value allows it (no neighbour forces the
    fallback), so each edge is checked on its own too."""
    _, convert, texts = case
    for text in texts:
        want, failed = expected(convert, [text])
        got = fragments(pa.array([text], pa.string()), convert)
        assert set(got.errors) == failed, text
        if not failed:
            assert got.texts.to_pylist() == want, text


@pytest.mark.unit
def test_rejected_value_is_reported_per_row() -> None:
    got = fragments(pa.array(["2024-01-01 00:00:00", "infinity", None, "-infinity"]), pgt.timestamp_micros)
    assert sorted(got.errors) == [1, 3] and "no Debezium representation" in got.errors[1]
    assert got.texts.to_pylist()[0] == str(1704067200000000) and got.texts.to_pylist()[2] == "null"


@pytest.mark.unit
@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(min_value=-(2**63), max_value=2**63 - 1), min_size=1, max_size=40))
def test_decimal_base64_equals_big_integer_bytes(values: list[int]) -> None:
    import numpy as np

    got = decimal_json(np.array(values, dtype=np.int64)).to_pylist()
    assert got == [json.dumps(scalar_decimal_base64(v)) for v in values]


@pytest.mark.unit
@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.none(), st.text()), min_size=1, max_size=20))
def test_json_strings_equal_orjson(texts: list[str | None]) -> None:
    got = json_strings(pa.array(texts, pa.string())).to_pylist()
    assert got == [None if t is None else dumps_str(t) for t in texts]


@pytest.mark.unit
@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(min_value=-(2**62), max_value=2**62), min_size=1, max_size=30),
       st.sampled_from([1, 7, 1000, 86_400_000_000]))
def test_floor_divide_is_python_floor_division(values: list[int], divisor: int) -> None:
    assert floor_divide(pa.array(values, pa.int64()), divisor).to_pylist() == [v // divisor for v in values]


@pytest.mark.integration
def test_snapshot_reads_tricky_texts_and_rejects_one_row(pg_dsn, db) -> None:
    dsn, name, s = db
    execute(dsn, f"CREATE TABLE {s}.t (id int PRIMARY KEY, s text, ts timestamp, n numeric(8,2))",
            f"INSERT INTO {s}.t VALUES "
            f"(1, E'tab\\there, \"quoted\", back\\\\slash\\nnew line', '2024-01-01 10:00:00', 1.5), "
            f"(2, '', 'infinity', -2.25), (3, NULL, NULL, NULL), (4, ',', '1969-12-31 23:59:59.5', 'NaN'), "
            f"(5, E'\\\\N', '0044-03-15 12:00:00 BC', 99999.99)")
    conn = connector(pg_dsn, name, s, **{"snapshot.mode": "initial_only", "snapshot.fetch.size": 2})
    c = Collector(conn).run()
    conn.close()
    rejects = [r for b in c.batches for r in b.rejects]
    assert len(rejects) == 1 and "timestamp infinity" in rejects[0].error
    assert rejects[0].raw == b"2\t\tinfinity\t-2.25" and json.loads(rejects[0].position)["key"] == ["2"]
    rows = {json.loads(e.key)["id"]: json.loads(e.value)["after"] for e in c.events if e.op == "r"}
    assert sorted(rows) == [1, 3, 4, 5]
    assert rows[1]["s"] == 'tab\there, "quoted", back\\slash\nnew line'
    assert rows[1]["ts"] == 1704103200000000 and rows[4]["ts"] == -500000
    assert rows[3] == {"id": 3, "s": None, "ts": None, "n": None}
    assert rows[4]["s"] == "," and rows[4]["n"] is None and rows[5]["s"] == "\\N"
    assert rows[5]["ts"] == pgt.timestamp_micros("0044-03-15 12:00:00 BC")
    positions = [json.loads(e.position) for e in sorted(c.events, key=lambda e: e.seq) if e.op == "r"]
    # n counts the table's schema row first; the rejected row keeps its number (3)
    assert json.loads(rejects[0].position)["n"] == 3
    assert [p["n"] for p in positions[:-1]] == [2, 4, 5] and [p["key"] for p in positions[:-1]] == [["1"], ["3"], ["4"]]
    assert positions[-1]["phase"] == "streaming"  # the completed snapshot resumes as streaming
