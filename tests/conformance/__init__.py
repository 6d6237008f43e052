"""Differential conformance suite: the real Debezium 3.6.3 connectors and lakecdc capture the same database
changes and every event is compared (docs/conformance.md)."""
