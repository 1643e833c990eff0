{#- Failing rows: one per column of the model that has no declared role. Every column of a
    release needs one (as anonsql's own outputs do): a quasi-identifier (qis), the sensitive
    attribute(s) (sensitive), released as is (kept) or a masked identifier (masked). Names are
    compared case-insensitively, as unquoted SQL names are. -#}
{% test has_roles(model, qis=[], sensitive=[], kept=[], masked=[]) %}
{%- set declared = [] -%}
{%- for c in qis + sensitive + kept + masked %}{% do declared.append(c | lower) %}{% endfor -%}
{%- set stray = [] -%}
{%- for col in adapter.get_columns_in_relation(model) -%}
  {%- if col.name | lower not in declared %}{% do stray.append(col.name) %}{% endif -%}
{%- endfor -%}
{%- if stray %}
{%- for name in stray %}
select {{ dbt.string_literal(name) }} as column_without_role{% if not loop.last %} union all{% endif %}
{%- endfor %}
{%- else %}
select cast(null as {{ dbt.type_string() }}) as column_without_role where 1 = 0
{%- endif %}
{% endtest %}
