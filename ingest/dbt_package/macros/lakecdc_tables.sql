{#-
  Every table lakecdc's materializations create or replace, in ONE place per table format (var
  lakecdc_table_format):

  delta    (default) the embedded engine, Databricks, Spark with delta-spark: CREATE OR REPLACE TABLE ... USING
           delta, incremental builds MERGE into the tables.
  parquet  Apache Spark without Delta's jars: the engine-differential test lane (docs/engine.md). Managed Parquet
           tables, replaced by DROP + CREATE; full builds only (MERGE needs Delta), so no watermark table.
-#}

{% macro lakecdc_table_format() -%}
  {%- set format = var('lakecdc_table_format', 'delta') -%}
  {%- if format not in ('delta', 'parquet') -%}
    {{ exceptions.raise_compiler_error("lakecdc: var lakecdc_table_format is '" ~ format ~ "' (choose delta or parquet)") }}
  {%- endif -%}
  {{ return(format) }}
{%- endmacro %}

{#- The LOCATION clause of a lakecdc table that is not a model (state, work tables): <warehouse>/<schema>/<name>,
    none with managed tables (var lakecdc_managed_tables) or Parquet. -#}
{% macro lakecdc_location(relation) -%}
  {%- if not var('lakecdc_managed_tables', false) and lakecdc.lakecdc_table_format() == 'delta' -%}
    location '{{ var("lakecdc_warehouse") }}/{{ relation.schema }}/{{ relation.identifier }}'
  {%- endif -%}
{%- endmacro %}

{#- Replace `relation` by the result of `select_sql` (statement `name`; `location`: a LOCATION clause or ''). -#}
{% macro lakecdc_replace_table(relation, select_sql, name, location='') %}
  {%- do return(adapter.dispatch('lakecdc_replace_table', 'lakecdc')(relation, select_sql, name, location)) -%}
{% endmacro %}

{% macro default__lakecdc_replace_table(relation, select_sql, name, location='') %}
  {%- if lakecdc.lakecdc_table_format() == 'parquet' -%}
    {%- call statement(name ~ '_drop') -%}drop table if exists {{ relation }}{%- endcall -%}
    {%- call statement(name) -%}create table {{ relation }} using parquet as {{ select_sql }}{%- endcall -%}
  {%- else -%}
    {%- call statement(name) -%}
      create or replace table {{ relation }}
      using delta
      {%- if var('lakecdc_engine', 'sail') == 'sail' %}
      options (overwriteSchema 'true')
      {%- endif %}
      {{ location }}
      as {{ select_sql }}
    {%- endcall -%}
  {%- endif -%}
{% endmacro %}

{#- Create `relation` with `columns_ddl` ("a string, b bigint") unless it exists. -#}
{% macro lakecdc_create_table_if_missing(relation, columns_ddl, name) %}
  {%- call statement(name) -%}
    create table if not exists {{ relation }} ({{ columns_ddl }})
    using {{ lakecdc.lakecdc_table_format() }}
    {{ lakecdc.lakecdc_location(relation) }}
  {%- endcall -%}
{% endmacro %}

{#- Incremental builds change tables in place (MERGE): Delta only. -#}
{% macro lakecdc_require_delta(relation) %}
  {%- if lakecdc.lakecdc_table_format() != 'delta' -%}
    {{ exceptions.raise_compiler_error("lakecdc: " ~ relation ~ " exists and var lakecdc_table_format is '"
        ~ lakecdc.lakecdc_table_format() ~ "': incremental builds need Delta tables; run with --full-refresh") }}
  {%- endif -%}
{% endmacro %}
