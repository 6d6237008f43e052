"""The Debezium properties several connectors share, declared once (see `connectors/properties.py`).

A connector uses these as they are, or changes what differs for it with `Field.but` (a default, the older
names it accepts), and adds its own. Names and meanings follow Debezium's connector documentation.
"""

from __future__ import annotations

from ingest.connectors.properties import Field, ParsedProperties, ignored, unsupported
from ingest.connectors.signal_kafka import KafkaSignalSettings
from ingest.errors import ConfigError
from ingest.events.column_mappers import ColumnMappers

HOSTNAME = Field("database.hostname", required=True, doc="the database server's host name or address")
PORT = Field("database.port", "int", minimum=1, doc="the database server's port")
USER = Field("database.user", required=True, doc="the user lakecdc logs in as")
PASSWORD = Field("database.password", "password", default="",
                 doc="the user's password (e.g. `${DB_PASSWORD}` from the environment); never logged or shown")
TOPIC_PREFIX = Field("topic.prefix", required=True, pattern=r"[A-Za-z0-9._-]+",
                     pattern_meaning="a valid topic prefix (letters, digits, '.', '_' and '-' only)",
                     doc="the source's logical name: the first part of every topic, and so of every bronze table")

TABLE_INCLUDE = Field("table.include.list", "regex-list", exclusive_with="table.exclude.list",
                      doc="the tables to capture, by qualified name (default: all)")
TABLE_EXCLUDE = Field("table.exclude.list", "regex-list", doc="the tables not to capture, by qualified name")
COLUMN_INCLUDE = Field("column.include.list", "regex-list", exclusive_with="column.exclude.list",
                       doc="the columns to capture, by qualified name (default: all)")
COLUMN_EXCLUDE = Field("column.exclude.list", "regex-list", doc="the columns not to capture, by qualified name")

# Debezium's column mappers (ingest.events.column_mappers): families of properties whose names carry N, the
# hash algorithm and the salt, and the source-type propagation; each value lists columns by qualified name.
COLUMN_TRUNCATE = Field("column.truncate.to.N.chars", "regex-list", name_pattern=r"column\.truncate\.to\.(\d+)\.chars",
                        doc="string values of these columns cut to N characters")
COLUMN_MASK = Field("column.mask.with.N.chars", "regex-list", name_pattern=r"column\.mask\.with\.(\d+)\.chars",
                    doc="values of these string columns replaced by N `*`")
COLUMN_HASH = Field("column.mask.hash.ALGO.with.salt.SALT", "regex-list",
                    name_pattern=r"column\.mask\.hash\.([^.]+)\.with\.salt\.(.+)", secret_name_group=2,
                    doc="values of these string columns replaced by the hex hash (Java algorithm name, e.g. "
                        "SHA-256) of SALT and the value as Java serializes it (Debezium's v1)")
COLUMN_HASH_V2 = Field("column.mask.hash.v2.ALGO.with.salt.SALT", "regex-list",
                       name_pattern=r"column\.mask\.hash\.v2\.([^.]+)\.with\.salt\.(.+)", secret_name_group=2,
                       doc="as column.mask.hash, of the value's UTF-8 bytes (Debezium's v2)")
PROPAGATE_COLUMN_TYPE = Field("column.propagate.source.type", "regex-list",
                              doc="these columns' field schemas carry the source type, length, scale, comment "
                                  "and name (`__debezium.source.column.*` parameters)")
PROPAGATE_DATATYPE = Field("datatype.propagate.source.type", "regex-list",
                           doc="as column.propagate.source.type, for the columns whose `table.TYPENAME` matches")
COLUMN_MAPPERS = [COLUMN_TRUNCATE, COLUMN_MASK, COLUMN_HASH, COLUMN_HASH_V2, PROPAGATE_COLUMN_TYPE, PROPAGATE_DATATYPE]
SNAPSHOT_OVERRIDES = Field("snapshot.select.statement.overrides", "list",
                           doc="the tables (`schema.table` / `database.table`) whose snapshot reads the SELECT "
                               "given in `snapshot.select.statement.overrides.<table>`")
