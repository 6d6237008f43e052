"""Sources captured by the real Debezium connectors (SQL Server, Oracle, MongoDB, any Debezium connector class),
run in Debezium's embedded engine inside the ingest job (JPype; `pip install 'lakecdc[debezium]'`, Java 17)."""
