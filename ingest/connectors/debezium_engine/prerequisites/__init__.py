"""CDC prerequisites of the sources captured by the real Debezium connectors (SQL Server, Oracle, MongoDB), checked
natively with the Python drivers before the Debezium engine starts (`lakecdc doctor`, `lakecdc run`).

Each database module declares one `Probe` (its `PROBE`):

- `queries`: its catalog queries, once (name -> SQL text with bind parameters, or a MongoDB command);
- `collect(properties)`: the live path: connect with the driver (imported there, lazily), run `queries`, return
  the rows by query name (a query it could not run for lack of a privilege is left out, never faked);
- `problems(results, properties)`: pure: the recorded rows plus the user's Debezium properties -> one line per
  problem, each saying what is wrong and the statement or command that fixes it;
- `summary(results, properties)`: pure: the one line saying what holds (with any warning that does not block).

Tests feed recorded rows (exactly as the queries return them) to `evaluate`; `check` runs the live path. Both
raise `LakecdcError` with the first problem, prefixed with the kind ("sqlserver: ..."). Passwords never reach a
message: every line goes through `redact`.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from ingest.errors import LakecdcError

Row = dict[str, Any]
Results = dict[str, list[Row]]
Properties = Mapping[str, str]

PROBES: dict[str, str] = {
    "sqlserver": "ingest.connectors.debezium_engine.prerequisites.sqlserver",
    "oracle": "ingest.connectors.debezium_engine.prerequisites.oracle",
    "mongodb": "ingest.connectors.debezium_engine.prerequisites.mongodb",
}
# lakecdc's own property (not Debezium's): how long a connection attempt of `check` may take
CONNECT_TIMEOUT = "lakecdc.connect.timeout.ms"
_DEFAULT_CONNECT_TIMEOUT_MS = 10_000


@dataclass(frozen=True)
class Probe:
    kind: str
    queries: Mapping[str, Any]
    collect: Callable[[Properties], Results]
    problems: Callable[[Results, Properties], list[str]]
    summary: Callable[[Results, Properties], str]


def probe(kind: str) -> Probe:
    module_name = PROBES.get(kind)
    if module_name is None:
        raise LakecdcError(f"no prerequisite checks for {kind!r} (known: {', '.join(sorted(PROBES))})")
    return importlib.import_module(module_name).PROBE


def evaluate(kind: str, results: Results, properties: Properties) -> str:
    """The verdict on recorded rows: raise LakecdcError with the first problem, else return the ok line."""
    try:
        judge = probe(kind)
        found = judge.problems(results, properties)
        if not found:
            return redact(judge.summary(results, properties), properties)
    except LakecdcError as exc:
        raise LakecdcError(redact(_prefixed(kind, str(exc)), properties)) from None
    more = f" (and {plural(len(found) - 1, 'more problem')})" if len(found) > 1 else ""
    raise LakecdcError(redact(f"{kind}: {found[0]}{more}", properties))


def check(kind: str, properties: Properties) -> str:
    """Connect to the source with its Python driver, run the catalog queries and judge them (`evaluate`)."""
    try:
        results = probe(kind).collect(properties)
    except LakecdcError as exc:
        raise LakecdcError(redact(_prefixed(kind, str(exc)), properties)) from None
    except Exception as exc:  # a driver error the module did not word: still one line, without a traceback
        raise LakecdcError(redact(f"{kind}: {type(exc).__name__}: {one_line(exc)}", properties)) from None
    return evaluate(kind, results, properties)


def _prefixed(kind: str, message: str) -> str:
    return message if message.startswith(f"{kind}: ") else f"{kind}: {message}"


# --- messages --------------------------------------------------------------------------------------------------

def one_line(exc: BaseException, limit: int = 300) -> str:
    """A driver error as one line: its lines joined, whitespace collapsed, cut at `limit` characters."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= limit else text[: limit - 3] + "..."


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def names(items: Iterable[str]) -> str:
    """a, b and c"""
    listed = list(items)
    if len(listed) < 2:
        return "".join(listed)
    return ", ".join(listed[:-1]) + " and " + listed[-1]


_URL_USERINFO = re.compile(r"(//)([^/@\s]+)@")          # scheme://user:password@host
_ORACLE_USERINFO = re.compile(r"(:@?)([^/@:\s]+)/([^@\s]+)@")  # jdbc:oracle:thin:user/password@host


