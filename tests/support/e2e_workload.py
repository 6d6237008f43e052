"""The randomized end-to-end scenario of issue 17, shared by tests/integration/project/test_e2e_random.py (`make
test`) and `bench/soak.py --silver` (the long form): a seeded random workload over five tables of a real PostgreSQL or
MariaDB runs while a continuous `lakecdc run` is SIGKILLed at deterministic points (right after a bronze commit
appears in a Delta log: during the snapshot, during streaming, after a schema-change commit); then catch-up,
`schema rebuild`, `generate`, `dbt build`, and every silver table is compared with its source exactly; a second
workload and an incremental `dbt build` are compared the same way.

Determinism: the workload is one sequence of statements drawn from `random.Random(seed)` and a Python model of
the tables (keys present, columns after each DDL), so the final source state depends on the seed only. It is
cut into segments; a segment is released only after the previous kill, and each kill waits for a commit the
released segment must cause, so no step depends on the machine's speed (only the interleaving of ingest and
workload does, which is what the test is about).

Exact comparison (docs/e2e.md): doubles by their bit pattern (`float.hex`), float32 columns by the float32 bit
pattern of both sides (MariaDB's FLOAT is read as `CAST(... AS DOUBLE)`, its text form has 6 digits), decimals
as `Decimal` (silver holds a string when the precision exceeds 38), JSON parsed with exact numbers
(`parse_float=Decimal`); the other values as tests/support/e2e.py normalises them.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import math
import os
import random
import re
import signal
import string
import struct
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

from tests.support.e2e import (
    HISTORY_COLUMNS,
    META_COLUMNS,
    Project,
    maria_connect,
    normalise,
    pg_dsn_for,
    pg_execute,
    wrote_incrementally,
)

SCHEMA = "rnd"           # PostgreSQL schema of the tables
DATABASE = "e2e_rnd"     # PostgreSQL database / MariaDB database
SOURCE = "e2e_rnd"       # lakecdc source name
SLOT = "e2e_rnd"         # PostgreSQL slot and publication
BIG_KINDS = ("big", "bigjson", "bigbytes")  # stored out of line on PostgreSQL (TOAST); the workload often skips them
JSON_KINDS = ("json", "bigjson")


# -- the model: tables, columns, SQL types ----------------------------------------------------------------------

@dataclass
class Column:
    name: str
    kind: str          # int16 int32 int64 double float32 decimal varchar text big json bigjson bytes bigbytes bool
    size: int = 0      # date ts tstz uuid; size: varchar length / decimal precision
    scale: int = 0
    not_null: bool = False

    def sql_type(self, dialect: str) -> str:
        pg = dialect == "postgresql"
        if self.kind == "decimal":
            return f"{'numeric' if pg else 'DECIMAL'}({self.size}, {self.scale})"
        if self.kind == "varchar":
            return f"varchar({self.size})"
        types = {"int16": ("smallint", "SMALLINT"), "int32": ("integer", "INT"), "int64": ("bigint", "BIGINT"),
                 "double": ("double precision", "DOUBLE"), "float32": ("real", "FLOAT"), "text": ("text", "TEXT"),
                 "big": ("text", "MEDIUMTEXT"), "json": ("jsonb", "JSON"), "bigjson": ("jsonb", "JSON"),
                 "bytes": ("bytea", "BLOB"), "bigbytes": ("bytea", "MEDIUMBLOB"), "bool": ("boolean", "BOOLEAN"),
                 "date": ("date", "DATE"), "ts": ("timestamp(6)", "DATETIME(6)"),
                 "tstz": ("timestamptz", "TIMESTAMP(6) NULL"), "uuid": ("uuid", "CHAR(36)")}
        return types[self.kind][0 if pg else 1]


@dataclass
class Table:
    name: str
    key: list[Column]
    columns: list[Column]                                 # the value columns, in order
    ddl: bool = False                                     # the workload alters / truncates it
    identity_full: bool = False                           # PostgreSQL REPLICA IDENTITY FULL
    keys: set[tuple] = field(default_factory=set)         # the keys present in the source
    dropped: list[str] = field(default_factory=list)      # value columns the workload dropped

    def column(self, name: str) -> Column:
        return next(c for c in self.key + self.columns if c.name == name)


def initial_tables() -> list[Table]:
    return [
        Table("nums", [Column("id", "int64")],
              [Column("d", "double"), Column("f", "float32"), Column("n38", "decimal", 38, 18),
               Column("nbig", "decimal", 50, 20), Column("n18", "decimal", 18, 0), Column("i", "int32"),
               Column("s", "int16")]),
        Table("docs", [Column("id", "int32")],
              [Column("title", "varchar", 100), Column("body", "big"), Column("meta", "bigjson"),
               Column("blob", "bigbytes"), Column("version", "int32")]),
        Table("full_docs", [Column("id", "int32")],
              [Column("note", "text"), Column("body", "big"), Column("d", "double")], identity_full=True),
        Table("pairs", [Column("a", "int32"), Column("b", "varchar", 20)],
              [Column("v", "double"), Column("note", "text"), Column("ts", "tstz"), Column("day", "date"),
               Column("f", "float32")], ddl=True),
        Table("evolve", [Column("id", "int32")],
              [Column("code", "varchar", 10), Column("n", "int16"), Column("amount", "decimal", 12, 2),
               Column("flag", "bool"), Column("payload", "json"), Column("uid", "uuid"), Column("created", "ts"),
               Column("x", "double")], ddl=True),
    ]


# -- random values ----------------------------------------------------------------------------------------------

DOUBLE_EDGES = (0.0, -0.0, 5e-324, -5e-324, 2.2250738585072014e-308, 2.225073858507201e-308,
                1.7976931348623157e308, -1.7976931348623157e308, 0.1, 1 / 3, 9007199254740993.0,
                993702636.5144999, -484857435.23757964, 1e-300, 123456789012345.67)
FLOAT32_EDGES = (3.4028234663852886e38, -3.4028234663852886e38, 1.1754943508222875e-38, 1.401298464324817e-45,
                 0.10000000149011612, 16777216.0, -0.0, 0.0, 3.1415927410125732)
TEXT_CHARS = string.ascii_letters + string.digits + " ',\"\\%_-é✓ü中😀\n\t"


class Values:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def double(self) -> float:
        r = self.rng.random()
        if r < 0.25:
            return self.rng.choice(DOUBLE_EDGES)
        if r < 0.6:  # any finite bit pattern
            while True:
                x = struct.unpack(">d", self.rng.getrandbits(64).to_bytes(8, "big"))[0]
                if math.isfinite(x):
                    return x
        return self.rng.uniform(-1, 1) * 10 ** self.rng.randint(-12, 15)

    def float32(self) -> float:
        if self.rng.random() < 0.25:
            return self.rng.choice(FLOAT32_EDGES)
        while True:
            x = struct.unpack(">f", self.rng.getrandbits(32).to_bytes(4, "big"))[0]
            if math.isfinite(x):
                return x

    def decimal(self, precision: int, scale: int) -> Decimal:
        r = self.rng.random()
        digits = precision if r < 0.2 else self.rng.randint(1, precision)
        n = 10 ** digits - 1 if r < 0.1 else self.rng.randrange(10 ** digits)
        return Decimal(f"{n * self.rng.choice((1, -1))}e-{scale}")  # exact (scaleb would round to 28 digits)

    def text(self, length: int) -> str:
        return "".join(self.rng.choice(TEXT_CHARS) for _ in range(self.rng.randint(0, length)))

    def big_text(self) -> str:  # random letters: incompressible, so stored out of line
        return "".join(self.rng.choices(string.ascii_letters, k=self.rng.randint(9_000, 14_000)))

    def json(self, big: bool) -> str:
        doc: dict[str, Any] = {"n": self.rng.randint(-2**53, 2**53), "d": self.double(), "s": self.text(8),
                               "list": [self.rng.randint(0, 9), None, True, self.text(3)],
                               "nested": {"x": self.double()}}
        if big:
            doc["big"] = self.big_text()
        return json.dumps(doc, ensure_ascii=False)

    def value(self, column: Column, dialect: str) -> Any:
        kind, rng = column.kind, self.rng
        if not column.not_null and kind != "big" and rng.random() < 0.08:
            return None
        if kind in ("int16", "int32", "int64"):
            bits = {"int16": 15, "int32": 31, "int64": 63}[kind]
            return rng.choice((rng.randint(-2**bits, 2**bits - 1), rng.randint(-1000, 1000), 2**bits - 1, -2**bits))
        if kind == "double":
            return self.double()
        if kind == "float32":
            return self.float32()
        if kind == "decimal":  # as plain text: MariaDB reads an unquoted 1.5E-17 as an (inexact) double
            return format(self.decimal(column.size, column.scale), "f")
        if kind == "varchar":
            return self.text(column.size)
        if kind == "text":
            return self.text(40)
        if kind == "big":
            return self.big_text() if rng.random() < 0.8 else self.text(30)
        if kind in JSON_KINDS:
            return self.json(kind == "bigjson" and rng.random() < 0.8)
        if kind == "bytes":
            return rng.randbytes(rng.randint(0, 40))
        if kind == "bigbytes":
            return rng.randbytes(rng.randint(9_000, 14_000) if rng.random() < 0.8 else rng.randint(0, 20))
        if kind == "bool":
            return rng.random() < 0.5
        if kind == "date":
            return dt.date(1901, 1, 1) + dt.timedelta(days=rng.randint(0, 72_000))
        if kind == "ts":
            return dt.datetime(1971, 1, 1) + dt.timedelta(microseconds=rng.randint(0, 2_000_000_000_000_000))
        if kind == "tstz":
            instant = dt.datetime(1971, 1, 1, tzinfo=dt.UTC) + dt.timedelta(
                microseconds=rng.randint(0, 2_000_000_000_000_000))  # MariaDB TIMESTAMP: up to 2038
            if dialect == "mariadb":
                return instant.replace(tzinfo=None)  # the session's time zone is UTC
            return instant.astimezone(dt.timezone(dt.timedelta(minutes=rng.randint(-12 * 60, 14 * 60))))
        if kind == "uuid":
            return str(uuid.UUID(int=rng.getrandbits(128)))
        raise ValueError(kind)

    def key(self, column: Column) -> Any:
        if column.kind == "varchar":
            return "".join(self.rng.choices("abcxyzé✓", k=self.rng.randint(1, min(column.size, 6))))
        if column.kind == "int64":
            return self.rng.choice((self.rng.randint(-2**63, 2**63 - 1), self.rng.randint(1, 10**6)))
        return self.rng.randint(-2**31, 2**31 - 1) if self.rng.random() < 0.1 else self.rng.randint(1, 10**6)


# -- the workload -----------------------------------------------------------------------------------------------

Statement = tuple[str, tuple]


class Workload:
    """The model and the statement generator of one dialect; `run_segment` executes the next `steps` steps."""

    def __init__(self, dialect: str, seed: int, connect: Callable[[], Any]) -> None:
        self.dialect, self.connect = dialect, connect
        self.rng = random.Random(seed)
        self.values = Values(self.rng)
        self.tables = {t.name: t for t in initial_tables()}
        if dialect == "mariadb":  # MariaDB's largest DECIMAL
            nbig = self.tables["nums"].column("nbig")
            nbig.size, nbig.scale = 65, 30
        self.counter = 0      # unique names of added / renamed columns
        self.statements = 0
        self.ddl_done: list[str] = []

    def q(self, name: str) -> str:
        return f'"{name}"' if self.dialect == "postgresql" else f"`{name}`"

    def qt(self, table: Table) -> str:
        return f"{SCHEMA}.{self.q(table.name)}" if self.dialect == "postgresql" else self.q(table.name)

    # -- setup ------------------------------------------------------------------------------------------------

    def create_statements(self) -> list[str]:
        out = []
        for t in self.tables.values():
            cols = [f"{self.q(c.name)} {c.sql_type(self.dialect)}" for c in t.key + t.columns]
            key = ", ".join(self.q(c.name) for c in t.key)
            out.append(f"CREATE TABLE {self.qt(t)} ({', '.join(cols)}, PRIMARY KEY ({key}))")
            if self.dialect == "postgresql":
                for c in t.columns:
                    if c.kind in BIG_KINDS:  # out of line without compression: TOASTed
                        out.append(f"ALTER TABLE {self.qt(t)} ALTER COLUMN {self.q(c.name)} SET STORAGE EXTERNAL")
                if t.identity_full:
                    out.append(f"ALTER TABLE {self.qt(t)} REPLICA IDENTITY FULL")
        return out

    def initial_rows(self, rows: int) -> Iterator[Statement]:
        for t in self.tables.values():
            count = max(10, rows // 8) if t.name in ("docs", "full_docs") else rows
            for _ in range(count):
                yield self.insert(t)

    # -- DML ---------------------------------------------------------------------------------------------------

    def new_key(self, table: Table) -> tuple:
        while True:
            key = tuple(self.values.key(c) for c in table.key)
            if key not in table.keys:
                return key

    def where(self, table: Table) -> str:
        return " AND ".join(f"{self.q(c.name)} = %s" for c in table.key)

    def insert(self, table: Table) -> Statement:
        key = self.new_key(table)
        table.keys.add(key)
        columns = [c for c in table.columns if self.rng.random() < 0.9]  # the others take their default
        names = ", ".join(self.q(c.name) for c in table.key + columns)
        marks = ", ".join(["%s"] * (len(table.key) + len(columns)))
        return (f"INSERT INTO {self.qt(table)} ({names}) VALUES ({marks})",
                key + tuple(self.values.value(c, self.dialect) for c in columns))

    def update(self, table: Table, big: bool) -> Statement | None:
        if not table.keys or not table.columns:
            return None
        key = self.rng.choice(sorted(table.keys, key=repr))
        small = [c for c in table.columns if c.kind not in BIG_KINDS]
        pool = [c for c in table.columns if c.kind in BIG_KINDS] if big else small
        if not pool:
            return None
        columns = self.rng.sample(pool, self.rng.randint(1, min(3, len(pool))))
        sets = ", ".join(f"{self.q(c.name)} = %s" for c in columns)
        return (f"UPDATE {self.qt(table)} SET {sets} WHERE {self.where(table)}",
                tuple(self.values.value(c, self.dialect) for c in columns) + key)

    def change_key(self, table: Table) -> Statement | None:
        """A primary-key change; the big columns stay as they are (on docs: unchanged TOAST, default identity)."""
        if not table.keys:
            return None
        old = self.rng.choice(sorted(table.keys, key=repr))
        new = self.new_key(table)
        if len(table.key) > 1 and self.rng.random() < 0.5:  # only one part of a composite key
            new = (old[0], *new[1:]) if (old[0], *new[1:]) not in table.keys else new
        table.keys.discard(old)
        table.keys.add(new)
        extra = [c for c in table.columns if c.kind not in BIG_KINDS and self.rng.random() < 0.3]
        sets = ", ".join(f"{self.q(c.name)} = %s" for c in table.key + extra)
        return (f"UPDATE {self.qt(table)} SET {sets} WHERE {self.where(table)}",
                new + tuple(self.values.value(c, self.dialect) for c in extra) + old)

    def delete(self, table: Table) -> Statement | None:
        if not table.keys:
            return None
        key = self.rng.choice(sorted(table.keys, key=repr))
        table.keys.discard(key)
        return f"DELETE FROM {self.qt(table)} WHERE {self.where(table)}", key

    def set_based(self) -> Statement:
        """Doubles computed by the server (negated, divided by 3) over a share of the rows."""
        t = self.tables["nums"]
        k = self.rng.randint(0, 6)
        if self.rng.random() < 0.5:
            return f"UPDATE {self.qt(t)} SET d = -d, f = -f WHERE MOD(id, 7) = %s", (k,)
        return f"UPDATE {self.qt(t)} SET d = d / 3 WHERE MOD(id, 7) = %s AND ABS(d) BETWEEN 1e-290 AND 1e290", (k,)

    def dml(self) -> Statement | None:
        table = self.rng.choice(list(self.tables.values()))
        r = self.rng.random()
        if r < 0.28:
            return self.insert(table)
        if r < 0.58:
            return self.update(table, big=False)
        if r < 0.66:
            return self.update(table, big=True)
        if r < 0.76:
            return self.change_key(self.tables["docs"] if self.rng.random() < 0.4 else table)
        if r < 0.92:
            return self.delete(table)
        return self.set_based()

    # -- DDL ---------------------------------------------------------------------------------------------------

    def default_literal(self, column: Column) -> tuple[str, bool]:
        """A DEFAULT clause body for an added column: a literal, or a constant expression (both dialects)."""
        if column.kind == "int32":
            v = self.rng.randint(-1000, 1000)
            expression = self.rng.random() < 0.4
            return (f"({v} * 2)", True) if expression else (str(v), False)
        if column.kind == "double":
            return repr(self.values.double()), False
        if column.kind == "decimal":
            return format(self.values.decimal(column.size, column.scale), "f"), False
        return "'" + "".join(self.rng.choices(string.ascii_letters, k=self.rng.randint(0, 12))) + "'", False

    def ddl(self, first: str = "") -> list[Statement]:
        """One random DDL statement on a table of the workload, then an insert into it (on PostgreSQL a change
        of the table is what carries its new shape to the connector). `first`: "shape" for one changing the
        table's columns, "truncate" for a truncate."""
        table = self.rng.choice([t for t in self.tables.values() if t.ddl])
        shapes = ("add", "add", "add", "drop", "drop", "rename", "rename", "widen", "widen")
        # truncates are rare: a later one of the same table would hide the loss of an earlier one
        action = first if first == "truncate" else self.rng.choice(shapes + (() if first == "shape" else ("truncate",)))
        alter = f"ALTER TABLE {self.qt(table)} "
        pg = self.dialect == "postgresql"
        self.counter += 1
        if action == "drop" and len(table.columns) > 2:
            column = self.rng.choice(table.columns)
            table.columns.remove(column)
            table.dropped.append(column.name)
            statement = alter + f"DROP COLUMN {self.q(column.name)}"
        elif action == "rename" and table.columns:
            column = self.rng.choice(table.columns)
            new = f"{column.name}_r{self.counter}"
            statement = alter + f"RENAME COLUMN {self.q(column.name)} TO {self.q(new)}"
            column.name = new
        elif action == "widen" and (wide := [c for c in table.columns if widened(c)]):
            column = self.rng.choice(wide)
            bigger = widened(column)
            assert bigger is not None
            column.kind, column.size, column.scale = bigger.kind, bigger.size, bigger.scale
            column.not_null = column.not_null and pg  # MariaDB's MODIFY redefines the column: nullable
            statement = alter + (f"ALTER COLUMN {self.q(column.name)} TYPE {column.sql_type(self.dialect)}" if pg
                                 else f"MODIFY COLUMN {self.q(column.name)} {column.sql_type(self.dialect)}")
        elif action == "truncate":
            table.keys.clear()
            statement = f"TRUNCATE TABLE {self.qt(table)}"
        else:
            kind = self.rng.choice(("int32", "double", "decimal", "varchar"))
            column = Column(f"c{self.counter}", kind, *{"decimal": (20, 6), "varchar": (30, 0)}.get(kind, (0, 0)))
            default, _ = self.default_literal(column)
            column.not_null = self.rng.random() < 0.3
            statement = alter + f"ADD COLUMN {self.q(column.name)} {column.sql_type(self.dialect)}" \
                                f"{' NOT NULL' if column.not_null else ''} DEFAULT {default}"
            table.columns.append(column)
        self.ddl_done.append(statement)
        return [(statement, ()), self.insert(table)]

    # -- execution ---------------------------------------------------------------------------------------------

    def transactions(self, steps: int, ddl: int, first: str = "") -> Iterator[list[Statement]]:
        """`steps` transactions (one to five statements; a DDL statement alone, then its insert), `ddl` of
        them DDL at random places (`first`: the kind of the first one, see `ddl`)."""
        ddl_at = sorted(self.rng.sample(range(steps), min(ddl, steps)))
        for step in range(steps):
            if step in ddl_at:
                statement, insert = self.ddl(first if step == ddl_at[0] else "")
                yield [statement]
                yield [insert]
                continue
            size = 1 if self.rng.random() < 0.75 else self.rng.randint(2, 5)
            statements = [s for s in (self.dml() for _ in range(size)) if s is not None]
            if statements:
                yield statements

    def execute(self, transactions: Iterator[list[Statement]]) -> None:
        conn = self.connect()
        try:
            with conn.cursor() as cur:
                for statements in transactions:
                    if len(statements) > 1:
                        cur.execute("BEGIN")
                    for sql, params in statements:
                        cur.execute(sql, params or None)
                        self.statements += 1
                    if len(statements) > 1:
                        cur.execute("COMMIT")
        finally:
            conn.close()


