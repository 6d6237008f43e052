"""The `kafka` source: Debezium change events from Kafka topics (Kafka Connect or Debezium Server deployments),
landed in bronze exactly once."""

from ingest.connectors.kafka.connector import KafkaConnector

__all__ = ["KafkaConnector"]