def secrets(properties: Properties) -> list[str]:
    """Every password in the properties: *password* values, and those inside connection strings and URLs."""
    found = [v for k, v in properties.items() if v and ("password" in k.lower() or "secret" in k.lower())]
    for value in properties.values():
        for match in _URL_USERINFO.finditer(value or ""):
            user, _, password = match.group(2).partition(":")
            found += [password] if password else []
        for match in _ORACLE_USERINFO.finditer(value or ""):
            found.append(match.group(3))
    found += [unquote(s) for s in found]
    return sorted({s for s in found if s}, key=len, reverse=True)


def redact(text: str, properties: Properties) -> str:
    text = _URL_USERINFO.sub(lambda m: f"{m.group(1)}***@", text)
    for secret in secrets(properties):
        text = text.replace(secret, "***")
    return text


# --- properties ------------------------------------------------------------------------------------------------

def listed(properties: Properties, name: str) -> list[str]:
    """A comma-separated property as its non-blank items."""
    return [item.strip() for item in (properties.get(name) or "").split(",") if item.strip()]


def required(properties: Properties, name: str) -> str:
    value = (properties.get(name) or "").strip()
    if not value:
        raise LakecdcError(f"{name} is not set")
    return value


def integer(properties: Properties, name: str, default: int) -> int:
    text = (properties.get(name) or "").strip()
    if not text:
        return default
    try:
        return int(text)
    except ValueError:
        raise LakecdcError(f"{name} is {text!r}, not a whole number") from None


def connect_timeout(properties: Properties) -> float:
    """Seconds a connection attempt may take (`lakecdc.connect.timeout.ms`, default 10 s)."""
    return integer(properties, CONNECT_TIMEOUT, _DEFAULT_CONNECT_TIMEOUT_MS) / 1000


def patterns(properties: Properties, name: str) -> tuple[re.Pattern[str], ...] | None:
    """A Debezium regex list (comma-separated, matched whole and case-insensitively); None when not set."""
    items = listed(properties, name)
    if not items:
        return None
    compiled = []
    for item in items:
        try:
            compiled.append(re.compile(item, re.IGNORECASE))
        except re.error as exc:
            raise LakecdcError(f"{name}: {item!r} is not a regular expression ({exc})") from None
    return tuple(compiled)


def matches(found: tuple[re.Pattern[str], ...] | None, *candidates: str) -> bool:
    return found is not None and any(p.fullmatch(c) for p in found for c in candidates)


@dataclass(frozen=True)
class TableFilter:
    """Debezium's table selection of a relational connector: schema.include/exclude.list against the schema
    name, table.include/exclude.list against `schema.table` (or `database.schema.table`)."""

    schema_include: tuple[re.Pattern[str], ...] | None
    schema_exclude: tuple[re.Pattern[str], ...] | None
    table_include: tuple[re.Pattern[str], ...] | None
    table_exclude: tuple[re.Pattern[str], ...] | None

    @classmethod
    def from_properties(cls, properties: Properties) -> TableFilter:
        return cls(*(patterns(properties, f"{what}.{which}.list")
                     for what in ("schema", "table") for which in ("include", "exclude")))

    def captures(self, schema: str, table: str, database: str | None = None) -> bool:
        full = [f"{schema}.{table}"] + ([f"{database}.{schema}.{table}"] if database else [])
        if self.schema_include is not None and not matches(self.schema_include, schema):
            return False
        if matches(self.schema_exclude, schema):
            return False
        if self.table_include is not None and not matches(self.table_include, *full):
            return False
        return not matches(self.table_exclude, *full)

    def describe(self) -> str:
        """The set filters, for a message: "table.include.list 'dbo\\.orders'" or "no include list"."""
        shown = [f"{what}.{which}.list {', '.join(p.pattern for p in found)!r}"
                 for (what, which), found in zip([("schema", "include"), ("schema", "exclude"),
                                                  ("table", "include"), ("table", "exclude")],
                                                 [self.schema_include, self.schema_exclude,
                                                  self.table_include, self.table_exclude], strict=True)
                 if found is not None]
        return ", ".join(shown) or "no include list"
