"""Debezium MySQL/MariaDB connector properties, declared (`connectors/properties.py`) and parsed into
`MySqlProperties` before anything connects.

Names and defaults follow Debezium's MySQL connector documentation. Properties that only make sense on Kafka
Connect (schema history topics, converters, ...) are accepted and ignored; Debezium features lakecdc does
not implement are refused rather than silently ignored.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ingest.connectors import common_properties as common
from ingest.connectors.message_keys import MessageKeyColumns
from ingest.connectors.mysql.filters import Filters
from ingest.connectors.mysql.server import tls_context
from ingest.connectors.properties import Field, FieldSet, ignored, unsupported
from ingest.connectors.signal_kafka import KafkaSignalSettings
from ingest.errors import ConfigError
from ingest.events.column_mappers import ColumnMappers

FIELDS = FieldSet(
    common.HOSTNAME,
    common.PORT.but(default=3306),
    common.USER,
    common.PASSWORD,
    Field("database.server.id", "int", minimum=1, maximum=2**32 - 1, required=True,
          hint="a numeric replica id unique among all binlog readers",
          doc="the replica id lakecdc reads the binary log as"),
    common.TOPIC_PREFIX,
    Field("database.include.list", "regex-list", exclusive_with="database.exclude.list",
          doc="the databases to capture (default: all but the system databases)"),
    Field("database.exclude.list", "regex-list", doc="the databases not to capture"),
    common.TABLE_INCLUDE,
    common.TABLE_EXCLUDE,
    common.COLUMN_INCLUDE,
    common.COLUMN_EXCLUDE,
    Field("snapshot.include.collection.list", "regex-list",
          doc="of the captured tables, those whose rows the snapshot reads (default: all)"),
    Field("snapshot.mode", "choice", default="initial",
          allowed=("initial", "initial_only", "no_data", "never", "when_needed", "recovery"),
          value_aliases={"schema_only": "no_data", "schema_only_recovery": "recovery"},
          doc="when the snapshot runs (Snapshot)"),
    Field("snapshot.locking.mode", "choice", default="minimal", allowed=("minimal", "none"),
          doc="the global read lock while the snapshot starts, or none"),
    Field("snapshot.lock.timeout.ms", "int", default=10_000, doc="how long to wait for the lock (ms)"),
    Field("snapshot.chunk.size", "int", default=10_000, minimum=1, doc="lakecdc: rows per primary-key chunk"),
    common.TIME_PRECISION_MODE.but(default="adaptive_time_microseconds"),
    common.DECIMAL_HANDLING_MODE,
    common.BIGINT_UNSIGNED_HANDLING_MODE,
    common.BINARY_HANDLING_MODE,
    Field("include.query", "bool", default=False, doc="the statement of each row event in `source.query`"),
    Field("include.schema.changes", "bool", default=True, doc="schema change events"),
    common.TOMBSTONES_ON_DELETE,
    common.PROVIDE_TRANSACTION_METADATA,
    common.SKIPPED_OPERATIONS,
    Field("inconsistent.schema.handling.mode", "choice", default="fail", allowed=("fail", "warn", "skip", "ignore"),
          doc="a row event of a table whose schema is unknown"),
    Field("database.ssl.mode", "choice", default="preferred",
          allowed=("disabled", "preferred", "required", "verify_ca", "verify_identity"),
          doc="TLS to the server: `disabled` none, `preferred` when the server offers it, `required` always (neither "
              "verifies the server), `verify_ca` its certificate checked against the system's CA certificates, "
              "`verify_identity` its host name too"),
    Field("connect.timeout.ms", "int", default=30_000, minimum=1, doc="login timeout (ms)"),
    Field("database.initial.statements", doc="statements run on every new connection, separated by `;` "
                                             "(`;;` for a literal `;`)"),
    # accepted before without effect: refused until the stream filters transactions by their GTID's source
    unsupported("gtid.source.includes", "gtid.source.excludes"),
    Field("reconnect.backoff.initial.ms", "int", default=500, minimum=1, doc="lakecdc: first reconnect delay (ms)"),
    Field("reconnect.backoff.max.ms", "int", default=30_000, minimum=1, doc="lakecdc: longest reconnect delay (ms)"),
    Field("reconnect.max.attempts", "int", default=10, doc="lakecdc: reconnect attempts before giving up"),
    common.KAFKA_CONNECT_ONLY,
    ignored("database.connectionTimeZone"),   # lakecdc's sessions use UTC
    ignored("source.struct.version", "connect.keep.alive", "use.nongraceful.disconnect", "poll.interval.ms",
            "database.query.timeout.ms", "snapshot.fetch.size", "min.row.count.to.stream.results",
            "snapshot.max.threads", "streaming.delay.ms", "snapshot.delay.ms", "table.ignore.builtin",
            "schema.name.adjustment.mode", "field.name.adjustment.mode", "include.schema.comments",
            "database.server.name", "enable.time.adjuster", "binlog.buffer.size",
            "event.converting.failure.handling.mode", "event.processing.failure.handling.mode",
            "event.deserialization.failure.handling.mode", "skip.messages.without.change",
            "snapshot.tables.order.by.row.count", "guardrail.collections.max", "guardrail.collections.limit.action",
            "driver.*"),
    common.HEARTBEAT_INTERVAL_MS,
    common.HEARTBEAT_TOPIC_PREFIX,
    common.COLUMN_MAPPERS,
    common.MESSAGE_KEY_COLUMNS,
    common.SNAPSHOT_OVERRIDES,
    common.SNAPSHOT_OVERRIDE_STATEMENT,
    common.signal_fields("database.table"),
    Field("read.only", "bool", default=False,
          doc="incremental snapshots without writing to the database (no watermark rows): each chunk is read in a "
              "consistent snapshot whose binlog position (MariaDB's binlog_snapshot_position) is where its rows "
              "are emitted; signals from the file or kafka channel (or a signalling table others write). MariaDB "
              "only"),
    common.DEBEZIUM_UNSUPPORTED,
)


@dataclass(frozen=True)
class MySqlProperties:
    flavor: str                 # mariadb | mysql
    hostname: str
    port: int
    user: str
    password: str = ""
    server_id: int = 0
    topic_prefix: str = ""
    filters: Filters = Filters()
    column_mappers: ColumnMappers = ColumnMappers()
    message_keys: MessageKeyColumns = MessageKeyColumns()
    snapshot_overrides: dict[str, str] = field(default_factory=dict)   # "db.table" -> the snapshot's SELECT
    heartbeat_interval_ms: int = 0
    heartbeat_topic_prefix: str = "__debezium-heartbeat"
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
    backoff_initial_ms: int = 500
    backoff_max_ms: int = 30_000
    reconnect_max_attempts: int = 10
    signal_data_collection: str | None = None
    signal_channels: frozenset[str] = frozenset({"source"})
    signal_kafka: KafkaSignalSettings | None = None   # the kafka channel (signal.kafka.*)
    read_only: bool = False     # incremental snapshots without watermark writes (read.only)
    notification_channels: frozenset[str] = frozenset({"sink", "log"})
    signal_file: str = "file-signals.txt"
    incremental_chunk_size: int = 1024
    notification_topic: str = ""

    def connect_kwargs(self) -> dict[str, Any]:
        """pymysql.connect keyword arguments (the password is never logged)."""
        kwargs: dict[str, Any] = {"host": self.hostname, "port": self.port, "user": self.user,
                                  "password": self.password, "connect_timeout": max(1, self.connect_timeout_ms // 1000),
                                  "charset": "utf8mb4"}
        if self.ssl_mode == "disabled":
            kwargs["ssl_disabled"] = True
        elif self.ssl_mode != "preferred":   # TLS required: the connection fails without it
            kwargs["ssl"] = tls_context(self.ssl_mode)
        return kwargs


def _statements(text: str | None) -> tuple[str, ...]:
    """database.initial.statements: `;` separates statements, `;;` is a literal `;`."""
    return tuple(s.strip().replace("\0", ";") for s in (text or "").replace(";;", "\0").split(";") if s.strip())


def _read_only(flavor: str, read_only: bool) -> bool:
    if read_only and flavor != "mariadb":
        raise ConfigError("read.only=true needs MariaDB (its binlog_snapshot_position ties a chunk to a binlog "
                          "position); for MySQL it is not built: use signal.data.collection (watermark rows)")
    return read_only


def parse_properties(flavor: str, props: dict[str, Any]) -> MySqlProperties:
    """Validate Debezium properties into a MySqlProperties; raise one ConfigError naming every problem."""
    if flavor not in ("mariadb", "mysql"):
        raise ConfigError(f"connector: {flavor!r} is not handled by the mysql connector (mariadb or mysql)")
    p = FIELDS.parse(props, flavor)
    return MySqlProperties(
        flavor=flavor,
        hostname=p["database.hostname"],
        port=p["database.port"],
        user=p["database.user"],
        password=p["database.password"],
        server_id=p["database.server.id"],
        topic_prefix=p["topic.prefix"],
        filters=Filters(
            database_include=p["database.include.list"],
            database_exclude=p["database.exclude.list"],
            table_include=p["table.include.list"],
            table_exclude=p["table.exclude.list"],
            column_include=p["column.include.list"],
            column_exclude=p["column.exclude.list"],
            snapshot_include=p["snapshot.include.collection.list"],
        ),
        column_mappers=common.column_mappers(p),
        message_keys=MessageKeyColumns.parse(p["message.key.columns"]),
        snapshot_overrides=common.snapshot_overrides(p),
        heartbeat_interval_ms=p["heartbeat.interval.ms"],
        heartbeat_topic_prefix=p["topic.heartbeat.prefix"],
        snapshot_mode=p["snapshot.mode"],
        locking_mode=p["snapshot.locking.mode"],
        lock_timeout_ms=p["snapshot.lock.timeout.ms"],
        chunk_size=p["snapshot.chunk.size"],
        time_precision_mode=p["time.precision.mode"],
        decimal_mode=p["decimal.handling.mode"],
        bigint_unsigned_mode=p["bigint.unsigned.handling.mode"],
        binary_mode=p["binary.handling.mode"],
        include_query=p["include.query"],
        include_schema_changes=p["include.schema.changes"],
        tombstones_on_delete=p["tombstones.on.delete"],
        provide_transaction_metadata=p["provide.transaction.metadata"],
        skipped_operations=p["skipped.operations"],
        inconsistent_schema_mode=p["inconsistent.schema.handling.mode"],
        ssl_mode=p["database.ssl.mode"],
        connect_timeout_ms=p["connect.timeout.ms"],
        initial_statements=_statements(p["database.initial.statements"]),
        backoff_initial_ms=p["reconnect.backoff.initial.ms"],
        backoff_max_ms=p["reconnect.backoff.max.ms"],
        reconnect_max_attempts=p["reconnect.max.attempts"],
        signal_data_collection=p["signal.data.collection"],
        signal_channels=frozenset(p["signal.enabled.channels"]),
        signal_kafka=common.signal_kafka(p),
        read_only=_read_only(flavor, p["read.only"]),
        notification_channels=frozenset(p["notification.enabled.channels"]),
        signal_file=p["signal.file"],
        incremental_chunk_size=p["incremental.snapshot.chunk.size"],
        notification_topic=p["notification.sink.topic.name"] or f"__debezium-notification.{p['topic.prefix']}",
    )
