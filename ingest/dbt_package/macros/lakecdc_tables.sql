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

{#- Replace `relation` by the result of `select_sql` (statement `name`; `location`: a LOCATION clause or '';
    `columns`: the select's [{name, type}], for the statistics properties; none: a work table, no statistics). -#}
{% macro lakecdc_replace_table(relation, select_sql, name, location='', columns=none) %}
  {%- do return(adapter.dispatch('lakecdc_replace_table', 'lakecdc')(relation, select_sql, name, location, columns)) -%}
{% endmacro %}

{% macro default__lakecdc_replace_table(relation, select_sql, name, location='', columns=none) %}
  {%- if lakecdc.lakecdc_table_format() == 'parquet' -%}
    {%- call statement(name ~ '_drop') -%}drop table if exists {{ relation }}{%- endcall -%}
    {%- call statement(name) -%}create table {{ relation }} using parquet as {{ select_sql }}{%- endcall -%}
  {%- else -%}
    {%- set properties = lakecdc.lakecdc_stats_properties(columns) -%}
    {%- call statement(name) -%}
      create or replace table {{ relation }}
      using delta
      {%- if var('lakecdc_engine', 'sail') == 'sail' %}
      options (overwriteSchema 'true')
      {%- endif %}
      {{ location }}
      {%- if properties %}
      tblproperties ({{ lakecdc.lakecdc_properties_sql(properties) }})
      {%- endif %}
      as {{ select_sql }}
    {%- endcall -%}
  {%- endif -%}
{% endmacro %}

{#- Delta statistics on the embedded engine (Sail 0.7): when a file's statistics say a DECIMAL column's min equals
    its max, Sail reads the column from those statistics instead of the file, parsed through a double, so a value
    of more than ~15 significant digits comes back changed (-71163320215847.039674 -> -71163320215847.030000) in
    every read, MERGE copies included. So on Sail the tables lakecdc writes keep no statistics on decimal columns:
    `columns` [{name, type}] -> delta.dataSkippingStatsColumns = the first 32 other columns (Delta's default
    count); none (work tables, read once) -> no statistics. Columns added later get none. Other engines read
    statistics exactly: {} (Delta's defaults). -#}
{% macro lakecdc_stats_properties(columns) %}
  {%- if var('lakecdc_engine', 'sail') != 'sail' or lakecdc.lakecdc_table_format() != 'delta' -%}{{ return({}) }}{%- endif -%}
  {%- set names = [] -%}
  {%- for c in columns or [] if 'decimal' not in (c['type'] | lower) and names | length < 32 -%}
    {%- do names.append('`' ~ (c['name'] | replace('`', '``')) ~ '`') -%}
  {%- endfor -%}
  {%- if not names -%}{{ return({'delta.dataSkippingNumIndexedCols': '0'}) }}{%- endif -%}
  {{ return({'delta.dataSkippingStatsColumns': names | join(',')}) }}
{% endmacro %}

{% macro lakecdc_properties_sql(properties) -%}
  {%- for key, value in properties.items() -%}
    {{ lakecdc.lakecdc_lit(key) }} = {{ lakecdc.lakecdc_lit(value) }}{% if not loop.last %}, {% endif %}
  {%- endfor -%}
{%- endmacro %}

{#- dbt-spark's table DDL for your own models (gold): on Sail their columns' types are not known before the
    statement runs, so a Delta model keeps no statistics unless it sets its own (see lakecdc_stats_properties). -#}
{% macro spark__tblproperties_clause() -%}
  {%- set properties = dict(config.get('tblproperties') or {}) -%}
  {%- if var('lakecdc_engine', 'sail') == 'sail' and config.get('file_format') == 'delta'
         and 'delta.dataSkippingStatsColumns' not in properties and 'delta.dataSkippingNumIndexedCols' not in properties -%}
    {%- do properties.update({'delta.dataSkippingNumIndexedCols': '0'}) -%}
  {%- endif -%}
  {%- if properties %}
    tblproperties ({{ lakecdc.lakecdc_properties_sql(properties) }})
  {%- endif %}
{%- endmacro -%}

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
