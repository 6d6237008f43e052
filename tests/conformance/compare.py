"""Event comparison: line up the records of the real Debezium and of lakecdc, compare every key and value
(schema and payload) after JSON canonicalisation of key order only, and group the differences.

Strictness: numbers keep their JSON text (1.0 and 1, -1.76229696E8 and -176229696.0 differ, as the bytes
a consumer reads differ); true is not 1; a missing field differs from a null one. Two things are not
compared, both declared here and documented in docs/conformance.md:
  EXCLUDED    fields that legitimately differ between two captures (positions, clocks), by name;
  EXCEPTIONS  written, justified deviations, each pinned by a test in test_comparator.py.
"""

from __future__ import annotations

import json
import re
import struct
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

from tests.conformance.debezium import Record


class FloatText(str):
    """A JSON number with a fraction or exponent, kept as its text."""

    def __repr__(self) -> str:
        return str(self)


def parse(text: str | None) -> Any:
    return None if text is None else json.loads(text, parse_float=FloatText)


@dataclass(frozen=True)
class Event:
    """A parsed record with what the comparison needs to know about it."""

    topic: str
    key: Any        # {"schema", "payload"} or None
    value: Any      # {"schema", "payload"} or None (tombstone)

    @property
    def payload(self) -> dict:
        return (self.value or {}).get("payload") or {}

    @property
    def op(self) -> str | None:
        return self.payload.get("op") if isinstance(self.payload, dict) else None

    @property
    def kind(self) -> str:
        if self.value is None:
            return "tombstone"
        if "status" in self.payload:
            return "transaction"
        if self.op == "m":
            return "message"
        return "data"

    @property
    def phase(self) -> str:
        snapshot = (self.payload.get("source") or {}).get("snapshot")
        return "snapshot" if self.op == "r" or snapshot not in (None, "false", False) else "streaming"

    def match_key(self) -> tuple:
        """What lines an event up with its counterpart (with the occurrence number added by `align`)."""
        key = json.dumps((self.key or {}).get("payload"), sort_keys=True)
        if self.kind == "transaction":
            return ("transaction", self.payload.get("status"))
        return (self.kind, self.op, key)


def to_event(record: Record) -> Event:
    return Event(record.topic, parse(record.key), parse(record.value))


# ----------------------------------------------------------------------------------------------- exclusions

@dataclass(frozen=True)
class Excluded:
    """A payload field not compared: `path` as `diff` names it, for events where `applies` holds."""

    connectors: tuple[str, ...]
    path: str
    scope: str
    reason: str
    applies: Callable[[Event], bool] = field(compare=False, default=lambda e: True)


def _snapshot(e: Event) -> bool:
    return e.phase == "snapshot"


def _untransactional_message(e: Event) -> bool:
    return e.kind == "message" and (e.payload.get("source") or {}).get("txId") is None


PG, MARIADB = ("postgresql",), ("mariadb",)
EXCLUDED: tuple[Excluded, ...] = (
    *(Excluded(PG + MARIADB, f"value.payload.{f}", "every event",
               "the connector's clock when it processed the event: two processes never agree")
      for f in ("ts_ms", "ts_us", "ts_ns")),
    *(Excluded(PG + MARIADB, f"value.payload.source.{f}", "snapshot events",
               "when the row was read by the snapshot: each connector reads at its own time", _snapshot)
      for f in ("ts_ms", "ts_us", "ts_ns")),
    *(Excluded(PG, f"value.payload.source.{f}", "snapshot events",
               "each connector's own snapshot transaction and replication slot position", _snapshot)
      for f in ("lsn", "txId")),
    Excluded(PG, "value.payload.source.sequence", "every event",
             "[last commit LSN, LSN]: the first part is where each connector's own slot stream began"),
    *(Excluded(PG, f"value.payload.source.{f}", "non-transactional logical messages",
               "a message outside a transaction has no commit time: each connector stamps its own clock",
               _untransactional_message)
      for f in ("ts_ms", "ts_us", "ts_ns")),
    *(Excluded(MARIADB, f"value.payload.source.{f}", "every event",
               "binlog coordinates: Debezium's MySQL connector cannot read MariaDB GTIDs and reports its own "
               "idea of file/pos/server/thread for MariaDB; lakecdc's values are checked against seed 004 "
               "(test_mariadb.py) instead")
      for f in ("gtid", "file", "pos", "server_id", "thread")),
)


