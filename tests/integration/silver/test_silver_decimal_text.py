"""Connect Decimal bytes of any length decoded exactly by the staging macro (lakecdc_decimal_text), on the
embedded engine and on Apache Spark in ANSI mode (pyspark's own jars, classic local mode in a subprocess).

Precision above 38 (MariaDB DECIMAL(65,30), PostgreSQL numeric(50,20)) is kept as exact text in silver; the
macro once cut such values to their first 16 bytes, and 2^127 (a 16-byte, 39-digit magnitude) overflowed.
Connect Decimals of precision up to 16 go through lakecdc_decimal_narrow (no text, no lambdas), up to 38 through
the macro's short form: both checked the same way, with the minimal encoding Debezium writes and sign-extended
longer ones."""

from __future__ import annotations

import base64
import json
import os
import random
import subprocess
import sys
from decimal import Context, Decimal, localcontext
from pathlib import Path

import jinja2
import pytest

from ingest.dbt_runner import DBT_PACKAGE_MACROS
from tests.support.silver import encode_decimal

ROOT = Path(__file__).resolve().parents[3]
pytestmark = pytest.mark.integration


class _Namespace:
    def __init__(self, macros: dict) -> None:
        self._macros = macros

    def __getattr__(self, name: str):
        return self._macros[name]


def types_module():
    """lakecdc_types.sql's macros, rendered with plain Jinja."""
    env = jinja2.Environment(extensions=["jinja2.ext.do"])
    # the package qualifies its own macros (`lakecdc.x`): the module stands in for the namespace
    template = env.from_string((DBT_PACKAGE_MACROS / "lakecdc_types.sql").read_text())
    namespace: dict = {}
    module = template.make_module({"lakecdc": _Namespace(namespace)})
    namespace.update({name: getattr(module, name) for name in dir(module) if name.startswith("lakecdc_")})
    return module


def decimal_text_sql() -> str:
    """The macro's SQL for the columns b (base64 bytes) and sc (scale)."""
    return str(types_module().lakecdc_decimal_text("b", "sc")).strip()


# Connect Decimal types: lakecdc_decimal_narrow up to precision 16, lakecdc_decimal_text's short form up to 38
DECODED_TYPES = [(1, 0), (3, 1), (5, 5), (12, 2), (16, 0), (16, 6), (16, 16), (17, 0), (20, 5), (30, 10), (38, 0),
                 (38, 10), (38, 38)]


