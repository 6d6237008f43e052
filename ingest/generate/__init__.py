"""`lakecdc generate`: dbt model files and YAML for every captured table (see docs/silver.md)."""
