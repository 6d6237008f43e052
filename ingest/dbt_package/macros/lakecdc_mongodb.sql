{#-
  MongoDB collections (docs/connectors/mongodb-silver.md). Debezium's MongoDB connector sends each document as a
  string of MongoDB extended JSON, so no schema names its fields: `lakecdc generate` infers them from the captured
  documents (ingest/generate/mongodb.py) and the generated models carry the fields with their type names
  ([name, type] pairs), which `lakecdc.lakecdc_table_spec(source, table_id, mongodb_fields)` turns into the staging
  columns:

    _id          the event key's `id` (the _id as extended JSON text, exactly as Debezium keys the events): the key
    _id_value    the _id as its type (from the key, so deletes have it too)
    <field>      each top-level field, converted to its type
    _document    the whole document text (null for an update that sent only the changed fields)

  A type name is a Spark type (int, bigint, double, decimal(38,s), boolean, timestamp, string) or objectid (the
  hex text of an ObjectId), json (the text of an object or array) or text (a field of mixed kinds: each value's
  text); those three are strings in Spark.

  Which events say what (lakecdc_mongodb_events): `after` (creates, reads, and updates in change-stream modes
  that look the document up) is the whole document, and so is a `patch` without operators (old versions'
  replacements). A `patch` of $set / $unset (old versions' updates; $v ignored) or an `updateDescription`
  (change streams without the lookup) changes some fields only: the fields it names get their new value (a
  removed field, or one changed below its top level such as `address.city`, is null: silver cannot compute the
  inner change), and the other fields are marked unavailable in `_unavailable`, so current state and history
  keep their latest earlier value (the mechanism of TOASTed columns, docs/silver.md). An update in any other form
  (another operator, MongoDB 5's `$v: 2` diffs) sets every field and `_document` null.
-#}

{% macro lakecdc_mongodb_spark_type(type_name) -%}
  {{- 'string' if type_name in ('objectid', 'json', 'text') else type_name -}}
{%- endmacro %}

{#- SQL: the value of the top-level field `name` of the JSON object text `json` (an expression), as `type_name`. -#}
{% macro lakecdc_mongodb_value(json, name, type_name) -%}
  {%- set raw = "get_json_object(" ~ json ~ ", " ~ lakecdc.lakecdc_lit("$['" ~ name ~ "']") ~ ")" -%}
  {%- if type_name in ('string', 'json') -%}{{ raw }}
  {%- else -%}element_at(transform(array({{ raw }}), __x -> {{ lakecdc.lakecdc_mongodb_scalar('__x', type_name) }}), 1)
  {%- endif -%}
{%- endmacro %}

{#- SQL: the first of the extended JSON wrappers `tags` ($numberLong ...) that the raw value `x` is, unwrapped;
    else `x` itself (a plain JSON number, string or boolean, as get_json_object returns it). -#}
{% macro lakecdc_mongodb_unwrap(x, tags) -%}
  coalesce({% for tag in tags %}get_json_object({{ x }}, {{ lakecdc.lakecdc_lit("$['" ~ tag ~ "']") }}), {% endfor %}{{ x }})
{%- endmacro %}

{#- SQL: the raw value `x` of a field (get_json_object's text: a string's content, the digits of a number, the
    text of an object) as `type_name`; null when it is not of that type (a wider value than the generated type:
    `lakecdc_mongodb_fields` reports it), never rounded. Numbers keep their digits (get_json_object returns them
    as written). -#}
{% macro lakecdc_mongodb_scalar(x, type_name) -%}
  {%- set integer = "'^-?[0-9]+$'" -%}
  {%- if type_name == 'boolean' -%}try_cast({{ x }} as boolean)
  {%- elif type_name in ('int', 'bigint') -%}
    {%- set v = lakecdc.lakecdc_mongodb_unwrap(x, ['$numberInt'] if type_name == 'int' else ['$numberLong', '$numberInt']) -%}
    try_cast(case when {{ v }} rlike {{ integer }} then {{ v }} end as {{ type_name }})
  {%- elif type_name == 'double' -%}
    try_cast({{ lakecdc.lakecdc_mongodb_unwrap(x, ['$numberDouble', '$numberLong', '$numberInt']) }} as double)
  {%- elif type_name.startswith('decimal(') -%}
    {#- no more decimals than the scale: a cast would round them -#}
    {%- set v = lakecdc.lakecdc_mongodb_unwrap(x, ['$numberDecimal', '$numberLong', '$numberInt']) -%}
    {%- set scale = type_name[:-1].split(',')[1] | trim -%}
    try_cast(case when {{ v }} rlike '^-?[0-9]+([.][0-9]{0,{{ scale }}})?$' then {{ v }} end as {{ type_name }})
  {%- elif type_name == 'timestamp' -%}
    {#- $date: milliseconds (strict mode), {"$numberLong": ms} (canonical) or ISO-8601 text (relaxed) -#}
    element_at(transform(array(get_json_object({{ x }}, '$[\'$date\']')), __d -> case
      when get_json_object(__d, '$[\'$numberLong\']') rlike {{ integer }}
        then timestamp_millis(try_cast(get_json_object(__d, '$[\'$numberLong\']') as bigint))
      when __d rlike {{ integer }} then timestamp_millis(try_cast(__d as bigint))
      else try_to_timestamp(__d) end), 1)
  {%- elif type_name == 'objectid' -%}get_json_object({{ x }}, '$[\'$oid\']')
  {%- elif type_name == 'text' -%}
    {{ lakecdc.lakecdc_mongodb_unwrap(x, ['$oid', '$numberLong', '$numberInt', '$numberDouble', '$numberDecimal']) }}
  {%- else -%}{{ x }}
  {%- endif -%}
{%- endmacro %}

{#- The collection's bronze events `e` with what each says about the document:
      __doc        the whole document text, when the event has it (`after`, or a patch without operators)
      __partial    an update of some fields ($set / $unset patch, or updateDescription)
      __fields     the JSON object the fields' values are read from: the document, or a partial update's set fields
                   (names there may be paths a.b, by which no field is read)
      __touched    the fields a partial update mentions (a path a.b mentions a): set, removed ($unset,
                   removedFields) and truncated arrays
    No lambda function over a column on the way to _unavailable: Sail 0.7 fails to resolve one in a filter pushed
    down to the scan (`size(_unavailable) > 0`), so names are matched with array_except and string functions. -#}
{% macro lakecdc_mongodb_events(source_name, lineage, bound) -%}
  {%- set empty = "cast(array() as array<string>)" -%}
  {%- set sep = "chr(1)" -%}
  select e.*,
    coalesce(__doc, __set) as __fields,
    case when not __partial then {{ empty }}
         else split(regexp_replace(array_join(concat(
           coalesce(map_keys(from_json(__set, 'map<string,string>')), {{ empty }}),
           case when __patch is not null
                then coalesce(map_keys(from_json(get_json_object(__patch, '$[\'$unset\']'), 'map<string,string>')), {{ empty }})
                else concat(coalesce(from_json(get_json_object(__update, '$.removedFields'), 'array<string>'), {{ empty }}),
                            coalesce(regexp_extract_all(get_json_object(__update, '$.truncatedArrays'),
                                                        '"field"\\s*:\\s*"([^"]*)"', 1), {{ empty }})) end),
           {{ sep }}), concat('[.][^', {{ sep }}, ']*'), ''), {{ sep }}) end as __touched
  from (
    select e.*,
      case when __after is not null then __after
           when not concat({{ sep }}, array_join(__patch_keys, {{ sep }})) like concat('%', {{ sep }}, '$%') then __patch
      end as __doc,
      case when __partial and __patch is not null then get_json_object(__patch, '$[\'$set\']')
           when __partial then get_json_object(__update, '$.updatedFields') end as __set
    from (
      select e.*,
        coalesce(__after is null and (
          (size(__patch_keys) > 0 and size(array_except(cast(__patch_keys as array<string>),
                                                        cast(array('$set', '$unset', '$v') as array<string>))) = 0)
          or (__patch is null and __update is not null)), false) as __partial
      from (
        select e.*,
          get_json_object(e.value, '$.after') as __after,
          get_json_object(e.value, '$.patch') as __patch,
          get_json_object(e.value, '$.updateDescription') as __update,
          map_keys(from_json(get_json_object(e.value, '$.patch'), 'map<string,string>')) as __patch_keys
        from {{ lakecdc.lakecdc_bronze_relation(source_name, 'events') }} e
        where {{ lineage['filter'] }} and e.op is not null{{ lakecdc.lakecdc_bound_filter(lineage, bound) }}
      ) e
    ) e
  ) e
{%- endmacro %}

{#- The spec of lakecdc_table_spec for a MongoDB collection; `fields`: the document fields (`_id` too) with their
    type names, as [name, type] pairs in column order (a dict is accepted too, but dbt's model config does not
    keep a dict's order). -#}
{% macro lakecdc_mongodb_spec(source_name, table_id, fields) %}
  {%- set pairs = fields.items() | list if fields is mapping else fields -%}
  {%- set bound = lakecdc.lakecdc_bronze_bound(source_name) if execute else none -%}
  {%- set lineage = lakecdc.lakecdc_lineage(source_name, table_id) -%}
  {%- set id_text = "get_json_object(e.key, '$.id')" -%}
  {%- set ns = namespace(id_type='string') -%}
  {%- for name, type_name in pairs if name == '_id' -%}{%- set ns.id_type = type_name -%}{%- endfor -%}
  {%- set id_type = ns.id_type -%}
  {%- set keys = [{'name': '_id', 'type': 'string', 'expr': id_text}] -%}
  {%- set columns = [{'name': '_id_value', 'type': lakecdc.lakecdc_mongodb_spark_type(id_type) | trim, 'toast': false,
                      'raws': [], 'expr': lakecdc.lakecdc_mongodb_value("concat('{\"_id\":', " ~ id_text ~ ", '}')",
                                                                        '_id', id_type)}] -%}
  {%- set names = [] -%}
  {%- for name, type_name in pairs if name != '_id' -%}
    {%- set t = lakecdc.lakecdc_mongodb_spark_type(type_name) | trim -%}
    {%- do names.append(lakecdc.lakecdc_lit(name)) -%}
    {%- do columns.append({'name': name, 'type': t, 'toast': true, 'raws': [],
          'expr': 'cast(' ~ lakecdc.lakecdc_mongodb_value('e.__fields', name, type_name) ~ ' as ' ~ t ~ ')'}) -%}
  {%- endfor -%}
  {%- do columns.append({'name': '_document', 'type': 'string', 'expr': 'e.__doc', 'toast': false, 'raws': []}) -%}
  {#- a partial update leaves the fields it does not name unavailable (their latest earlier value stays). One
      expression over the list of names: written per field, Sail took seconds to plan a filter on it; no lambda
      capturing a column either: Sail 0.7 cannot resolve one pushed into a filter -#}
  {%- set unavailable -%}
    case when e.__partial then array_except(cast(array({{ names | join(', ') }}) as array<string>),
                                            cast(e.__touched as array<string>))
         else cast(array() as array<string>) end
  {%- endset -%}
  {{ return({'keys': keys, 'columns': columns, 'found': true, 'renames': {}, 'lineage': lineage, 'mongodb': true,
             'events_sql': lakecdc.lakecdc_mongodb_events(source_name, lineage, bound), 'unavailable': unavailable,
             'bound': bound}) }}
{% endmacro %}

{#- Has `lakecdc generate` changed the type of a column the existing silver table has? Then the materializations
    rebuild the table from bronze: a cast of the stored values would not always give what the new type's
    conversion gives (a timestamp cast to text is not the $date's JSON text). -#}
{% macro lakecdc_mongodb_types_changed(relation, spec) %}
  {%- if not execute or not spec.get('mongodb') or relation is none -%}{{ return(false) }}{%- endif -%}
  {%- set wanted = {} -%}
  {%- for c in spec['keys'] + spec['columns'] -%}{%- do wanted.update({c['name'] | lower: c['type']}) -%}{%- endfor -%}
  {%- for c in lakecdc.lakecdc_table_columns(relation) if (c['name'] | lower) in wanted and c['type'] != 'void'
                                                          and c['type'] != wanted[c['name'] | lower] -%}
    {{ log("lakecdc: " ~ relation ~ "." ~ c['name'] ~ " is now " ~ wanted[c['name'] | lower] ~ " (was " ~ c['type']
           ~ "): rebuilding it from bronze", info=true) }}
    {{ return(true) }}
  {%- endfor -%}
  {{ return(false) }}
{% endmacro %}

{#- Documents in current state with a top-level field that has no column (captured after the last `lakecdc
    generate`), or a value its column's type does not hold (null there): run `lakecdc generate` again, which
    adds and widens the columns. `ignored`: the fields generate gave no column (their names cannot be one). -#}
{% test lakecdc_mongodb_fields(model, ignored=[]) %}
  {%- set own = ['_id', '_id_value', '_document', '_op', '_seq', '_source_ts', '_is_deleted', '_deleted_at'] -%}
  {%- set columns = lakecdc.lakecdc_column_names(model) -%}
  {%- set fields = columns | reject('in', own) | list -%}
  {#- array_except, not a lambda: Sail 0.7 cannot resolve a column inside a lambda in a filter -#}
  select _id, _document
  from {{ model }}
  where _document is not null and (
    size(array_except(cast(map_keys(from_json(_document, 'map<string,string>')) as array<string>), cast(array(
      {%- for name in ['_id'] + fields + ignored %}{{ lakecdc.lakecdc_lit(name) }}{% if not loop.last %}, {% endif %}{% endfor %}) as array<string>))) > 0
    or _id_value is null
    {%- for name in fields %}
    or ({{ lakecdc.lakecdc_ident(name) }} is null and get_json_object(_document, {{ lakecdc.lakecdc_lit("$['" ~ name ~ "']") }}) is not null)
    {%- endfor %})
{% endtest %}