def decoded_cases() -> list[tuple[int, str, str]]:
    """(index into DECODED_TYPES, base64 unscaled bytes, expected text): random values, the type's limits, the two's
    complement limits of every byte length that fits, each minimal and some sign-extended to 9 and 16 bytes."""
    rng = random.Random(11)
    out = []
    for k, (precision, scale) in enumerate(DECODED_TYPES):
        top = 10**precision - 1
        unscaled = [rng.randrange(-top, top + 1) for _ in range(40)] + [top, -top, 0, 1, -1, 10 ** (precision - 1)]
        unscaled += [v for n in range(1, 17) for v in (2 ** (8 * n - 1) - 1, -(2 ** (8 * n - 1))) if abs(v) <= top]
        for i, v in enumerate(unscaled):
            minimal = max(1, (v.bit_length() + 8) // 8)
            for length in [minimal] + ([n for n in (9, 16) if n > minimal] if i % 5 == 0 else []):
                raw = base64.b64encode(v.to_bytes(length, "big", signed=True)).decode()
                out.append((k, raw, format(Decimal(v).scaleb(-scale, Context(prec=80)), "f")))
    return out


def decoded_sql() -> list[str]:
    """A query per type over decoded_cases (i, k, b): its rows decoded by lakecdc_decode as a Connect Decimal (one
    union would widen every type to a common one)."""
    module = types_module()
    return [f"select i, {str(module.lakecdc_decode('b', decimal_field(p, s))).strip()} from decoded_cases where k = {k}"
            for k, (p, s) in enumerate(DECODED_TYPES)]


def decimal_field(precision: int, scale: int) -> dict:
    return {"type": "bytes", "name": "org.apache.kafka.connect.data.Decimal",
            "parameters": {"scale": str(scale), "connect.decimal.precision": str(precision)}}


def decoded_wrong(rows: list[tuple[int, str, str]], got: dict[int, str | None]) -> list[tuple[str, str | None]]:
    """`got`: row index -> the decoded value's text; compared as numbers (Apache Spark hands some values of a
    decimal(16,16) column over as 1.00E-16: the same number with two more digits of scale)."""
    def same(want: str, value: str | None) -> bool:
        return value is not None and Decimal(value) == Decimal(want)

    return [(want, got.get(i)) for i, (_, _, want) in enumerate(rows) if not same(want, got.get(i))]


def cases() -> list[tuple[str, int, str]]:
    """(base64 unscaled bytes, scale, expected text) at the edges of every byte length up to 34 bytes."""
    rng = random.Random(7)
    values: list[tuple[int, int]] = []
    for digits, scale in [(80, 40), (65, 30), (50, 20), (39, 0), (38, 10), (38, 38), (20, 5), (1, 0)]:
        values += [(rng.randrange(-10**digits + 1, 10**digits), scale) for _ in range(30)]
        values += [(10**digits - 1, scale), (-(10**digits - 1), scale), (0, scale), (1, scale), (-1, scale)]
    for nbytes in range(1, 35):  # two's complement limits of each byte length
        values += [(2 ** (8 * nbytes - 1) - 1, 3), (-(2 ** (8 * nbytes - 1)), 3)]
    out = []
    with localcontext() as ctx:
        ctx.prec = 200
        for unscaled, scale in values:
            value = Decimal(unscaled).scaleb(-scale)
            out.append((encode_decimal(value, scale), scale, format(value, "f")))
    return out


def wrong(rows: list[tuple[str, int, str]], got: list[str | None]) -> list[tuple[str, str | None]]:
    return [(want, g) for (_, _, want), g in zip(rows, got, strict=True) if g != want]


def test_decimal_bytes_of_any_length_on_the_embedded_engine(engine) -> None:
    rows = cases()
    df = engine.spark.createDataFrame([(b, s) for b, s, _ in rows], "b string, sc int")
    df.createOrReplaceTempView("decimal_cases")
    got = [r[0] for r in engine.spark.sql(f"select {decimal_text_sql()} from decimal_cases").collect()]
    assert wrong(rows, got) == []


def test_connect_decimals_of_every_precision_on_the_embedded_engine(engine) -> None:
    rows = decoded_cases()
    engine.spark.createDataFrame([(i, k, b) for i, (k, b, _) in enumerate(rows)],
                                 "i int, k int, b string").createOrReplaceTempView("decoded_cases")
    got = {i: None if d is None else format(d, "f")
           for sql in decoded_sql() for i, d in engine.spark.sql(sql).collect()}
    assert decoded_wrong(rows, got) == []


SPARK_SCRIPT = """
import json, sys
from pyspark.sql import SparkSession
rows, sql = json.load(sys.stdin)
spark = (SparkSession.builder.master("local[1]").config("spark.sql.ansi.enabled", "true")
         .config("spark.ui.enabled", "false").getOrCreate())
spark.createDataFrame([(b, s) for b, s, _ in rows], "b string, sc int").createOrReplaceTempView("decimal_cases")
print(json.dumps([r[0] for r in spark.sql(f"select {sql} from decimal_cases").collect()]))
decoded, decoded_sql = json.loads(sys.argv[1])
spark.createDataFrame([(i, k, b) for i, (k, b, _) in enumerate(decoded)], "i int, k int, b string") \
    .createOrReplaceTempView("decoded_cases")
print(json.dumps({i: None if d is None else format(d, "f")
                  for sql in decoded_sql for i, d in spark.sql(sql).collect()}))
spark.stop()
"""


@pytest.mark.slow
def test_decimal_bytes_of_any_length_on_apache_spark() -> None:
    rows = cases()
    # a classic session: none of the Spark Connect settings the embedded engine leaves in the environment
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SPARK_", "PYSPARK_"))}
    decoded = decoded_cases()
    proc = subprocess.run([sys.executable, "-c", SPARK_SCRIPT, json.dumps([decoded, decoded_sql()])],
                          input=json.dumps([rows, decimal_text_sql()]), capture_output=True, text=True, env=env,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.strip().splitlines()
    assert wrong(rows, json.loads(lines[-2])) == []
    assert decoded_wrong(decoded, {int(i): d for i, d in json.loads(lines[-1]).items()}) == []  # JSON keys are text