def widened(column: Column) -> Column | None:
    """The wider type a widening DDL gives the column, or None."""
    if column.kind in ("int16", "int32"):
        return dataclasses.replace(column, kind={"int16": "int32", "int32": "int64"}[column.kind])
    if column.kind == "varchar":
        return dataclasses.replace(column, size=column.size * 4)
    if column.kind == "decimal" and column.size + 6 <= 38:
        return dataclasses.replace(column, size=column.size + 6, scale=column.scale + 2)
    if column.kind == "float32":
        return dataclasses.replace(column, kind="double")
    return None


# -- exact comparison -------------------------------------------------------------------------------------------

def exact(kind: str, value: Any) -> Any:
    """The comparable form of a value of a column of this kind (module docstring)."""
    if value is None:
        return None
    if kind == "double":
        return float(value).hex()
    if kind == "float32":
        return struct.unpack(">f", struct.pack(">f", float(value)))[0].hex()
    if kind == "decimal":
        return Decimal(str(value))
    if kind in JSON_KINDS:
        text = value.decode() if isinstance(value, bytes) else value
        return json.loads(text, parse_float=Decimal) if isinstance(text, str) else text
    return normalise(value)


def show(value: Any) -> str:
    if isinstance(value, memoryview | bytearray):
        value = bytes(value)
    if isinstance(value, str | bytes) and len(value) > 48:
        return f"{value[:24]!r}...({len(value)} {'chars' if isinstance(value, str) else 'bytes'})"
    if isinstance(value, float):
        return f"{value!r} ({value.hex()})"
    text = repr(value)
    return text if len(text) <= 120 else text[:117] + "..."


