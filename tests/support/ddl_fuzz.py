"""Random DDL against the real servers: a seeded generator of CREATE / ALTER / RENAME / DROP statements for MariaDB
and PostgreSQL, each executed on the server and fed to the schema history; after every accepted statement the
parsed tables must equal the server's catalog (tests/support/schema_oracle.py). Statements the server refuses
are applied to a scratch copy of the state: the interpreter should flag them (an ERROR change, the catalog unchanged).

The generator reads the server's own tables (the oracle's view) to pick names, so most statements are valid; a
share is made invalid on purpose (unknown column, duplicate column, second primary key, BLOB/TEXT key without a
length, unknown table) and tagged, to measure how many of those the interpreter flags.

    run_fuzz(MariaOracle(params, "ddl_fuzz"), "mariadb", seed=1, accepted=2000) -> FuzzResult
    python bench/ddl.py --fuzz mariadb --seed 1 --statements 2000     (the long form)
"""

from __future__ import annotations

import copy
import random
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from tests.support.schema_oracle import table_diff


@dataclass
class FuzzResult:
    dialect: str
    seed: int
    accepted: int = 0
    exact: int = 0
    refused: int = 0
    refused_flagged: int = 0            # refused statements the interpreter flagged (ERROR, catalog unchanged)
    invalid: Counter = field(default_factory=Counter)          # deliberate invalid kind -> refused by the server
    invalid_flagged: Counter = field(default_factory=Counter)  # ... and flagged by the interpreter
    misses: list[tuple[str, str]] = field(default_factory=list)
    unflagged: list[tuple[str, str]] = field(default_factory=list)

    @property
    def exact_share(self) -> float:
        return self.exact / self.accepted if self.accepted else 0.0

    @property
    def invalid_flagged_share(self) -> float:
        total = sum(self.invalid.values())
        return sum(self.invalid_flagged.values()) / total if total else 1.0

    def report(self, limit: int = 40) -> str:
        lines = [f"{self.dialect} seed {self.seed}: {self.exact}/{self.accepted} accepted statements exact "
                 f"({self.exact_share:.2%}); refused {self.refused}, flagged {self.refused_flagged}; deliberately "
                 f"invalid refused {sum(self.invalid.values())}, flagged {sum(self.invalid_flagged.values())} "
                 f"({self.invalid_flagged_share:.1%}) {dict(self.invalid_flagged)}/{dict(self.invalid)}"]
        lines += [f"  MISS {s[:300]!r}\n      {d}" for s, d in self.misses[:limit]]
        lines += [f"  UNFLAGGED {s[:300]!r} ({e[:100]})" for s, e in self.unflagged[:limit]]
        return "\n".join(lines)


def run_fuzz(oracle: Any, dialect: str, seed: int, accepted: int, max_statements: int | None = None) -> FuzzResult:
    """Generate statements until `accepted` of them ran on the server (or `max_statements` were tried)."""
    rng = random.Random(seed)
    gen = (MariaGen if dialect == "mariadb" else PgGen)(rng)
    result = FuzzResult(dialect, seed)
    state = oracle.new_state()
    server = oracle.server_tables()
    tried = 0
    while result.accepted < accepted and tried < (max_statements or accepted * 4):
        tried += 1
        stmt, invalid_kind = gen.statement(server)
        refused = oracle.execute(stmt)
        if refused is not None:
            result.refused += 1
            if invalid_kind:
                result.invalid[invalid_kind] += 1
            scratch = copy.deepcopy(state)
            changes = scratch.apply(stmt, dialect, default_database=oracle.db)
            flagged = any(c.kind == "ERROR" for c in changes) and oracle.parsed_tables(scratch) == \
                oracle.parsed_tables(state)
            if flagged:
                result.refused_flagged += 1
                if invalid_kind:
                    result.invalid_flagged[invalid_kind] += 1
            elif invalid_kind:
                result.unflagged.append((stmt, refused))
            continue
        result.accepted += 1
        changes = state.apply(stmt, dialect, default_database=oracle.db)
        errors = [c.detail or "" for c in changes if c.kind == "ERROR"]
        server = oracle.server_tables()
        parsed = oracle.parsed_tables(state)
        if server == parsed and not errors:
            result.exact += 1
            continue
        result.misses.append((stmt, ("ERROR " + "; ".join(errors) + " | " if errors else "") +
                              table_diff(server, parsed)))
        if dialect == "mariadb":
            state = oracle.resync(state)
        else:
            state = oracle.resync(state, {k for k in set(server) | set(parsed) if server.get(k) != parsed.get(k)})
    return result


