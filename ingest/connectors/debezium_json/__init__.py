"""The `debezium-json` source: Debezium change events as Kafka-record JSON lines (see connector.py)."""

from ingest.connectors.debezium_json.connector import DebeziumJsonConnector

__all__ = ["DebeziumJsonConnector"]