SNAPSHOT_OVERRIDE_STATEMENT = Field("snapshot.select.statement.overrides.TABLE", "string",
                                    name_pattern=r"snapshot\.select\.statement\.overrides\.(.+)",
                                    doc="the snapshot's SELECT for that table; it must return the table's columns "
                                        "(e.g. `SELECT * FROM inv.orders WHERE deleted = false`)")
MESSAGE_KEY_COLUMNS = Field("message.key.columns",
                            doc="the message key of chosen tables instead of their primary key: "
                                "`<table regex>:<column>,<column>;...`")


def snapshot_overrides(p: ParsedProperties) -> dict[str, str]:
    """table -> the SELECT its snapshot reads (snapshot.select.statement.overrides); a listed table without a
    statement, or a statement for a table not listed, is a ConfigError."""
    listed = list(p[SNAPSHOT_OVERRIDES.name])
    statements = {m.groups[0]: m.value for m in p[SNAPSHOT_OVERRIDE_STATEMENT.name] if m.value}
    missing = [t for t in listed if t not in statements]
    unlisted = sorted(set(statements) - set(listed))
    if missing or unlisted:
        raise ConfigError("snapshot.select.statement.overrides: "
                          + "; ".join([f"no snapshot.select.statement.overrides.{t}" for t in missing]
                                      + [f"{t} has a statement but is not listed" for t in unlisted]))
    return {t: statements[t] for t in listed}


def column_mappers(p: ParsedProperties) -> ColumnMappers:
    """The column mapping rules of parsed properties (which declared COLUMN_MAPPERS)."""
    return ColumnMappers.from_properties(
        truncations=[(int(m.groups[0]), m.value) for m in p[COLUMN_TRUNCATE.name]],
        masks=[(int(m.groups[0]), m.value) for m in p[COLUMN_MASK.name]],
        hashes=[(1, m.groups[0], m.groups[1], m.value) for m in p[COLUMN_HASH.name]]
        + [(2, m.groups[0], m.groups[1], m.value) for m in p[COLUMN_HASH_V2.name]],
        propagate_columns=p[PROPAGATE_COLUMN_TYPE.name],
        propagate_datatypes=p[PROPAGATE_DATATYPE.name])


TIME_PRECISION_MODE = Field("time.precision.mode", "choice", allowed=("adaptive", "adaptive_time_microseconds",
                                                                     "connect"),
                            doc="how time and timestamp columns are encoded (Type mapping)")
DECIMAL_HANDLING_MODE = Field("decimal.handling.mode", "choice", default="precise",
                              allowed=("precise", "double", "string"),
                              doc="how decimal columns are encoded: Connect Decimal bytes, a double or a string")
BINARY_HANDLING_MODE = Field("binary.handling.mode", "choice", default="bytes",
                             allowed=("bytes", "base64", "base64-url-safe", "hex"),
                             doc="how binary columns are encoded")
BIGINT_UNSIGNED_HANDLING_MODE = Field("bigint.unsigned.handling.mode", "choice", default="long",
                                      allowed=("long", "precise"), doc="BIGINT UNSIGNED as int64 or as Connect Decimal")


def producer_type_modes() -> list[Field]:
    """The type settings of the Debezium connector that produced records read from Kafka or files: with them,
    a record without a schema (JsonConverter schemas.enable=false) gets the schema that connector would have
    sent, derived from its schema change events (connectors/debezium_json/schema_resolver.py)."""
    said = " the producing connector's setting, used to type records that carry no schema"
    return [TIME_PRECISION_MODE.but(default="adaptive_time_microseconds", doc="time.precision.mode:" + said),
            DECIMAL_HANDLING_MODE.but(doc="decimal.handling.mode:" + said),
            BIGINT_UNSIGNED_HANDLING_MODE.but(doc="bigint.unsigned.handling.mode:" + said),
            BINARY_HANDLING_MODE.but(doc="binary.handling.mode:" + said)]


