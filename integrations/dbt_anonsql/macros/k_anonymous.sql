{#- Failing rows: the classes (equal values in every QI) of fewer than k records.
    Rows whose every QI is '*' are suppressed and exempt, as in anonsql and ARX. -#}
{% test k_anonymous(model, qis, k) %}
{%- set cols = [] -%}
{%- for q in qis %}{% do cols.append(adapter.quote(q)) %}{% endfor -%}
select {{ cols | join(', ') }}, count(*) as class_size
from {{ model }}
where not ({% for c in cols %}coalesce(cast({{ c }} as {{ dbt.type_string() }}), '') = '*'{% if not loop.last %} and {% endif %}{% endfor %})
group by {{ cols | join(', ') }}
having count(*) < {{ k }}
{% endtest %}
