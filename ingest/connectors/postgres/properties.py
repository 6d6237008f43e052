"""Debezium PostgreSQL connector properties, declared (`connectors/properties.py`) and parsed into
`PostgresProperties` before anything connects.

Current Debezium names are used; the older names of the 1.x guide (database.server.name, *.whitelist,
*.blacklist, toasted.value.placeholder) are accepted as aliases. Anything else is a ConfigError.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ingest.connectors import common_properties as common
from ingest.connectors.message_keys import MessageKeyColumns
from ingest.connectors.properties import Field, FieldSet
from ingest.connectors.signal_kafka import KafkaSignalSettings
from ingest.events.column_mappers import ColumnMappers

FIELDS = FieldSet(
    common.HOSTNAME,
    common.PORT.but(default=5432),
    common.USER,
    common.PASSWORD,
    Field("database.dbname", required=True, doc="the database to capture"),
    Field("database.sslmode", "choice", default="prefer",
          allowed=("disable", "allow", "prefer", "require", "verify-ca", "verify-full"),
          doc="libpq's sslmode"),
    common.TOPIC_PREFIX.but(aliases=("database.server.name",)),
    Field("plugin.name", "choice", default="pgoutput", allowed=("pgoutput",),
          doc="the logical decoding plugin (lakecdc decodes pgoutput only)"),
    Field("slot.name", default="debezium", pattern=r"[a-z0-9_]{1,63}",
          pattern_meaning="a valid slot name (1-63 lower-case letters, digits or underscores)",
          doc="the replication slot"),
    Field("slot.drop.on.stop", "bool", default=False,
          doc="drop the slot in `close()` (tests only: WAL is released, resume may become impossible)"),
    Field("slot.max.retries", "int", default=6, doc="reconnect attempts"),
    Field("slot.retry.delay.ms", "int", default=10_000, doc="base delay between reconnect attempts (doubles up "
                                                            "to 16x)"),
    Field("publication.name", default="dbz_publication", doc="the publication"),
    Field("publication.autocreate.mode", "choice", default="all_tables",
          allowed=("all_tables", "filtered", "disabled"),
          doc="a missing publication is created FOR ALL TABLES (`all_tables`) or FOR TABLE the captured tables "
              "(`filtered`, then `ALTER PUBLICATION ... SET TABLE` on every start); `disabled`: it must exist"),
    Field("snapshot.mode", "choice", default="initial",
          allowed=("initial", "always", "initial_only", "no_data", "when_needed"),
          value_aliases={"never": "no_data", "schema_only": "no_data"}, doc="when the snapshot runs (Snapshot)"),
    Field("snapshot.fetch.size", "int", default=10_240, minimum=1, doc="rows per primary-key chunk"),
    Field("schema.include.list", "regex-list", exclusive_with="schema.exclude.list", aliases=("schema.whitelist",),
          doc="the schemas to capture (default: all)"),
    Field("schema.exclude.list", "regex-list", aliases=("schema.blacklist",), doc="the schemas not to capture"),
    common.TABLE_INCLUDE.but(aliases=("table.whitelist",)),
    common.TABLE_EXCLUDE.but(aliases=("table.blacklist",)),
    common.COLUMN_INCLUDE.but(aliases=("column.whitelist",),
                              doc=common.COLUMN_INCLUDE.doc + "; key columns stay in the key when excluded"),
    common.COLUMN_EXCLUDE.but(aliases=("column.blacklist",)),
    common.TIME_PRECISION_MODE.but(default="adaptive"),
    common.DECIMAL_HANDLING_MODE.but(doc=common.DECIMAL_HANDLING_MODE.doc + " (also `money`)"),
    Field("hstore.handling.mode", "choice", default="json", allowed=("json", "map"),
          doc="hstore as a JSON string or a map (current Debezium default is `json`; the 1.0 guide said `map`)"),
    Field("interval.handling.mode", "choice", default="numeric", allowed=("numeric", "string"),
          doc="interval columns as MicroDuration (`numeric`) or an ISO-8601 Interval string (`string`)"),
    common.BINARY_HANDLING_MODE.but(doc="how bytea columns and logical message content are encoded"),
    Field("money.fraction.digits", "int", default=2, doc="scale of `money` in precise mode"),
    common.TOMBSTONES_ON_DELETE,
    common.PROVIDE_TRANSACTION_METADATA.but(doc="BEGIN/END events and the envelope's `transaction` block"),
    common.SKIPPED_OPERATIONS,
    Field("unavailable.value.placeholder", default="__debezium_unavailable_value",
          aliases=("toasted.value.placeholder",),
          doc="the value of an unchanged TOASTed column; a `hex:` prefix gives bytes for binary columns"),
    Field("include.unknown.datatypes", "bool", default=False,
          doc="unknown types as bytes of their text form; otherwise the column is omitted (warning)"),
    common.HEARTBEAT_INTERVAL_MS,
    common.HEARTBEAT_TOPIC_PREFIX,
    Field("heartbeat.action.query", doc="a statement run on the captured database with each heartbeat"),
    common.POLL_INTERVAL_MS.but(doc="how long the stream must be silent before a batch is closed as caught up "
                                    "(ms)"),
    Field("status.update.interval.ms", "int", default=10_000, minimum=1,
          doc="standby status interval of the replication connection (ms)"),
    common.KAFKA_CONNECT_ONLY,
    common.COLUMN_MAPPERS,
    common.MESSAGE_KEY_COLUMNS,
    common.SNAPSHOT_OVERRIDES,
    common.SNAPSHOT_OVERRIDE_STATEMENT,
    common.signal_fields("schema.table"),
    common.DEBEZIUM_UNSUPPORTED,
)


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
    column_mappers: ColumnMappers
    message_keys: MessageKeyColumns
    snapshot_overrides: dict[str, str]   # "schema.table" -> the snapshot's SELECT
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
    heartbeat_topic_prefix: str
    heartbeat_action_query: str | None
    poll_interval_ms: int
    status_update_interval_ms: int
    signal_data_collection: str | None = None
    signal_channels: frozenset[str] = frozenset({"source"})
    signal_kafka: KafkaSignalSettings | None = None   # the kafka channel (signal.kafka.*)
    notification_channels: frozenset[str] = frozenset({"sink", "log"})
    signal_file: str = "file-signals.txt"
    incremental_chunk_size: int = 1024
    notification_topic: str | None = None

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
    """Validate Debezium properties; raise one ConfigError naming every problem."""
    p = FIELDS.parse(raw, "postgresql")
    return PostgresProperties(
        hostname=p["database.hostname"],
        port=p["database.port"],
        user=p["database.user"],
        password=p["database.password"],
        dbname=p["database.dbname"],
        sslmode=p["database.sslmode"],
        topic_prefix=p["topic.prefix"],
        slot_name=p["slot.name"],
        slot_drop_on_stop=p["slot.drop.on.stop"],
        slot_max_retries=p["slot.max.retries"],
        slot_retry_delay_ms=p["slot.retry.delay.ms"],
        publication_name=p["publication.name"],
        publication_autocreate_mode=p["publication.autocreate.mode"],
        snapshot_mode=p["snapshot.mode"],
        snapshot_fetch_size=p["snapshot.fetch.size"],
        schema_include=p["schema.include.list"] or None,   # None: no list given
        schema_exclude=p["schema.exclude.list"] or None,
        table_include=p["table.include.list"] or None,
        table_exclude=p["table.exclude.list"] or None,
        column_include=p["column.include.list"] or None,
        column_exclude=p["column.exclude.list"] or None,
        column_mappers=common.column_mappers(p),
        message_keys=MessageKeyColumns.parse(p["message.key.columns"]),
        snapshot_overrides=common.snapshot_overrides(p),
        time_precision_mode=p["time.precision.mode"],
        decimal_handling_mode=p["decimal.handling.mode"],
        hstore_handling_mode=p["hstore.handling.mode"],
        interval_handling_mode=p["interval.handling.mode"],
        binary_handling_mode=p["binary.handling.mode"],
        money_fraction_digits=p["money.fraction.digits"],
        tombstones_on_delete=p["tombstones.on.delete"],
        provide_transaction_metadata=p["provide.transaction.metadata"],
        skipped_operations=p["skipped.operations"],
        unavailable_value_placeholder=p["unavailable.value.placeholder"],
        include_unknown_datatypes=p["include.unknown.datatypes"],
        heartbeat_interval_ms=p["heartbeat.interval.ms"],
        heartbeat_topic_prefix=p["topic.heartbeat.prefix"],
        heartbeat_action_query=p["heartbeat.action.query"],
        poll_interval_ms=p["poll.interval.ms"],
        status_update_interval_ms=p["status.update.interval.ms"],
        signal_data_collection=p["signal.data.collection"],
        signal_channels=frozenset(p["signal.enabled.channels"]),
        signal_kafka=common.signal_kafka(p),
        notification_channels=frozenset(p["notification.enabled.channels"]),
        signal_file=p["signal.file"],
        incremental_chunk_size=p["incremental.snapshot.chunk.size"],
        notification_topic=p["notification.sink.topic.name"] or f"__debezium-notification.{p['topic.prefix']}",
    )
