"""Data quality: great-expectations suites over silver/gold tables plus CDC-aware checks over bronze,
run on Spark DataFrames through the engine, reported as HTML (index, per-suite pages, run history), GX
Data Docs and a JSON summary. See docs/quality.md.

Modules, one job each:
  suites    the declarative suite files in expectations/ (YAML) and the project-wide settings file
  discover  which silver/gold tables and bronze sources exist, and how they map to each other
  generate  default suites per table (keys, types, nullability, enum domains) from the schema history
  cdc       project-wide CDC checks (placeholders, SCD2 intervals, reconciliation, freshness, rejects, parse errors)
  samples   Spark queries that fetch a sample of the rows that broke an expectation
  runner    validates every batch with great-expectations and collects the results
  report    HTML pages, JSON summary, run history and GX Data Docs
  cli       `lakecdc quality`
"""
