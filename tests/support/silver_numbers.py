"""Random numbers at their edges for the silver number tests (tests/integration/silver/test_silver_numbers.py,
the engine lane): doubles and floats in Python's and Java's text form, NaN / Infinity, arrays, points, int64
and decimals, landed as Debezium events."""

from __future__ import annotations

import json
import math
import random
import struct
from decimal import Decimal

from tests.support.silver import INT32, INT64, Bronze, decimal_field, encode_decimal

MAX38 = 10**38 - 1

T = "shop.public.measures"


N_ROWS = 1500


POINT = {"type": "struct", "name": "io.debezium.data.geometry.Point",
         "fields": [{"type": "double", "field": "x"}, {"type": "double", "field": "y"},
                    {"type": "bytes", "field": "wkb"}, {"type": "int32", "field": "srid"}]}


VSD = {"type": "struct", "name": "io.debezium.data.VariableScaleDecimal",
       "fields": [{"type": "int32", "field": "scale"}, {"type": "bytes", "field": "value"}]}


COLUMNS = [("id", INT32), ("d_old", {"type": "float64"}), ("d_new", {"type": "double"}),
           ("f_old", {"type": "float32"}), ("f_new", {"type": "float"}),
           ("arr", {"type": "array", "items": {"type": "double", "optional": True}}), ("pt", POINT),
           ("big", INT64), ("dec38", decimal_field(38, 0)), ("frac38", decimal_field(38, 38)),
           ("money", decimal_field(10, 2)), ("vsd", VSD), ("fixed", decimal_field(20, 6))]


def java_double(x: float) -> str:
    """A finite double in Java's Double.toString form with the digits of Python's shortest repr: plain between
    1e-3 and 1e7 (0.001, 1234567.0), otherwise d.dddE<n> (1.0E10, -1.76229696E8, 4.9E-324)."""
    if x == 0 or 1e-3 <= abs(x) < 1e7:
        return repr(x)
    t = Decimal(repr(abs(x))).as_tuple()
    digits = "".join(map(str, t.digits)).rstrip("0") or "0"
    exponent = len(t.digits) + t.exponent - 1
    return f"{'-' if x < 0 else ''}{digits[0]}.{digits[1:] or '0'}E{exponent}"


def random_double(rng: random.Random) -> float:
    kind = rng.random()
    if kind < 0.7:  # the shape: +-1e9 with a long fraction
        return rng.uniform(-1e9, 1e9)
    if kind < 0.95:  # any finite double
        while True:
            x = struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0]
            if math.isfinite(x):
                return x
    return rng.choice([0.0, -0.0, 5e-324, -5e-324, 1.7976931348623157e308, 2.2250738585072014e-308, 1e10, 0.1,
                       float("nan"), float("inf"), float("-inf")])


def random_float32(rng: random.Random) -> float:
    while True:
        x = struct.unpack("<f", rng.getrandbits(32).to_bytes(4, "little"))[0]
        if math.isfinite(x):
            return x


def float32_text(x: float) -> str:
    """The shortest text that reads back as this float32 (Java's Float.toString has these digits)."""
    for precision in range(1, 10):
        text = f"{x:.{precision}g}"
        if struct.unpack("<f", struct.pack("<f", float(text)))[0] == x:
            return text
    raise AssertionError(x)


DEC_EDGES = [Decimal(10**38 - 1), Decimal(-(10**38 - 1)), Decimal(0), Decimal(-1), Decimal(2**63), Decimal(-(2**125))]


FRAC_EDGES = [Decimal("0." + "9" * 38), Decimal("-0." + "9" * 38), Decimal("0." + "0" * 37 + "1"), Decimal(0)]


MONEY_EDGES = [Decimal("-1.28"), Decimal("-0.01"), Decimal("99999999.99"), Decimal("-99999999.99"), Decimal("0.00")]