@dataclass(frozen=True)
class WrittenException:
    """A deviation lakecdc keeps on purpose: accepted where `accepts(debezium, lakecdc)` holds for `path`."""

    name: str
    connectors: tuple[str, ...]
    path: str
    reason: str
    accepts: Callable[[Any, Any], bool] = field(compare=False)
    # where the exception applies when not at `path` alone (then `path` describes it): a test on the path
    paths: Callable[[str], bool] | None = field(compare=False, default=None)


def _era_dropped(lakecdc_days: Any) -> int | None:
    """For a BC date as days since the epoch (astronomical year <= 0), the day Debezium gives when it drops
    the era: the same month and day in year 1 - astronomical year (0044-03-15 BC -> 0044-03-15 AD)."""
    if not isinstance(lakecdc_days, int) or isinstance(lakecdc_days, bool) or lakecdc_days >= _DAY_0001_01_01:
        return None
    cycles = -(lakecdc_days - _DAY_0001_01_01) // _DAYS_PER_400_YEARS + 1  # move into AD by whole 400-year cycles
    shifted = _EPOCH + timedelta(days=lakecdc_days + cycles * _DAYS_PER_400_YEARS)
    try:
        return (date(1 - (shifted.year - 400 * cycles), shifted.month, shifted.day) - _EPOCH).days
    except ValueError:  # 29 February of a BC leap year whose AD mirror is not one
        return None


def _float32(x: float) -> float:
    return struct.unpack("<f", struct.pack("<f", x))[0]


def _six_digit_float(debezium: Any, lakecdc: Any) -> bool:
    """Debezium's value is the 4-byte float nearest to lakecdc's rounded to 6 significant digits (and differs)."""
    if not (isinstance(debezium, FloatText) and isinstance(lakecdc, FloatText)):
        return False
    exact, six = _float32(float(lakecdc)), _float32(float(f"{float(lakecdc):.6g}"))
    return exact != six and _float32(float(debezium)) == six


_EPOCH, _DAYS_PER_400_YEARS = date(1970, 1, 1), 146097
_DAY_0001_01_01 = (date(1, 1, 1) - _EPOCH).days
_COLUMN_FIELD = re.compile(r"^value\.payload\.(before|after)\.[^.]+(\[\*\])?$")
_LAKECDC_VERSION = re.compile(r"^lakecdc-\d+\.\d+\.\d+\S*$")
_MESSAGE_ID = re.compile(r"^io\.debezium\.connector\.postgresql\.LogicalDecodingMessageMonitor"
                         r"\$LogicalDecodingMessageId@[0-9a-f]+$")