# ----------------------------------------------------------------------------------------------- shared


class _Gen:
    """Names and picks shared by both dialects. `tables` is the oracle's view of the server: {key: (cols, pk)}
    with cols as tuples whose first two items are the name and the type text."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.counter = 0

    def fresh(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def pick(self, items):
        return self.rng.choice(list(items))


# ----------------------------------------------------------------------------------------------- MariaDB

_MY_INTS = ["tinyint", "smallint", "mediumint", "int", "bigint"]


class MariaGen(_Gen):
    """MariaDB statements; column names are plain lower-case words (the server compares them without case)."""

    def type_and_default(self) -> tuple[str, str | None, bool]:
        """(type text, a default literal or None, usable in a key without a length)."""
        r = self.rng
        kind = r.randrange(17)
        if kind <= 2:
            name = self.pick(_MY_INTS)
            text = name + (f"({r.randint(1, 11)})" if self.chance(0.15) else "") + (
                " unsigned" if self.chance(0.3) else "")
            return text, self.pick(["0", "1", "7", "-1", "'5'", "42"]), True
        if kind == 3:
            p = r.randint(1, 20)
            s = r.randint(0, min(p, 6))
            return f"decimal({p},{s})", self.pick(["0", "1.5", "'2.25'", "-3"]), True
        if kind == 4:
            return self.pick(["float", "double", "double(10,3)", "float(30)"]), self.pick(["0", "1.5", "2e3"]), True
        if kind in (5, 6):
            base = self.pick(["varchar", "char"])
            charset = self.pick(["", "", " CHARACTER SET latin1", " CHARACTER SET utf8mb4", " CHARACTER SET ascii"])
            return f"{base}({r.randint(1, 60)}){charset}", self.pick(["''", "'a'", "'xyz'", "1"]), True
        if kind == 7:
            return self.pick(["text", "tinytext", "mediumtext", "blob", "tinyblob", "longblob"]), \
                self.pick([None, "'t'", "''"]), False
        if kind == 8:
            return "date", self.pick(["'2020-01-02'", "'1999-12-31'", "20200102"]), True
        if kind == 9:
            fsp = self.pick(["", "(0)", "(3)", "(6)", "(2)"])
            return f"datetime{fsp}", self.pick(["CURRENT_TIMESTAMP", "'2020-01-02 03:04:05'", "now()",
                                                f"CURRENT_TIMESTAMP{fsp}" if fsp else "current_timestamp()"]), True
        if kind == 10:
            fsp = self.pick(["", "(3)", "(6)"])
            return f"timestamp{fsp}", self.pick(["CURRENT_TIMESTAMP", "'2020-01-02 03:04:05'", None]), True
        if kind == 11:
            fsp = self.pick(["", "(2)", "(0)", "(6)"])
            return f"time{fsp}", self.pick(["'12:34:56'", "1", "'1:2:3'", "0"]), True
        if kind == 12:
            return "year", self.pick(["2020", "1", "70", "'2001'", "0", "99"]), True
        if kind == 13:
            return "enum('a','b','c')", self.pick(["'a'", "'c'", None]), True
        if kind == 14:
            return "set('x','y')", self.pick(["'x'", "'x,y'", "''", None]), True
        if kind == 15:
            return self.pick([f"binary({r.randint(1, 16)})", f"varbinary({r.randint(1, 40)})"]), \
                self.pick([None, "'ab'"]), True
        return self.pick(["bit(1)", "bit(8)", "json", "bool", "uuid", "inet6"]), None, False

    def column_def(self, name: str, allow_position: bool = True, cols: list[str] | None = None) -> str:
        text, default, _ = self.type_and_default()
        parts = [f"`{name}`" if self.chance(0.2) else name, text]
        if self.chance(0.3):
            parts.append(self.pick(["NOT NULL", "NULL"]))
        if default is not None and self.chance(0.5):
            parts.append(f"DEFAULT {default}")
        elif self.chance(0.1):
            parts.append("DEFAULT NULL")
        if self.chance(0.1):
            parts.append("COMMENT 'c'")
        if allow_position and cols and self.chance(0.3):
            parts.append("FIRST" if self.chance(0.4) else f"AFTER {self.pick(cols)}")
        return " ".join(parts)

    def statement(self, tables: dict[str, tuple]) -> tuple[str, str | None]:
        r = self.rng
        if len(tables) < 2 or self.chance(0.08 if len(tables) < 6 else 0.02):
            return self.create(tables)
        name = self.pick(sorted(tables))
        cols = [c[0] for c in tables[name][0]]
        pk = tables[name][1]
        roll = r.random()
        if roll < 0.03:
            return f"CREATE TABLE {self.fresh('t')} LIKE {name}", None
        if roll < 0.06:
            others = [t for t in sorted(tables) if t != name]
            if self.chance(0.5) and others:
                other = self.pick(others)
                tmp = self.fresh("tmp")
                return f"RENAME TABLE {name} TO {tmp}, {other} TO {name}, {tmp} TO {other}", None
            return f"RENAME TABLE {name} TO {self.fresh('t')}", None
        if roll < 0.08 and len(tables) > 3:
            return f"DROP TABLE {name}" + (f", {self.pick(sorted(tables))}" if self.chance(0.2) else ""), None
        if roll < 0.09:
            return f"TRUNCATE TABLE {name}", None
        if roll < 0.10:
            return f"DROP TABLE {self.fresh('nosuch')}", None  # not flagged: the table may predate the history
        return self.alter(name, tables[name][0], cols, pk)

    def create(self, tables: dict[str, tuple]) -> tuple[str, str | None]:
        r = self.rng
        names = [self.fresh("c") for _ in range(r.randint(1, 6))]
        defs = [self.column_def(n, allow_position=False) for n in names]
        invalid = None
        if self.chance(0.3):
            defs[0] = f"{names[0]} int NOT NULL AUTO_INCREMENT PRIMARY KEY" if self.chance(0.5) else \
                f"{names[0]} bigint PRIMARY KEY"
        elif self.chance(0.5):
            defs.append("PRIMARY KEY (" + ", ".join(r.sample(names, r.randint(1, min(3, len(names))))) + ")")
        if self.chance(0.05):
            defs.append(f"{names[0]} int")
            invalid = "duplicate column"
        elif self.chance(0.04):
            defs.append(f"b{self.counter} blob, PRIMARY KEY (b{self.counter})")
            invalid = "key without length"
        options = self.pick(["", "", " ENGINE=InnoDB", " DEFAULT CHARSET=latin1", " CHARSET=utf8mb4"])
        return f"CREATE TABLE {self.fresh('t')} (" + ", ".join(defs) + ")" + options, invalid

    def alter(self, name: str, columns: list[tuple], cols: list[str], pk: list[str]) -> tuple[str, str | None]:
        r = self.rng
        clauses: list[str] = []
        invalid = None
        added: list[str] = []
        blobs = [c[0] for c in columns if c[1].endswith(("text", "blob")) or c[1] in ("longtext",)]
        for _ in range(r.choice([1, 1, 1, 2, 2, 3])):
            known = cols + added
            roll = r.randrange(100)
            if roll < 22:
                new = self.fresh("c")
                clauses.append(("ADD COLUMN " if self.chance(0.5) else "ADD ") +
                               self.column_def(new, cols=known))
                added.append(new)
            elif roll < 32 and len(cols) > 1:
                col = self.pick(cols)
                clauses.append(f"DROP COLUMN {col}" if self.chance(0.5) else f"DROP {col}")
            elif roll < 44 and known:
                clauses.append(("MODIFY COLUMN " if self.chance(0.3) else "MODIFY ") +
                               self.column_def(self.pick(known), cols=known))
            elif roll < 52 and cols:
                clauses.append(f"CHANGE {self.pick(cols)} " + self.column_def(self.fresh("c"), cols=known))
            elif roll < 58 and cols:
                clauses.append(f"RENAME COLUMN {self.pick(cols)} TO {self.fresh('c')}")
            elif roll < 68 and known:
                col = self.pick(known)
                _, default, _ = self.type_and_default()
                if default is None or self.chance(0.3):
                    clauses.append(f"ALTER COLUMN {col} DROP DEFAULT")
                else:
                    clauses.append(f"ALTER {col} SET DEFAULT {default}")
            elif roll < 76 and known:
                if pk and self.chance(0.7):
                    clauses.append("DROP PRIMARY KEY")
                else:
                    keys = r.sample(known, r.randint(1, min(2, len(known))))
                    clauses.append("ADD PRIMARY KEY (" + ", ".join(keys) + ")")
            elif roll < 79:
                clauses.append(f"ADD INDEX ({self.pick(known)})" if known else "ENGINE=InnoDB")
            elif roll < 81:
                clauses.append(f"RENAME TO {self.fresh('t')}")
            elif roll < 83:
                clauses.append(self.pick(["CONVERT TO CHARACTER SET utf8mb4", "DEFAULT CHARSET=latin1",
                                          "COMMENT 'x'", "ENGINE=InnoDB"]))
            elif roll < 87:
                missing = self.fresh("zz")
                clauses.append(self.pick([f"DROP COLUMN {missing}", f"MODIFY {missing} int",
                                          f"ALTER {missing} SET DEFAULT 1", f"CHANGE {missing} {missing}x int",
                                          f"ADD {self.fresh('c')} int AFTER {missing}"]))
                invalid = "unknown column"
            elif roll < 91 and known:
                clauses.append(f"ADD {self.pick(known)} int")
                invalid = "duplicate column"
            elif roll < 95 and pk:
                clauses.append(f"ADD PRIMARY KEY ({self.pick(known)})")
                invalid = invalid or "second primary key"
            elif roll < 100 and blobs:
                clauses.append(f"{'DROP PRIMARY KEY, ' if pk else ''}ADD PRIMARY KEY ({self.pick(blobs)})")
                invalid = invalid or "key without length"
            else:
                new = self.fresh("c")
                clauses.append(f"ADD {self.column_def(new, cols=known)}")
                added.append(new)
        return f"ALTER TABLE {name} " + ", ".join(clauses), invalid


# ----------------------------------------------------------------------------------------------- PostgreSQL


class PgGen(_Gen):
    """PostgreSQL statements, some names quoted in mixed case."""

    def ident(self, prefix: str) -> str:
        name = self.fresh(prefix)
        return f'"{name.capitalize()}"' if self.chance(0.12) else name

    def type_and_default(self, serials: bool = True) -> tuple[str, str | None]:
        r = self.rng
        kind = r.randrange(19 if serials else 17)
        if kind <= 2:
            return self.pick(["smallint", "integer", "bigint", "int", "int8"]), \
                self.pick(["0", "1", "-7", "'3'", "(1 + 2)"])
        if kind == 3:
            p = r.randint(1, 20)
            return self.pick([f"numeric({p},{r.randint(0, p)})", "numeric", f"decimal({p})"]), \
                self.pick(["0", "1.5", "'2.25'"])
        if kind == 4:
            return self.pick(["real", "double precision", "float(10)", "float8"]), self.pick(["0", "1.5", "'2'"])
        if kind == 5:
            return self.pick(["text", f"varchar({r.randint(1, 50)})", f"char({r.randint(1, 10)})", "varchar"]), \
                self.pick(["''", "'a'", "'x y'", "'it''s'"])
        if kind == 6:
            return self.pick(["boolean", "bool"]), self.pick(["true", "false", "'t'", "'yes'", "'off'"])
        if kind == 7:
            return "date", self.pick(["'2020-01-02'", "CURRENT_DATE", "'2021-3-4'"])
        if kind == 8:
            fsp = self.pick(["", "(0)", "(3)", "(6)"])
            return self.pick([f"timestamp{fsp}", f"timestamptz{fsp}", f"timestamp{fsp} with time zone"]), \
                self.pick(["now()", "CURRENT_TIMESTAMP", "'2020-01-02 03:04:05'", "LOCALTIMESTAMP"])
        if kind == 9:
            return self.pick(["time", "time(2)", "timetz", "interval"]), self.pick(["'12:34:56'", None])
        if kind == 10:
            return self.pick(["uuid", "jsonb", "json", "bytea"]), None
        if kind == 11:
            return self.pick(["inet", "cidr"]), self.pick(["'10.0.0.1'", "'192.168.0.0/24'", None])
        if kind == 12:
            return self.pick(["macaddr", "macaddr8"]), self.pick(["'08:00:2b:01:02:03'", "'08-00-2B-01-02-03'",
                                                                  "'0800.2b01.0203'", None])
        if kind == 13:
            return self.pick([f"bit({r.randint(1, 8)})", f"varbit({r.randint(1, 16)})", "bit varying(8)",
                              "varbit"]), self.pick([None, "B'1'", "'1'"])
        if kind == 14:
            return self.pick(["integer[]", "text[]", "int[]", "varchar(5)[]", "bigint[]"]), \
                self.pick(["'{}'", "ARRAY[1, 2]", "'{1,2}'", None])
        if kind == 15:
            return self.pick(["int GENERATED BY DEFAULT AS IDENTITY", "bigint GENERATED ALWAYS AS IDENTITY"]), None
        if kind == 16:
            return self.pick(["integer", "text"]), None
        return self.pick(["serial", "bigserial", "smallserial"]), None

    def column_def(self, name: str, serials: bool = True) -> str:
        text, default = self.type_and_default(serials)
        if ("with time zone" in text or "tz" in text) and default and default.startswith("'"):
            default = None  # the server reads the literal in its session time zone, which DDL does not carry
        parts = [name, text]
        if self.chance(0.25):
            parts.append(self.pick(["NOT NULL", "NULL"]))
        if default is not None and "IDENTITY" not in text and "serial" not in text and self.chance(0.5):
            parts.append(f"DEFAULT {default}")
        return " ".join(parts)

    def statement(self, tables: dict[tuple[str, str], tuple]) -> tuple[str, str | None]:
        r = self.rng
        if len(tables) < 2 or self.chance(0.08 if len(tables) < 6 else 0.02):
            return self.create()
        key = self.pick(sorted(tables))
        name = _pg_name(key[1])
        columns, pk = tables[key]
        cols = [_pg_name(c[0]) for c in columns]
        roll = r.random()
        if roll < 0.04:
            option = self.pick(["", " INCLUDING DEFAULTS", " INCLUDING ALL", " INCLUDING DEFAULTS INCLUDING IDENTITY",
                                " INCLUDING INDEXES"])
            extra = f", {self.column_def(self.ident('c'))}" if self.chance(0.3) else ""
            return f"CREATE TABLE {self.ident('t')} (LIKE {name}{option}{extra})", None
        if roll < 0.06:
            return f"ALTER TABLE {name} RENAME TO {self.ident('t')}", None
        if roll < 0.09 and len(tables) > 3:
            return f"DROP TABLE {name}" + (" CASCADE" if self.chance(0.6) else ""), None
        if roll < 0.10:
            return f"TRUNCATE {name}", None
        if roll < 0.14 and cols:
            return f"ALTER TABLE {name} RENAME {'COLUMN ' if self.chance(0.5) else ''}{self.pick(cols)} TO " \
                   f"{self.ident('c')}", None
        return self.alter(name, columns, cols, pk)

    def create(self) -> tuple[str, str | None]:
        r = self.rng
        names = [self.ident("c") for _ in range(r.randint(1, 6))]
        defs = [self.column_def(n) for n in names]
        invalid = None
        if self.chance(0.25):
            defs[0] += " PRIMARY KEY"
        elif self.chance(0.4):
            defs.append("PRIMARY KEY (" + ", ".join(r.sample(names, r.randint(1, min(3, len(names))))) + ")")
        if self.chance(0.04):
            defs.append(f"{names[0]} int")
            invalid = "duplicate column"
        return f"CREATE TABLE {self.ident('t')} (" + ", ".join(defs) + ")", invalid

    def alter(self, name: str, columns: list[tuple], cols: list[str], pk: list[str]) -> tuple[str, str | None]:
        r = self.rng
        clauses: list[str] = []
        invalid = None
        for _ in range(r.choice([1, 1, 1, 2, 2, 3])):
            roll = r.randrange(100)
            col = self.pick(cols) if cols else None
            if roll < 20 or col is None:
                clauses.append(("ADD COLUMN " if self.chance(0.6) else "ADD ") + self.column_def(self.ident("c")))
            elif roll < 30 and len(cols) > 1:
                clauses.append(f"DROP COLUMN {col}" + (" CASCADE" if self.chance(0.3) else ""))
            elif roll < 40:
                text, _ = self.type_and_default(serials=False)
                if "IDENTITY" in text:
                    text = "bigint"
                base = text.split("(")[0].replace("[]", "")
                clauses.append(f"ALTER COLUMN {col} {'SET DATA ' if self.chance(0.3) else ''}TYPE {text}"
                               + (f" USING {col}::text::{text}" if base not in ("text", "varchar") else ""))
            elif roll < 55:
                column_type = next(c[1] for c in columns if _pg_name(c[0]) == col)
                default = _pg_default_for(self, column_type) or self.pick(["1", "'1'", None])
                if default is None or self.chance(0.3):
                    clauses.append(f"ALTER {col} DROP DEFAULT")
                else:
                    clauses.append(f"ALTER COLUMN {col} SET DEFAULT {default}")
            elif roll < 65:
                clauses.append(f"ALTER COLUMN {col} {self.pick(['SET', 'DROP'])} NOT NULL")
            elif roll < 70:
                clauses.append(self.pick([f"ALTER COLUMN {col} ADD GENERATED BY DEFAULT AS IDENTITY",
                                          f"ALTER COLUMN {col} DROP IDENTITY IF EXISTS",
                                          f"ALTER COLUMN {col} DROP IDENTITY"]))
            elif roll < 80:
                if pk and self.chance(0.7):
                    table = name.strip('"')
                    clauses.append(f'DROP CONSTRAINT "{table}_pkey"')
                else:
                    clauses.append("ADD PRIMARY KEY (" + ", ".join(r.sample(cols, r.randint(1, min(2, len(cols)))))
                                   + ")")
            elif roll < 84:
                missing = self.fresh("zz")
                clauses.append(self.pick([f"DROP COLUMN {missing}", f"ALTER COLUMN {missing} TYPE int",
                                          f"ALTER {missing} SET DEFAULT 1", f"ALTER {missing} SET NOT NULL"]))
                invalid = "unknown column"
            elif roll < 88:
                clauses.append(f"ADD {col} int")
                invalid = "duplicate column"
            elif roll < 92 and pk:
                clauses.append(f"ADD PRIMARY KEY ({col})")
                invalid = invalid or "second primary key"
            elif roll < 96:
                clauses.append(f"ALTER COLUMN {col} SET DEFAULT 1, ALTER COLUMN {col} DROP DEFAULT"
                               if self.chance(0.5) else
                               f"ALTER COLUMN {col} SET NOT NULL, ALTER COLUMN {col} DROP NOT NULL")
            else:
                clauses.append(f"ADD COLUMN IF NOT EXISTS {self.pick([col, self.ident('c')])} text")
        return f"ALTER TABLE {name} " + ", ".join(clauses), invalid


def _pg_name(name: str) -> str:
    return name if name == name.lower() and name.isidentifier() else '"' + name.replace('"', '""') + '"'


def _pg_default_for(gen: PgGen, type_text: str) -> str | None:
    """A default of the column's own type family (None for types with a time zone or none listed)."""
    if "with time zone" in type_text:
        return gen.pick(["now()", "CURRENT_TIMESTAMP", None])
    for prefix, choices in (("smallint", ["1", "-2"]), ("integer", ["1", "'5'"]), ("bigint", ["1", "10"]),
                            ("numeric", ["1.25", "3"]), ("boolean", ["true", "'f'"]),
                            ("date", ["'2020-01-02'", "CURRENT_DATE"]), ("timestamp", ["now()", "'2020-01-02'"]),
                            ("time", ["'01:02:03'", "'1:2'"]), ("macaddr", ["'08-00-2B-01-02-03'"]),
                            ("bit varying", ["B'101'", "'11'"]), ("bit", ["B'1'"]), ("inet", ["'10.1.2.3'"]),
                            ("cidr", ["'10.1.0.0/16'"]),
                            ("integer[]", ["ARRAY[1, 2]", "'{3}'"]), ("text", ["'x'"]), ("character", ["'y'"]),
                            ("uuid", ["'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11'"]), ("interval", ["'1 day'"]),
                            ("jsonb", ["'{}'", "'[1, 2]'"]), ("real", ["1.5"]), ("double", ["2.5"])):
        if type_text.startswith(prefix):
            return gen.pick(choices)
    return None