VSD_EDGES = [Decimal("-1.5"), Decimal("123456789012345678901234567.8901234567"), Decimal("-0.0000000001"),
             Decimal("0"), Decimal("1E+27"), Decimal("1.50"),
             # beyond any one Spark decimal: 20 fractional digits, 45 integer digits
             Decimal("-0.12345678901234567891"), Decimal("123456789012345678901234567890123456789012345.5")]


BIG_EDGES = [-(2**63), 2**63 - 1, 0, -1, 2**53 + 1]


# one value in every row: a Delta file whose column statistics have min = max, which Sail 0.7 reads back from
# those statistics, parsed through a double (-71163320215847.030000), unless the table keeps no decimal statistics
FIXED = Decimal("-71163320215847.039674")


def build_rows(seed: int, n: int = N_ROWS) -> list[dict]:
    rng = random.Random(seed)
    rows = []
    for i in range(1, n + 1):
        arr = None if i % 7 == 0 else [None if rng.random() < 0.1 else random_double(rng)
                                       for _ in range(rng.randint(0, 4))]
        vsd = VSD_EDGES[i % len(VSD_EDGES)]
        rows.append({"id": i, "d_old": random_double(rng), "d_new": random_double(rng),
                     "f_old": random_float32(rng), "f_new": random_float32(rng), "arr": arr,
                     "pt": (random_double(rng), random_double(rng)) if i % 5 else None,
                     "big": BIG_EDGES[i % len(BIG_EDGES)] if i % 3 else rng.randint(-(2**63), 2**63 - 1),
                     "dec38": DEC_EDGES[i % len(DEC_EDGES)] if i % 2 else Decimal(rng.randint(-MAX38, MAX38)),
                     "frac38": FRAC_EDGES[i % len(FRAC_EDGES)], "money": MONEY_EDGES[i % len(MONEY_EDGES)],
                     "vsd": vsd, "fixed": FIXED})
    return rows


def event_text(row: dict, java: bool) -> dict:
    """The after image with each double written as raw JSON text: Java's form (java=True) or Python's repr."""
    def dbl(x: float) -> str:
        if math.isnan(x) or math.isinf(x):
            return json.dumps("NaN" if math.isnan(x) else ("Infinity" if x > 0 else "-Infinity"))
        return java_double(x) if java else repr(x)

    texts = {"d_old": dbl(row["d_old"]), "d_new": dbl(row["d_new"]), "f_old": float32_text(row["f_old"]),
             "f_new": float32_text(row["f_new"]),
             "arr": "null" if row["arr"] is None else "[" + ",".join("null" if v is None else dbl(v)
                                                                      for v in row["arr"]) + "]",
             "pt": "null" if row["pt"] is None else
             f'{{"x":{dbl(row["pt"][0])},"y":{dbl(row["pt"][1])},"wkb":"AQ==","srid":null}}'}
    return texts


def vsd_value(d: Decimal) -> dict:
    scale = max(0, -d.as_tuple().exponent)
    return {"scale": scale, "value": encode_decimal(d, scale)}


def land(bronze: Bronze, rows: list[dict], op: str) -> None:
    events = []
    for row in rows:
        after = {"id": row["id"], "big": row["big"], "dec38": encode_decimal(row["dec38"], 0),
                 "frac38": encode_decimal(row["frac38"], 38), "money": encode_decimal(row["money"], 2),
                 "vsd": vsd_value(row["vsd"]), "fixed": encode_decimal(row["fixed"], 6)}
        texts = event_text(row, java=row["id"] % 2 == 0)
        for name in texts:
            after[name] = f"@@{name}@@"
        ev = bronze.event(T, op, {"id": row["id"]}, None, after, [("id", INT32)], COLUMNS)
        for name, text in texts.items():
            ev["value"] = ev["value"].replace(json.dumps(f"@@{name}@@"), text)
        json.loads(ev["value"])  # still valid JSON
        events.append(ev)
    bronze.land(events)
