{#-
  Every model lands at <warehouse>/<schema>/<model> as a Delta table, because the embedded engine
  re-registers tables from those folders at start. A model may still set `location_root` itself.
  Set the var `lakecdc_managed_tables: true` (e.g. on Databricks Unity Catalog) to omit LOCATION.
-#}
{% macro spark__location_clause() %}
  {%- set location_root = config.get('location_root', validator=validation.any[basestring]) -%}
  {%- set identifier = model['alias'] -%}
  {%- if location_root is not none %}
    location '{{ location_root }}/{{ identifier }}'
  {%- elif not var('lakecdc_managed_tables', false) %}
    location '{{ var("lakecdc_warehouse") }}/{{ model["schema"] }}/{{ identifier }}'
  {%- endif %}
{%- endmacro -%}
