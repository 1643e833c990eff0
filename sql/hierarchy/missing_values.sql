-- Distinct values of a column that are not leaves of a hierarchy, most frequent first, with
-- the totals on every row so one query answers "how many, and which".
SELECT
  m.value,
  m.n,
  COUNT(*) OVER () AS distinct_missing,
  SUM(m.n) OVER () AS rows_missing
FROM (
  SELECT CAST(s.:col AS VARCHAR) AS value, COUNT(*) AS n
  FROM :source AS s
  LEFT JOIN anonsql_hierarchy_node AS leaf
    ON leaf.hierarchy = :name AND leaf.level = 0 AND leaf.label = CAST(s.:col AS VARCHAR)
  WHERE leaf.id IS NULL
  GROUP BY 1
) AS m
ORDER BY m.n DESC, m.value NULLS FIRST
LIMIT :limit
