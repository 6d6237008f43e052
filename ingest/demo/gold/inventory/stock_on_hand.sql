{{ config(materialized='table', schema='gold', enabled=var('lakecdc_gold_inventory', false)) }}

with ordered as (
    select product_id, count(*) as order_count, sum(quantity) as quantity_ordered
    from {{ ref('inventory__orders') }}
    group by product_id
)
select
    p.id as product_id,
    p.name,
    p.weight,
    coalesce(h.quantity, 0) as quantity_on_hand,
    cast(coalesce(h.quantity, 0) * p.weight as double) as weight_on_hand,
    coalesce(o.order_count, 0) as order_count,
    coalesce(o.quantity_ordered, 0) as quantity_ordered
from {{ ref('inventory__products') }} p
left join {{ ref('inventory__products_on_hand') }} h on h.product_id = p.id
left join ordered o on o.product_id = p.id
