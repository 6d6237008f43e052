{#-
  Schema evolution without a full refresh, in ONE place per engine.

  lakecdc.lakecdc_table_columns(relation) -> [{name, type}] read from the data itself (Sail's DESCRIBE can lag
      behind a schema-evolving MERGE, so the table is queried instead); lakecdc.lakecdc_column_names(relation)
      the names alone, in one query where that is all a caller needs.
  lakecdc.lakecdc_evolve_schema(relation, desired) adds missing columns and widens widened ones; columns the
      table has but `desired` lacks are kept (dropped source columns stop being filled). Returns the table's
      columns (lakecdc_table_columns) when it left the table as it was, none when it changed it.
  Engine difference: Sail 0.7 has no ALTER TABLE ADD COLUMNS, so new columns come through an empty
  MERGE WITH SCHEMA EVOLUTION; Databricks / Spark with delta-spark use ALTER TABLE (var lakecdc_engine).
  Widening rewrites the table from itself (CREATE OR REPLACE ... AS SELECT with casts) on every engine.
-#}

{#- The relation's column names, in order: one query of no rows (no types; lakecdc_table_columns has them), or no
    query when a materialization of this invocation wrote the table (lakecdc_remember_columns). -#}
{% macro lakecdc_column_names(relation) %}
  {%- if not execute -%}{{ return([]) }}{%- endif -%}
  {%- set remembered = lakecdc.lakecdc_remembered_columns(relation) -%}
  {%- if remembered is not none -%}{{ return(remembered | map(attribute='name') | list) }}{%- endif -%}
  {{ return(run_query('select * from ' ~ relation ~ ' limit 0').column_names | list) }}
{% endmacro %}

{#- The columns [{name, type}] a CDC materialization of this dbt invocation has just written to `relation`, so that
    the tests that follow it do not read them again (the generated ones read them in 3 statements per table) nor
    does anything else that asks for them in the same invocation. A model with post-hooks (which may alter its table) is
    not remembered. The types are those the table was written with, as typeof() gives them: var
    lakecdc_verify_remembered_columns (tests) reads the table as well and stops on any difference. -#}
{% macro lakecdc_remember_columns(relation, columns) %}
  {%- if columns is none or post_hooks -%}{{ return(none) }}{%- endif -%}
  {%- set cache = lakecdc.lakecdc_invocation_cache() -%}
  {%- set remembered = [] -%}
  {%- for c in columns -%}{%- do remembered.append({'name': c['name'], 'type': c['type'] | lower}) -%}{%- endfor -%}
  {%- do cache.update({['columns', relation | string] | tojson: remembered}) -%}
{% endmacro %}

{% macro lakecdc_remembered_columns(relation) %}
  {%- set key = ['columns', relation | string] | tojson -%}
  {%- set cache = lakecdc.lakecdc_invocation_cache() -%}
  {%- if key not in cache -%}{{ return(none) }}{%- endif -%}
  {%- set remembered = cache[key] -%}
  {%- if var('lakecdc_verify_remembered_columns', false) -%}
    {%- set read = lakecdc.lakecdc_read_table_columns(relation) -%}
    {%- if read != remembered -%}
      {{ exceptions.raise_compiler_error("lakecdc: the columns remembered for " ~ relation ~ " (" ~ remembered
                                         ~ ") are not the table's (" ~ read ~ ")") }}
    {%- endif -%}
  {%- endif -%}
  {%- set out = [] -%}
  {%- for c in remembered -%}{%- do out.append({'name': c['name'], 'type': c['type']}) -%}{%- endfor -%}
  {{ return(out) }}
{% endmacro %}

{% macro lakecdc_table_columns(relation) %}
  {%- if not execute -%}{{ return([]) }}{%- endif -%}
  {%- set remembered = lakecdc.lakecdc_remembered_columns(relation) -%}
  {%- if remembered is not none -%}{{ return(remembered) }}{%- endif -%}
  {{ return(lakecdc.lakecdc_read_table_columns(relation)) }}
{% endmacro %}

{#- The table's columns read from the table itself, whatever was remembered. -#}
{% macro lakecdc_read_table_columns(relation) %}
  {%- set names = run_query('select * from ' ~ relation ~ ' limit 0').column_names | list -%}
  {%- set query -%}
    select {% for n in names %}typeof(__t.{{ lakecdc.lakecdc_ident(n) }}){% if not loop.last %}, {% endif %}{% endfor %}
    from (select 1 as __one) __o left join (select * from {{ relation }} limit 1) __t on true
  {%- endset -%}
  {%- set types = run_query(query).rows[0] -%}
  {%- set out = [] -%}
  {%- for n in names -%}{%- do out.append({'name': n, 'type': types[loop.index0]}) -%}{%- endfor -%}
  {{ return(out) }}
{% endmacro %}

{% macro lakecdc_evolve_schema(relation, desired, renames={}) %}
  {%- set existing = lakecdc.lakecdc_table_columns(relation) -%}
  {%- set have = {} -%}
  {%- for c in existing -%}{%- do have.update({c['name'] | lower: c}) -%}{%- endfor -%}
  {%- set desired_types = {} -%}
  {%- for c in desired -%}{%- do desired_types.update({c['name'] | lower: c['type']}) -%}{%- endfor -%}
  {#- renamed: the table still has the old name and not the new one -> the data moves to the new name -#}
  {%- set renamed = {} -%}
  {%- for old, new in renames.items() -%}
    {%- if (old | lower) in have and (new | lower) not in have and (new | lower) in desired_types -%}
      {%- do renamed.update({old | lower: new}) -%}
    {%- endif -%}
  {%- endfor -%}
  {%- set rename_targets = renamed.values() | map('lower') | list -%}
  {%- set missing = [] -%}
  {%- set widened = {} -%}
  {%- for c in desired -%}
    {%- set old = have.get(c['name'] | lower) -%}
    {%- if old is none -%}
      {%- if (c['name'] | lower) not in rename_targets -%}{%- do missing.append(c) -%}{%- endif -%}
    {%- elif old['type'] != c['type'] -%}
      {%- set wide = lakecdc.lakecdc_widest_type([old['type'], c['type']]) | trim -%}
      {%- if wide != old['type'] -%}{%- do widened.update({c['name'] | lower: wide}) -%}{%- endif -%}
    {%- endif -%}
  {%- endfor -%}
  {%- if widened or renamed -%}
    {%- set select_sql -%}
      select
      {%- for c in existing %}
        {% if (c['name'] | lower) in renamed -%}
        cast({{ lakecdc.lakecdc_ident(c['name']) }} as {{ desired_types[renamed[c['name'] | lower] | lower] }}) as {{ lakecdc.lakecdc_ident(renamed[c['name'] | lower]) }}
        {%- elif (c['name'] | lower) in widened -%}
        cast({{ lakecdc.lakecdc_ident(c['name']) }} as {{ widened[c['name'] | lower] }}) as {{ lakecdc.lakecdc_ident(c['name']) }}
        {%- else -%}{{ lakecdc.lakecdc_ident(c['name']) }} as {{ lakecdc.lakecdc_ident(c['name']) }}{%- endif %}
        {%- if not loop.last or missing %},{% endif %}
      {%- endfor %}
      {%- for c in missing %}
        cast(null as {{ c['type'] }}) as {{ lakecdc.lakecdc_ident(c['name']) }}{% if not loop.last %},{% endif %}
      {%- endfor %}
      from {{ relation }}
    {%- endset -%}
    {{ log("lakecdc: rewriting " ~ relation ~ " (widened " ~ widened ~ ", renamed " ~ renamed ~ ")", info=true) }}
    {%- set rewritten = [] -%}
    {%- for c in existing -%}
      {%- set lower = c['name'] | lower -%}
      {%- do rewritten.append({'name': renamed[lower], 'type': desired_types[renamed[lower] | lower]} if lower in renamed
                              else {'name': c['name'], 'type': widened.get(lower, c['type'])}) -%}
    {%- endfor -%}
    {%- do lakecdc.lakecdc_replace_table(relation, select_sql, 'lakecdc_widen', location_clause(), rewritten + missing) -%}
  {%- elif missing -%}
    {{ log("lakecdc: adding columns " ~ (missing | map(attribute='name') | list) ~ " to " ~ relation, info=true) }}
    {%- set properties = lakecdc.lakecdc_stats_properties(existing) -%}
    {%- if properties -%}
      {#- a table written before lakecdc kept statistics on the columns of lakecdc_stats_properties only: an added
          decimal column must not get statistics either -#}
      {%- call statement('lakecdc_stats_columns') -%}
        alter table {{ relation }} set tblproperties ({{ lakecdc.lakecdc_properties_sql(properties) }})
      {%- endcall -%}
    {%- endif -%}
    {%- call statement('lakecdc_add_columns') -%}{{ lakecdc.lakecdc_add_columns(relation, missing) }}{%- endcall -%}
  {%- endif -%}
  {{ return(none if widened or missing or renamed else existing) }}
{% endmacro %}

{% macro lakecdc_add_columns(relation, columns) -%}
  {%- if var('lakecdc_engine', 'sail') == 'sail' -%}
  merge with schema evolution into {{ relation }} __t
  using (select {% for c in columns %}cast(null as {{ c['type'] }}) as {{ lakecdc.lakecdc_ident(c['name']) }}{% if not loop.last %}, {% endif %}{% endfor %}
         where 1 = 0) __s
  on 1 = 0
  when not matched then insert *
  {%- else -%}
  alter table {{ relation }} add columns (
    {%- for c in columns %}{{ lakecdc.lakecdc_ident(c['name']) }} {{ c['type'] }}{% if not loop.last %}, {% endif %}{% endfor -%}
  )
  {%- endif -%}
{%- endmacro %}