_MESSAGE_TOPIC = re.compile(r"^\S+\.message$")  # lakecdc's name for it: the message topic, <prefix>.message
EXCEPTIONS: tuple[WrittenException, ...] = (
    WrittenException(
        "logical-message-identity-hash", PG, "value.payload.data_collections[*].data_collection",
        "Debezium counts a transactional logical message in the END event under the Java toString() of an "
        "internal object, which ends in its identity hash code (a different number in every JVM, so not "
        "reproducible, nor is the entry's place in the list, which follows that name's HashMap bucket: "
        "both lists are compared with that entry last); lakecdc counts it under the message topic, "
        "<prefix>.message. Accepted only for that pair",
        lambda d, lc: isinstance(d, str) and isinstance(lc, str) and bool(_MESSAGE_ID.match(d))
        and bool(_MESSAGE_TOPIC.match(lc))),
    WrittenException(
        "postgresql-bc-date-era", PG, "value.payload.{before,after}.<date column>, and its [*] array items",
        "Debezium reads a BC date through JDBC without its era in the snapshot (scalars) and in both phases "
        "(array items): 0044-03-15 BC becomes day -703383 (0044-03-15 AD); its streaming scalars, PostgreSQL "
        "and lakecdc give -735160. Accepted only where Debezium's day is exactly lakecdc's BC day with the era "
        "dropped",
        lambda d, lc: type(d) is int and _era_dropped(lc) == d, paths=lambda p: bool(_COLUMN_FIELD.match(p))),
    WrittenException(
        "source-snapshot-false", PG + MARIADB, "value.payload.source.snapshot",
        "outside a snapshot Debezium leaves source.snapshot null, whose schema default is \"false\"; Kafka "
        "Connect's JsonConverter writes that default by default (replace.null.with.default), so Kafka "
        "consumers read \"false\", as lakecdc writes it. The suite's reference turns that converter option off "
        "(row values must keep their explicit NULLs), which shows the null here",
        lambda d, lc: d is None and lc == "false"),
    WrittenException(
        "lakecdc-source-version", PG + MARIADB, "value.payload.source.version",
        "source.version names the software that wrote the event: lakecdc writes lakecdc-<its version>, not "
        "Debezium's 3.6.3.Final (docs/events.md)",
        lambda d, lc: d == "3.6.3.Final" and isinstance(lc, str) and bool(_LAKECDC_VERSION.match(lc))),
    WrittenException(
        "mariadb-float-snapshot-digits", MARIADB, "value.payload.{before,after}.<FLOAT column>",
        "Debezium's snapshot reads a FLOAT through the text protocol, where the server prints 6 significant "
        "digits: -176229696 (-1.76229696E8) becomes -1.7623E8, another value (its binlog reader keeps the "
        "value). lakecdc's snapshot reads the exact value (issue 17: silver must equal the source). Accepted "
        "only where Debezium's float is lakecdc's rounded to 6 significant digits",
        _six_digit_float, paths=lambda p: bool(_COLUMN_FIELD.match(p))),
    WrittenException(
        "mariadb-connector-name", MARIADB, "value.payload.source.connector",
        "the reference is Debezium's MySQL connector (the wheel has no MariaDB connector); lakecdc's "
        "MariaDB connector names itself as Debezium's MariaDB connector does (seed 004)",
        lambda d, lc: (d, lc) == ("mysql", "mariadb")),
    WrittenException(
        "mariadb-source-schema-name", MARIADB, "value.schema.source.name",
        "same reason: io.debezium.connector.mariadb.Source (seed 004) where the MySQL connector writes "
        "io.debezium.connector.mysql.Source; the fields of the block are compared",
        lambda d, lc: (d, lc) == ("io.debezium.connector.mysql.Source", "io.debezium.connector.mariadb.Source")),
)


# ----------------------------------------------------------------------------------------------- diffing

ABSENT = "<absent>"


@dataclass(frozen=True)
class Difference:
    path: str           # e.g. value.payload.after.c_real, value.schema.after.c_real.type
    debezium: Any
    lakecdc: Any


def _schema_walk(path: str, d: Any, lc: Any) -> Iterator[Difference]:
    """Schemas: struct fields are compared by name (and their order once, as `<path>.fields`)."""
    if isinstance(d, dict) and isinstance(lc, dict) and "fields" in d and "fields" in lc \
            and isinstance(d["fields"], list) and isinstance(lc["fields"], list):
        d_names = [f.get("field") for f in d["fields"]]
        lc_names = [f.get("field") for f in lc["fields"]]
        if d_names != lc_names:
            yield Difference(f"{path}.fields", d_names, lc_names)
        d_by, lc_by = {f.get("field"): f for f in d["fields"]}, {f.get("field"): f for f in lc["fields"]}
        for name in [*d_names, *[n for n in lc_names if n not in d_by]]:
            yield from _schema_walk(_join(path, str(name)), d_by.get(name, ABSENT), lc_by.get(name, ABSENT))
        rest_d = {k: v for k, v in d.items() if k != "fields"}
        rest_lc = {k: v for k, v in lc.items() if k != "fields"}
        yield from _walk(path, rest_d, rest_lc, _schema_walk)
        return
    yield from _walk(path, d, lc, _schema_walk)


def _payload_walk(path: str, d: Any, lc: Any) -> Iterator[Difference]:
    yield from _walk(path, d, lc, _payload_walk)


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _walk(path: str, d: Any, lc: Any, recurse: Callable[[str, Any, Any], Iterator[Difference]]
          ) -> Iterator[Difference]:
    if isinstance(d, dict) and isinstance(lc, dict):
        for name in [*d, *[k for k in lc if k not in d]]:
            if name == "field" and path.startswith(("key.schema", "value.schema")):
                continue  # the field name is the path
            yield from recurse(_join(path, name), d.get(name, ABSENT), lc.get(name, ABSENT))
    elif isinstance(d, list) and isinstance(lc, list):
        if len(d) != len(lc):
            yield Difference(f"{path}.length", len(d), len(lc))
        for a, b in zip(d, lc, strict=False):
            yield from recurse(f"{path}[*]", a, b)
    elif type(d) is not type(lc) or d != lc:
        yield Difference(path, d, lc)


