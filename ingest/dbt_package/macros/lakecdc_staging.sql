{#-
  Typed staging of one captured table, generated from the schema registry (bronze.<S>_schemas): every
  value schema the table's events used contributes its columns; a column decoded differently by two
  schema versions gets a CASE on value_schema_id; widened columns take the widest type.

  lakecdc.lakecdc_table_spec(source, table_id, mongodb_fields=none) -> {keys: [{name, type, expr}], columns: [{name,
      type, expr, toast}]}; a MongoDB collection's fields come from its generated models (lakecdc_mongodb.sql), and
      its spec brings the events it reads (events_sql) and its _unavailable expression (unavailable)
  lakecdc.lakecdc_staging(source, table_id, mongodb_fields=none) -> SELECT of one row per change event (tombstones left out) with the
      key columns, the value columns (after image, before image for deletes), _unavailable (names of columns
      holding the unavailable-value placeholder), _op, _seq, _source_ts, _ts, _batch_id, _key_json, _lsn.
  lakecdc.lakecdc_staging_meta(source, table_id, spec) -> the same rows without the key and value columns.
-#}

{% macro lakecdc_bronze_relation(source_name, kind) -%}
  {{ return(api.Relation.create(schema=var('lakecdc_bronze_schema', 'bronze'),
                                identifier=source_name ~ '_' ~ kind, type='table')) }}
{%- endmacro %}

{#- A table's CREATE, ALTER and DROP rows of <S>_schema_history, oldest first (none without a history), as
    [columns, valid_from_seq, change_kind, previous_table_id]: read once for lakecdc_column_renames and
    lakecdc_column_adds. -#}
{% macro lakecdc_history_rows(source_name, table_id, before_seq=none) %}
  {%- set history = lakecdc.lakecdc_bronze_relation(source_name, 'schema_history') -%}
  {%- if not execute or adapter.get_relation(database=none, schema=history.schema, identifier=history.identifier) is none -%}
    {{ return([]) }}
  {%- endif -%}
  {{ return(run_query("select columns, valid_from_seq, change_kind, previous_table_id from " ~ history
                      ~ " where table_id = " ~ lakecdc.lakecdc_lit(table_id)
                      ~ " and change_kind in ('CREATE', 'ALTER', 'DROP')"
                      ~ ((" and valid_from_seq < " ~ lakecdc.lakecdc_lit(before_seq)) if before_seq else "")
                      ~ " order by version").rows) }}
{% endmacro %}

{#- Column renames {old: new} of a table, inferred from consecutive versions in <S>_schema_history: a column
    that disappears while a new one of the same source type appears at the same position was renamed
    (RENAME COLUMN / CHANGE keep the position; ADD appends). Chains resolve to the latest name. `history_rows`:
    lakecdc_history_rows of the table. -#}
{% macro lakecdc_column_renames(history_rows) %}
  {%- set renames = {} -%}
  {%- set ns = namespace(prev=none) -%}
  {%- for row in history_rows if row[2] in ('CREATE', 'ALTER') -%}
    {%- set cols = fromjson(row[0]) or [] -%}
    {%- if ns.prev is not none -%}
      {%- set cur_names = cols | map(attribute='name') | list -%}
      {%- set prev_names = ns.prev | map(attribute='name') | list -%}
      {%- for c in cols if c['name'] not in prev_names -%}
        {%- for p in ns.prev if p['position'] == c['position'] and p['name'] not in cur_names
                               and p.get('type_name') == c.get('type_name') -%}
          {%- do renames.update({p['name']: c['name']}) -%}
        {%- endfor -%}
      {%- endfor -%}
    {%- endif -%}
    {%- set ns.prev = cols -%}
  {%- endfor -%}
  {%- set resolved = {} -%}
  {%- for old in renames -%}
    {%- set ns2 = namespace(name=renames[old], hops=0) -%}
    {%- for _ in range(renames | length) if ns2.name in renames -%}{%- set ns2.name = renames[ns2.name] -%}{%- endfor -%}
    {%- do resolved.update({old: ns2.name}) -%}
  {%- endfor -%}
  {{ return(resolved) }}
{% endmacro %}

{#- SQL: the raw JSON text of a field of the row image (after, or before for a delete) or of the key. Fields
    holding floats are read with get_json_object from the event text (exact digits, see lakecdc_has_float);
    the others from the decoded row (one JSON parse per event): a field of the struct of strings
    lakecdc_decoded_type gives (`by_name`), else an entry of a map of strings. -#}
{% macro lakecdc_field_raw(f, key=false, by_name=false) -%}
  {%- if lakecdc.lakecdc_has_float(f) and "'" not in f.field and "]" not in f.field -%}
    {%- if key -%}{{ lakecdc.lakecdc_json_path('e.key', '$', f.field) }}
    {%- else -%}
    (case when e.__v.after is null then {{ lakecdc.lakecdc_json_path('e.value', '$.before', f.field) }}
          else {{ lakecdc.lakecdc_json_path('e.value', '$.after', f.field) }} end)
    {%- endif -%}
  {%- elif by_name -%}{{ '__k' if key else '__vals' }}.{{ lakecdc.lakecdc_ident(f.field) }}
  {%- elif key -%}__k[{{ lakecdc.lakecdc_lit(f.field) }}]
  {%- else -%}__vals[{{ lakecdc.lakecdc_lit(f.field) }}]
  {%- endif -%}
{%- endmacro %}

{#- The type from_json decodes a row image or key into: a struct of strings with a field per JSON field name the
    table's schemas name (names in order of first appearance), so the event is parsed once and each column read by
    position; Sail reads a map of strings per lookup in time growing with the row (a 40-column table: 136 s for
    1M events by map, 8 s by struct, measured). A map of strings when two names differ only in case (a struct
    field would be ambiguous to name) or there are none. -#}
{% macro lakecdc_decoded_type(names) %}
  {%- set lowered = names | map('lower') | unique | list -%}
  {%- if not names or lowered | length != names | length -%}{{ return('map<string,string>') }}{%- endif -%}
  {%- set fields = [] -%}
  {%- for name in names -%}{%- do fields.append(lakecdc.lakecdc_ident(name) ~ ':string') -%}{%- endfor -%}
  {{ return('struct<' ~ fields | join(',') ~ '>') }}
{% endmacro %}

{#- Columns added by ALTER TABLE, from <S>_schema_history (when it exists): {name: {seq, column, missing_value,
    default}} for every column of the latest version that its previous version lacked (rename targets
    excluded). `seq`: the schema change's valid_from_seq; events up to it predate the column. `column`: its
    history entry (name, spark_type, ...). The database fills the rows that exist at the ADD with the default
    and sends no change event for them, so silver gives those events `missing_value` (the value the database
    gave them, when the history knows it) or the literal `default` (see docs/silver.md). `history_rows`:
    lakecdc_history_rows of the table. -#}
{% macro lakecdc_column_adds(history_rows, table_id, renames) %}
  {%- set adds = {} -%}
  {%- set ns = namespace(prev=none) -%}
  {%- for row in history_rows -%}
    {%- if row[2] == 'DROP' -%}
      {%- do adds.clear() -%}{%- set ns.prev = none -%}
    {%- elif row[3] and row[3] != table_id -%}
      {#- another table renamed to this name: its columns are where this table starts (lakecdc_lineage) -#}
      {%- do adds.clear() -%}{%- set ns.prev = fromjson(row[0]) or [] -%}
    {%- else -%}
      {%- set cols = fromjson(row[0]) or [] -%}
      {%- set names = cols | map(attribute='name') | list -%}
      {#- an added column that is gone: dropped, or renamed (then its entry follows it to the new name: the
          column in the same place, new in this version, of the same type, as lakecdc_column_renames infers) -#}
      {%- for name in adds.keys() | list if name not in names -%}
        {%- set entry = adds.pop(name) -%}
        {%- set old = (ns.prev or []) | selectattr('name', 'equalto', name) | list -%}
        {%- if name in renames and old -%}
          {%- set prev_names = ns.prev | map(attribute='name') | list -%}
          {%- for c in cols if c['position'] == old[0]['position'] and c['name'] not in prev_names
                                and c.get('type_name') == old[0].get('type_name') -%}
            {%- do adds.update({c['name']: entry}) -%}
          {%- endfor -%}
        {%- endif -%}
      {%- endfor -%}
      {%- if ns.prev is not none -%}
        {%- set prev_names = ns.prev | map(attribute='name') | list -%}
        {%- for c in cols if c['name'] not in prev_names and c['name'] not in renames.values() -%}
          {%- do adds.update({c['name']: {'seq': row[1], 'column': c, 'missing_value': c.get('missing_value'),
                                          'default': c.get('default') if c.get('has_default') else none}}) -%}
        {%- endfor -%}
      {%- endif -%}
      {%- set ns.prev = cols -%}
    {%- endif -%}
  {%- endfor -%}
  {{ return(adds) }}
{% endmacro %}

{#- A column default as the source reports it (MariaDB: the literal's text, e.g. 7, it's, 2024-01-02, or the
    expression, e.g. CURRENT_TIMESTAMP; PostgreSQL: pg_get_expr, e.g. 7, 'it''s'::text, now()) -> SQL of type
    `spark_type`, or none when it is an expression or the type is not one silver fills (timestamps, times,
    binaries: their default texts depend on the session's time zone or encoding). -#}
{% macro lakecdc_default_sql(default, spark_type) %}
  {%- set re = modules.re -%}
  {%- set d = (default or '') | trim -%}
  {%- set quoted = re.fullmatch("'((?:[^']|'')*)'(?:::[A-Za-z0-9_ \".\\[\\]()]+)?", d) -%}
  {%- set number = re.fullmatch("\\(?(-?[0-9]+(?:\\.[0-9]+)?(?:[eE][-+]?[0-9]+)?)\\)?(?:::[A-Za-z0-9_ ]+)?", d) -%}
  {%- set t = spark_type | lower -%}
  {%- if default is none or d | upper == 'NULL' or (d | upper).startswith('NULL::') -%}{{ return(none) }}{%- endif -%}
  {%- if quoted -%}{%- set text = quoted.group(1) | replace("''", "'") -%}
  {%- elif number -%}{%- set text = number.group(1) -%}
  {%- elif d | lower in ('true', 'false') -%}
    {%- set text = d | lower if t == 'boolean' else ('1' if d | lower == 'true' else '0') -%}
  {%- elif '(' in d or (d | lower) in ('current_timestamp', 'current_date', 'current_time', 'localtime', 'localtimestamp',
                                        'current_user', 'session_user', 'user', 'current_role', 'current_schema',
                                        'current_catalog', 'sysdate', 'now') -%}
    {{ return(none) }}
  {%- else -%}{%- set text = d -%}
  {%- endif -%}
  {%- if t in ('tinyint', 'smallint', 'int', 'bigint', 'float', 'double', 'string', 'boolean', 'date')
         or t.startswith('decimal(') -%}
    {{ return('cast(' ~ lakecdc.lakecdc_lit(text) ~ ' as ' ~ t ~ ')') }}
  {%- endif -%}
  {{ return(none) }}
{% endmacro %}

{#- The silver type of a column known only from the schema history (no event since it was added), or none when
    the history's Spark type may differ from what its events will decode to (timestamps, times, booleans from
    TINYINT(1), binaries, ...): such a column appears with its first event, as before. -#}
{% macro lakecdc_history_type(column) %}
  {%- set t = (column.get('spark_type') or '') | lower -%}
  {%- if (column.get('type_name') or '') | upper in ('BOOLEAN', 'BOOL', 'BIT') -%}{{ return(none) }}{%- endif -%}
  {%- if column.get('jdbc_type') in (2, 3) and column.get('length') is none -%}
    {#- numeric without precision: VariableScaleDecimal events -#}
    {{ return(lakecdc.lakecdc_variable_decimal_type()) }}
  {%- endif -%}
  {%- if t in ('tinyint', 'smallint', 'int', 'bigint', 'double', 'float', 'string', 'date') or t.startswith('decimal(') -%}
    {{ return(t) }}
  {%- endif -%}
  {{ return(none) }}
{% endmacro %}

{#- What lakecdc reads of bronze once per dbt invocation: a source's bronze bound (lakecdc_bronze_bound), its schema
    history rows (which only `lakecdc schema` commands write) and each table's spec. A dictionary kept in dbt's
    `graph`, which is one object for the whole invocation, under the invocation's id (an earlier invocation's
    entry, in a process that runs dbt again on the same manifest, is dropped). Values go in with setdefault: two
    threads that read the same thing at once both use the first one stored. -#}
{% macro lakecdc_invocation_cache() %}
  {%- set key = 'lakecdc_cache_' ~ invocation_id -%}
  {%- if key not in graph -%}
    {%- for old in graph.keys() | list if old.startswith('lakecdc_cache_') and old != key -%}{%- do graph.pop(old, none) -%}{%- endfor -%}
    {%- do graph.setdefault(key, {}) -%}
  {%- endif -%}
  {{ return(graph[key]) }}
{% endmacro %}

{#- The source's last bronze batch when the dbt invocation first asked (one read per source and invocation; the
    highest batch of its events and of its schema changes: a batch of DDL alone has no events): every model of
    the invocation reads the source's bronze up to it (_batch_id <= bound), so the tables' specs, the staging SQL
    compiled from them and the rows the materializations merge all describe the same bronze, and the silver
    tables of one build agree on one batch of each source. Batches landed while dbt runs wait for the next build.
    Read before any spec: bronze commits a batch's schemas first, then its schema changes, then its events, so a
    spec read after the bound knows every schema the rows up to it use. -1: nothing landed yet. -#}
{% macro lakecdc_bronze_bound(source_name) %}
  {%- set cache = lakecdc.lakecdc_invocation_cache() -%}
  {%- set key = ['bound', source_name] | tojson -%}
  {%- if key not in cache -%}
    {%- set query = "select max(batch_id) as b from " ~ lakecdc.lakecdc_bronze_relation(source_name, 'events') -%}
    {%- set changes = lakecdc.lakecdc_bronze_relation(source_name, 'schema_changes') -%}
    {%- if adapter.get_relation(database=none, schema=changes.schema, identifier=changes.identifier) is not none -%}
      {%- set query = "select max(b) from (" ~ query ~ " union all select max(batch_id) as b from " ~ changes ~ ") __b" -%}
    {%- endif -%}
    {%- set value = run_query(query).rows[0][0] -%}
    {%- do cache.setdefault(key, -1 if value is none else value | int) -%}
  {%- endif -%}
  {{ return(cache[key]) }}
{% endmacro %}

{#- SQL: ` and <the event's batch by `lineage`> <= bound` over bronze events `e` ('' without a bound: before
    execution). -#}
{% macro lakecdc_bound_filter(lineage, bound) -%}
  {%- if bound is not none %} and ({{ lineage['batch'] }}) <= {{ bound }}{% endif -%}
{%- endmacro %}

{#- A table's spec, read once per dbt invocation (lakecdc_read_table_spec reads it): its staging model's
    compilation and its current and history materializations use the same one, bounded like their rows. -#}
{% macro lakecdc_table_spec(source_name, table_id, mongodb_fields=none) %}
  {%- if not execute -%}
    {{ return(lakecdc.lakecdc_read_table_spec(source_name, table_id, mongodb_fields)) }}
  {%- endif -%}
  {%- set cache = lakecdc.lakecdc_invocation_cache() -%}
  {%- set key = ['spec', source_name, table_id, mongodb_fields] | tojson -%}
  {%- if key not in cache -%}
    {%- do cache.setdefault(key, lakecdc.lakecdc_read_table_spec(source_name, table_id, mongodb_fields)) -%}
  {%- endif -%}
  {{ return(cache[key]) }}
{% endmacro %}

{% macro lakecdc_read_table_spec(source_name, table_id, mongodb_fields=none) %}
  {%- if mongodb_fields is not none -%}
    {{ return(lakecdc.lakecdc_mongodb_spec(source_name, table_id, mongodb_fields)) }}
  {%- endif -%}
  {%- if not execute -%}
    {{ return({'keys': [], 'columns': [], 'found': false, 'renames': {},
               'lineage': lakecdc.lakecdc_lineage(source_name, table_id)}) }}
  {%- endif -%}
  {%- set bound = lakecdc.lakecdc_bronze_bound(source_name) -%}
  {%- set lineage = lakecdc.lakecdc_lineage(source_name, table_id) -%}
  {%- set renames = {} -%}
  {%- set history_rows = lakecdc.lakecdc_history_rows(source_name, table_id) -%}
  {%- for segment in lineage['segments'] -%}  {#- the tables whose rows came under this name, oldest last -#}
    {%- do renames.update(lakecdc.lakecdc_column_renames(lakecdc.lakecdc_history_rows(source_name, segment['table_id']))) -%}
  {%- endfor -%}
  {%- do renames.update(lakecdc.lakecdc_column_renames(history_rows)) -%}
  {%- set events = lakecdc.lakecdc_bronze_relation(source_name, 'events') -%}
  {%- set schemas = lakecdc.lakecdc_bronze_relation(source_name, 'schemas') -%}
  {%- set query -%}
    select u.kind, s.schema_id, max(s.schema) as schema, min(s.first_seq) as first_seq
    from {{ schemas }} s
    join (select distinct 'value' as kind, value_schema_id as id from {{ events }} e
          where {{ lineage['filter'] }} and value_schema_id is not null{{ lakecdc.lakecdc_bound_filter(lineage, bound) }}
          union
          select distinct 'key' as kind, key_schema_id as id from {{ events }} e
          where {{ lineage['filter'] }} and key_schema_id is not null{{ lakecdc.lakecdc_bound_filter(lineage, bound) }}) u
      on s.schema_id = u.id
    group by u.kind, s.schema_id
    order by first_seq, schema_id
  {%- endset -%}
  {%- set rows = run_query(query).rows -%}
  {%- set ns = namespace(key_schema=none) -%}
  {%- set cols = {} -%}
  {%- set order = [] -%}
  {%- set parsed = [] -%}   {#- [kind, schema id, schema], each schema's JSON parsed once -#}
  {%- for row in rows -%}{%- do parsed.append([row[0], row[1], fromjson(row[2])]) -%}{%- endfor -%}
  {%- set value_fields = [] -%}
  {%- for row in parsed if row[0] == 'value' -%}
    {%- for image in row[2].get('fields') or [] if image.field == 'after' and image.get('type') == 'struct' -%}
      {%- for f in image.get('fields') or [] if f.field not in value_fields -%}{%- do value_fields.append(f.field) -%}{%- endfor -%}
    {%- endfor -%}
  {%- endfor -%}
  {%- set value_type = lakecdc.lakecdc_decoded_type(value_fields) -%}
  {%- for row in parsed -%}
    {%- set sch = row[2] -%}
    {%- if row[0] == 'key' -%}
      {%- set ns.key_schema = sch -%}
    {%- else -%}
      {%- set after = (sch.get('fields') or []) | selectattr('field', 'equalto', 'after') | list -%}
      {%- if after and after[0].get('type') == 'struct' -%}
        {%- for f in after[0].get('fields') or [] -%}
          {%- set name = renames.get(f.field, f.field) -%}
          {%- if name not in cols -%}
            {%- do cols.update({name: {'types': [], 'variants': [], 'toast': false, 'raws': []}}) -%}
            {%- do order.append(name) -%}
          {%- endif -%}
          {%- set raw = lakecdc.lakecdc_field_raw(f, by_name=value_type.startswith('struct')) -%}
          {%- do cols[name]['types'].append(lakecdc.lakecdc_spark_type(f) | trim) -%}
          {%- do cols[name]['variants'].append([row[1], lakecdc.lakecdc_decode(raw, f) | trim]) -%}
          {%- if raw not in cols[name]['raws'] -%}{%- do cols[name]['raws'].append(raw) -%}{%- endif -%}
          {%- if lakecdc.lakecdc_may_be_unavailable(f) | trim == 'True' -%}{%- do cols[name].update({'toast': true}) -%}{%- endif -%}
          {%- if f.get('default') is not none and (f.get('name') or '') in ('', 'org.apache.kafka.connect.data.Decimal')
                 and f.get('type') in ('int8', 'int16', 'int32', 'int64', 'boolean', 'string', 'bytes') + lakecdc.lakecdc_float_types() -%}
            {#- the value schema's default (Debezium's, for a literal column default): decoded like a value -#}
            {%- set text = f['default'] if f['default'] is string else tojson(f['default']) -%}
            {%- do cols[name].update({'schema_default': lakecdc.lakecdc_decode(lakecdc.lakecdc_lit(text), f) | trim}) -%}
          {%- endif -%}
        {%- endfor -%}
      {%- elif after -%}
        {#- MongoDB: `after` is the document as a JSON string; its fields are in the generated models -#}
        {{ exceptions.raise_compiler_error("lakecdc: " ~ table_id ~ " is a MongoDB collection: its models need its "
            ~ "fields (mongodb_fields), which `lakecdc generate` infers from the documents; run it again") }}
      {%- endif -%}
    {%- endif -%}
  {%- endfor -%}
  {%- set keys = [] -%}
  {%- set key_type = lakecdc.lakecdc_decoded_type(((ns.key_schema or {}).get('fields') or []) | map(attribute='field') | list) -%}
  {%- if ns.key_schema is not none -%}
    {%- for f in ns.key_schema.get('fields') or [] -%}
      {%- set t = lakecdc.lakecdc_spark_type(f) | trim -%}
      {%- set raw = lakecdc.lakecdc_field_raw(f, key=true, by_name=key_type.startswith('struct')) -%}
      {%- do keys.append({'name': f.field, 'type': t, 'expr': 'cast(' ~ (lakecdc.lakecdc_decode(raw, f) | trim) ~ ' as ' ~ t ~ ')'}) -%}
    {%- endfor -%}
  {%- endif -%}
  {%- set key_names = keys | map(attribute='name') | list -%}
  {%- set columns = [] -%}
  {%- for name in order if name not in key_names -%}
    {%- set c = cols[name] -%}
    {%- set t = lakecdc.lakecdc_widest_type(c['types']) | trim -%}
    {%- set distinct_exprs = c['variants'] | map(attribute=1) | unique(case_sensitive=true) | list -%}
    {%- if distinct_exprs | length == 1 -%}
      {%- set expr = 'cast(' ~ distinct_exprs[0] ~ ' as ' ~ t ~ ')' -%}
    {%- else -%}
      {%- set parts = [] -%}
      {%- for e in distinct_exprs -%}
        {%- set ids = [] -%}
        {%- for v in c['variants'] if v[1] == e -%}{%- do ids.append(lakecdc.lakecdc_lit(v[0])) -%}{%- endfor -%}
        {%- do parts.append('when value_schema_id in (' ~ ids | join(', ') ~ ') then cast(' ~ e ~ ' as ' ~ t ~ ')') -%}
      {%- endfor -%}
      {%- set expr = 'case ' ~ parts | join(' ') ~ ' end' -%}
    {%- endif -%}
    {%- do columns.append({'name': name, 'type': t, 'expr': expr, 'toast': c['toast'], 'raws': c['raws'],
                           'schema_default': c.get('schema_default')}) -%}
  {%- endfor -%}
  {#- columns added by ALTER TABLE: the default for the rows that predate them; a column no event has shown
      yet is there at once -#}
  {%- set adds = lakecdc.lakecdc_column_adds(history_rows, table_id, renames) -%}
  {%- for segment in lineage['segments'] -%}  {#- columns the tables renamed to this name added before the rename -#}
    {%- set segment_rows = lakecdc.lakecdc_history_rows(source_name, segment['table_id'], segment['before']) -%}
    {%- for name, add in lakecdc.lakecdc_column_adds(segment_rows, segment['table_id'], renames).items()
          if name not in adds -%}
      {%- do adds.update({name: add}) -%}
    {%- endfor -%}
  {%- endfor -%}
  {%- for name, add in adds.items() if name not in key_names -%}
    {%- set known = columns | selectattr('name', 'equalto', name) | list -%}
    {%- set t = known[0]['type'] if known else lakecdc.lakecdc_history_type(add['column']) -%}
    {%- if t is not none -%}
      {#- the value the database gave those rows when the history knows it (PostgreSQL's attmissingval, MariaDB's
          literal or constant default); else the history's default text; else the value schema's default -#}
      {%- set default_sql = lakecdc.lakecdc_default_sql(add['missing_value'], t) if add['missing_value'] is not none
                            else lakecdc.lakecdc_default_sql(add['default'], t) if add['default'] is not none
                            else (known[0].get('schema_default') if known else none) -%}
      {%- if add['default'] is not none and default_sql is none -%}
        {{ log("lakecdc: " ~ table_id ~ "." ~ name ~ " was added with the default " ~ add['default'] ~ ", which silver "
               ~ "does not evaluate: rows that existed before the ADD COLUMN show NULL until they change (re-snapshot the "
               ~ "table to fill them)", info=true) }}
      {%- endif -%}
      {%- set before = 'cast(' ~ (default_sql or 'null') ~ ' as ' ~ t ~ ')' -%}
      {%- if known -%}
        {%- do known[0].update({'expr': 'case when e.seq <= ' ~ lakecdc.lakecdc_lit(add['seq']) ~ ' then ' ~ before
                                         ~ ' else ' ~ known[0]['expr'] ~ ' end', 'added': true,
                                'default_added': default_sql is not none}) -%}
      {%- else -%}
        {%- do columns.append({'name': name, 'type': t, 'expr': before, 'toast': false, 'raws': [], 'added': true,
                               'default_added': default_sql is not none}) -%}
      {%- endif -%}
    {%- endif -%}
  {%- endfor -%}
  {{ return({'keys': keys, 'columns': columns, 'found': rows | length > 0, 'renames': renames, 'lineage': lineage,
             'value_type': value_type, 'key_type': key_type, 'bound': bound}) }}
{% endmacro %}

{% macro lakecdc_staging(source_name, table_id, mongodb_fields=none) %}
  {%- set spec = lakecdc.lakecdc_table_spec(source_name, table_id, mongodb_fields) -%}
  {%- if execute and not spec['found'] -%}
    {{ exceptions.raise_compiler_error("lakecdc: no registered schemas for table " ~ table_id ~ " in source "
                                       ~ source_name ~ " (is bronze." ~ source_name ~ "_schemas filled?)") }}
  {%- endif -%}
  {{ lakecdc.lakecdc_staging_select(source_name, table_id, spec, true) }}
{% endmacro %}

{#- The staging rows without the key and value columns (_unavailable and the _ columns): what the CDC
    materializations ask about new rows. Nothing is decoded, so the engine plans it in a fraction of the time
    the full staging SQL takes (its decoding expressions run to kilobytes per column). -#}
{% macro lakecdc_staging_meta(source_name, table_id, spec) %}
  {{- lakecdc.lakecdc_staging_select(source_name, table_id, spec, false) -}}
{% endmacro %}

{% macro lakecdc_staging_select(source_name, table_id, spec, with_values) %}
  {%- set toast = spec['columns'] | selectattr('toast') | list -%}
  select
    {%- if with_values %}
    {%- for k in spec['keys'] %}
    {{ k['expr'] }} as {{ lakecdc.lakecdc_ident(k['name']) }},
    {%- endfor %}
    {%- for c in spec['columns'] %}
    {{ c['expr'] }} as {{ lakecdc.lakecdc_ident(c['name']) }},
    {%- endfor %}
    {%- endif %}
    {%- if spec.get('unavailable') %}
    {{ spec['unavailable'] }} as _unavailable,
    {%- elif toast %}
    {#- array_compact, not filter(..., x -> x is not null): Sail plans a lambda over a large argument slowly
        (0.3 s for 8 columns) #}
    array_compact(array(
      {%- for c in toast %}
      case when {% for raw in c['raws'] %}{{ lakecdc.lakecdc_is_unavailable(raw) }}{% if not loop.last %} or {% endif %}{% endfor %} then {{ lakecdc.lakecdc_lit(c['name']) }} end
      {%- if not loop.last %},{% endif %}
      {%- endfor %})) as _unavailable,
    {%- else %}
    cast(array() as array<string>) as _unavailable,
    {%- endif %}
    op as _op,
    {{ spec['lineage']['seq'] }} as _seq,
    timestamp_millis(source_ts_ms) as _source_ts,
    timestamp_millis(ts_ms) as _ts,
    {{ spec['lineage']['batch'] }} as _batch_id,
    key as _key_json,
    get_json_object(e.value, '$.source.lsn') as _lsn
  from (
    {%- if spec.get('events_sql') %}
    {{ spec['events_sql'] }}
    {%- else %}
    {%- set value_type = spec.get('value_type', 'map<string,string>') %}
    select e.*, coalesce(__v.after, __v.before) as __vals,
           from_json(e.key, {{ lakecdc.lakecdc_lit(spec.get('key_type', 'map<string,string>')) }}) as __k
    from (
      select e.*,
             from_json(e.value, {{ lakecdc.lakecdc_lit('before ' ~ value_type ~ ', after ' ~ value_type) }}) as __v
      from {{ lakecdc.lakecdc_bronze_relation(source_name, 'events') }} e
      where {{ spec['lineage']['filter'] }} and e.op is not null{{ lakecdc.lakecdc_bound_filter(spec['lineage'], spec.get('bound')) }}
    ) e
    {%- endif %}
  ) e
  {#- a DROP TABLE ends every row of the table, as a truncate does: the source sends no delete for them. A table
      created again later fills up from its new events. A table renamed to this name ends the rows of the one
      that had it before (a swap), and brings its own rows (lakecdc_lineage). -#}
  {%- for d in spec['lineage']['truncates'] if spec.get('bound') is none or d[2] | int <= spec['bound'] %}
  union all
  select
    {%- if with_values %}
    {%- for c in spec['keys'] + spec['columns'] %}
    cast(null as {{ c['type'] }}) as {{ lakecdc.lakecdc_ident(c['name']) }},
    {%- endfor %}
    {%- endif %}
    cast(array() as array<string>) as _unavailable, 't' as _op, {{ lakecdc.lakecdc_lit(d[0]) }} as _seq,
    timestamp_millis({{ d[1] | int }}) as _source_ts, timestamp_millis({{ d[1] | int }}) as _ts,
    cast({{ d[2] | int }} as bigint) as _batch_id, cast(null as string) as _key_json, cast(null as string) as _lsn
  {%- endfor %}
{% endmacro %}

{#- Where a table's rows come from, by <S>_schema_history (after `lakecdc schema rebuild`):
    truncates: [seq, ts_ms, batch_id] of each DROP of the table (a rename away included: its rows move with it)
      and of each rename to its name (the rows of a table that had the name before end there);
    segments: for each rename to its name, at seq S, the events of the renamed table since it began (its CREATE,
      or its own rename from another table, followed back) and before S: they are this table's rows too. Their
      _seq becomes "S.<their seq>" (after S, in their order, before what comes after S) and their batch that of
      the rename, so an incremental build takes them;
    filter / seq / batch: the SQL over bronze events `e` selecting this table's events and giving those values.
    Time and batch of a change come from its <S>_schema_changes row (none: time 0 and batch 0, so only a full
    refresh applies it). -#}
{% macro lakecdc_lineage(source_name, table_id) %}
  {%- set own = "e.table_id = " ~ lakecdc.lakecdc_lit(table_id) -%}
  {%- set plain = {'truncates': [], 'segments': [], 'filter': own, 'seq': 'seq', 'batch': 'batch_id'} -%}
  {%- set history = lakecdc.lakecdc_bronze_relation(source_name, 'schema_history') -%}
  {%- set changes = lakecdc.lakecdc_bronze_relation(source_name, 'schema_changes') -%}
  {%- if not execute or adapter.get_relation(database=none, schema=history.schema, identifier=history.identifier) is none
         or adapter.get_relation(database=none, schema=changes.schema, identifier=changes.identifier) is none -%}
    {{ return(plain) }}
  {%- endif -%}
  {#- the source's CREATE, ALTER and DROP rows, read once per dbt invocation for all its tables -#}
  {%- set cache = lakecdc.lakecdc_invocation_cache() -%}
  {%- set key = ['lineage', source_name] | tojson -%}
  {%- if key not in cache -%}
    {%- do cache.update({key: run_query(
          "select h.table_id, h.valid_from_seq, h.statement_index, h.change_kind, h.previous_table_id, "
          ~ "coalesce(max(c.ts_ms), 0), coalesce(max(c.batch_id), 0) from " ~ history ~ " h left join "
          ~ changes ~ " c on c.seq = h.valid_from_seq where h.change_kind in ('CREATE', 'ALTER', 'DROP') "
          ~ "group by 1, 2, 3, 4, 5 order by 2, 3").rows}) -%}
  {%- endif -%}
  {%- set rows = cache[key] -%}
  {%- set truncates = [] -%}
  {%- set segments = [] -%}
  {%- for r in rows if r[0] == table_id and (r[3] == 'DROP' or (r[4] and r[4] != r[0])) -%}
    {%- do truncates.append([r[1], r[5], r[6]]) -%}
    {%- if r[3] != 'DROP' -%}
      {#- follow the renamed table back: its events since it began (CREATE, DROP of an older table of that name,
          or its own rename from another table, then followed further) -#}
      {%- set ns = namespace(work=[[r[4], r[1], r[2]]]) -%}
      {%- for _ in range(50) if ns.work -%}
        {%- set item = ns.work[0] -%}
        {%- set ns.work = ns.work[1:] -%}
        {%- set found = namespace(begin=none) -%}
        {%- for b in rows if b[0] == item[0] and (b[1] < item[1] or (b[1] == item[1] and b[2] < item[2]))
                             and (b[3] == 'CREATE' or (b[4] and b[4] != b[0] and b[3] != 'DROP')
                                  or (b[3] == 'DROP' and b[1] != item[1])) -%}
          {%- set found.begin = b -%}
        {%- endfor -%}
        {%- do segments.append({'table_id': item[0], 'after': found.begin[1] if found.begin else none,
                                'before': item[1], 'prefix': r[1], 'batch': r[6]}) -%}
        {%- if found.begin and found.begin[3] != 'DROP' and found.begin[4] and found.begin[4] != found.begin[0] -%}
          {%- do ns.work.append([found.begin[4], found.begin[1], found.begin[2]]) -%}
        {%- endif -%}
      {%- endfor -%}
    {%- endif -%}
  {%- endfor -%}
  {%- if not segments -%}
    {%- do plain.update({'truncates': truncates}) -%}
    {{ return(plain) }}
  {%- endif -%}
  {%- set conds = [] -%}
  {%- for g in segments -%}
    {%- do conds.append("(e.table_id = " ~ lakecdc.lakecdc_lit(g['table_id']) ~ " and e.seq < " ~ lakecdc.lakecdc_lit(g['before'])
                        ~ ((" and e.seq > " ~ lakecdc.lakecdc_lit(g['after'])) if g['after'] is not none else "") ~ ")") -%}
  {%- endfor -%}
  {%- set seq_cases = [] -%}
  {%- set batch_cases = [] -%}
  {%- for g in segments -%}
    {%- do seq_cases.append("when " ~ conds[loop.index0] ~ " then concat(" ~ lakecdc.lakecdc_lit(g['prefix'] ~ '.') ~ ", e.seq)") -%}
    {%- do batch_cases.append("when " ~ conds[loop.index0] ~ " then cast(" ~ (g['batch'] | int) ~ " as bigint)") -%}
  {%- endfor -%}
  {{ return({'truncates': truncates, 'segments': segments,
             'filter': "(" ~ own ~ " or " ~ conds | join(" or ") ~ ")",
             'seq': "case " ~ seq_cases | join(" ") ~ " else e.seq end",
             'batch': "case " ~ batch_cases | join(" ") ~ " else e.batch_id end"}) }}
{% endmacro %}
