{#- Gold for the demo inventory database (source `inventory`, silver models from `lakecdc generate`).
    Enabled with the var lakecdc_gold_inventory: true, because the silver models it reads are generated. -#}
{{ config(materialized='table', schema='gold', enabled=var('lakecdc_gold_inventory', false)) }}

with orders as (
    select o.purchaser, o.order_number, o.order_date, o.quantity, o.quantity * p.weight as weight
    from {{ ref('inventory__orders') }} o
    left join {{ ref('inventory__products') }} p on p.id = o.product_id
)
select
    c.id as customer_id,
    c.first_name,
    c.last_name,
    c.email,
    count(o.order_number) as order_count,
    coalesce(sum(o.quantity), 0) as total_quantity,
    cast(coalesce(sum(o.weight), 0) as double) as total_weight,
    min(o.order_date) as first_order_date,
    max(o.order_date) as last_order_date
from {{ ref('inventory__customers') }} c
left join orders o on o.purchaser = c.id
group by c.id, c.first_name, c.last_name, c.email