TOMBSTONES_ON_DELETE = Field("tombstones.on.delete", "bool", default=True,
                             doc="a tombstone (null value) after every delete event")
PROVIDE_TRANSACTION_METADATA = Field("provide.transaction.metadata", "bool", default=False,
                                     doc="the envelope's `transaction` block")
SKIPPED_OPERATIONS = Field("skipped.operations", "choice-list", default="t", allowed=("c", "u", "d", "t"),
                           doc="operations not captured; giving the property replaces the default")
HEARTBEAT_INTERVAL_MS = Field("heartbeat.interval.ms", "int", default=0,
                              doc="how often a heartbeat event goes to `<topic.heartbeat.prefix>.<topic.prefix>` "
                                  "(bronze rows with op NULL) while streaming (ms; 0: never)")
HEARTBEAT_TOPIC_PREFIX = Field("topic.heartbeat.prefix", default="__debezium-heartbeat", pattern=r"[A-Za-z0-9._-]+",
                               pattern_meaning="a valid topic prefix (letters, digits, '.', '_' and '-' only)",
                               doc="the first part of the heartbeat topic")
POLL_INTERVAL_MS = Field("poll.interval.ms", "int", default=500, minimum=1,
                         doc="how long to wait for new changes when caught up (ms)")

# Signals and incremental snapshots (connectors that implement them declare these; the others refuse signal.*)
SIGNAL_DATA_COLLECTION = Field("signal.data.collection",
                               doc="the signalling table (`schema.table`; columns id, type, data) whose inserted "
                                   "rows are signals: execute-snapshot, stop-snapshot, pause-snapshot, "
                                   "resume-snapshot, log (`lakecdc signal` writes them); also where the incremental "
                                   "snapshot's watermarks go")
SIGNAL_CHANNELS = Field("signal.enabled.channels", "choice-list", default="source",
                        allowed=("source", "file", "kafka"),
                        doc="where signals come from: `source` (the signalling table), `file` (signal.file), `kafka` "
                            "(signal.kafka.topic)")
SIGNAL_KAFKA_TOPIC = Field("signal.kafka.topic",
                           doc="the signal topic of the `kafka` channel (partition 0; default "
                               "`<topic.prefix>-signal`): records keyed by topic.prefix, value a JSON signal (id, "
                               "type, data)")
SIGNAL_KAFKA_BOOTSTRAP = Field("signal.kafka.bootstrap.servers",
                               doc="the Kafka brokers of the `kafka` signal channel (host:port, comma-separated; "
                                   "required with that channel)")
SIGNAL_KAFKA_GROUP = Field("signal.kafka.groupId", default="kafka-signal",
                           doc="the consumer group of the `kafka` signal channel (its committed offsets are for "
                               "monitoring: the run reads on from the offset kept in bronze)")
SIGNAL_KAFKA_POLL_TIMEOUT = Field("signal.kafka.poll.timeout.ms", "int", default=0,
                                  doc="how long one look at the signal topic may wait (ms)")
SIGNAL_CONSUMER = Field("signal.consumer.*", forwarded=True,
                        doc="a consumer setting of the `kafka` signal channel, by librdkafka's name, e.g. "
                            "signal.consumer.security.protocol=SASL_SSL (its security.*, sasl.* and ssl.* settings "
                            "also serve `lakecdc signal`'s producer)")
SIGNAL_FILE = Field("signal.file", default="file-signals.txt",
                    doc="the signal file of the `file` channel: one JSON signal per line (id, type, data); the "
                        "connector empties it as it reads it (a relative path: from the project folder)")
