"""PostgreSQL connector (Debezium semantics): exported-snapshot consistent snapshot + pgoutput streaming."""

from ingest.connectors.postgres.connector import PostgresConnector

__all__ = ["PostgresConnector"]
