{#- Models' `schema` config (silver, gold) is used as is, as lakecdc's package does. dbt only takes this macro
    from the root project, so it lives here and calls the package's. -#}
{% macro generate_schema_name(custom_schema_name, node) -%}
  {{ lakecdc.generate_schema_name(custom_schema_name, node) }}
{%- endmacro %}
