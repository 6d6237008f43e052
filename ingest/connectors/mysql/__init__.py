"""MySQL / MariaDB binlog connector (`connector: mariadb` and `connector: mysql`)."""

from ingest.connectors.mysql.connector import MySqlConnector

__all__ = ["MySqlConnector"]