@dataclass
class Mismatch:
    table: str
    column: str                  # "" for the table as a whole
    count: int
    rows: int
    examples: list[str]

    def __str__(self) -> str:
        where = f"{self.table}.{self.column}" if self.column else self.table
        if not self.count:
            return f"{where}: " + "; ".join(self.examples)
        return f"{where}: {self.count} of {self.rows} rows differ; e.g. " + "; ".join(self.examples)


def diff_table(name: str, table: Table, silver: list[dict[str, Any]], source: list[dict[str, Any]],
               drop: tuple[str, ...]) -> tuple[list[Mismatch], list[str]]:
    """Mismatches of one silver table against its source, and notes (dropped columns silver keeps)."""
    kinds = {c.name: c.kind for c in table.key + table.columns}
    key = [c.name for c in table.key]
    silver = [{k: v for k, v in row.items() if k not in drop} for row in silver]
    src_cols = list(kinds)
    silver_cols = list(silver[0]) if silver else src_cols
    out: list[Mismatch] = []
    notes: list[str] = []
    extra_cols = [c for c in silver_cols if c not in kinds]
    kept = [c for c in extra_cols if c in table.dropped]
    if kept:
        notes.append(f"{name}: silver keeps the dropped columns {kept} (docs/silver.md)")
    unexpected = [c for c in extra_cols if c not in table.dropped]
    missing_cols = [c for c in src_cols if c not in silver_cols]
    if unexpected or missing_cols:
        out.append(Mismatch(name, "", len(missing_cols) + len(unexpected), len(src_cols),
                            [f"columns missing from silver {missing_cols}, not in the source {unexpected}"]))

    def keyed(rows: list[dict[str, Any]]) -> dict[tuple, dict[str, Any]]:
        return {tuple(exact(kinds[k], r.get(k)) for k in key): r for r in rows}

    got, want = keyed(silver), keyed(source)
    if len(got) != len(silver):
        out.append(Mismatch(name, "", len(silver) - len(got), len(silver), ["duplicate keys in silver"]))
    missing, extra = sorted(set(want) - set(got), key=repr), sorted(set(got) - set(want), key=repr)
    if missing or extra:
        out.append(Mismatch(name, "", len(missing) + len(extra), len(want),
                            [f"{len(missing)} keys missing from silver {missing[:5]}",
                             f"{len(extra)} extra keys in silver {extra[:5]}"]))
    for column in src_cols:
        if column in key or column not in silver_cols:
            continue
        examples, count = [], 0
        for k in sorted(set(want) & set(got), key=repr):
            s, v = got[k][column], want[k][column]
            if exact(kinds[column], s) != exact(kinds[column], v):
                count += 1
                if len(examples) < 3:
                    examples.append(f"key {k}: silver {show(s)} != source {show(v)}")
        if count:
            out.append(Mismatch(name, column, count, len(want), examples))
    return out, notes


