{#-
  dbt-spark reads a relation's columns with DESCRIBE EXTENDED (for `dbt docs generate`'s catalog, for
  adapter.get_columns_in_relation). Sail registers the warehouse's Delta tables without their columns, so
  DESCRIBE lists none and the catalog came out empty. On Sail the columns are read from the data itself
  (lakecdc.lakecdc_table_columns) and returned in DESCRIBE's shape: col_name, data_type, comment.
-#}
{% macro spark__get_columns_in_relation_raw(relation) -%}
  {%- if var('lakecdc_engine', 'sail') == 'sail' -%}
    {%- set columns = lakecdc.lakecdc_table_columns(relation) -%}
    {% call statement('get_columns_in_relation_raw', fetch_result=True) %}
      select * from values
      {%- for c in columns %}
        ({{ lakecdc.lakecdc_lit(c['name']) }}, {{ lakecdc.lakecdc_lit(c['type']) }}, cast(null as string)){% if not loop.last %},{% endif %}
      {%- endfor %}
      as described(col_name, data_type, comment)
    {% endcall %}
  {%- else -%}
    {% call statement('get_columns_in_relation_raw', fetch_result=True) %}
      describe extended {{ relation }}
    {% endcall %}
  {%- endif -%}
  {%- do return(load_result('get_columns_in_relation_raw').table) -%}
{%- endmacro %}