def diff(connector: str, debezium: Event, lakecdc: Event) -> list[Difference]:
    """Every difference between two lined-up events, less the excluded fields and the written exceptions."""
    out: list[Difference] = []
    for part in ("key", "value"):
        d, lc = getattr(debezium, part), getattr(lakecdc, part)
        if part == "value" and connector in PG:
            d, lc = _message_entry_last(d, _MESSAGE_ID), _message_entry_last(lc, _MESSAGE_TOPIC)
        if d is None or lc is None:
            if (d is None) != (lc is None):
                out.append(Difference(part, "null" if d is None else "present", "null" if lc is None else "present"))
            continue
        out += _schema_walk(f"{part}.schema", d.get("schema"), lc.get("schema"))
        out += _payload_walk(f"{part}.payload", d.get("payload"), lc.get("payload"))
    excluded = {x.path for x in EXCLUDED if connector in x.connectors and x.applies(debezium)}
    return [x for x in out if x.path not in excluded and not _excepted(connector, x)]


def _message_entry_last(value: Any, name: re.Pattern[str]) -> Any:
    """An END event's data_collections with the logical-message entry moved to the end (written exception
    logical-message-identity-hash): Debezium orders the list as a java.util.HashMap iterates, so the bucket of
    that entry's name, which ends in a JVM identity hash, places it anywhere; the tables' order is kept."""
    payload = value.get("payload") if isinstance(value, dict) else None
    items = payload.get("data_collections") if isinstance(payload, dict) else None
    if not isinstance(items, list):
        return value
    messages = [i for i in items if isinstance(i, dict) and isinstance(i.get("data_collection"), str)
                and name.match(i["data_collection"])]
    if not messages:
        return value
    ordered = [i for i in items if i not in messages] + messages
    return {**value, "payload": {**payload, "data_collections": ordered}}


def _excepted(connector: str, x: Difference) -> bool:
    return any(connector in e.connectors and (e.path == x.path if e.paths is None else e.paths(x.path))
               and e.accepts(x.debezium, x.lakecdc) for e in EXCEPTIONS)


# ----------------------------------------------------------------------------------------------- alignment

@dataclass
class Comparison:
    """The result of comparing one run: counts, and the differences grouped by event kind and by path (the
    before/after row structs folded into one `row`), each with where it occurred."""

    connector: str
    run: str
    modes: str = ""     # the run's handling modes, for the report
    compared: int = 0
    identical: int = 0
    groups: dict[tuple[str, str], list[tuple[str, Difference]]] = field(default_factory=lambda: defaultdict(list))

    @property
    def differing(self) -> int:
        return self.compared - self.identical

    def add(self, event: Event, differences: list[Difference]) -> None:
        self.compared += 1
        if not differences:
            self.identical += 1
        for x in differences:
            self.note(event.kind, x, f"{_short(event.topic)} {event.phase} {_describe(event)}")

    def note(self, kind: str, x: Difference, where: str) -> None:
        self.groups[(kind, fold(x.path))].append((where, x))

    def report(self, examples: int = 2) -> str:
        """The grouped diff: per (event kind, path), how often, on which tables and phases, and examples."""
        lines = [f"{self.connector} run {self.run} ({self.modes}): {self.compared} events compared, "
                 f"{self.identical} identical, {self.differing} differing, {len(self.groups)} difference groups"]
        for (kind, path), items in sorted(self.groups.items()):
            places = sorted({" ".join(where.split()[:2]) for where, _ in items})
            lines.append(f"  {path} [{kind}] {len(items)}x in {', '.join(places)[:200]}")
            for sample in distinct_samples(items, examples):
                lines.append(f"      {sample}")
        return "\n".join(lines)


def fold(path: str) -> str:
    """value.payload.after.x and value.payload.before.x are one path: value.payload.row.x (same for schemas)."""
    return re.sub(r"^(value\.(?:payload|schema))\.(?:before|after)(?=\.|$)", r"\1.row", path)


def distinct_samples(items: list[tuple[str, Difference]], limit: int) -> list[str]:
    out: list[str] = []
    seen: set[str] = set()
    for where, x in items:
        sample = f"lakecdc {_show(x.lakecdc)} | debezium {_show(x.debezium)}"
        if sample not in seen:
            seen.add(sample)
            out.append(f"{sample}   ({where} {x.path})")
            if len(out) >= limit:
                break
    return out


