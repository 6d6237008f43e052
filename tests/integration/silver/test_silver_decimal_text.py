"""Connect Decimal bytes of any length decoded exactly by the staging macro (lakecdc_decimal_text), on the
embedded engine and on Apache Spark in ANSI mode (pyspark's own jars, classic local mode in a subprocess).

Precision above 38 (MariaDB DECIMAL(65,30), PostgreSQL numeric(50,20)) is kept as exact text in silver; the
macro once cut such values to their first 16 bytes, and 2^127 (a 16-byte, 39-digit magnitude) overflowed.
Precision up to 16 goes through lakecdc_decimal_narrow (no text, no lambdas), checked the same way, with the
minimal encoding Debezium writes and sign-extended longer ones."""

from __future__ import annotations

import base64
import json
import os
import random
import subprocess
import sys
from decimal import Decimal, localcontext
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


NARROW_TYPES = [(1, 0), (3, 1), (5, 5), (12, 2), (16, 0), (16, 6), (16, 16)]


def narrow_cases() -> list[tuple[int, str, str]]:
    """(index into NARROW_TYPES, base64 unscaled bytes, expected text): random values, the type's limits, the two's
    complement limits of every byte length that fits, each minimal and some sign-extended to 8, 9 and 16 bytes."""
    rng = random.Random(11)
    out = []
    for k, (precision, scale) in enumerate(NARROW_TYPES):
        top = 10**precision - 1
        unscaled = [rng.randrange(-top, top + 1) for _ in range(40)] + [top, -top, 0, 1, -1, 10 ** (precision - 1)]
        unscaled += [v for n in range(1, 8) for v in (2 ** (8 * n - 1) - 1, -(2 ** (8 * n - 1))) if abs(v) <= top]
        for i, v in enumerate(unscaled):
            minimal = max(1, (v.bit_length() + 8) // 8)
            for length in [minimal] + ([8, 9, 16] if i % 5 == 0 else []):
                raw = base64.b64encode(v.to_bytes(length, "big", signed=True)).decode()
                out.append((k, raw, format(Decimal(v).scaleb(-scale), "f")))
    return out


def narrow_sql() -> str:
    """One query over narrow_cases (k, b): each type's rows decoded by lakecdc_decimal_narrow, as text."""
    module = types_module()
    return " union all ".join(
        f"select i, cast({str(module.lakecdc_decimal_narrow('b', s, f'decimal({p},{s})')).strip()} as string) "
        f"from narrow_cases where k = {k}" for k, (p, s) in enumerate(NARROW_TYPES))


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


def test_narrow_decimals_on_the_embedded_engine(engine) -> None:
    rows = narrow_cases()
    engine.spark.createDataFrame([(i, k, b) for i, (k, b, _) in enumerate(rows)],
                                 "i int, k int, b string").createOrReplaceTempView("narrow_cases")
    got = dict(engine.spark.sql(narrow_sql()).collect())
    assert [(want, got.get(i)) for i, (_, _, want) in enumerate(rows) if got.get(i) != want] == []


SPARK_SCRIPT = """
import json, sys
from pyspark.sql import SparkSession
rows, sql = json.load(sys.stdin)
spark = (SparkSession.builder.master("local[1]").config("spark.sql.ansi.enabled", "true")
         .config("spark.ui.enabled", "false").getOrCreate())
spark.createDataFrame([(b, s) for b, s, _ in rows], "b string, sc int").createOrReplaceTempView("decimal_cases")
print(json.dumps([r[0] for r in spark.sql(f"select {sql} from decimal_cases").collect()]))
narrow, narrow_sql = json.loads(sys.argv[1])
spark.createDataFrame([(i, k, b) for i, (k, b, _) in enumerate(narrow)], "i int, k int, b string") \
    .createOrReplaceTempView("narrow_cases")
print(json.dumps(dict(spark.sql(narrow_sql).collect())))
spark.stop()
"""


@pytest.mark.slow
def test_decimal_bytes_of_any_length_on_apache_spark() -> None:
    rows = cases()
    # a classic session: none of the Spark Connect settings the embedded engine leaves in the environment
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SPARK_", "PYSPARK_"))}
    narrow = narrow_cases()
    proc = subprocess.run([sys.executable, "-c", SPARK_SCRIPT, json.dumps([narrow, narrow_sql()])],
                          input=json.dumps([rows, decimal_text_sql()]), capture_output=True, text=True, env=env,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.strip().splitlines()
    assert wrong(rows, json.loads(lines[-2])) == []
    got = json.loads(lines[-1])  # JSON object keys are text
    assert [(want, got.get(str(i))) for i, (_, _, want) in enumerate(narrow) if got.get(str(i)) != want] == []