# -- the sources ------------------------------------------------------------------------------------------------

class PostgresSide:
    dialect = "postgresql"

    def __init__(self, pg_dsn: str) -> None:
        self.pg_dsn = pg_dsn
        self.dsn = pg_dsn_for(pg_dsn, DATABASE)

    def connect(self) -> Any:
        import psycopg2

        conn = psycopg2.connect(self.dsn)
        conn.autocommit = True
        return conn

    def drop_slot(self) -> None:
        """The slot keeps WAL until dropped (its publication goes with the database)."""
        from tests.support.pg import drop_slot_and_publication

        drop_slot_and_publication(pg_dsn_for(self.pg_dsn, "postgres"), SLOT, SLOT)

    def setup(self, workload: Workload, rows: int) -> None:
        self.drop_slot()
        with_db = pg_dsn_for(self.pg_dsn, "postgres")
        pg_execute(with_db, f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)", f"CREATE DATABASE {DATABASE}")
        pg_execute(self.dsn, f"CREATE SCHEMA {SCHEMA}", *workload.create_statements())
        workload.execute(iter([[s] for s in workload.initial_rows(rows)]))

    def properties(self) -> dict[str, Any]:
        params = dict(p.split("=", 1) for p in self.pg_dsn.split())
        return {"database.hostname": params.get("host", "127.0.0.1"), "database.port": int(params.get("port", 5432)),
                "database.user": params.get("user", "postgres"), "database.password": params.get("password", ""),
                "database.dbname": DATABASE, "topic.prefix": SOURCE, "slot.name": SLOT, "publication.name": SLOT,
                "publication.autocreate.mode": "filtered", "table.include.list": f"{SCHEMA}\\..*",
                "skipped.operations": "none", "poll.interval.ms": 100, "slot.retry.delay.ms": 200,
                "snapshot.fetch.size": 50}

    def rows(self, table: Table) -> list[dict[str, Any]]:
        import psycopg2.extras

        conn = self.connect()
        psycopg2.extras.register_default_jsonb(conn, loads=lambda text: text)  # parsed exactly by `exact`
        with conn.cursor(cursor_factory=psycopg2.extras.RealDictCursor) as cur:
            cur.execute(f"SELECT * FROM {SCHEMA}.{table.name}")
            rows = [dict(r) for r in cur.fetchall()]
        conn.close()
        return rows

    def cleanup(self) -> None:
        self.drop_slot()