def _short(topic: str) -> str:
    return topic.split(".", 1)[1] if "." in topic else topic


def _show(value: Any, limit: int = 160) -> str:
    text = value if isinstance(value, str) and value == ABSENT else json.dumps(value, default=str)
    return text if len(text) <= limit else text[:limit] + f"...({len(text)} chars)"


def align(debezium: list[Event], lakecdc: list[Event]
          ) -> tuple[list[tuple[Event, Event]], list[Event], list[Event], list[str]]:
    """Pair events per topic by (kind, op, key, occurrence). Returns pairs, Debezium-only events,
    lakecdc-only events, and the topics whose paired events come in a different order."""
    pairs: list[tuple[Event, Event]] = []
    only_d: list[Event] = []
    only_lc: list[Event] = []
    misordered: list[str] = []
    by_topic: dict[str, tuple[list[Event], list[Event]]] = defaultdict(lambda: ([], []))
    for e in debezium:
        by_topic[e.topic][0].append(e)
    for e in lakecdc:
        by_topic[e.topic][1].append(e)
    for topic, (ds, lcs) in by_topic.items():
        d_keys, lc_keys = _numbered(ds), _numbered(lcs)
        lc_index = {k: i for i, k in enumerate(lc_keys)}
        d_set = set(d_keys)
        order_d = [k for k in d_keys if k in lc_index]
        order_lc = [k for k in lc_keys if k in d_set]
        if order_d != order_lc:
            misordered.append(topic)
        for i, k in enumerate(d_keys):
            if k in lc_index:
                pairs.append((ds[i], lcs[lc_index[k]]))
            else:
                only_d.append(ds[i])
        only_lc += [lcs[i] for i, k in enumerate(lc_keys) if k not in d_set]
    return pairs, only_d, only_lc, misordered


def _numbered(events: list[Event]) -> list[tuple]:
    seen: Counter[tuple] = Counter()
    out = []
    for e in events:
        k = e.match_key()
        seen[k] += 1
        out.append((*k, seen[k]))
    return out


def compare(connector: str, run: str, debezium: list[Record], lakecdc: list[Record],
            refused: str | None = None, modes: dict[str, str] | None = None) -> Comparison:
    """Compare the records of one run; unmatched events and misordered topics count as differences, and so
    does a configuration lakecdc refused (`refused`: its error)."""
    d_events, lc_events = [to_event(r) for r in debezium], [to_event(r) for r in lakecdc]
    result = Comparison(connector, run, ", ".join(f"{k.split('.')[0]} {v}" for k, v in (modes or {}).items()))
    if refused:  # nothing to line up: every Debezium event counts as differing
        result.compared = len(d_events)
        result.note("-", Difference("configuration", "accepted", f"refused: {refused}"), f"run {run}")
        return result
    pairs, only_d, only_lc, misordered = align(d_events, lc_events)
    for d, lc in pairs:
        result.add(d, diff(connector, d, lc))
    for e in only_d:
        result.add(e, [Difference("event.missing", _describe(e), ABSENT)])
    for e in only_lc:
        result.add(e, [Difference("event.extra", ABSENT, _describe(e))])
    for topic in misordered:
        result.note("-", Difference("order", "Debezium's delivery order", "another order"), _short(topic))
    return result


def _describe(e: Event) -> str:
    key = json.dumps((e.key or {}).get("payload"), sort_keys=True)
    return f"{e.kind} op={e.op} key={key[:60]}"



def summarize(comparisons: list[Comparison]) -> str:
    """One connector's differences across its runs: per (event kind, path), the runs it occurs in, how
    often, and one example per distinct value pair (up to three) — the list to route fixes from."""
    merged: dict[tuple[str, str], list[tuple[str, Difference]]] = defaultdict(list)
    runs: dict[tuple[str, str], set[str]] = defaultdict(set)
    for c in comparisons:
        for group, items in c.groups.items():
            merged[group] += items
            runs[group].add(c.run)
    lines = []
    for (kind, path), items in sorted(merged.items()):
        lines.append(f"{path} [{kind}] {len(items)}x, runs {','.join(sorted(runs[(kind, path)]))}")
        lines += [f"    {sample}" for sample in distinct_samples(items, 3)]
    return "\n".join(lines)
