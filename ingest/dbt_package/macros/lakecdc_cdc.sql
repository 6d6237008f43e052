{#-
  CDC materializations over a typed staging model (lakecdc_staging):

  lakecdc_current  silver current state (SCD1): one row per key, the latest event by _seq.
  lakecdc_history  silver history (SCD2): one row per version, valid_from/valid_to/is_current.

  Model config: lakecdc_source, lakecdc_table_id (the captured table), lakecdc_delete_mode (hard | soft;
  default var lakecdc_delete_mode, hard), lakecdc_mongodb_fields (a MongoDB collection's fields, lakecdc_mongodb.sql).

  Incremental runs pick up bronze rows of batches after the model's watermark (table lakecdc_state in
  the model's schema), up to the invocation's bound of the source (lakecdc_bronze_bound). For every key
  those rows touch, the state is recomputed from ALL bronze events of that key: so late, duplicated and
  replayed deliveries converge to the same result as a full refresh, an older event never wins over a
  newer one, and TOAST placeholders take the latest available value. A truncate (op t) deletes / closes every row older than it. No new rows: no statement at all,
  so no new Delta version.
-#}

{% macro lakecdc_state_relation(schema) -%}
  {{ return(api.Relation.create(schema=schema, identifier='lakecdc_state', type='table')) }}
{%- endmacro %}

{#- Parquet tables are built in full every time (lakecdc_require_delta): no watermarks to keep. A state table in
    dbt's relation cache (listed when the run began) is not created again. -#}
{% macro lakecdc_ensure_state(state) %}
  {%- if lakecdc.lakecdc_table_format() == 'delta'
         and adapter.get_relation(database=state.database, schema=state.schema, identifier=state.identifier) is none -%}
    {%- do lakecdc.lakecdc_create_table_if_missing(state, 'model string, batch_id bigint, updated_at timestamp', 'lakecdc_state_ddl') -%}
  {%- endif -%}
{% endmacro %}

{#- The state table's watermarks are read once per dbt invocation, for all its models (a model's own row is written
    only by the model itself, after its read). -#}
{% macro lakecdc_read_watermark(state, relation) %}
  {%- set cache = lakecdc.lakecdc_invocation_cache() -%}
  {%- set key = ['watermarks', state | string] | tojson -%}
  {%- if key not in cache -%}
    {%- set marks = {} -%}
    {%- for r in run_query("select model, max(batch_id) from " ~ state ~ " group by model").rows if r[1] is not none -%}
      {%- do marks.update({r[0]: r[1] | int}) -%}
    {%- endfor -%}
    {%- do cache.setdefault(key, marks) -%}
  {%- endif -%}
  {{ return(cache[key].get(relation | string, -1)) }}
{% endmacro %}

{#- An append, not a MERGE: appends of models built at the same time (dbt threads) do not conflict in Delta, and
    the watermark read is the model's max(batch_id). When the invocation has the package's on-run-end hook
    (lakecdc_on_run_end), the watermark waits for it, and the hook writes all the invocation's watermarks in one
    append: one Delta commit instead of one per model (40 for 20 tables, ~0.15 s each). A build that stops before
    the hook leaves the model's older watermark, and the next build recomputes the keys of the batches since then
    from all their events, which gives the same rows again (see the top of this file). -#}
{% macro lakecdc_write_watermark(state, relation, batch_id) %}
  {%- if lakecdc.lakecdc_table_format() != 'delta' -%}{{ return(none) }}{%- endif -%}
  {%- if lakecdc.lakecdc_watermarks_wait_for_run_end() -%}
    {%- set pending = lakecdc.lakecdc_invocation_cache().setdefault('pending_watermarks', {}) -%}
    {%- do pending.setdefault(state | string, [state, {}])[1].update({relation | string: batch_id}) -%}
    {{ return(none) }}
  {%- endif -%}
  {%- call statement('lakecdc_state_write') -%}{{ lakecdc.lakecdc_watermarks_insert(state, {relation | string: batch_id}) }}{%- endcall -%}
{% endmacro %}

{% macro lakecdc_watermarks_insert(state, marks) -%}
  insert into {{ state }}
  {%- for model_name, batch_id in marks | dictsort %}
  select {{ lakecdc.lakecdc_lit(model_name) }} as model, cast({{ batch_id }} as bigint) as batch_id,
         current_timestamp() as updated_at{% if not loop.last %} union all{% endif %}
  {%- endfor %}
{%- endmacro %}

{#- Whether this invocation runs the package's on-run-end hook: a project that takes the macros through
    macro-paths and declares only on-run-start keeps writing each watermark with its model. -#}
{% macro lakecdc_watermarks_wait_for_run_end() %}
  {%- set cache = lakecdc.lakecdc_invocation_cache() -%}
  {%- if 'watermarks_wait' not in cache -%}
    {%- set ns = namespace(found=false) -%}
    {%- for node in graph.nodes.values() if node.resource_type == 'operation'
                                            and 'lakecdc_on_run_end' in (node.raw_code or '') -%}
      {%- set ns.found = true -%}
    {%- endfor -%}
    {%- do cache.setdefault('watermarks_wait', ns.found) -%}
  {%- endif -%}
  {{ return(cache['watermarks_wait']) }}
{% endmacro %}

{#- on-run-start (dbt_project.yml): the target schema's state table exists before models run at the same time
    (their own "create if not exists" would race to create it), and so does the work schema (lakecdc_work_table
    writes its tables there without asking for it once per model). -#}
{% macro lakecdc_on_run_start() %}
  {%- if execute -%}
    {%- if lakecdc.lakecdc_table_format() == 'delta' -%}
      {%- set state = lakecdc.lakecdc_state_relation(target.schema) -%}
      {%- do adapter.create_schema(state) -%}
      {%- do lakecdc.lakecdc_ensure_state(state) -%}
    {%- endif -%}
    {%- call statement('lakecdc_work_schema') -%}create schema if not exists {{ var('lakecdc_work_schema', 'lakecdc_work') }}{%- endcall -%}
  {%- endif -%}
{% endmacro %}

{#- on-run-end (dbt_project.yml): the watermarks of the models this invocation built (lakecdc_write_watermark keeps
    them per state table), in one append per state table. -#}
{% macro lakecdc_on_run_end() %}
  {%- if execute -%}
    {%- for key, entry in lakecdc.lakecdc_invocation_cache().pop('pending_watermarks', {}) | dictsort -%}
      {%- call statement('lakecdc_state_write') -%}{{ lakecdc.lakecdc_watermarks_insert(entry[0], entry[1]) }}{%- endcall -%}
    {%- endfor -%}
  {%- endif -%}
{% endmacro %}

{#- The rows of a query over bronze up to the invocation's bounds (lakecdc_bronze_bound), read once per dbt invocation:
    those rows do not change while it runs, and a table's current and history models, at the same watermark, ask
    the same questions of them (lakecdc_new_rows). -#}
{% macro lakecdc_bounded_rows(query) %}
  {%- set cache = lakecdc.lakecdc_invocation_cache() -%}
  {%- set key = ['rows', local_md5(query)] | tojson -%}
  {%- if key not in cache -%}{%- do cache.setdefault(key, run_query(query).rows) -%}{%- endif -%}
  {{ return(cache[key]) }}
{% endmacro %}

{#- What the staging rows after `watermark` hold: (row count, max batch, truncate in them?) and all
    truncate seqs of the table (few) in ascending order. `staging_sql`: lakecdc_staging_meta's. -#}
{% macro lakecdc_new_rows(staging_sql, watermark, spec, source_name) %}
  {#- one statement: a summary row of the new rows, then a row per truncate seq (the instant as a number: a
      timestamp written as text and read back moves by the session time zone's offset in the hour a DST change
      repeats) -#}
  {%- set rows = lakecdc.lakecdc_bounded_rows("select 'n' as kind, count(*) as n, max(_batch_id) as max_batch, "
                           ~ "max(case when _op = 't' then 1 else 0 end) as has_truncate, "
                           ~ "cast(null as string) as seq, cast(null as bigint) as ts from ("
                           ~ staging_sql ~ ") __n where _batch_id > " ~ watermark
                           ~ " union all select 't', null, null, null, _seq, max(unix_micros(_source_ts)) from ("
                           ~ staging_sql ~ ") __t where _op = 't' group by _seq") -%}
  {%- set summary = rows | selectattr(0, 'equalto', 'n') | first -%}
  {#- creates with unavailable values (primary-key changes, see lakecdc_carry_over): a query of its own, so that
      only creates are read; none to look for without new rows. Over bronze's own rows, it looks for the
      placeholder anywhere in the event's text (a superset: a false hit only costs the carry-over's work): Sail
      plans the decoded form (_unavailable of every column) in 0.3 s per model, this in a few ms. -#}
  {%- if summary[1] | int == 0 -%}
    {%- set carry = [] -%}
  {%- elif spec.get('events_sql') -%}
    {%- set carry = lakecdc.lakecdc_bounded_rows("select 1 from (" ~ staging_sql ~ ") __c where _batch_id > " ~ watermark
                                                  ~ " and _op = 'c' and _lsn is not null and size(_unavailable) > 0 limit 1") -%}
  {%- else -%}
    {%- set p = var('lakecdc_unavailable_placeholder', '__debezium_unavailable_value') -%}
    {%- set b64 = var('lakecdc_unavailable_placeholder_base64', 'X19kZWJleml1bV91bmF2YWlsYWJsZV92YWx1ZQ==') -%}
    {%- set carry = lakecdc.lakecdc_bounded_rows("select 1 from " ~ lakecdc.lakecdc_bronze_relation(source_name, 'events')
                              ~ " e where " ~ spec['lineage']['filter'] ~ " and e.op = 'c' and (" ~ spec['lineage']['batch']
                              ~ ") > " ~ watermark ~ lakecdc.lakecdc_bound_filter(spec['lineage'], spec.get('bound'))
                              ~ " and get_json_object(e.value, '$.source.lsn') is not null"
                              ~ " and (instr(e.value, " ~ lakecdc.lakecdc_lit(p) ~ ") > 0 or instr(e.value, "
                              ~ lakecdc.lakecdc_lit(b64) ~ ") > 0) limit 1") -%}
  {%- endif -%}
  {%- set truncs = [] -%}
  {%- for r in rows | selectattr(0, 'equalto', 't') | sort(attribute=4) -%}
    {%- do truncs.append([r[4], r[5]]) -%}
  {%- endfor -%}
  {{ return({'count': summary[1] | int, 'max_batch': summary[2], 'has_truncate': summary[3] == 1, 'truncates': truncs,
             'key_change_toast': carry | length > 0}) }}
{% endmacro %}

{#- Columns added by ALTER TABLE (lakecdc_column_adds) that the existing silver table lacks: they are added even
    when no new event arrived, and when one has a default all keys are recomputed, so that the rows older than
    the ADD get it. One cheap query, only for tables with such columns. -#}
{% macro lakecdc_missing_added(relation, spec) %}
  {%- set added = spec['columns'] | selectattr('added') | list -%}
  {%- if not added -%}{{ return([]) }}{%- endif -%}
  {%- set have = run_query('select * from ' ~ relation ~ ' limit 0').column_names | map('lower') | list -%}
  {%- set out = [] -%}
  {%- for c in added if (c['name'] | lower) not in have -%}{%- do out.append(c) -%}{%- endfor -%}
  {{ return(out) }}
{% endmacro %}

{#- The events to (re)compute: every non-truncate event of the keys touched after the watermark. With
    `carry` (new rows hold a create with unavailable values, see lakecdc_carry_over), also every event of the
    keys of all primary-key changes whose create lacked a value, and those values carried over. `meta_sql`: the
    staging rows without values (lakecdc_staging_meta), for the subqueries that pick the keys. -#}
{% macro lakecdc_touched_events(spec, staging_sql, meta_sql, watermark, all_keys, target, carry=false) -%}
  {%- set events -%}
  select * from ({{ staging_sql }}) __e
  where _op <> 't'
  {%- if not all_keys %}
    and (_key_json in (select _key_json from ({{ meta_sql }}) __n where _batch_id > {{ watermark }} and _op <> 't')
    {%- if carry %}
         or _key_json in (select _key_json from ({{ meta_sql }}) __k where _lsn in (
               select _lsn from ({{ meta_sql }}) __c where _op = 'c' and size(_unavailable) > 0))
    {%- endif %})
  {%- endif %}
  {%- endset -%}
  {%- if carry -%}{{ lakecdc.lakecdc_carry_over(spec, events, target) }}{%- else -%}{{ events }}{%- endif -%}
{%- endmacro %}

{#- Primary-key changes of rows with unavailable (TOASTed, unchanged) values. PostgreSQL under REPLICA IDENTITY
    DEFAULT logs no old value for them, so the create of the new key carries the placeholder while its delete
    carries only the key. Both events come from one source change (the same source.lsn, `_lsn`): the create
    continues the row the delete ended. Every event gets its row's lineage (the incarnation of its key, i.e.
    the key and the seq of its latest create/read, followed back through such delete/create pairs to the first
    one however long the chain, see lakecdc_lineage_roots), and an unavailable value takes the latest available
    value of its lineage before it (a delete's before image is no source: under DEFAULT identity it holds only
    the key). Returns the events with the same columns, those values filled in. -#}
{% macro lakecdc_carry_over(spec, events_sql, target) -%}
  {%- set keys = spec['keys'] | map(attribute='name') | list -%}
  {%- set toast = spec['columns'] | selectattr('toast') | list -%}
  {{ lakecdc.lakecdc_incarnations(events_sql) }},
  __l as (
    select __i.*, coalesce(__r.__root, __i.__inc) as __lineage
    from __i left join {{ lakecdc.lakecdc_lineage_roots(events_sql, target) }} __r on __r.__child = __i.__inc
  )
  select
    {%- for k in keys %} {{ lakecdc.lakecdc_ident(k) }},{% endfor %}
    {%- for c in spec['columns'] %}
    {%- if c['toast'] %}
    last_value(case when _op <> 'd' and not array_contains(_unavailable, {{ lakecdc.lakecdc_lit(c['name']) }})
                    then struct({{ lakecdc.lakecdc_ident(c['name']) }}) end)
      ignore nulls over (partition by __lineage order by _seq rows between unbounded preceding and current row).{{ lakecdc.lakecdc_ident(c['name']) }}
      as {{ lakecdc.lakecdc_ident(c['name']) }},
    {%- else %}
    {{ lakecdc.lakecdc_ident(c['name']) }},
    {%- endif %}
    {%- endfor %}
    filter(_unavailable, x -> x not in ({% for c in toast %}{{ lakecdc.lakecdc_lit(c['name']) }}{% if not loop.last %}, {% endif %}{% endfor %})) as _unavailable,
    _op, _seq, _source_ts, _ts, _batch_id, _key_json, _lsn
  from __l
{%- endmacro %}

{#- `with __i as (...)`: the events, each with its incarnation __inc (its key @ the seq of its key's latest
    create/read up to it). -#}
{% macro lakecdc_incarnations(events_sql) -%}
  with __i as (
    select *, concat(_key_json, '@', coalesce(last_value(case when _op in ('c', 'r') then _seq end) ignore nulls over (
                partition by _key_json order by _seq rows between unbounded preceding and current row), '')) as __inc
    from ({{ events_sql }}) __ev
  )
{%- endmacro %}

{#- A work table (__child, __root): every incarnation begun by a key change with unavailable values -> the first
    incarnation of its lineage. The parent links (the incarnation the paired delete ended) are written once, then
    followed by pointer doubling: each pass replaces every root by its own root, so a chain of n key changes
    takes about log2(n) passes, each a small join of work tables (the engines have no recursive queries). -#}
{% macro lakecdc_lineage_roots(events_sql, target) -%}
  {%- set name = target.schema ~ '__' ~ target.identifier ~ '__lineage' -%}
  {%- set links -%}
    {{ lakecdc.lakecdc_incarnations(events_sql) }}
    select __c.__inc as __child, max_by(__d.__inc, __d._seq) as __root
    from __i __c join __i __d on __c._lsn = __d._lsn and __d._op = 'd' and __d._key_json <> __c._key_json
                              and __d._seq < __c._seq
    where __c._op = 'c' and size(__c._unavailable) > 0
    group by __c.__inc
  {%- endset -%}
  {%- set work = lakecdc.lakecdc_work_table(name ~ '0', links) -%}
  {%- if execute -%}
    {%- set state = namespace(work=work, done=false) -%}
    {%- for n in range(1, 64) if not state.done -%}
      {%- set open = run_query("select count(*) from " ~ state.work ~ " __a join " ~ state.work
                               ~ " __b on __b.__child = __a.__root").rows[0][0] | int -%}
      {%- if open == 0 -%}
        {%- set state.done = true -%}
      {%- else -%}
        {%- set state.work = lakecdc.lakecdc_work_table(name ~ (n % 2), "select __a.__child, coalesce(__b.__root, __a.__root) as __root from "
                                                ~ state.work ~ " __a left join " ~ state.work ~ " __b on __b.__child = __a.__root") -%}
      {%- endif -%}
    {%- endfor -%}
    {%- set work = state.work -%}
  {%- endif -%}
  {{ return(work) }}
{%- endmacro %}

{#- SQL: the first truncate after `seq_expr` (or null) from the ascending list `truncs` of [seq, source ts in µs]:
    its seq (what='seq') or its source timestamp (what='ts'). -#}
{% macro lakecdc_next_truncate(seq_expr, truncs, what) -%}
  {%- if truncs -%}
  case {% for t in truncs %}when {{ seq_expr }} < {{ lakecdc.lakecdc_lit(t[0]) }} then
    {%- if what == 'seq' %} {{ lakecdc.lakecdc_lit(t[0]) }}{% elif t[1] is none %} cast(null as timestamp){% else %} timestamp_micros({{ t[1] | int }}){% endif %} {% endfor %}end
  {%- elif what == 'seq' -%}cast(null as string)
  {%- else -%}cast(null as timestamp){%- endif -%}
{%- endmacro %}

{% macro lakecdc_key_join(spec, left, right) -%}
  {%- for k in spec['keys'] -%}
  {{ left }}.{{ lakecdc.lakecdc_ident(k['name']) }} <=> {{ right }}.{{ lakecdc.lakecdc_ident(k['name']) }}{% if not loop.last %} and {% endif %}
  {%- endfor -%}
{%- endmacro %}

{#- Latest state per key: columns, _op, _seq, _source_ts, __deleted, __deleted_at. One max_by per column: Sail
    aggregates max_by(struct(every column), _seq) several times slower (measured on 1,000,000 events: 7.7 s
    against 2.7 s); a key's events have distinct seqs (a duplicated delivery is the same event), so the columns
    come from the same event. A placeholder column takes its value from the latest event that had it. -#}
{% macro lakecdc_current_changes(spec, events_sql, truncs) -%}
  {%- set keys = spec['keys'] | map(attribute='name') | list -%}
  {%- set last_truncate = truncs[-1][0] if truncs else none -%}
  select
    {%- for k in keys %} {{ lakecdc.lakecdc_ident(k) }},{% endfor %}
    {%- for c in spec['columns'] %}
    __c{{ loop.index }} as {{ lakecdc.lakecdc_ident(c['name']) }},
    {%- endfor %}
    case when __op = 'd' then 'd'
         {% if last_truncate %}when __seq < {{ lakecdc.lakecdc_lit(last_truncate) }} then 't'{% endif %}
         else __op end as _op,
    __seq as _seq,
    __source_ts as _source_ts,
    (__op = 'd' {% if last_truncate %}or __seq < {{ lakecdc.lakecdc_lit(last_truncate) }}{% endif %}) as __deleted,
    case when __op = 'd' then __source_ts
         {% if last_truncate %}when __seq < {{ lakecdc.lakecdc_lit(last_truncate) }} then {{ lakecdc.lakecdc_next_truncate("''", truncs[-1:], 'ts') }}{% endif %} end as __deleted_at
  from (
    select
      {%- for k in keys %} {{ lakecdc.lakecdc_ident(k) }},{% endfor %}
      {%- for c in spec['columns'] %}
      {%- if c['toast'] %}
      max_by({{ lakecdc.lakecdc_ident(c['name']) }},
             case when not array_contains(_unavailable, {{ lakecdc.lakecdc_lit(c['name']) }}) then _seq end) as __c{{ loop.index }},
      {%- else %}
      max_by({{ lakecdc.lakecdc_ident(c['name']) }}, _seq) as __c{{ loop.index }},
      {%- endif %}
      {%- endfor %}
      max_by(_op, _seq) as __op, max(_seq) as __seq, max_by(_source_ts, _seq) as __source_ts
    from ({{ events_sql }}) __ev
    group by {% for k in keys %}{{ lakecdc.lakecdc_ident(k) }}{% if not loop.last %}, {% endif %}{% endfor %}
  ) __g
{%- endmacro %}

{#- Materialize the computed changes in a work table before the MERGE: Sail evaluates a MERGE whose source
    is a large query several times slower than the same query written out first (measured: 81 s -> 12 s
    for 500,000 changes into 5,000,000 rows). -#}
{% macro lakecdc_stage_changes(target, select_sql) %}
  {{ return(lakecdc.lakecdc_work_table(target.schema ~ '__' ~ target.identifier, select_sql)) }}
{% endmacro %}

{#- How staged changes reach an existing table (var lakecdc_merge_strategy):
    - `merge`: one Delta MERGE, which rewrites only the files holding touched keys (Databricks and Spark do it well);
    - `overwrite`: the table rewritten, in one Delta commit, from one full outer join of it and the changes.
    The default is `overwrite` on Sail and `merge` elsewhere: Sail 0.7 plans a MERGE as three full joins of the
    table and the changes (the rows to write, the files they touch, the files to remove), so the whole table is
    scanned three times whatever the number of changes (measured on 10,000,000 rows: 1,000,000 changes 9.1 s
    by MERGE, 2.3 s by overwrite; 1,000 changes 6.4 s against 1.7 s). Both give the same rows. -#}
{% macro lakecdc_merge_strategy() %}
  {%- set strategy = var('lakecdc_merge_strategy', 'overwrite' if var('lakecdc_engine', 'sail') == 'sail' else 'merge') -%}
  {%- if strategy not in ('merge', 'overwrite') -%}
    {{ exceptions.raise_compiler_error("lakecdc: var lakecdc_merge_strategy is '" ~ strategy ~ "'; use merge or overwrite") }}
  {%- endif -%}
  {{ return(strategy) }}
{% endmacro %}

{#- The `overwrite` strategy: every row of `target` and of the work table `work`, joined on `on_sql` (`__t`, `__s`),
    each target column named in `columns` taking the change's value (`__s.<column>`, or the expression over `__s`
    that `overrides` gives for its lower-case name) where the row has a change and the target's value otherwise,
    cast to the target's type. Changes where
    `drop_sql` holds take their key out of the table and are not inserted (hard deletes): the target is
    anti-joined with them and they are left out of the join, not filtered after it, because Sail evaluates a
    table's NOT NULL checks together with such a filter, on the rows it leaves out too. Where `keep_sql` holds,
    the columns named in `kept` keep the target's values (soft deletes). That is the MERGE's result: matched rows
    updated, unmatched changes inserted (their other columns null), unmatched rows kept. `target_columns`: the
    target's lakecdc_table_columns when the caller has them (read again otherwise). -#}
{% macro lakecdc_overwrite_with_changes(target, work, on_sql, columns, overrides={}, drop_sql=none, keep_sql=none,
                                        kept=[], target_columns=none) %}
  {%- set values = {} -%}
  {%- for c in columns -%}{%- do values.update({c | lower: '__s.' ~ lakecdc.lakecdc_ident(c)}) -%}{%- endfor -%}
  {%- do values.update(overrides) -%}
  {%- call statement('main') -%}
    insert overwrite table {{ target }}
    select
    {%- for c in target_columns or lakecdc.lakecdc_table_columns(target) %}
      {%- set name = c['name'] | lower %}
      {%- if name in values %}
      cast(case when __s._seq is not null{% if keep_sql and name in kept %} and not ({{ keep_sql }}){% endif %}
                then {{ values[name] }} else __t.{{ lakecdc.lakecdc_ident(c['name']) }} end as {{ c['type'] }})
      {%- else %}
      __t.{{ lakecdc.lakecdc_ident(c['name']) }}
      {%- endif %} as {{ lakecdc.lakecdc_ident(c['name']) }}{% if not loop.last %},{% endif %}
    {%- endfor %}
    {%- if drop_sql %}
    from (select __t.*, true as __lakecdc_present from {{ target }} __t
          left anti join (select * from {{ work }} where {{ drop_sql }}) __s on {{ on_sql }}) __t
    full outer join (select * from {{ work }} where not ({{ drop_sql }})) __s on {{ on_sql }}
    {%- else %}
    from (select *, true as __lakecdc_present from {{ target }}) __t
    full outer join {{ work }} __s on {{ on_sql }}
    {%- endif %}
  {%- endcall -%}
{% endmacro %}

{#- (Re)write the work table `identifier` in the work schema (var lakecdc_work_schema, made by lakecdc_on_run_start)
    as `select_sql`. -#}
{% macro lakecdc_work_table(identifier, select_sql) %}
  {%- set work = api.Relation.create(schema=var('lakecdc_work_schema', 'lakecdc_work'), identifier=identifier,
                                     type='table') -%}
  {%- do lakecdc.lakecdc_replace_table(work, select_sql, 'lakecdc_stage', lakecdc.lakecdc_location(work)) -%}
  {{ return(work) }}
{% endmacro %}

{% macro lakecdc_meta_columns(soft) -%}
  {%- set cols = [{'name': '_op', 'type': 'string'}, {'name': '_seq', 'type': 'string'},
                  {'name': '_source_ts', 'type': 'timestamp'}] -%}
  {%- if soft -%}
    {%- do cols.extend([{'name': '_is_deleted', 'type': 'boolean'}, {'name': '_deleted_at', 'type': 'timestamp'}]) -%}
  {%- endif -%}
  {{ return(cols) }}
{%- endmacro %}

{#- Current state and history are per key: a table without one gets a changelog model (lakecdc generate), and a
    hand-written model on such a table stops with this line instead of a SQL parser error. -#}
{% macro lakecdc_require_key(spec, table_id) %}
  {%- if execute and spec['found'] and not spec['keys'] -%}
    {{ exceptions.raise_compiler_error("lakecdc: " ~ table_id ~ " has no primary key, so it has no current state or "
        ~ "history per key; use its changelog model (`lakecdc generate` writes <model>_changelog), or give the "
        ~ "table a primary key") }}
  {%- endif -%}
{% endmacro %}

{% materialization lakecdc_current, adapter='spark' %}
  {%- set target = this.incorporate(type='table') -%}
  {%- set existing = adapter.get_relation(database=this.database, schema=this.schema, identifier=this.identifier) -%}
  {%- set spec = lakecdc.lakecdc_table_spec(config.get('lakecdc_source'), config.get('lakecdc_table_id'),
                                            config.get('lakecdc_mongodb_fields')) -%}
  {%- do lakecdc.lakecdc_require_key(spec, config.get('lakecdc_table_id')) -%}
  {%- set soft = config.get('lakecdc_delete_mode', var('lakecdc_delete_mode', 'hard')) == 'soft' -%}
  {%- set full = existing is none or should_full_refresh() or lakecdc.lakecdc_mongodb_types_changed(existing, spec) -%}
  {%- set state = lakecdc.lakecdc_state_relation(this.schema) -%}
  {{ run_hooks(pre_hooks) }}
  {%- do lakecdc.lakecdc_ensure_state(state) -%}
  {%- set watermark = -1 if full else lakecdc.lakecdc_read_watermark(state, target) -%}
  {%- set meta = lakecdc.lakecdc_staging_meta(config.get('lakecdc_source'), config.get('lakecdc_table_id'), spec) -%}
  {%- set new = lakecdc.lakecdc_new_rows(meta, watermark, spec, config.get('lakecdc_source')) -%}
  {%- set truncs = new['truncates'] -%}
  {%- set columns = spec['keys'] + spec['columns'] + lakecdc.lakecdc_meta_columns(soft) -%}
  {%- set missing_added = [] if full else lakecdc.lakecdc_missing_added(target, spec) -%}

  {%- if not full and new['count'] == 0 and not missing_added -%}
    {{ log("lakecdc: " ~ target ~ " is up to date (no bronze rows after batch " ~ watermark ~ ")", info=true) }}
    {%- call statement('main') -%}select 1 as up_to_date{%- endcall -%}
  {%- else -%}
    {%- set events_sql = lakecdc.lakecdc_touched_events(spec, sql, meta, watermark, full or new['has_truncate'] or watermark < 0
                                                or (missing_added | selectattr('default_added') | list),
                                                target, new['key_change_toast']) -%}
    {%- set changes = lakecdc.lakecdc_current_changes(spec, events_sql, truncs) -%}
    {%- if full -%}
      {%- set select_sql -%}
        select {% for c in columns %}{% if c['name'] == '_is_deleted' %}__deleted{% elif c['name'] == '_deleted_at' %}__deleted_at{% else %}{{ lakecdc.lakecdc_ident(c['name']) }}{% endif %} as {{ lakecdc.lakecdc_ident(c['name']) }}{% if not loop.last %}, {% endif %}{% endfor %}
        from ({{ changes }}) __c
        {%- if not soft %} where not __deleted{% endif %}
      {%- endset -%}
      {%- do lakecdc.lakecdc_replace_table(target, select_sql, 'main', location_clause(), columns) -%}
      {%- do lakecdc.lakecdc_remember_columns(target, columns) -%}
    {%- else -%}
      {%- do lakecdc.lakecdc_require_delta(target) -%}
      {%- set target_columns = lakecdc.lakecdc_evolve_schema(target, columns, spec['renames']) -%}
      {%- set value_cols = spec['columns'] | map(attribute='name') | list + ['_op', '_seq', '_source_ts'] -%}
      {%- set insert_cols = spec['keys'] | map(attribute='name') | list + value_cols -%}
      {%- set work = lakecdc.lakecdc_stage_changes(target, changes) -%}
      {%- if lakecdc.lakecdc_merge_strategy() == 'overwrite' -%}
        {%- if soft -%}
          {#- a deleted key keeps its last values; a key deleted before silver saw it comes in as deleted -#}
          {%- do lakecdc.lakecdc_overwrite_with_changes(target, work, lakecdc.lakecdc_key_join(spec, '__t', '__s'),
                insert_cols, {'_is_deleted': '__s.__deleted', '_deleted_at': '__s.__deleted_at'},
                keep_sql='__s.__deleted and __t.__lakecdc_present is not null',
                kept=spec['columns'] | map(attribute='name') | map('lower') | list, target_columns=target_columns) -%}
        {%- else -%}
          {%- do lakecdc.lakecdc_overwrite_with_changes(target, work, lakecdc.lakecdc_key_join(spec, '__t', '__s'),
                insert_cols, drop_sql='coalesce(__deleted, false)', target_columns=target_columns) -%}
        {%- endif -%}
      {%- else -%}
        {%- call statement('main') -%}
          merge into {{ target }} __t
          using {{ work }} __s
          on {{ lakecdc.lakecdc_key_join(spec, '__t', '__s') }}
          {%- if soft %}
          when matched and __s.__deleted then update set
            _is_deleted = true, _deleted_at = __s.__deleted_at, _op = __s._op, _seq = __s._seq, _source_ts = __s._source_ts
          when matched then update set
            {% for c in value_cols %}{{ lakecdc.lakecdc_ident(c) }} = __s.{{ lakecdc.lakecdc_ident(c) }}, {% endfor %}_is_deleted = false, _deleted_at = null
          when not matched then insert (
            {%- for c in insert_cols %}{{ lakecdc.lakecdc_ident(c) }}, {% endfor %}_is_deleted, _deleted_at)
            values ({% for c in insert_cols %}__s.{{ lakecdc.lakecdc_ident(c) }}, {% endfor %}__s.__deleted, __s.__deleted_at)
          {%- else %}
          when matched and __s.__deleted then delete
          when matched then update set
            {% for c in value_cols %}{{ lakecdc.lakecdc_ident(c) }} = __s.{{ lakecdc.lakecdc_ident(c) }}{% if not loop.last %}, {% endif %}{% endfor %}
          when not matched and not __s.__deleted then insert (
            {%- for c in insert_cols %}{{ lakecdc.lakecdc_ident(c) }}{% if not loop.last %}, {% endif %}{% endfor %})
            values ({% for c in insert_cols %}__s.{{ lakecdc.lakecdc_ident(c) }}{% if not loop.last %}, {% endif %}{% endfor %})
          {%- endif %}
        {%- endcall -%}
      {%- endif -%}
      {%- do lakecdc.lakecdc_remember_columns(target, target_columns) -%}
    {%- endif -%}
    {%- if new['max_batch'] is not none -%}
      {%- do lakecdc.lakecdc_write_watermark(state, target, new['max_batch']) -%}
    {%- endif -%}
  {%- endif -%}
  {{ run_hooks(post_hooks) }}
  {%- do persist_docs(target, model) -%}
  {{ return({'relations': [target]}) }}
{% endmaterialization %}

{#- Versions: every non-delete event of the touched keys, closed by the next event of its key or the next
    truncate, whichever comes first. Placeholder values take the latest available earlier value. -#}
{% macro lakecdc_history_versions(spec, events_sql, truncs) -%}
  {%- set keys = spec['keys'] | map(attribute='name') | list -%}
  {%- set part -%}partition by {% for k in keys %}{{ lakecdc.lakecdc_ident(k) }}{% if not loop.last %}, {% endif %}{% endfor %} order by _seq{%- endset -%}
  select
    {%- for k in keys %} {{ lakecdc.lakecdc_ident(k) }},{% endfor %}
    {%- for c in spec['columns'] %}
    {{ lakecdc.lakecdc_ident(c['name']) }},
    {%- endfor %}
    _op, _seq, _source_ts,
    __from_ts as valid_from,
    case when __to_seq is null then cast(null as timestamp) when __to_seq = __next_seq then __next_ts
         else greatest(__trunc_ts, __from_ts) end as valid_to,
    _seq as valid_from_seq,
    __to_seq as valid_to_seq,
    __to_seq is null as is_current
  from (
    select *,
      case when __next_seq is null then __trunc_seq when __trunc_seq is null then __next_seq
           else least(__next_seq, __trunc_seq) end as __to_seq
    from (
      select
        {%- for k in keys %} {{ lakecdc.lakecdc_ident(k) }},{% endfor %}
        {%- for c in spec['columns'] %}
        {%- if c['toast'] %}
        last_value(case when not array_contains(_unavailable, {{ lakecdc.lakecdc_lit(c['name']) }}) then struct({{ lakecdc.lakecdc_ident(c['name']) }}) end)
          ignore nulls over ({{ part }} rows between unbounded preceding and current row).{{ lakecdc.lakecdc_ident(c['name']) }} as {{ lakecdc.lakecdc_ident(c['name']) }},
        {%- else %}
        {{ lakecdc.lakecdc_ident(c['name']) }},
        {%- endif %}
        {%- endfor %}
        _op, _seq, _source_ts, __from_ts,
        lead(_seq) over ({{ part }}) as __next_seq,
        lead(__from_ts) over ({{ part }}) as __next_ts,
        {{ lakecdc.lakecdc_next_truncate('_seq', truncs, 'seq') }} as __trunc_seq,
        {{ lakecdc.lakecdc_next_truncate('_seq', truncs, 'ts') }} as __trunc_ts
      from (
        {#- a version starts at the latest source time of its key so far: source clocks differ in precision (a
            MariaDB snapshot read carries milliseconds, the binlog event of an update in the same second does
            not), and a version must not end before it starts -#}
        select *, max(_source_ts) over ({{ part }} rows between unbounded preceding and current row) as __from_ts
        from (
          select *, row_number() over (partition by _seq order by _batch_id) as __dup from ({{ events_sql }}) __ev
        ) __d where __dup = 1
      ) __e
    ) __w
  ) __v
  where _op <> 'd'
{%- endmacro %}

{% materialization lakecdc_history, adapter='spark' %}
  {%- set target = this.incorporate(type='table') -%}
  {%- set existing = adapter.get_relation(database=this.database, schema=this.schema, identifier=this.identifier) -%}
  {%- set spec = lakecdc.lakecdc_table_spec(config.get('lakecdc_source'), config.get('lakecdc_table_id'),
                                            config.get('lakecdc_mongodb_fields')) -%}
  {%- do lakecdc.lakecdc_require_key(spec, config.get('lakecdc_table_id')) -%}
  {%- set full = existing is none or should_full_refresh() or lakecdc.lakecdc_mongodb_types_changed(existing, spec) -%}
  {%- set state = lakecdc.lakecdc_state_relation(this.schema) -%}
  {{ run_hooks(pre_hooks) }}
  {%- do lakecdc.lakecdc_ensure_state(state) -%}
  {%- set watermark = -1 if full else lakecdc.lakecdc_read_watermark(state, target) -%}
  {%- set meta = lakecdc.lakecdc_staging_meta(config.get('lakecdc_source'), config.get('lakecdc_table_id'), spec) -%}
  {%- set new = lakecdc.lakecdc_new_rows(meta, watermark, spec, config.get('lakecdc_source')) -%}
  {%- set truncs = new['truncates'] -%}
  {%- set hist_cols = [{'name': 'valid_from', 'type': 'timestamp'}, {'name': 'valid_to', 'type': 'timestamp'},
                       {'name': 'valid_from_seq', 'type': 'string'}, {'name': 'valid_to_seq', 'type': 'string'},
                       {'name': 'is_current', 'type': 'boolean'}] -%}
  {%- set columns = spec['keys'] + spec['columns'] + lakecdc.lakecdc_meta_columns(false) + hist_cols -%}
  {%- set missing_added = [] if full else lakecdc.lakecdc_missing_added(target, spec) -%}

  {%- if not full and new['count'] == 0 and not missing_added -%}
    {{ log("lakecdc: " ~ target ~ " is up to date (no bronze rows after batch " ~ watermark ~ ")", info=true) }}
    {%- call statement('main') -%}select 1 as up_to_date{%- endcall -%}
  {%- else -%}
    {%- set events_sql = lakecdc.lakecdc_touched_events(spec, sql, meta, watermark, full or new['has_truncate'] or watermark < 0
                                                or (missing_added | selectattr('default_added') | list),
                                                target, new['key_change_toast']) -%}
    {%- set versions = lakecdc.lakecdc_history_versions(spec, events_sql, truncs) -%}
    {%- if full -%}
      {%- set select_sql -%}
        select {% for c in columns %}{{ lakecdc.lakecdc_ident(c['name']) }}{% if not loop.last %}, {% endif %}{% endfor %}
        from ({{ versions }}) __v
      {%- endset -%}
      {%- do lakecdc.lakecdc_replace_table(target, select_sql, 'main', location_clause(), columns) -%}
      {%- do lakecdc.lakecdc_remember_columns(target, columns) -%}
    {%- else -%}
      {%- do lakecdc.lakecdc_require_delta(target) -%}
      {%- set target_columns = lakecdc.lakecdc_evolve_schema(target, columns, spec['renames']) -%}
      {%- set names = columns | map(attribute='name') | list -%}
      {%- set work = lakecdc.lakecdc_stage_changes(target, versions) -%}
      {%- if lakecdc.lakecdc_merge_strategy() == 'overwrite' -%}
        {%- do lakecdc.lakecdc_overwrite_with_changes(target, work,
              lakecdc.lakecdc_key_join(spec, '__t', '__s') ~ ' and __t.valid_from_seq = __s.valid_from_seq', names,
              target_columns=target_columns) -%}
      {%- else -%}
        {%- call statement('main') -%}
          merge into {{ target }} __t
          using {{ work }} __s
          on {{ lakecdc.lakecdc_key_join(spec, '__t', '__s') }} and __t.valid_from_seq = __s.valid_from_seq
          when matched then update set
            {% for c in names %}{{ lakecdc.lakecdc_ident(c) }} = __s.{{ lakecdc.lakecdc_ident(c) }}{% if not loop.last %}, {% endif %}{% endfor %}
          when not matched then insert (
            {%- for c in names %}{{ lakecdc.lakecdc_ident(c) }}{% if not loop.last %}, {% endif %}{% endfor %})
            values ({% for c in names %}__s.{{ lakecdc.lakecdc_ident(c) }}{% if not loop.last %}, {% endif %}{% endfor %})
        {%- endcall -%}
      {%- endif -%}
      {%- do lakecdc.lakecdc_remember_columns(target, target_columns) -%}
    {%- endif -%}
    {%- if new['max_batch'] is not none -%}
      {%- do lakecdc.lakecdc_write_watermark(state, target, new['max_batch']) -%}
    {%- endif -%}
  {%- endif -%}
  {{ run_hooks(post_hooks) }}
  {%- do persist_docs(target, model) -%}
  {{ return({'relations': [target]}) }}
{% endmaterialization %}
