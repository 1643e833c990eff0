-- Sensitive-value counts per class of any table (helper of anonsql_l and anonsql_t).
-- QI columns are cast to VARCHAR first, so columns of different types make one list.
CREATE OR REPLACE TEMP MACRO anonsql_sensitive_counts(tbl, qis, sensitive) AS TABLE
SELECT r.qi, r.s, COUNT(*) AS n,
       len(list_filter(r.qi, lambda x: x IS DISTINCT FROM '*')) = 0 AS suppressed
FROM (
  SELECT [*COLUMNS(lambda c: list_contains(qis, c))] AS qi,
         COALESCE(CAST(COLUMNS(lambda c: c = sensitive) AS VARCHAR), 'NULL') AS s
  FROM (
    SELECT CAST(COLUMNS(lambda c: list_contains(qis, c)) AS VARCHAR),
           COLUMNS(lambda c: c = sensitive AND NOT list_contains(qis, c))
    FROM query_table(tbl)
  )
) AS r
GROUP BY r.qi, r.s