class MariaSide:
    dialect = "mariadb"

    def __init__(self, params: dict) -> None:
        self.params = params

    def connect(self) -> Any:
        return maria_connect(self.params, DATABASE)

    def setup(self, workload: Workload, rows: int) -> None:
        conn = maria_connect(self.params)
        with conn.cursor() as cur:
            cur.execute(f"DROP DATABASE IF EXISTS {DATABASE}")
            cur.execute(f"CREATE DATABASE {DATABASE} CHARACTER SET utf8mb4")
            cur.execute(f"USE {DATABASE}")
            for statement in workload.create_statements():
                cur.execute(statement)
        conn.close()
        workload.execute(iter([[s] for s in workload.initial_rows(rows)]))

    def properties(self) -> dict[str, Any]:
        server_id = 800_000 + (os.getpid() % 50_000) * 10
        return {"database.hostname": self.params["host"], "database.port": self.params["port"],
                "database.user": self.params["user"], "database.password": self.params["password"],
                "database.server.id": server_id, "topic.prefix": SOURCE, "database.include.list": DATABASE,
                "skipped.operations": "none", "snapshot.chunk.size": 50}

    def rows(self, table: Table) -> list[dict[str, Any]]:
        import pymysql

        conn = self.connect()
        with conn.cursor(pymysql.cursors.DictCursor) as cur:
            cur.execute("SELECT COLUMN_NAME, DATA_TYPE FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = %s AND "
                        "TABLE_NAME = %s ORDER BY ORDINAL_POSITION", (DATABASE, table.name))
            select = [f"CAST(`{c['COLUMN_NAME']}` AS DOUBLE) AS `{c['COLUMN_NAME']}`" if c["DATA_TYPE"] == "float"
                      else f"`{c['COLUMN_NAME']}`" for c in cur.fetchall()]  # FLOAT's text has 6 digits only
            cur.execute(f"SELECT {', '.join(select)} FROM `{table.name}`")
            rows = list(cur.fetchall())
        conn.close()
        return rows

    def cleanup(self) -> None:
        pass


