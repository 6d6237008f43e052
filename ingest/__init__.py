"""lakecdc: Debezium-semantics change data capture into Delta bronze tables, dbt silver and gold."""

__version__ = "0.1.0"