INCREMENTAL_CHUNK_SIZE = Field("incremental.snapshot.chunk.size", "int", default=1024, minimum=1,
                               doc="rows per chunk of an incremental snapshot")
INCREMENTAL_WATERMARKING = Field("incremental.snapshot.watermarking.strategy", "choice", default="insert_insert",
                                 allowed=("insert_insert",),
                                 doc="how watermarks are written: a row per open and per close watermark")
NOTIFICATION_CHANNELS = Field("notification.enabled.channels", "choice-list", default="sink,log",
                              allowed=("sink", "log"),
                              doc="where incremental snapshot notifications go: `sink` (rows of S_events on "
                                  "notification.sink.topic.name), `log` (the run's log); `none`: nowhere. lakecdc's "
                                  "default is both (Debezium's: none)")
NOTIFICATION_TOPIC = Field("notification.sink.topic.name",
                           doc="the topic of the notification events in bronze (incremental snapshot progress; "
                               "default `__debezium-notification.<topic.prefix>`); they are also logged")



def signal_fields(table_form: str) -> tuple[Field, ...]:
    """The signal, incremental snapshot and notification properties of a connector that implements them
    (connectors/incremental.py); `table_form`: how it names the signalling table (`schema.table`, ...)."""
    return (SIGNAL_DATA_COLLECTION.but(doc=SIGNAL_DATA_COLLECTION.doc.replace("`schema.table`", f"`{table_form}`")),
            SIGNAL_CHANNELS, SIGNAL_FILE, SIGNAL_KAFKA_TOPIC, SIGNAL_KAFKA_BOOTSTRAP, SIGNAL_KAFKA_GROUP,
            SIGNAL_KAFKA_POLL_TIMEOUT, SIGNAL_CONSUMER, INCREMENTAL_CHUNK_SIZE, INCREMENTAL_WATERMARKING,
            NOTIFICATION_CHANNELS, NOTIFICATION_TOPIC)


def signal_kafka(p: ParsedProperties) -> KafkaSignalSettings | None:
    """The `kafka` signal channel's settings (None when the channel is off); ConfigError without brokers."""
    if "kafka" not in p[SIGNAL_CHANNELS.name]:
        return None
    servers = p[SIGNAL_KAFKA_BOOTSTRAP.name]
    if not servers:
        raise ConfigError("signal.enabled.channels has kafka: set signal.kafka.bootstrap.servers (host:port of the "
                          "brokers of the signal topic)")
    prefix = p["topic.prefix"]
    return KafkaSignalSettings(
        topic=p[SIGNAL_KAFKA_TOPIC.name] or f"{prefix}-signal", bootstrap_servers=servers,
        group_id=p[SIGNAL_KAFKA_GROUP.name], poll_timeout_ms=p[SIGNAL_KAFKA_POLL_TIMEOUT.name], connector_name=prefix,
        consumer={name.removeprefix("signal.consumer."): str(value) for name, value in p.forwarded.items()
                  if name.startswith("signal.consumer.")})


# Debezium features lakecdc does not implement; each changes what is captured, so refusing it beats silently
# doing something else.
DEBEZIUM_UNSUPPORTED = unsupported(
    "converters*", "signal.*", "incremental.snapshot.*", "snapshot.mode.custom*", "snapshot.mode.configuration*")

# Settings of Kafka Connect itself (the connector's deployment, its converters, topics and queues): without
# Kafka Connect they have no meaning, so a configuration copied from a Kafka Connect deployment is accepted.
KAFKA_CONNECT_ONLY = ignored(
    "name", "connector.class", "tasks.max", "key.converter", "value.converter", "key.converter.schemas.enable",
    "value.converter.schemas.enable", "topic.cache.size", "topic.delimiter", "topic.naming.strategy",
    "topic.transaction", "max.queue.size", "max.queue.size.in.bytes", "max.batch.size",
    "errors.max.retries", "custom.metric.tags", "schema.history.internal.*",
    "database.history.*")
