{#- Failing rows: the classes with fewer than l distinct values of the sensitive column
    (distinct l-diversity; NULL counts as no value). Suppressed rows (every QI '*') are
    exempt. -#}
{% test l_diverse(model, qis, sensitive, l) %}
{%- set cols = [] -%}
{%- for q in qis %}{% do cols.append(adapter.quote(q)) %}{% endfor -%}
select {{ cols | join(', ') }}, count(distinct {{ adapter.quote(sensitive) }}) as distinct_values
from {{ model }}
where not ({% for c in cols %}coalesce(cast({{ c }} as {{ dbt.type_string() }}), '') = '*'{% if not loop.last %} and {% endif %}{% endfor %})
group by {{ cols | join(', ') }}
having count(distinct {{ adapter.quote(sensitive) }}) < {{ l }}
{% endtest %}
