{#-
  Debezium / Kafka Connect semantic types -> Spark SQL types and decoding expressions.

  Every field of a Kafka Connect schema (as stored in bronze.<S>_schemas) is decoded from its raw JSON
  text (a string: numbers as digits, structs and arrays as JSON text) by `lakecdc.lakecdc_decode(raw, field)`,
  whose result has the type `lakecdc.lakecdc_spark_type(field)`. The semantic name (`field.name`) wins over the
  physical type, as in Debezium.
-#}

{% macro lakecdc_ident(name) -%}
  `{{ name | replace('`', '``') }}`
{%- endmacro %}

{% macro lakecdc_lit(value) -%}
  '{{ value | string | replace("\\", "\\\\") | replace("'", "\\'") }}'
{%- endmacro %}

{#- decimal(p, s) for a Connect Decimal field, or string when it cannot fit Spark's 38 digits -#}
{% macro lakecdc_decimal_type(params) -%}
  {%- set scale = (params.get('scale', '0') | int) -%}
  {%- set precision = (params.get('connect.decimal.precision', '38') | int) -%}
  {%- if precision > 38 or scale > 38 -%}string
  {%- else -%}decimal({{ [precision, scale, 1] | max }},{{ scale }})
  {%- endif -%}
{%- endmacro %}

{#- The silver type of io.debezium.data.VariableScaleDecimal (PostgreSQL numeric without precision, any scale
    per value): the exact decimal text by default, since no Spark decimal holds every such value; a project may
    choose a decimal type (var lakecdc_variable_decimal_type, e.g. 'decimal(38,10)'), whose cast rounds the
    fractional digits beyond its scale and fails (or gives NULL) beyond its integer digits. -#}
{% macro lakecdc_variable_decimal_type() -%}
  {{- var('lakecdc_variable_decimal_type', 'string') | trim | lower -}}
{%- endmacro %}

{% macro lakecdc_spark_type(f) -%}
  {%- set name = f.get('name') or '' -%}
  {%- set t = f.get('type') -%}
  {%- set params = f.get('parameters') or {} -%}
  {%- if name in ('io.debezium.time.Date', 'org.apache.kafka.connect.data.Date') -%}date
  {%- elif name in ('io.debezium.time.Timestamp', 'io.debezium.time.MicroTimestamp', 'io.debezium.time.NanoTimestamp',
                    'io.debezium.time.ZonedTimestamp', 'org.apache.kafka.connect.data.Timestamp') -%}timestamp
  {%- elif name in ('io.debezium.time.Time', 'io.debezium.time.MicroTime', 'io.debezium.time.NanoTime',
                    'org.apache.kafka.connect.data.Time', 'io.debezium.time.ZonedTime') -%}string
  {%- elif name == 'io.debezium.time.Year' -%}int
  {%- elif name == 'io.debezium.time.MicroDuration' -%}bigint
  {%- elif name == 'io.debezium.time.NanoDuration' -%}bigint
  {%- elif name == 'org.apache.kafka.connect.data.Decimal' -%}{{ lakecdc.lakecdc_decimal_type(params) }}
  {%- elif name == 'io.debezium.data.VariableScaleDecimal' -%}{{ lakecdc.lakecdc_variable_decimal_type() }}
  {%- elif name == 'io.debezium.data.Bits' -%}binary
  {%- elif name in ('io.debezium.data.geometry.Geometry', 'io.debezium.data.geometry.Geography') -%}struct<srid:int,wkb:binary>
  {%- elif name == 'io.debezium.data.geometry.Point' -%}struct<x:double,y:double,srid:int,wkb:binary>
  {%- elif t == 'int8' -%}tinyint
  {%- elif t == 'int16' -%}smallint
  {%- elif t == 'int32' -%}int
  {%- elif t == 'int64' -%}bigint
  {%- elif t in ('float32', 'float') -%}float
  {%- elif t in ('float64', 'double') -%}double
  {%- elif t == 'boolean' -%}boolean
  {%- elif t == 'bytes' -%}binary
  {%- elif t == 'array' -%}array<{{ lakecdc.lakecdc_spark_type(f.get('items')) }}>
  {%- elif t == 'map' -%}map<{{ lakecdc.lakecdc_spark_type(f.get('keys')) }},{{ lakecdc.lakecdc_spark_type(f.get('values')) }}>
  {%- else -%}string
  {%- endif -%}
{%- endmacro %}

{#- The exact decimal text (e.g. -123.45) of a two's complement big-endian integer (base64 text, any length)
    scaled by `scale` (SQL int). Only the magnitude is computed (a negative number's digits complemented, plus
    one) and the sign is written as text: no partial sum exceeds the result and nothing is negated, because
    Apache Spark (ANSI) fails on a decimal(38,0) intermediate beyond 38 digits (the signed form -2^127 + ...)
    and even on -x or x * -1 for a 38-digit x. Up to 15 bytes, conv() (63 bits at most) reads the hex digits,
    padded to 32, as 4 + 14 + 14; with `wide` (the value may exceed 38 digits: 2^127, DECIMAL(65,30),
    VariableScaleDecimal), 16 bytes and more go through lakecdc_hex_digits; without it (precision <= 38, so
    at most 16 bytes below 10^38) 4 + 14 + 14 reads 16 bytes too.
    Lambdas bind intermediates (transform of a one-element array), but as few and as shallow as possible:
    Sail's planning time grows about 2.5 times with every level of lambda nesting (measured: 9 nested one-line
    bindings take 1.7 s to plan), while text repeated inside one lambda costs little. So the hex digits and the
    sign are written out in the one binding's argument (__v), the digits `a` are written out where the scale
    needs them, and only the long form binds them once more (__a). Measured on Sail (a scale-18 column):
    planning 0.30 -> 0.19 s, the wide form 1.4 -> 0.3 s; written out with no lambda at all, the long form grew to
    tens of kilobytes per column, which the engines took seconds to plan. The short form (not `wide`) is small
    enough to write out with no lambda (the hex digits eleven times, which the engine computes once): Sail plans
    it a little faster and evaluates it twice as fast (decimal(30,10), 20,000 values: 0.07 s to plan against
    0.09, 0.15 s to write against 0.33). -#}
{% macro lakecdc_decimal_text(raw, scale, wide=true) -%}
  {%- set h = "hex(unbase64(" ~ raw ~ "))" -%}
  {%- set neg = "substr(" ~ h ~ ", 1, 1) >= '8'" -%}
  {%- set m = "case when " ~ neg ~ " then translate(" ~ h ~ ", '0123456789ABCDEF', 'FEDCBA9876543210') else " ~ h ~ " end" -%}
  {%- if not wide -%}
  case when {{ raw }} is null then null
       else concat(case when {{ neg }} then '-' else '' end, {{ lakecdc.lakecdc_scaled_digits(lakecdc.lakecdc_magnitude_digits(m, neg), scale) }}) end
  {%- else -%}
    {%- set a = "case when length(__v.m) > 30 then " ~ lakecdc.lakecdc_hex_digits("__v.m", "__v.neg") ~ " else "
                ~ lakecdc.lakecdc_magnitude_digits("__v.m", "__v.neg") ~ " end" -%}
  case when {{ raw }} is null then null else element_at(transform(array(named_struct('neg', {{ neg }}, 'm', {{ m }})), __v ->
    concat(case when __v.neg then '-' else '' end,
           element_at(transform(array({{ a }}), __a -> {{ lakecdc.lakecdc_scaled_digits("__a", scale) }}), 1))), 1) end
  {%- endif -%}
{%- endmacro %}

{#- The decimal digits of the magnitude of a two's complement of up to 16 bytes: `m` its hex digits (a negative
    number's complemented, so that `neg` adds one), read by conv() (63 bits at most), padded to 32, as 4 + 14 + 14. -#}
{% macro lakecdc_magnitude_digits(m, neg) -%}
  {%- set p = "lpad(" ~ m ~ ", 32, '0')" -%}
  cast(cast(conv(substr({{ p }}, 1, 4), 16, 10) as decimal(38,0)) * cast(5192296858534827628530496329220096 as decimal(38,0))
   + cast(conv(substr({{ p }}, 5, 14), 16, 10) as decimal(38,0)) * cast(72057594037927936 as decimal(38,0))
   + cast(conv(substr({{ p }}, 19, 14), 16, 10) as decimal(38,0))
   + case when {{ neg }} then 1 else 0 end as string)
{%- endmacro %}

{#- A Connect Decimal of precision <= 16 (`target`, e.g. decimal(12,2): most money columns), without text and
    without lambdas: its unscaled value is below 10^16 < 2^55 in magnitude, so the last 14 hex digits (56 bits) of
    its two's complement hold it whatever the encoding's length (Debezium's is minimal, a sign-extended longer one
    reads the same), conv() reads them (Sail's conv() is signed beyond 63 bits, hence not 16 digits), the sign
    comes from subtracting 2^(4 * digits) when the top bit is set, and a multiplication by the exact literal 10^-s
    (decimal(17,0) x decimal(s,s): at most 34 digits, no rounding on any engine) places the point. Against
    lakecdc_decimal_text's former lambda form, on Sail, a 4,400-value probe of every length and sign: 0.03-0.06 s to
    plan against 0.08-0.09, 0.04-0.08 s to write against 0.11-0.18. -#}
{% macro lakecdc_decimal_narrow(raw, scale, target) -%}
  {%- set m = "substr(hex(unbase64(" ~ raw ~ ")), -14)" -%}
  {%- set unscaled = "(cast(conv(" ~ m ~ ", 16, 10) as bigint) - case when " ~ m ~ " >= '8' then shiftleft(cast(1 as bigint), 4 * length(" ~ m ~ ")) else 0 end)" -%}
  {%- if scale == 0 -%}
  cast({{ unscaled }} as {{ target }})
  {%- else -%}
  cast(cast({{ unscaled }} as decimal(17,0)) * cast('0.{{ '0' * (scale - 1) }}1' as decimal({{ scale }},{{ scale }})) as {{ target }})
  {%- endif -%}
{%- endmacro %}

{#- The unsigned digit text `a` with a decimal point `scale` digits from its end, zero-padded to at least one digit
    before the point (lpad() truncates longer strings, hence greatest()). A literal scale (Connect Decimal) writes
    `a` twice (one regexp_replace puts the point in); a scale computed per row (VariableScaleDecimal) six times. -#}
{% macro lakecdc_scaled_digits(a, scale) -%}
  {%- if scale is number and scale <= 0 -%}
  {{ a }}
  {%- elif scale is number -%}
  {%- set pattern = "^0*([0-9]+)([0-9]{" ~ scale ~ "})$" -%}
  regexp_replace(concat({{ lakecdc.lakecdc_lit('0' * (scale + 1)) }}, {{ a }}), {{ lakecdc.lakecdc_lit(pattern) }}, '$1.$2')
  {%- else -%}
  {%- set d = "lpad(" ~ a ~ ", greatest(length(" ~ a ~ "), " ~ scale ~ " + 1), '0')" -%}
  case when {{ scale }} <= 0 then {{ a }}
       else concat(substr({{ d }}, 1, length({{ d }}) - {{ scale }}), '.', substr({{ d }}, length({{ d }}) - {{ scale }} + 1)) end
  {%- endif -%}
{%- endmacro %}

{#- The decimal digits of an unsigned hex number of any length (plus one when `plus_one` is true): schoolbook
    base conversion in SQL, 24 bits at a time into little-endian base-10^9 limbs (bigint: a limb times 2^24
    plus its carry stays far below 2^63), then the limbs printed most significant first (all but the first
    zero-padded to 9 digits; transform with the index, not a binding of the limbs: one lambda level less). -#}
{% macro lakecdc_hex_digits(hex, plus_one) -%}
  {%- set padded = "lpad(" ~ hex ~ ", cast(ceil(length(" ~ hex ~ ") / 6) as int) * 6, '0')" -%}
  {%- set limbs -%}
  aggregate(
    transform(sequence(0, cast(length({{ padded }}) / 6 as int) - 1),
              i -> cast(conv(substr({{ padded }}, i * 6 + 1, 6), 16, 10) as bigint)),
    array(cast(0 as bigint)),
    (acc, chunk) -> aggregate(acc, named_struct('out', cast(array() as array<bigint>), 'carry', chunk),
      (s, l) -> named_struct('out', concat(s.out, array((l * 16777216 + s.carry) % 1000000000)),
                             'carry', (l * 16777216 + s.carry) div 1000000000),
      s -> case when s.carry > 0 then concat(s.out, array(s.carry)) else s.out end),
    acc -> aggregate(acc, named_struct('out', cast(array() as array<bigint>),
                                       'carry', cast(case when {{ plus_one }} then 1 else 0 end as bigint)),
      (s, l) -> named_struct('out', concat(s.out, array((l + s.carry) % 1000000000)),
                             'carry', (l + s.carry) div 1000000000),
      s -> reverse(case when s.carry > 0 then concat(s.out, array(s.carry)) else s.out end)))
  {%- endset -%}
  array_join(transform({{ limbs }}, (x, i) -> case when i = 0 then cast(x as string) else lpad(cast(x as string), 9, '0') end), '')
{%- endmacro %}

{#- raw: SQL expression of the field's raw JSON text. Returns an expression of lakecdc.lakecdc_spark_type(f). -#}
{% macro lakecdc_decode(raw, f) -%}
  {%- set name = f.get('name') or '' -%}
  {%- set t = f.get('type') -%}
  {%- set params = f.get('parameters') or {} -%}
  {%- if name in ('io.debezium.time.Date', 'org.apache.kafka.connect.data.Date') -%}
    date_add(date'1970-01-01', cast({{ raw }} as int))
  {%- elif name in ('io.debezium.time.Timestamp', 'org.apache.kafka.connect.data.Timestamp') -%}
    timestamp_millis(cast({{ raw }} as bigint))
  {%- elif name == 'io.debezium.time.MicroTimestamp' -%}
    timestamp_micros(cast({{ raw }} as bigint))
  {%- elif name == 'io.debezium.time.NanoTimestamp' -%}
    {#- floor, not truncation: 1 ns before 1970 is 1969-12-31 23:59:59.999999 -#}
    timestamp_micros(transform(array(cast({{ raw }} as bigint)), n -> (n - pmod(n, 1000)) div 1000)[0])
  {%- elif name == 'io.debezium.time.ZonedTimestamp' -%}
    to_timestamp({{ raw }})
  {%- elif name in ('io.debezium.time.Time', 'org.apache.kafka.connect.data.Time') -%}
    {{ lakecdc.lakecdc_time_text(raw, 3) }}
  {%- elif name == 'io.debezium.time.MicroTime' -%}
    {{ lakecdc.lakecdc_time_text(raw, 6) }}
  {%- elif name == 'io.debezium.time.NanoTime' -%}
    {{ lakecdc.lakecdc_time_text(raw, 9) }}
  {%- elif name == 'org.apache.kafka.connect.data.Decimal' -%}
    {%- set target = lakecdc.lakecdc_decimal_type(params) -%}
    {%- set scale = params.get('scale', '0') | int -%}
    {%- if t != 'bytes' -%}cast({{ raw }} as {{ target }})
    {%- elif 0 <= scale and (params.get('connect.decimal.precision', '38') | int) <= 16 -%}
    {{ lakecdc.lakecdc_decimal_narrow(raw, scale, target) }}
    {%- else -%}
    cast({{ lakecdc.lakecdc_decimal_text(raw, scale, target == 'string') }} as {{ target }})
    {%- endif -%}
  {%- elif name == 'io.debezium.data.VariableScaleDecimal' -%}
    cast({{ lakecdc.lakecdc_decimal_text("get_json_object(" ~ raw ~ ", '$.value')",
                                 "cast(get_json_object(" ~ raw ~ ", '$.scale') as int)") }}
         as {{ lakecdc.lakecdc_variable_decimal_type() }})
  {%- elif name in ('io.debezium.data.geometry.Geometry', 'io.debezium.data.geometry.Geography') -%}
    case when {{ raw }} is not null then named_struct(
      'srid', cast(get_json_object({{ raw }}, '$.srid') as int),
      'wkb', unbase64(get_json_object({{ raw }}, '$.wkb'))) end
  {%- elif name == 'io.debezium.data.geometry.Point' -%}
    case when {{ raw }} is not null then named_struct(
      'x', cast(get_json_object({{ raw }}, '$.x') as double), 'y', cast(get_json_object({{ raw }}, '$.y') as double),
      'srid', cast(get_json_object({{ raw }}, '$.srid') as int),
      'wkb', unbase64(get_json_object({{ raw }}, '$.wkb'))) end
  {%- elif t == 'bytes' -%}
    unbase64({{ raw }})
  {%- elif t == 'boolean' -%}
    cast({{ raw }} as boolean)
  {%- elif t in ('int8', 'int16', 'int32', 'int64') or t in lakecdc.lakecdc_float_types() -%}
    cast({{ raw }} as {{ lakecdc.lakecdc_spark_type(f) }})
  {%- elif t == 'array' and (f.get('items') or {}).get('type') in lakecdc.lakecdc_float_types() -%}
    {#- numbers never go through from_json (inexact on Sail): the array text is split at its commas -#}
    transform(case when {{ raw }} = '[]' then cast(array() as array<string>)
                   else split(substr({{ raw }}, 2, length({{ raw }}) - 2), ',') end,
              x -> {{ lakecdc.lakecdc_decode("nullif(replace(x, '" ~ '"' ~ "', ''), 'null')", f.get('items')) }})
  {%- elif t == 'array' -%}
    transform(from_json({{ raw }}, 'array<string>'), x -> {{ lakecdc.lakecdc_decode('x', f.get('items')) }})
  {%- elif t == 'map' -%}
    {#- not transform_values: Sail 0.7 lacks it -#}
    map_from_entries(transform(map_entries(from_json({{ raw }}, 'map<string,string>')),
                               e -> struct(e.key as k, {{ lakecdc.lakecdc_decode('e.value', f.get('values')) }} as v)))
  {%- else -%}
    {{ raw }}
  {%- endif -%}
{%- endmacro %}

{#- A time of day (or a MySQL TIME duration: negative, or 24 hours and more) from its count of milli-, micro- or
    nanoseconds (`digits` 3, 6, 9) as [-]HH:MM:SS.fraction with every digit of the unit. Arithmetic, not
    date_format of a timestamp: that formats in the session time zone and wraps at 24 hours. -#}
{% macro lakecdc_time_text(raw, digits) -%}
  {%- set unit = 10 ** digits -%}
  transform(array(cast({{ raw }} as bigint)), t -> case when t is not null then format_string(
    '%s%02d:%02d:%02d.%0{{ digits }}d', case when t < 0 then '-' else '' end, abs(t) div {{ unit * 3600 }},
    abs(t) div {{ unit * 60 }} % 60, abs(t) div {{ unit }} % 60, abs(t) % {{ unit }}) end)[0]
{%- endmacro %}

{#- Connect float schema types: Kafka's JsonConverter writes "float" / "double", older bronze "float32" / "float64" -#}
{% macro lakecdc_float_types() -%}
  {{ return(('float32', 'float64', 'float', 'double')) }}
{%- endmacro %}

{#- Does a field hold floating-point numbers (itself, or in its items, values or struct fields)? Such fields are
    read from the event text with get_json_object, never through from_json: Sail's from_json parses JSON
    numbers inexactly (993702636.5144999 -> 993702636.5145), Apache Spark's writes them back as Java text
    (9.937026365144999E8); get_json_object gives the number's own digits (Sail) or Java's exact text (Spark),
    and cast(... as double) of either is the exact value. -#}
{% macro lakecdc_has_float(f) -%}
  {%- if not f -%}{{ return(false) }}{%- endif -%}
  {%- if f.get('type') in lakecdc.lakecdc_float_types() or f.get('name') == 'io.debezium.data.geometry.Point' -%}
    {{ return(true) }}
  {%- endif -%}
  {%- for sub in [f.get('items'), f.get('values')] + (f.get('fields') or []) if sub and lakecdc.lakecdc_has_float(sub) -%}
    {{ return(true) }}
  {%- endfor -%}
  {{ return(false) }}
{%- endmacro %}

{#- SQL: the raw JSON text of `name` in the JSON column `json_col` under `prefix` ('$' or '$.after' ...), with the
    number's digits untouched (see lakecdc_has_float). -#}
{% macro lakecdc_json_path(json_col, prefix, name) -%}
  get_json_object({{ json_col }}, {{ lakecdc.lakecdc_lit(prefix ~ "['" ~ name ~ "']") }})
{%- endmacro %}

{#- Can a field carry Debezium's unavailable-value placeholder (TOASTed / LOB columns)? -#}
{% macro lakecdc_may_be_unavailable(f) -%}
  {{- f.get('type') in ('string', 'bytes', 'array', 'map') -}}
{%- endmacro %}

{#- SQL condition: the raw JSON text is the placeholder (string, base64 bytes, or an array/map holding it) -#}
{% macro lakecdc_is_unavailable(raw) -%}
  {%- set p = var('lakecdc_unavailable_placeholder', '__debezium_unavailable_value') -%}
  {%- set b64 = var('lakecdc_unavailable_placeholder_base64', 'X19kZWJleml1bV91bmF2YWlsYWJsZV92YWx1ZQ==') -%}
  {#- an array holding the placeholder: one LIKE (starts with '[', has the quoted placeholder). Null for a null
      value (false in a CASE WHEN, the one use): no coalesce, which doubles Sail's planning time here -#}
  ({{ raw }} in ({{ lakecdc.lakecdc_lit(p) }}, {{ lakecdc.lakecdc_lit(b64) }})
   or {{ raw }} like {{ lakecdc.lakecdc_lit('[%"' ~ p ~ '"%') }})
{%- endmacro %}

{#- The widest Spark type of several (schema evolution: widened columns). -#}
{% macro lakecdc_widest_type(types) -%}
  {%- set uniq = types | unique | list -%}
  {%- if uniq | length == 1 -%}{{ uniq[0] }}
  {%- else -%}
    {%- set ints = ['tinyint', 'smallint', 'int', 'bigint'] -%}
    {%- set ns = namespace(all_int=true, all_num=true, all_dec=true, ip=0, s=0, rank=0) -%}
    {%- for t in uniq -%}
      {%- if t in ints -%}
        {%- set ns.rank = [ns.rank, ints.index(t)] | max -%}
        {%- set ns.ip = [ns.ip, [3, 5, 10, 19][ints.index(t)]] | max -%}
      {%- elif t.startswith('decimal(') -%}
        {%- set ns.all_int = false -%}
        {%- set ps = t[8:-1].split(',') -%}
        {%- set ns.ip = [ns.ip, (ps[0] | int) - (ps[1] | int)] | max -%}
        {%- set ns.s = [ns.s, ps[1] | int] | max -%}
      {%- elif t in ('float', 'double') -%}
        {%- set ns.all_int = false -%}{%- set ns.all_dec = false -%}
      {%- else -%}
        {%- set ns.all_num = false -%}
      {%- endif -%}
    {%- endfor -%}
    {%- if not ns.all_num -%}string
    {%- elif ns.all_int -%}{{ ints[ns.rank] }}
    {%- elif ns.all_dec -%}decimal({{ [ns.ip + ns.s, 38] | min }},{{ ns.s }})
    {%- else -%}double
    {%- endif -%}
  {%- endif -%}
{%- endmacro %}
