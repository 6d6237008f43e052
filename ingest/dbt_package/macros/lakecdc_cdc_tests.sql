{#- CDC invariants as generic dbt tests (each returns the offending rows). -#}

{#- Keys are unique and not null among current rows (silver current: not soft-deleted; history: is_current). -#}
{% test lakecdc_unique_current(model, keys, current_flag=none) %}
  {%- set cols = lakecdc.lakecdc_column_names(model) -%}
  select {% for k in keys %}{{ lakecdc.lakecdc_ident(k) }}, {% endfor %}count(*) as n
  from {{ model }}
  where true
  {%- if current_flag %} and {{ lakecdc.lakecdc_ident(current_flag) }}{% endif %}
  {%- if '_is_deleted' in cols %} and not coalesce(_is_deleted, false){% endif %}
  group by {% for k in keys %}{{ lakecdc.lakecdc_ident(k) }}{% if not loop.last %}, {% endif %}{% endfor %}
  having count(*) > 1{% for k in keys %} or {{ lakecdc.lakecdc_ident(k) }} is null{% endfor %}
{% endtest %}

{#- No string column holds Debezium's unavailable-value placeholder (TOAST / LOB values not carried over). -#}
{% test lakecdc_no_placeholders(model) %}
  {%- set p = var('lakecdc_unavailable_placeholder', '__debezium_unavailable_value') -%}
  {%- set strings = [] -%}
  {%- for c in lakecdc.lakecdc_table_columns(model) if c['type'] == 'string' -%}{%- do strings.append(c['name']) -%}{%- endfor -%}
  select * from {{ model }}
  where {% for c in strings %}{{ lakecdc.lakecdc_ident(c) }} = {{ lakecdc.lakecdc_lit(p) }} or {% endfor %}false
{% endtest %}

{#- History versions of a key never overlap, and each key has at most one current version. -#}
{% test lakecdc_history_no_overlap(model, keys) %}
  select a.valid_from_seq, a.valid_to_seq, b.valid_from_seq as other_from_seq
  from {{ model }} a
  join {{ model }} b
    on {% for k in keys %}a.{{ lakecdc.lakecdc_ident(k) }} <=> b.{{ lakecdc.lakecdc_ident(k) }} and {% endfor %}a.valid_from_seq < b.valid_from_seq
  where a.valid_to_seq is null or a.valid_to_seq > b.valid_from_seq
{% endtest %}