# -- the scenario -----------------------------------------------------------------------------------------------

@dataclass
class Sizes:
    rows: int = 120              # initial rows per table (docs: an eighth)
    snapshot_steps: int = 40     # workload transactions released during the snapshot
    segments: int = 4            # streaming segments of workload 1, each followed by a kill
    steps: int = 40              # transactions per segment
    ddl: int = 2                 # DDL statements per streaming segment
    batch_size: int = 50         # `lakecdc run --batch-size`

    def scaled(self, factor: float) -> Sizes:
        return Sizes(int(self.rows * factor), int(self.snapshot_steps * factor), self.segments,
                     int(self.steps * factor), self.ddl, self.batch_size)


@dataclass
class Kill:
    after: str          # "events commit" / "schema commit" / "workload end"
    phase: str          # the newest landed event's: "snapshot" (op r) or "streaming"


@dataclass
class CaseResult:
    dialect: str
    seed: int
    seconds: float = 0.0
    kills: list[Kill] = field(default_factory=list)
    statements: int = 0
    ddl: list[str] = field(default_factory=list)
    stages: dict[str, list[Mismatch]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def mismatches(self) -> list[str]:
        return [f"{stage}: {m}" for stage, found in self.stages.items() for m in found]

    def report(self) -> str:
        kills = ", ".join(f"{k.after}/{k.phase}" for k in self.kills)
        lines = [f"{self.dialect} seed {self.seed}: {self.seconds:.0f}s, {self.statements} workload statements, "
                 f"{len(self.kills)} kills ({kills})", *("  DDL: " + d for d in self.ddl),
                 *("  note: " + n for n in self.notes)]
        for stage, found in self.stages.items():
            lines.append(f"  {stage}: " + ("every silver table equals its source" if not found
                                           else f"{len(found)} mismatches"))
            lines += [f"    {m}" for m in found]
        return "\n".join(lines)


def delta_versions(table_dir: Path) -> int:
    """Commits in a Delta table's log (0 when the table does not exist yet)."""
    log = table_dir / "_delta_log"
    return sum(1 for p in log.iterdir() if re.fullmatch(r"\d{20}\.json", p.name)) if log.is_dir() else 0


def newest_phase(events_dir: Path) -> str:
    """'snapshot' when the newest landed event is a snapshot read (op r), else 'streaming'."""
    from deltalake import DeltaTable

    rows = DeltaTable(str(events_dir)).to_pyarrow_table(columns=["seq", "op"]).to_pylist()
    newest = max(rows, key=lambda r: r["seq"]) if rows else {"op": "r"}
    return "snapshot" if newest["op"] == "r" else "streaming"


class Segment(threading.Thread):
    """Workload statements run beside the ingest; `finish` waits for them and re-raises their error."""

    def __init__(self, work: Callable[[], None]) -> None:
        super().__init__(daemon=True)
        self.work = work
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            self.work()
        except BaseException as exc:  # re-raised by finish(), in the test's thread
            self.error = exc

    def finish(self, timeout: float = 600) -> None:
        self.join(timeout)
        assert not self.is_alive(), "the workload did not finish"
        if self.error is not None:
            raise self.error


class Scenario:
    """One case: a source (PostgresSide / MariaSide), a seed, sizes; `run()` returns the CaseResult."""

    def __init__(self, side: PostgresSide | MariaSide, seed: int, work: Path, sizes: Sizes,
                 log: Callable[[str], None] = lambda _: None) -> None:
        self.side, self.sizes, self.say = side, sizes, log
        self.workload = Workload(side.dialect, seed, side.connect)
        self.result = CaseResult(side.dialect, seed)
        connector = "postgresql" if side.dialect == "postgresql" else "mariadb"
        self.project = Project(work, SOURCE, connector, side.properties())
        self.run_log = work / "run.log"
        self.events_dir = self.project.warehouse / "bronze" / f"{SOURCE}_events"
        self.schema_dir = self.project.warehouse / "bronze" / f"{SOURCE}_schema_changes"
        self.proc: subprocess.Popen | None = None
        self.began = time.monotonic()

    def log(self, line: str) -> None:
        self.say(f"[{time.monotonic() - self.began:5.0f}s] {line}")

    # -- ingest process ----------------------------------------------------------------------------------------

    def start(self) -> None:
        with open(self.run_log, "ab") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "ingest.cli", "run", "--source", SOURCE, "--batch-size",
                 str(self.sizes.batch_size), "--batch-seconds", "1", "--quiet"],
                cwd=self.project.dir, env=self.project.env, stdout=out, stderr=subprocess.STDOUT)

    def wait_commit(self, table_dir: Path, streaming: bool = False, timeout: float = 900) -> None:
        """Until a new commit lands in `table_dir` (with `streaming`: one whose newest event is no snapshot
        read). The timeout only guards against a hang; the condition itself is what is waited on."""
        assert self.proc is not None
        seen = delta_versions(table_dir)
        deadline = time.monotonic() + timeout
        while True:
            if self.proc.poll() is not None:
                raise AssertionError(f"lakecdc run exited ({self.proc.returncode}):\n"
                                     + self.run_log.read_text(errors="replace")[-4000:])
            assert time.monotonic() < deadline, f"no new commit in {table_dir.name} within {timeout:.0f}s"
            now = delta_versions(table_dir)
            if now > seen:
                if not streaming or newest_phase(self.events_dir) == "streaming":
                    return
                seen = now
            time.sleep(0.002)  # a listing of the log folder; the kill should land before the batch's next commit

    def kill(self, after: str) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=60)
        self.proc = None
        phase = newest_phase(self.events_dir) if delta_versions(self.events_dir) else "nothing landed"
        self.result.kills.append(Kill(after, phase))
        self.log(f"kill {len(self.result.kills)} after {after} ({phase})")

    def concurrently(self, steps: int, ddl: int, first: str = "") -> Segment:
        """The next `steps` workload transactions, in a thread."""
        segment = Segment(lambda: self.workload.execute(self.workload.transactions(steps, ddl, first)))
        segment.start()
        return segment

    # -- stages -------------------------------------------------------------------------------------------------

    def workload_1(self) -> None:
        """Kills: two during the snapshot (after its second and its next commit; DML runs from the first
        commit on), then per segment one after a streaming commit of events or of schema changes (alternating;
        a schema segment's first DDL changes a table's columns, or, every other time on MariaDB, truncates it
        after a catch-up run, so that the kill falls between the TRUNCATE's schema-change commit and the events
        commit of its batch), and one when the last segment has finished."""
        s = self.sizes
        self.start()
        self.wait_commit(self.events_dir)
        segment = self.concurrently(s.snapshot_steps, 0)   # DML while the snapshot is read
        self.wait_commit(self.events_dir)
        self.kill("events commit")
        self.start()
        self.wait_commit(self.events_dir)
        self.kill("events commit")
        segment.finish()
        for i in range(s.segments):
            schema = i % 2 == 1 and s.ddl > 0
            truncate = i % 4 == 3 and self.side.dialect == "mariadb"  # PostgreSQL's lands no schema change
            if truncate:  # no backlog: the first schema-change commit of the next run is the TRUNCATE's
                self.project.ingest()
            self.start()
            segment = self.concurrently(s.steps, s.ddl, first="truncate" if truncate else "shape" if schema else "")
            self.wait_commit(self.schema_dir if schema else self.events_dir, streaming=not schema)
            self.kill("schema commit" if schema else "events commit")
            segment.finish()
        self.start()
        self.concurrently(s.steps, s.ddl).finish()
        self.kill("workload end")

    def workload_2(self) -> None:
        s = self.sizes
        self.start()
        segment = self.concurrently(s.steps, s.ddl)
        self.wait_commit(self.events_dir, streaming=True)
        self.kill("events commit")
        segment.finish()
        self.concurrently(s.steps, 1).finish()   # not ingested until the catch-up run

    def build_and_compare(self, stage: str) -> None:
        self.project.ingest()                          # catch-up: `run --until-caught-up`
        self.project.prepare_models()                  # schema rebuild + generate
        incremental = (self.project.warehouse / "silver").is_dir()   # silver built before: this build merges
        log_size = self.project.dbt_log().stat().st_size if self.project.dbt_log().exists() else 0
        self.project.dbt_build_local()
        self.log(f"{stage} done; comparing")
        self.result.stages[stage] = self.compare()
        if incremental:  # the incremental build merged into every table silver already had
            built = self.project.dbt_log().read_text(errors="replace")[log_size:]
            for name in self.project.silver_tables():
                if not wrote_incrementally(built, SOURCE, name):
                    self.result.stages[stage].append(Mismatch(name, "", 1, 1, ["no incremental write in the build"]))

    def compare(self) -> list[Mismatch]:
        tables = self.workload.tables
        found: list[Mismatch] = []
        present = self.project.silver_tables()
        if present != set(tables):
            found.append(Mismatch("(tables)", "", len(present ^ set(tables)), len(tables),
                                  [f"silver {sorted(present)}, source {sorted(tables)}"]))
        for name, table in tables.items():
            if name not in present:
                continue
            source = self.side.rows(table)
            mismatches, notes = diff_table(name, table, self.project.read_silver(name), source, META_COLUMNS)
            current = [r for r in self.project.read_silver(f"{name}_history") if r["is_current"]]
            history, _ = diff_table(f"{name}_history (current)", table, current, source, HISTORY_COLUMNS)
            same = {(m.column, m.count) for m in mismatches}  # the history repeating the table's: one line
            if history and {(m.column, m.count) for m in history} == same:
                history = [Mismatch(f"{name}_history (current)", "", 0, len(source),
                                    [f"the same {len(history)} mismatch(es) as {name}"])]
            found += mismatches + history
            # one note per table: the latest (the second build's list includes the first's)
            self.result.notes = [n for n in self.result.notes if not n.startswith(f"{name}:")] + notes
        return found

    def run(self) -> CaseResult:
        self.began = began = time.monotonic()
        try:
            self.log(f"{self.side.dialect} seed {self.result.seed}: setup")
            self.side.setup(self.workload, self.sizes.rows)
            self.workload_1()
            self.log("catch-up, schema rebuild, generate, dbt build")
            self.build_and_compare("first build")
            self.workload_2()
            self.log("catch-up, schema rebuild, generate, incremental dbt build")
            self.build_and_compare("incremental build")
        finally:
            if self.proc is not None:
                self.proc.kill()
                self.proc.wait(timeout=60)
            self.side.cleanup()
            self.result.seconds = time.monotonic() - began
            self.result.statements = self.workload.statements
            self.result.ddl = self.workload.ddl_done
        return self.result
