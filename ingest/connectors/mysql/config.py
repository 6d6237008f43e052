"""Debezium MySQL/MariaDB connector properties: parsed and validated before anything connects.

Property names and defaults follow Debezium (seed 004 section 7, seed 003 section 1.8). Unknown names and
invalid values raise ConfigError with one line naming the property. Debezium properties that only make
sense on Kafka Connect (schema history topics, converters, ...) are accepted and ignored; Debezium features
lakecdc does not implement are rejected rather than silently ignored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ingest.connectors.mysql.filters import Filters
from ingest.connectors.property_names import check_property_names
from ingest.errors import ConfigError

SNAPSHOT_MODES = ("initial", "initial_only", "no_data", "never", "when_needed", "recovery")
SNAPSHOT_MODE_ALIASES = {"schema_only": "no_data", "schema_only_recovery": "recovery"}
LOCKING_MODES = ("minimal", "none")
TIME_PRECISION_MODES = ("adaptive_time_microseconds", "adaptive", "connect")
DECIMAL_MODES = ("precise", "double", "string")
BIGINT_UNSIGNED_MODES = ("long", "precise")
BINARY_MODES = ("bytes", "base64", "base64-url-safe", "hex")
SSL_MODES = ("disabled", "preferred", "required", "verify_ca", "verify_identity")
HANDLING_MODES = ("fail", "warn", "skip", "ignore")

# Accepted and ignored: meaningful only inside Kafka Connect, or informational.
_IGNORED = {
    "name", "connector.class", "tasks.max", "topic.cache.size", "source.struct.version", "connect.keep.alive",
    "use.nongraceful.disconnect", "max.queue.size", "max.queue.size.in.bytes", "max.batch.size", "poll.interval.ms",
    "custom.metric.tags", "notification.enabled.channels", "database.query.timeout.ms", "snapshot.fetch.size",
    "min.row.count.to.stream.results", "snapshot.max.threads", "streaming.delay.ms", "snapshot.delay.ms",
    "errors.max.retries", "table.ignore.builtin", "schema.name.adjustment.mode", "field.name.adjustment.mode",
    "include.schema.comments", "key.converter", "value.converter", "key.converter.schemas.enable",
    "value.converter.schemas.enable", "database.server.name", "enable.time.adjuster", "binlog.buffer.size",
    "event.converting.failure.handling.mode", "event.processing.failure.handling.mode",
    "event.deserialization.failure.handling.mode", "skip.messages.without.change", "topic.delimiter",
    "topic.naming.strategy", "topic.transaction", "topic.heartbeat.prefix", "heartbeat.interval.ms",
    "snapshot.tables.order.by.row.count", "guardrail.collections.max", "guardrail.collections.limit.action",
}
_IGNORED_PREFIXES = ("schema.history.internal.", "database.history.", "driver.", "signal.consumer.")

_KNOWN = {
    "database.hostname", "database.port", "database.user", "database.password", "database.server.id",
    "topic.prefix", "database.include.list", "database.exclude.list", "table.include.list", "table.exclude.list",
    "column.include.list", "column.exclude.list", "snapshot.mode", "snapshot.locking.mode",
    "snapshot.include.collection.list", "snapshot.lock.timeout.ms", "snapshot.chunk.size",
    "time.precision.mode", "decimal.handling.mode", "bigint.unsigned.handling.mode", "binary.handling.mode",
    "include.query", "include.schema.changes", "tombstones.on.delete", "provide.transaction.metadata",
    "skipped.operations", "inconsistent.schema.handling.mode", "database.ssl.mode", "connect.timeout.ms",
    "database.connectionTimeZone", "database.initial.statements", "gtid.source.includes", "gtid.source.excludes",
    "reconnect.backoff.initial.ms", "reconnect.backoff.max.ms", "reconnect.max.attempts",
} | _IGNORED

_REQUIRED = {"database.hostname": "", "database.user": "", "topic.prefix": "",
             "database.server.id": "a numeric replica id unique among all binlog readers"}

# Debezium features that change what is captured; refusing them beats silently doing something else.
_UNSUPPORTED_PREFIXES = ("column.mask.", "column.truncate.", "snapshot.select.statement.overrides",
                         "message.key.columns", "converters", "signal.", "incremental.snapshot.", "read.only",
                         "column.propagate.source.type", "snapshot.mode.custom", "snapshot.mode.configuration")

_TOPIC_PREFIX = re.compile(r"^[A-Za-z0-9._-]+$")


@dataclass(frozen=True)
class MySqlConfig:
    flavor: str                 # mariadb | mysql
    hostname: str
    port: int
    user: str
    password: str = ""
    server_id: int = 0
    topic_prefix: str = ""
    filters: Filters = Filters()
    snapshot_mode: str = "initial"
    locking_mode: str = "minimal"
    lock_timeout_ms: int = 10_000
    chunk_size: int = 10_000
    time_precision_mode: str = "adaptive_time_microseconds"
    decimal_mode: str = "precise"
    bigint_unsigned_mode: str = "long"
    binary_mode: str = "bytes"
    include_query: bool = False
    include_schema_changes: bool = True
    tombstones_on_delete: bool = True
    provide_transaction_metadata: bool = False
    skipped_operations: frozenset[str] = frozenset({"t"})
    inconsistent_schema_mode: str = "fail"
    ssl_mode: str = "preferred"
    connect_timeout_ms: int = 30_000
    initial_statements: tuple[str, ...] = ()
    gtid_includes: tuple[str, ...] = ()
    gtid_excludes: tuple[str, ...] = ()
    backoff_initial_ms: int = 500
    backoff_max_ms: int = 30_000
    reconnect_max_attempts: int = 10

    def connect_kwargs(self) -> dict[str, Any]:
        """pymysql.connect keyword arguments (the password is never logged)."""
        kwargs: dict[str, Any] = {"host": self.hostname, "port": self.port, "user": self.user,
                                  "password": self.password, "connect_timeout": max(1, self.connect_timeout_ms // 1000),
                                  "charset": "utf8mb4"}
        if self.ssl_mode in ("required", "verify_ca", "verify_identity"):
            kwargs["ssl"] = {"check_hostname": self.ssl_mode == "verify_identity"}
            kwargs["ssl_verify_cert"] = self.ssl_mode != "required"
        return kwargs


def _str(props: dict[str, Any], key: str, default: str | None = None) -> str | None:
    value = props.get(key, default)
    return None if value is None else str(value).strip()


def _choice(props: dict[str, Any], key: str, allowed: tuple[str, ...], default: str,
            aliases: dict[str, str] | None = None) -> str:
    value = (_str(props, key, default) or default).lower()
    value = (aliases or {}).get(value, value)
    if value not in allowed:
        raise ConfigError(f"{key}: invalid value {props.get(key)!r} (choose one of {', '.join(allowed)})")
    return value


def _int(props: dict[str, Any], key: str, default: int, minimum: int = 0) -> int:
    raw = props.get(key, default)
    try:
        value = int(str(raw).strip())
    except ValueError:
        raise ConfigError(f"{key}: not an integer: {raw!r}") from None
    if value < minimum:
        raise ConfigError(f"{key}: must be at least {minimum}, got {value}")
    return value


def _bool(props: dict[str, Any], key: str, default: bool) -> bool:
    raw = props.get(key, default)
    if isinstance(raw, bool):
        return raw
    text = str(raw).strip().lower()
    if text in ("true", "1", "yes", "on"):
        return True
    if text in ("false", "0", "no", "off"):
        return False
    raise ConfigError(f"{key}: not a boolean: {raw!r} (use true or false)")


def _list(props: dict[str, Any], key: str) -> tuple[str, ...]:
    raw = props.get(key)
    if raw is None or raw == "":
        return ()
    items = raw if isinstance(raw, list) else str(raw).split(",")
    return tuple(str(item).strip() for item in items if str(item).strip())


def _exclusive(props: dict[str, Any], include: str, exclude: str) -> None:
    if props.get(include) not in (None, "") and props.get(exclude) not in (None, ""):
        raise ConfigError(f"{include} and {exclude} cannot both be set")


def parse_config(flavor: str, props: dict[str, Any]) -> MySqlConfig:
    """Validate Debezium properties into a MySqlConfig; raises ConfigError on the first problem."""
    if flavor not in ("mariadb", "mysql"):
        raise ConfigError(f"connector: {flavor!r} is not handled by the mysql connector (mariadb or mysql)")
    check_property_names(flavor, props, _KNOWN, _REQUIRED, ignored_prefixes=_IGNORED_PREFIXES,
                         unsupported_prefixes=_UNSUPPORTED_PREFIXES)
    prefix = _str(props, "topic.prefix") or ""
    if not _TOPIC_PREFIX.match(prefix):
        raise ConfigError(f"topic.prefix: {prefix!r} may contain only letters, digits, '-', '.' and '_'")
    server_id = _int(props, "database.server.id", 0, minimum=1)
    if server_id >= 2**32:
        raise ConfigError("database.server.id: must be below 4294967296")
    _exclusive(props, "database.include.list", "database.exclude.list")
    _exclusive(props, "table.include.list", "table.exclude.list")
    _exclusive(props, "column.include.list", "column.exclude.list")
    _exclusive(props, "gtid.source.includes", "gtid.source.excludes")
    filters = Filters.build(
        database_include=_list(props, "database.include.list"),
        database_exclude=_list(props, "database.exclude.list"),
        table_include=_list(props, "table.include.list"),
        table_exclude=_list(props, "table.exclude.list"),
        column_include=_list(props, "column.include.list"),
        column_exclude=_list(props, "column.exclude.list"),
        snapshot_include=_list(props, "snapshot.include.collection.list"),
    )
    skipped_raw = _list(props, "skipped.operations") if "skipped.operations" in props else ("t",)
    skipped = frozenset() if skipped_raw in ((), ("none",)) else frozenset(s.lower() for s in skipped_raw)
    if not skipped <= {"c", "u", "d", "t"}:
        raise ConfigError(f"skipped.operations: {props.get('skipped.operations')!r} (use c, u, d, t or none)")
    statements = tuple(s.strip().replace("\0", ";") for s in
                       str(props.get("database.initial.statements") or "").replace(";;", "\0").split(";") if s.strip())
    return MySqlConfig(
        flavor=flavor,
        hostname=_str(props, "database.hostname") or "",
        port=_int(props, "database.port", 3306, minimum=1),
        user=_str(props, "database.user") or "",
        password="" if props.get("database.password") is None else str(props["database.password"]),
        server_id=server_id,
        topic_prefix=prefix,
        filters=filters,
        snapshot_mode=_choice(props, "snapshot.mode", SNAPSHOT_MODES, "initial", SNAPSHOT_MODE_ALIASES),
        locking_mode=_choice(props, "snapshot.locking.mode", LOCKING_MODES, "minimal"),
        lock_timeout_ms=_int(props, "snapshot.lock.timeout.ms", 10_000),
        chunk_size=_int(props, "snapshot.chunk.size", 10_000, minimum=1),
        time_precision_mode=_choice(props, "time.precision.mode", TIME_PRECISION_MODES, "adaptive_time_microseconds"),
        decimal_mode=_choice(props, "decimal.handling.mode", DECIMAL_MODES, "precise"),
        bigint_unsigned_mode=_choice(props, "bigint.unsigned.handling.mode", BIGINT_UNSIGNED_MODES, "long"),
        binary_mode=_choice(props, "binary.handling.mode", BINARY_MODES, "bytes"),
        include_query=_bool(props, "include.query", False),
        include_schema_changes=_bool(props, "include.schema.changes", True),
        tombstones_on_delete=_bool(props, "tombstones.on.delete", True),
        provide_transaction_metadata=_bool(props, "provide.transaction.metadata", False),
        skipped_operations=skipped,
        inconsistent_schema_mode=_choice(props, "inconsistent.schema.handling.mode", HANDLING_MODES, "fail"),
        ssl_mode=_choice(props, "database.ssl.mode", SSL_MODES, "preferred"),
        connect_timeout_ms=_int(props, "connect.timeout.ms", 30_000, minimum=1),
        initial_statements=statements,
        gtid_includes=_list(props, "gtid.source.includes"),
        gtid_excludes=_list(props, "gtid.source.excludes"),
        backoff_initial_ms=_int(props, "reconnect.backoff.initial.ms", 500, minimum=1),
        backoff_max_ms=_int(props, "reconnect.backoff.max.ms", 30_000, minimum=1),
        reconnect_max_attempts=_int(props, "reconnect.max.attempts", 10),
    )
