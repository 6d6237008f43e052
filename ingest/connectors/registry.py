"""Connector name (the `connector:` setting of a source) -> connector class and property declarations, imported
only when used."""

from __future__ import annotations

import importlib
from pathlib import Path

from ingest.config import SourceSettings
from ingest.connectors.base import SourceConnector
from ingest.connectors.properties import FieldSet
from ingest.errors import ConfigError, LakecdcError

CONNECTORS: dict[str, str] = {
    "debezium-json": "ingest.connectors.debezium_json:DebeziumJsonConnector",
    "postgresql": "ingest.connectors.postgres:PostgresConnector",
    "mariadb": "ingest.connectors.mysql:MySqlConnector",
    "mysql": "ingest.connectors.mysql:MySqlConnector",
    "kafka": "ingest.connectors.kafka:KafkaConnector",
    # the real Debezium connectors, in the embedded engine (ingest/connectors/debezium_engine)
    **dict.fromkeys(("sqlserver", "oracle", "mongodb", "debezium"),
                    "ingest.connectors.debezium_engine.connector:DebeziumEngineConnector"),
}

# connector name -> its property declarations (a FieldSet of connectors/properties.py): the docs' property
# tables and `lakecdc doctor`
PROPERTY_FIELDS: dict[str, str] = {
    "debezium-json": "ingest.connectors.debezium_json.properties:FIELDS",
    "postgresql": "ingest.connectors.postgres.properties:FIELDS",
    "mariadb": "ingest.connectors.mysql.properties:FIELDS",
    "mysql": "ingest.connectors.mysql.properties:FIELDS",
    "kafka": "ingest.connectors.kafka.properties:FIELDS",
    "sqlserver": "ingest.connectors.debezium_engine.properties:SQLSERVER",
    "oracle": "ingest.connectors.debezium_engine.properties:ORACLE",
    "mongodb": "ingest.connectors.debezium_engine.properties:MONGODB",
    "debezium": "ingest.connectors.debezium_engine.properties:DEBEZIUM",
}


def known_connectors() -> list[str]:
    return sorted(CONNECTORS)


def connector_class(name: str) -> type[SourceConnector]:
    target = CONNECTORS.get(name)
    if target is None:
        raise ConfigError(f"unknown connector {name!r} (known: {', '.join(known_connectors())})")
    module_name, _, class_name = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise LakecdcError(f"connector {name!r} is not available: cannot import {module_name} ({exc})") from None
    cls = getattr(module, class_name, None)
    if not (isinstance(cls, type) and issubclass(cls, SourceConnector)):
        raise LakecdcError(f"connector {name!r} is not available: {target} is not a SourceConnector class")
    return cls


def property_fields(name: str) -> FieldSet:
    """The property declarations of a connector (known to `connector_class`)."""
    connector_class(name)   # an unknown or unavailable connector: the same error
    module_name, _, attribute = PROPERTY_FIELDS[name].partition(":")
    return getattr(importlib.import_module(module_name), attribute)


def create(settings: SourceSettings, base_dir: Path | None = None) -> SourceConnector:
    """Instantiate (and so validate the properties of) the connector of a source; connects to nothing.
    `base_dir` (the configuration file's folder) is passed to connectors that resolve relative paths."""
    return connector_class(settings.connector)(settings, base_dir=base_dir)
