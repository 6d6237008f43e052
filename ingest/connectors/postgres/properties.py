"""Debezium PostgreSQL connector properties: parsed and validated before anything connects.

Current Debezium names are used; the older names of the 1.x guide (database.server.name, *.whitelist,
*.blacklist, toasted.value.placeholder) are accepted as aliases. Anything else is a ConfigError.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ingest.connectors.property_names import check_property_names
from ingest.errors import ConfigError

SNAPSHOT_MODES = ("initial", "always", "initial_only", "no_data", "when_needed")
# Older names that mean the same thing as a current one.
SNAPSHOT_MODE_ALIASES = {"never": "no_data", "schema_only": "no_data"}
TIME_PRECISION_MODES = ("adaptive", "adaptive_time_microseconds", "connect")
DECIMAL_MODES = ("precise", "double", "string")
HSTORE_MODES = ("json", "map")
INTERVAL_MODES = ("numeric", "string")
BINARY_MODES = ("bytes", "base64", "base64-url-safe", "hex")  # also declared by mysql/config.py
AUTOCREATE_MODES = ("all_tables", "filtered", "disabled")
SSL_MODES = ("disable", "allow", "prefer", "require", "verify-ca", "verify-full")
SKIPPABLE_OPS = ("c", "u", "d", "t")

ALIASES = {
    "database.server.name": "topic.prefix",
    "schema.whitelist": "schema.include.list",
    "schema.blacklist": "schema.exclude.list",
    "table.whitelist": "table.include.list",
    "table.blacklist": "table.exclude.list",
    "column.whitelist": "column.include.list",
    "column.blacklist": "column.exclude.list",
    "toasted.value.placeholder": "unavailable.value.placeholder",
}

# name -> default (None: no default). Every accepted property is listed here.
DEFAULTS: dict[str, Any] = {
    "database.hostname": None,
    "database.port": 5432,
    "database.user": None,
    "database.password": "",
    "database.dbname": None,
    "database.sslmode": "prefer",
    "topic.prefix": None,
    "plugin.name": "pgoutput",
    "slot.name": "debezium",
    "slot.drop.on.stop": False,
    "slot.max.retries": 6,
    "slot.retry.delay.ms": 10_000,
    "publication.name": "dbz_publication",
    "publication.autocreate.mode": "all_tables",
    "snapshot.mode": "initial",
    "snapshot.fetch.size": 10_240,
    "schema.include.list": None,
    "schema.exclude.list": None,
    "table.include.list": None,
    "table.exclude.list": None,
    "column.include.list": None,
    "column.exclude.list": None,
    "time.precision.mode": "adaptive",
    "decimal.handling.mode": "precise",
    "hstore.handling.mode": "json",
    "interval.handling.mode": "numeric",
    "binary.handling.mode": "bytes",
    "money.fraction.digits": 2,
    "tombstones.on.delete": True,
    "provide.transaction.metadata": False,
    "skipped.operations": "t",
    "unavailable.value.placeholder": "__debezium_unavailable_value",
    "include.unknown.datatypes": False,
    "heartbeat.interval.ms": 0,
    "heartbeat.action.query": None,
    "poll.interval.ms": 500,
    "status.update.interval.ms": 10_000,
}

_SLOT_NAME = re.compile(r"^[a-z0-9_]{1,63}$")
_TOPIC_PREFIX = re.compile(r"^[A-Za-z0-9._-]+$")


def _as_bool(name: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "1", "yes", "on"):
        return True
    if text in ("false", "0", "no", "off"):
        return False
    raise ConfigError(f"{name}: expected true or false, got {value!r}")


def _as_int(name: str, value: Any, minimum: int = 0) -> int:
    try:
        number = int(str(value).strip())
    except ValueError:
        raise ConfigError(f"{name}: expected an integer, got {value!r}") from None
    if number < minimum:
        raise ConfigError(f"{name}: must be at least {minimum}, got {number}")
    return number


def _as_choice(name: str, value: Any, choices: tuple[str, ...]) -> str:
    text = str(value).strip().lower()
    if text not in choices:
        raise ConfigError(f"{name}: {value!r} is not one of {', '.join(choices)}")
    return text


def _as_patterns(name: str, value: Any) -> tuple[re.Pattern[str], ...] | None:
    """Debezium lists: comma-separated regular expressions, each matched against the whole name."""
    if value is None or str(value).strip() == "":
        return None
    items = value if isinstance(value, list) else str(value).split(",")
    patterns = []
    for item in items:
        text = str(item).strip()
        if not text:
            continue
        try:
            patterns.append(re.compile(text, re.IGNORECASE))
        except re.error as exc:
            raise ConfigError(f"{name}: {text!r} is not a valid regular expression ({exc})") from None
    return tuple(patterns)


def _matches(patterns: tuple[re.Pattern[str], ...], name: str) -> bool:
    return any(p.fullmatch(name) for p in patterns)


@dataclass(frozen=True)
class PostgresProperties:
    hostname: str
    port: int
    user: str
    password: str = field(repr=False)
    dbname: str
    sslmode: str
    topic_prefix: str
    slot_name: str
    slot_drop_on_stop: bool
    slot_max_retries: int
    slot_retry_delay_ms: int
    publication_name: str
    publication_autocreate_mode: str
    snapshot_mode: str
    snapshot_fetch_size: int
    schema_include: tuple[re.Pattern[str], ...] | None
    schema_exclude: tuple[re.Pattern[str], ...] | None
    table_include: tuple[re.Pattern[str], ...] | None
    table_exclude: tuple[re.Pattern[str], ...] | None
    column_include: tuple[re.Pattern[str], ...] | None
    column_exclude: tuple[re.Pattern[str], ...] | None
    time_precision_mode: str
    decimal_handling_mode: str
    hstore_handling_mode: str
    interval_handling_mode: str
    binary_handling_mode: str
    money_fraction_digits: int
    tombstones_on_delete: bool
    provide_transaction_metadata: bool
    skipped_operations: frozenset[str]
    unavailable_value_placeholder: str
    include_unknown_datatypes: bool
    heartbeat_interval_ms: int
    heartbeat_action_query: str | None
    poll_interval_ms: int
    status_update_interval_ms: int

    # --- filters (Debezium: regexes over schema, schema.table, schema.table.column) ---
    def captures_table(self, schema: str, table: str) -> bool:
        if self.schema_include is not None and not _matches(self.schema_include, schema):
            return False
        if self.schema_exclude is not None and _matches(self.schema_exclude, schema):
            return False
        full = f"{schema}.{table}"
        if self.table_include is not None:
            return _matches(self.table_include, full)
        if self.table_exclude is not None:
            return not _matches(self.table_exclude, full)
        return True

    def captures_column(self, schema: str, table: str, column: str) -> bool:
        full = f"{schema}.{table}.{column}"
        if self.column_include is not None:
            return _matches(self.column_include, full)
        if self.column_exclude is not None:
            return not _matches(self.column_exclude, full)
        return True

    def dsn_params(self) -> dict[str, Any]:
        """psycopg2.connect keyword arguments. The session settings make the text output of every type
        (which is what pgoutput sends) deterministic: ISO dates, UTC, postgres interval style."""
        return {
            "host": self.hostname, "port": self.port, "user": self.user, "password": self.password,
            "dbname": self.dbname, "sslmode": self.sslmode, "application_name": f"lakecdc_{self.slot_name}",
            "connect_timeout": 10,
            "options": "-c DateStyle=ISO -c TimeZone=UTC -c IntervalStyle=postgres -c extra_float_digits=3"
                       " -c bytea_output=hex",
        }


def parse_properties(raw: dict[str, Any]) -> PostgresProperties:
    """Validate Debezium properties; raise ConfigError naming the first problem."""
    props: dict[str, Any] = {}
    for key, value in raw.items():
        name = ALIASES.get(key, key)
        if name in props:
            raise ConfigError(f"postgresql: {key!r} and its other name both given; keep {name!r}")
        props[name] = value
    check_property_names("postgresql", {**DEFAULTS, **props}, set(DEFAULTS) | set(ALIASES),
                         ("database.hostname", "database.user", "database.dbname", "topic.prefix"))
    for pair in (("schema.include.list", "schema.exclude.list"), ("table.include.list", "table.exclude.list"),
                 ("column.include.list", "column.exclude.list")):
        if props.get(pair[0]) not in (None, "") and props.get(pair[1]) not in (None, ""):
            raise ConfigError(f"postgresql: {pair[0]} and {pair[1]} cannot be used together")
    merged = {**DEFAULTS, **props}
    if str(merged["plugin.name"]).strip() != "pgoutput":
        raise ConfigError(f"plugin.name: only pgoutput is supported, got {merged['plugin.name']!r}")
    slot = str(merged["slot.name"])
    if not _SLOT_NAME.match(slot):
        raise ConfigError(f"slot.name: {slot!r} must be 1-63 lower-case letters, digits or underscores")
    prefix = str(merged["topic.prefix"])
    if not _TOPIC_PREFIX.match(prefix):
        raise ConfigError(f"topic.prefix: {prefix!r} may hold only letters, digits, '.', '_' and '-'")
    mode = str(merged["snapshot.mode"]).strip().lower()
    mode = SNAPSHOT_MODE_ALIASES.get(mode, mode)
    skipped_raw = str(merged["skipped.operations"] or "").strip().lower()
    skipped: set[str] = set()
    if skipped_raw not in ("", "none"):
        for op in skipped_raw.split(","):
            op = op.strip()
            if op not in SKIPPABLE_OPS:
                raise ConfigError(f"skipped.operations: {op!r} is not one of c, u, d, t, none")
            skipped.add(op)
    return PostgresProperties(
        hostname=str(merged["database.hostname"]),
        port=_as_int("database.port", merged["database.port"], 1),
        user=str(merged["database.user"]),
        password=str(merged["database.password"] or ""),
        dbname=str(merged["database.dbname"]),
        sslmode=_as_choice("database.sslmode", merged["database.sslmode"], SSL_MODES),
        topic_prefix=prefix,
        slot_name=slot,
        slot_drop_on_stop=_as_bool("slot.drop.on.stop", merged["slot.drop.on.stop"]),
        slot_max_retries=_as_int("slot.max.retries", merged["slot.max.retries"]),
        slot_retry_delay_ms=_as_int("slot.retry.delay.ms", merged["slot.retry.delay.ms"]),
        publication_name=str(merged["publication.name"]),
        publication_autocreate_mode=_as_choice("publication.autocreate.mode", merged["publication.autocreate.mode"],
                                               AUTOCREATE_MODES),
        snapshot_mode=_as_choice("snapshot.mode", mode, SNAPSHOT_MODES),
        snapshot_fetch_size=_as_int("snapshot.fetch.size", merged["snapshot.fetch.size"], 1),
        schema_include=_as_patterns("schema.include.list", merged["schema.include.list"]),
        schema_exclude=_as_patterns("schema.exclude.list", merged["schema.exclude.list"]),
        table_include=_as_patterns("table.include.list", merged["table.include.list"]),
        table_exclude=_as_patterns("table.exclude.list", merged["table.exclude.list"]),
        column_include=_as_patterns("column.include.list", merged["column.include.list"]),
        column_exclude=_as_patterns("column.exclude.list", merged["column.exclude.list"]),
        time_precision_mode=_as_choice("time.precision.mode", merged["time.precision.mode"], TIME_PRECISION_MODES),
        decimal_handling_mode=_as_choice("decimal.handling.mode", merged["decimal.handling.mode"], DECIMAL_MODES),
        hstore_handling_mode=_as_choice("hstore.handling.mode", merged["hstore.handling.mode"], HSTORE_MODES),
        interval_handling_mode=_as_choice("interval.handling.mode", merged["interval.handling.mode"],
                                          INTERVAL_MODES),
        binary_handling_mode=_as_choice("binary.handling.mode", merged["binary.handling.mode"], BINARY_MODES),
        money_fraction_digits=_as_int("money.fraction.digits", merged["money.fraction.digits"]),
        tombstones_on_delete=_as_bool("tombstones.on.delete", merged["tombstones.on.delete"]),
        provide_transaction_metadata=_as_bool("provide.transaction.metadata",
                                              merged["provide.transaction.metadata"]),
        skipped_operations=frozenset(skipped),
        unavailable_value_placeholder=str(merged["unavailable.value.placeholder"]),
        include_unknown_datatypes=_as_bool("include.unknown.datatypes", merged["include.unknown.datatypes"]),
        heartbeat_interval_ms=_as_int("heartbeat.interval.ms", merged["heartbeat.interval.ms"]),
        heartbeat_action_query=(str(merged["heartbeat.action.query"]) if merged["heartbeat.action.query"]
                                else None),
        poll_interval_ms=_as_int("poll.interval.ms", merged["poll.interval.ms"], 1),
        status_update_interval_ms=_as_int("status.update.interval.ms", merged["status.update.interval.ms"], 1),
    )
