"""Bronze layer: the Delta tables that are the contract between capture and dbt."""
