"""The `kafka` source's properties, declared (`connectors/properties.py`). `kafka.*` properties go to the
consumer as librdkafka settings without the prefix (security: `kafka.security.protocol`, `kafka.sasl.*`,
`kafka.ssl.*`)."""

from __future__ import annotations

from ingest.connectors import common_properties as common
from ingest.connectors.properties import Field, FieldSet

# lakecdc positions the consumer itself (offsets live in bronze): these consumer settings would fight that
OWNED_CONSUMER_SETTINGS = ("bootstrap.servers", "group.id", "enable.auto.commit", "enable.auto.offset.store",
                           "auto.offset.reset", "enable.partition.eof")

FIELDS = FieldSet(
    Field("bootstrap.servers", required=True, hint="host:port[,host:port...]",
          doc="the Kafka brokers to connect to"),
    Field("topics", "list", doc="the topics to read (the data topics and, where there is one, the schema change "
                                "topic); or `topics.regex`", exclusive_with="topics.regex"),
    Field("topics.regex", doc="a regular expression that the whole topic name matches; topics created later are "
                              "picked up while the source runs"),
    common.TOPIC_PREFIX.but(doc="the Debezium topic prefix of the producers (topic.prefix): names the tables of "
                                "events without a source block and recognises the schema change topic"),
    Field("group.id", default="lakecdc-{source}",
          doc="the consumer group the landed offsets are committed to after each bronze commit, for monitoring "
              "tools only (lakecdc resumes from bronze); `{source}` is the source's name"),
    Field("value.converter", "choice", default="json", allowed=("json", "avro"),
          doc="how the producers serialised the records' values: json (Kafka Connect's JsonConverter, with or "
              "without schemas; Debezium Server's json format) or avro (Confluent's AvroConverter, with a "
              "schema registry)"),
    Field("key.converter", "choice", allowed=("json", "avro"),
          doc="how the producers serialised the records' keys; by default as value.converter"),
    Field("schema.registry.url", hint="http(s)://host:port",
          doc="the Confluent-compatible schema registry the Avro records' schema ids refer to (needed with avro); "
              "each schema is fetched once"),
    Field("schema.registry.basic.auth.user.info", "password",
          doc="`user:password` for the schema registry's HTTP basic authentication"),
    common.POLL_INTERVAL_MS.but(doc="how long one poll waits for records (ms)"),
    *common.producer_type_modes(),
    Field("kafka.*", forwarded=True, doc="a librdkafka consumer setting, e.g. kafka.security.protocol=SASL_SSL, "
                                          "kafka.sasl.mechanism, kafka.sasl.username, kafka.sasl.password"),
)
